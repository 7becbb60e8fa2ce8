//! The leader election's loop: read the Lease, take or renew it with a `resourceVersion`
//! precondition, publish whether this replica may write, release the Lease on resign.
//!
//! Logs one line per change, never per retry: this replica acquired or lost the Lease, another
//! replica holds it now (INFO, naming the holder); Lease requests started or stopped failing (WARN,
//! then INFO). Renewals and repeated failures are DEBUG.

use std::sync::PoisonError;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use tokio::sync::watch;
use tokio::time::{Instant, sleep_until, timeout_at};
use tracing::{debug, info, warn};

use super::config::LeaderConfig;
use super::leadership::Leadership;
use super::record::{LeaseDecision, decide, first_record};

/// The Lease as last read or written, and since when its record has been seen unchanged.
pub(super) struct Seen {
    lease: Lease,
    since: Instant,
}

enum Tried {
    Leading,
    HeldBy(String),
}

/// Why this replica does not lead (for the log line of a loss).
#[derive(Clone, Copy, PartialEq, Eq)]
enum NotLeading {
    /// Another replica holds the Lease.
    HeldByAnother,
    /// No renewal succeeded within the renew deadline.
    Expired,
    /// `resign` (shutdown).
    Resigned,
}

/// One candidate's election loop ([`super::spawn`] runs it as a task).
pub(super) struct Elector {
    pub(super) leases: Api<Lease>,
    pub(super) config: LeaderConfig,
    pub(super) seen: Option<Seen>,
    pub(super) state: Leadership,
    pub(super) flag: watch::Sender<bool>,
    pub(super) stop: watch::Receiver<bool>,
    /// The holder last logged (this replica's identity while it leads), so a change is logged once.
    pub(super) holder: Option<String>,
    /// Lease requests are failing: logged once when they start and once when they stop.
    pub(super) failing: bool,
}

impl Elector {
    pub(super) async fn run(mut self) {
        let mut conflicts = 0;
        while !*self.stop.borrow() {
            let started = Instant::now();
            // A holder's attempt may not outlive its leadership; a candidate's gives up after the
            // renew deadline (a hung request must not stall the loop).
            let limit = self
                .state
                .valid_until()
                .unwrap_or(started + self.config.renew_deadline);
            match timeout_at(limit, self.try_acquire_or_renew()).await {
                Ok(Ok(Tried::Leading)) => {
                    self.requests_succeed();
                    let until = started + self.config.renew_deadline;
                    self.set_leading(Some(until), None, NotLeading::HeldByAnother);
                }
                Ok(Ok(Tried::HeldBy(holder))) => {
                    self.requests_succeed();
                    self.set_leading(None, Some(&holder), NotLeading::HeldByAnother);
                }
                Ok(Err(kube::Error::Api(s))) if s.code == 409 && conflicts < 2 => {
                    // Someone wrote the Lease since we read it: read it again now.
                    conflicts += 1;
                    continue;
                }
                Ok(Err(e)) => self.requests_fail(&e.to_string()),
                Err(_) => self.requests_fail("timed out"),
            }
            conflicts = 0;
            self.expire(Instant::now());
            let mut wake = Instant::now() + self.config.retry_period;
            if let Some(until) = self.state.valid_until() {
                wake = wake.min(until);
            }
            let stopped = tokio::select! {
                () = sleep_until(wake) => false,
                _ = self.stop.changed() => true,
            };
            if !stopped {
                self.expire(wake);
            }
        }
        self.set_leading(None, None, NotLeading::Resigned);
        self.release().await;
    }

    /// Turns the flag false once the leadership's deadline has passed.
    fn expire(&mut self, now: Instant) {
        if self.state.valid_until().is_some_and(|u| now >= u) {
            self.set_leading(None, None, NotLeading::Expired);
        }
    }

    /// Publishes whether this replica leads (`until`: its deadline) and logs a change once: acquired,
    /// lost (`why`, and the new `holder` when known), or — not leading either way — a new holder.
    /// The channel notifies its receivers only when the value changes.
    fn set_leading(&mut self, until: Option<Instant>, holder: Option<&str>, why: NotLeading) {
        *self
            .state
            .until
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = until;
        let leading = until.is_some();
        self.state.gauge.set(i64::from(leading));
        let was = *self.flag.borrow();
        self.flag
            .send_if_modified(|v| std::mem::replace(v, leading) != leading);
        let (lease, identity) = (&self.config.lease_name, &self.config.identity);
        let holder = if leading {
            Some(identity.as_str())
        } else {
            holder
        };
        let new_holder = holder.is_some() && holder != self.holder.as_deref();
        match (was, leading) {
            (false, true) => {
                info!(%lease, %identity, holder = %identity, "leader election: acquired the Lease: this replica leads")
            }
            (true, true) => debug!(%lease, %identity, "leader election: renewed the Lease"),
            (true, false) if why == NotLeading::Resigned => {
                info!(%lease, %identity, "leader election: resigned: released the Lease")
            }
            (true, false) => {
                let holder = holder.unwrap_or("unknown");
                let reason = match why {
                    NotLeading::Expired => "no renewal within the renew deadline",
                    _ => "another replica holds the Lease",
                };
                warn!(%lease, %identity, %holder, reason, "leader election: lost the Lease: this replica stops writing")
            }
            (false, false) if new_holder => {
                let holder = holder.unwrap_or_default();
                info!(%lease, %identity, %holder, "leader election: the Lease is held by {holder}")
            }
            (false, false) => {
                debug!(%lease, %identity, holder = holder.unwrap_or(""), "leader election: not leading")
            }
        }
        if holder.is_some() {
            self.holder = holder.map(str::to_string);
        }
    }

    /// A Lease request failed: WARN when requests start failing, DEBUG while they keep failing.
    fn requests_fail(&mut self, error: &str) {
        let (lease, identity) = (&self.config.lease_name, &self.config.identity);
        if self.failing {
            debug!(%lease, %identity, %error, "leader election: Lease request failed again");
        } else {
            warn!(%lease, %identity, %error, "leader election: Lease request failed (retrying every retry period)");
            self.failing = true;
        }
    }

    /// A Lease request succeeded: INFO once when requests had been failing.
    fn requests_succeed(&mut self) {
        if self.failing {
            let (lease, identity) = (&self.config.lease_name, &self.config.identity);
            info!(%lease, %identity, "leader election: Lease requests succeed again");
            self.failing = false;
        }
    }

    async fn try_acquire_or_renew(&mut self) -> Result<Tried, kube::Error> {
        let params = write_params();
        let Some(lease) = self.leases.get_opt(&self.config.lease_name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.config.lease_name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(first_record(&self.config, Timestamp::now())),
            };
            let created = self.leases.create(&params, &lease).await?;
            self.observe(created);
            return Ok(Tried::Leading);
        };
        self.observe(lease.clone());
        let since = self.seen.as_ref().map_or_else(Instant::now, |s| s.since);
        let spec = lease.spec.clone().unwrap_or_default();
        match decide(&spec, since.elapsed(), &self.config, Timestamp::now()) {
            LeaseDecision::HeldBy(holder) => Ok(Tried::HeldBy(holder)),
            LeaseDecision::Write(record) => {
                let update = Lease {
                    spec: Some(record),
                    ..lease
                };
                let stored = self
                    .leases
                    .replace(&self.config.lease_name, &params, &update)
                    .await?;
                self.observe(stored);
                Ok(Tried::Leading)
            }
        }
    }

    /// Remembers `lease`; its clock restarts whenever its `resourceVersion` differs from the last one
    /// seen. client-go compares the record instead (its locks include Endpoints and ConfigMaps that
    /// others write); on a Lease every renewal changes both, and any other write only delays a
    /// takeover, never hastens it.
    fn observe(&mut self, lease: Lease) {
        let since = match &self.seen {
            Some(seen)
                if seen.lease.metadata.resource_version == lease.metadata.resource_version =>
            {
                seen.since
            }
            _ => Instant::now(),
        };
        self.seen = Some(Seen { lease, since });
    }

    /// client-go's `release`: clear the holder and shorten the lease to 1 s, if we hold it.
    async fn release(&mut self) {
        let Some(Seen { lease, .. }) = self.seen.take() else {
            return;
        };
        let Some(spec) = &lease.spec else { return };
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return;
        }
        let now = Some(MicroTime(Timestamp::now()));
        let released = Lease {
            spec: Some(LeaseSpec {
                holder_identity: None,
                lease_duration_seconds: Some(1),
                acquire_time: now.clone(),
                renew_time: now,
                ..spec.clone()
            }),
            ..lease
        };
        let params = write_params();
        if let Err(e) = self
            .leases
            .replace(&self.config.lease_name, &params, &released)
            .await
        {
            warn!(lease = %self.config.lease_name, error = %e, "leader election: lease not released");
        }
    }
}

/// Every write to the Lease is made by field manager `sts-stepper`.
fn write_params() -> PostParams {
    PostParams {
        field_manager: Some(crate::cluster::kube::MANAGER.into()),
        ..PostParams::default()
    }
}
