//! A real etcd cluster on 127.0.0.1: members named like a StatefulSet's pods (`etcd-0`, `etcd-1`, …),
//! each with a client and a peer port, its data in the [`Workdir`]; read and driven through etcd's
//! gRPC-gateway JSON (`/v3/…`, served on the client port, etcd 3.4: etcdserver/etcdserverpb/gw/
//! rpc.pb.gw.go@v3.4.23; 64-bit numbers come as decimal strings; byte fields as base64). Also the
//! store of the Patroni cluster (one member).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::StatefulSetMap;
use super::net::{free_ports, post_json};
use super::process::{Proc, Workdir, wait_for};

/// Seconds a cluster may take to elect a leader that every member names.
pub const START_LIMIT: Duration = Duration::from_secs(30);
/// Seconds a member may take to stop on SIGTERM (it hands leadership over first, server.go@v3.4.23
/// l.1491-1546) before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// One member as the harness runs it.
pub(super) struct Member {
    pub(super) name: String,
    pub(super) client: u16,
    peer: u16,
    revision: String,
    proc: Option<Proc>,
}

/// What one member says of itself (`POST /v3/maintenance/status`, rpc.proto@v3.4.23 l.975-995).
#[derive(Debug, Clone)]
pub struct Status {
    /// This member's ID (`header.member_id`).
    pub member_id: u64,
    /// The member it follows as leader; 0 for none.
    pub leader: u64,
    /// Its raft term (a count).
    pub raft_term: u64,
    /// `errors`: "etcdserver: no leader", raised alarms.
    pub errors: Vec<String>,
}

/// A running etcd cluster.
pub struct Etcd {
    members: Vec<Member>,
    set: StatefulSetMap,
    // Last: dropped after the members have stopped (see process.rs).
    work: Workdir,
}

impl Etcd {
    /// Starts `replicas` members named `<set>-<i>` at once (all are needed for a quorum), revision
    /// `revision`, and waits until every one names the same leader, at most [`START_LIMIT`].
    ///
    /// # Errors
    /// A member did not start, or no leader in time: the message names the logs.
    pub async fn start(
        system: &str,
        set: &str,
        replicas: usize,
        revision: &str,
    ) -> Result<Etcd, String> {
        let work = Workdir::new(system)?;
        let ports = free_ports(2 * replicas);
        let members: Vec<Member> = (0..replicas)
            .map(|i| Member {
                name: format!("{set}-{i}"),
                client: ports[2 * i],
                peer: ports[2 * i + 1],
                revision: revision.to_string(),
                proc: None,
            })
            .collect();
        let mut etcd = Etcd {
            set: StatefulSetMap::new(set, members.iter().map(|m| m.name.clone()).collect()),
            members,
            work,
        };
        for i in 0..replicas {
            let proc = etcd.work.spawn(&etcd.members[i].name, etcd.command(i))?;
            etcd.members[i].proc = Some(proc);
        }
        etcd.wait_healthy(START_LIMIT).await?;
        Ok(etcd)
    }

    fn command(&self, i: usize) -> Command {
        let m = &self.members[i];
        let initial: Vec<String> = self
            .members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer))
            .collect();
        let mut c = Command::new("etcd");
        c.arg("--name").arg(&m.name);
        c.arg("--data-dir").arg(self.work.data.join(&m.name));
        c.arg("--listen-client-urls")
            .arg(format!("http://127.0.0.1:{}", m.client));
        c.arg("--advertise-client-urls")
            .arg(format!("http://127.0.0.1:{}", m.client));
        c.arg("--listen-peer-urls")
            .arg(format!("http://127.0.0.1:{}", m.peer));
        c.arg("--initial-advertise-peer-urls")
            .arg(format!("http://127.0.0.1:{}", m.peer));
        c.arg("--initial-cluster").arg(initial.join(","));
        c.arg("--initial-cluster-state").arg("new");
        c.arg("--initial-cluster-token")
            .arg(self.work.data.display().to_string());
        c.args(["--logger", "zap", "--log-outputs", "stderr"]);
        c
    }

    /// The pods ↔ members map.
    pub fn set(&self) -> &StatefulSetMap {
        &self.set
    }

    fn member(&self, name: &str) -> Result<&Member, String> {
        self.members
            .iter()
            .find(|m| m.name == name)
            .ok_or_else(|| format!("no etcd member {name}"))
    }

    /// `http://127.0.0.1:<client port>` of member `name`.
    pub fn client_url(&self, name: &str) -> String {
        self.member(name)
            .map(|m| format!("http://127.0.0.1:{}", m.client))
            .unwrap_or_default()
    }

    /// `127.0.0.1:<client port>` of every member, in ordinal order.
    pub fn endpoints(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|m| format!("127.0.0.1:{}", m.client))
            .collect()
    }

    /// The revision member `name` runs (the harness's record: etcd keeps no such tag).
    pub fn revision(&self, name: &str) -> String {
        self.member(name)
            .map(|m| m.revision.clone())
            .unwrap_or_default()
    }

    /// The log files of every member.
    pub fn logs(&self) -> Vec<std::path::PathBuf> {
        self.members
            .iter()
            .map(|m| self.work.log(&m.name))
            .collect()
    }

    /// Member `name`'s own status.
    ///
    /// # Errors
    /// It does not answer, or the answer lacks the fields.
    pub async fn status(&self, name: &str) -> Result<Status, String> {
        let url = format!("{}/v3/maintenance/status", self.client_url(name));
        let v = post_json(&url, &json!({})).await?;
        Ok(Status {
            member_id: number(&v["header"]["member_id"])
                .ok_or(format!("{url}: no member_id: {v}"))?,
            leader: number(&v["leader"]).unwrap_or(0),
            raft_term: number(&v["raftTerm"]).unwrap_or(0),
            errors: v["errors"]
                .as_array()
                .map(|e| {
                    e.iter()
                        .filter_map(|s| s.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// The cluster's members as the first answering member lists them: name → ID
    /// (`POST /v3/cluster/member/list`; an unstarted member has no name, rpc.proto@v3.4.23 l.851-856).
    ///
    /// # Errors
    /// No member answers.
    pub async fn members(&self) -> Result<BTreeMap<String, u64>, String> {
        let mut last = String::new();
        for m in &self.members {
            let url = format!("http://127.0.0.1:{}/v3/cluster/member/list", m.client);
            match post_json(&url, &json!({})).await {
                Ok(v) => {
                    return Ok(v["members"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|m| Some((m["name"].as_str()?.to_string(), number(&m["ID"])?)))
                        .collect());
                }
                Err(e) => last = e,
            }
        }
        Err(format!("no etcd member lists the members; last: {last}"))
    }

    /// The leader's name, when a majority of the members (a count ⌊n/2⌋+1, raft's quorum) each name it
    /// in their own status.
    ///
    /// # Errors
    /// No majority agrees (an election under way, members down), or the leader's ID is no member's.
    pub async fn leader(&self) -> Result<String, String> {
        let mut votes: BTreeMap<u64, usize> = BTreeMap::new();
        let mut said = Vec::new();
        for m in &self.members {
            match self.status(&m.name).await {
                Ok(s) if s.leader != 0 => *votes.entry(s.leader).or_default() += 1,
                Ok(s) => said.push(format!("{}: no leader {:?}", m.name, s.errors)),
                Err(e) => said.push(e),
            }
        }
        let quorum = self.members.len() / 2 + 1;
        let Some((&id, _)) = votes.iter().find(|(_, n)| **n >= quorum) else {
            return Err(format!(
                "no leader named by {quorum} members: {votes:?} {said:?}"
            ));
        };
        let members = self.members().await?;
        members
            .iter()
            .find(|(_, m)| **m == id)
            .map(|(name, _)| name.clone())
            .ok_or_else(|| format!("leader {id} is none of {members:?}"))
    }

    /// Moves leadership to `to`: `POST /v3/maintenance/transfer-leadership {"targetID"}` to the current
    /// leader (MoveLeader must reach the leader, v3rpc/maintenance.go@v3.4.23 l.251-260), which answers
    /// once the transfer is done.
    ///
    /// # Errors
    /// No leader, `to` unknown, or etcd refused (the gateway's error body).
    pub async fn move_leader(&self, to: &str) -> Result<(), String> {
        let leader = self.leader().await?;
        let target = *self
            .members()
            .await?
            .get(to)
            .ok_or(format!("no member {to}"))?;
        let url = format!(
            "{}/v3/maintenance/transfer-leadership",
            self.client_url(&leader)
        );
        post_json(&url, &json!({ "targetID": target.to_string() }))
            .await
            .map(|_| ())
    }

    /// Waits until every member answers its status without errors and all name one leader.
    ///
    /// # Errors
    /// Not within `limit`: the last disagreement and every member's log.
    pub async fn wait_healthy(&self, limit: Duration) -> Result<(), String> {
        wait_for(
            "every etcd member to name one leader",
            limit,
            &self.logs(),
            || async {
                let mut leaders = BTreeSet::new();
                for m in &self.members {
                    let s = self.status(&m.name).await?;
                    if s.leader == 0 || !s.errors.is_empty() {
                        return Err(format!(
                            "{}: leader {} errors {:?}",
                            m.name, s.leader, s.errors
                        ));
                    }
                    leaders.insert(s.leader);
                }
                if leaders.len() == 1 {
                    Ok(())
                } else {
                    Err(format!("leaders named: {leaders:?}"))
                }
            },
        )
        .await
    }

    /// What replacing pod `name` does: SIGTERM to its etcd, the exit awaited (SIGKILL past
    /// [`STOP_GRACE`]), then the same member started again on its data as `revision`. Returns once it
    /// is started (not once it has caught up: [`Etcd::wait_healthy`]) with the seconds the stop took.
    ///
    /// # Errors
    /// No such member, or it could not be started.
    pub async fn restart_member(&mut self, name: &str, revision: &str) -> Result<Duration, String> {
        let took = self.stop_member(name).await?;
        self.start_member(name)?;
        let i = self.index(name)?;
        self.members[i].revision = revision.to_string();
        Ok(took)
    }

    /// Stops member `name` as a pod's deletion does (SIGTERM, SIGKILL past [`STOP_GRACE`]) and leaves
    /// it stopped until [`Etcd::start_member`]; returns the seconds the stop took (zero when it was
    /// not running).
    ///
    /// # Errors
    /// No such member.
    pub async fn stop_member(&mut self, name: &str) -> Result<Duration, String> {
        let i = self.index(name)?;
        match self.members[i].proc.take() {
            Some(mut proc) => Ok(proc.stop(STOP_GRACE).await.0),
            None => Ok(Duration::ZERO),
        }
    }

    /// Starts member `name` again on its data, as it was; nothing when it runs.
    ///
    /// # Errors
    /// No such member, or it could not be started.
    pub fn start_member(&mut self, name: &str) -> Result<(), String> {
        let i = self.index(name)?;
        if self.members[i].proc.is_none() {
            let proc = self.work.spawn(name, self.command(i))?;
            self.members[i].proc = Some(proc);
        }
        Ok(())
    }

    fn index(&self, name: &str) -> Result<usize, String> {
        self.members
            .iter()
            .position(|m| m.name == name)
            .ok_or(format!("no etcd member {name}"))
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for m in &mut self.members {
            if let Some(p) = m.proc.as_mut() {
                p.stop_blocking(STOP_GRACE);
            }
        }
    }
}

/// A 64-bit number the gateway sends as a decimal string (or, leniently, a JSON number).
pub(super) fn number(v: &Value) -> Option<u64> {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| v.as_u64())
}
