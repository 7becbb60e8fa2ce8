//! A [`Cluster`](crate::cluster::Cluster) whose writes go through only while this replica leads:
//! reads pass, and every write asks [`Leadership::is_leader`] right before it is sent and fails with
//! [`ClusterError::NotLeader`] (nothing sent) once it does not.

use crate::cluster::ClusterError;
use crate::cluster::wrapper::Wrapper;
use crate::leader::Leadership;

/// `inner`, writing only while `leadership` says this replica leads (docs/design.md, "High
/// availability"): a replica that lost the Lease mid-pass stops writing at its next write, within the
/// renew deadline, whatever the pass in flight decided.
pub struct LeaderCluster<'a, C> {
    /// The cluster that reads and writes.
    pub inner: &'a C,
    /// This replica's election.
    pub leadership: &'a Leadership,
}

/// Only [`Wrapper::before_write`]: every write of the [`Cluster`](crate::cluster::Cluster) trait —
/// each goes through it in [`Wrapper`]'s defaults, a write added later too — is refused while this
/// replica does not lead; every read goes to `inner` unchanged.
impl<C: crate::cluster::Cluster> Wrapper for LeaderCluster<'_, C> {
    type Inner = C;

    fn inner(&self) -> &C {
        self.inner
    }

    fn before_write(&self, action: impl FnOnce() -> String) -> Result<(), ClusterError> {
        if self.leadership.is_leader() {
            Ok(())
        } else {
            Err(ClusterError::NotLeader { action: action() })
        }
    }
}
