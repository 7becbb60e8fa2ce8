//! Real systems on 127.0.0.1 for the built-in answerers' tests (issue 45): a Patroni cluster (PostgreSQL
//! 15, etcd as its store), Redis with Sentinel, an etcd cluster — the Debian bookworm packages
//! `scripts/setup.sh` installs (patroni 3.0.2, postgresql-15, redis 7.0.15, etcd 3.4.23).
//!
//! Each system is started once per test binary ([`shared`]: the first test that asks starts it, the
//! others wait for it, then take turns through a lock), on free ports, with its data in a temp dir and
//! its logs under `<target>/tmp/systems/<system>/`; every start-up and wait is bounded and fails naming
//! the logs with their last lines; the processes stop when the test binary exits, however it exits
//! ([`process`]). Members are named like a StatefulSet's pods, and [`StatefulSetMap`] maps pod ordinal
//! `i` to member `i`: when the StatefulSet controller (simulated or real) would replace a pod, a test
//! calls [`Replace::replace_pod`], which restarts that member as the new revision.
#![allow(dead_code)] // each test uses a subset

pub mod etcd;
pub mod etcd_writer;
pub mod net;
pub mod patroni;
pub mod patroni_api;
pub mod pgwire;
pub mod process;
pub mod resp;
pub mod sentinel;
pub mod sentinel_api;
pub mod sentinel_writer;
pub mod shared;
pub mod tools;
pub mod writer;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A fresh number for a writer's run, so runs never count each other's items.
pub fn next_run() -> u32 {
    static RUN: AtomicU32 = AtomicU32::new(1);
    RUN.fetch_add(1, Ordering::Relaxed)
}

/// Pod ordinal `i` of StatefulSet `set` (pod `<set>-<i>`) ↔ member `i` of a system.
#[derive(Debug, Clone, PartialEq)]
pub struct StatefulSetMap {
    set: String,
    members: Vec<String>,
}

impl StatefulSetMap {
    /// StatefulSet `set` over `members`, ordinal `i` ↔ `members[i]`.
    pub fn new(set: &str, members: Vec<String>) -> StatefulSetMap {
        StatefulSetMap {
            set: set.to_string(),
            members,
        }
    }

    /// The same members behind a StatefulSet named `set` (a simulated set named otherwise).
    pub fn renamed(&self, set: &str) -> StatefulSetMap {
        StatefulSetMap::new(set, self.members.clone())
    }

    /// The StatefulSet's name.
    pub fn name(&self) -> &str {
        &self.set
    }

    /// Replicas (a count).
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Pod `<set>-<ordinal>`'s name.
    pub fn pod(&self, ordinal: usize) -> String {
        format!("{}-{ordinal}", self.set)
    }

    /// The member behind ordinal `ordinal`.
    pub fn member(&self, ordinal: usize) -> Option<&str> {
        self.members.get(ordinal).map(String::as_str)
    }

    /// The ordinal of pod `pod` (`<set>-<i>` with `i` below the replicas).
    pub fn ordinal(&self, pod: &str) -> Option<usize> {
        let i: usize = pod
            .strip_prefix(&self.set)?
            .strip_prefix('-')?
            .parse()
            .ok()?;
        (i < self.members.len()).then_some(i)
    }

    /// The member behind pod `pod`.
    pub fn member_of_pod(&self, pod: &str) -> Option<&str> {
        self.member(self.ordinal(pod)?)
    }

    /// The pod in front of member `member`.
    pub fn pod_of_member(&self, member: &str) -> Option<String> {
        self.members
            .iter()
            .position(|m| m == member)
            .map(|i| self.pod(i))
    }
}

/// A system whose members stand behind a StatefulSet's pods: what replacing a pod does to it.
pub trait Replace {
    /// The pods ↔ members map.
    fn pods(&self) -> &StatefulSetMap;

    /// The controller replaces pod `ordinal` with one of `revision`: the member restarts as it (each
    /// system's `restart_member`). Returns the seconds its stop took.
    fn replace_pod(
        &mut self,
        ordinal: usize,
        revision: &str,
    ) -> impl Future<Output = Result<Duration, String>> + Send;
}

macro_rules! replace_by_restart {
    ($system:ty) => {
        impl Replace for $system {
            fn pods(&self) -> &StatefulSetMap {
                self.set()
            }

            fn replace_pod(
                &mut self,
                ordinal: usize,
                revision: &str,
            ) -> impl Future<Output = Result<Duration, String>> + Send {
                let member = self.set().member(ordinal).map(String::from);
                let revision = revision.to_string();
                async move {
                    let member = member.ok_or(format!("no member at ordinal {ordinal}"))?;
                    self.restart_member(&member, &revision).await
                }
            }
        }
    };
}
replace_by_restart!(patroni::Patroni);
replace_by_restart!(sentinel::Sentinel);
replace_by_restart!(etcd::Etcd);
