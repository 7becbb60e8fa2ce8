//! What the return of a pod left on a failed revision is about ([`ReturnPod`]) and what the gates say
//! of it this pass ([`Return`]); decided by [`super::returning`].

use crate::model::reasons::Blocked;

/// A pod below the partition on the failed revision, to be returned to `status.currentRevision`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReturnPod {
    /// `metadata.name` (`web-3`).
    pub name: String,
    /// `metadata.uid`: the DELETE's precondition.
    pub uid: String,
    /// `metadata.resourceVersion`: the DELETE's precondition.
    pub resource_version: String,
    /// Its ordinal.
    pub ordinal: u32,
    /// The failed revision it runs (`failed-revision`, `status.updateRevision`).
    pub revision: String,
    /// The revision the controller creates it from again: `status.currentRevision`.
    pub to: String,
    /// How many pods of the set (this one included) run the failed revision below the partition.
    pub left: usize,
}

/// What the gates say about returning a set's [`ReturnPod`] this pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Return {
    /// The pod.
    pub pod: ReturnPod,
    /// `None`: every gate of the step back passed, the pod is deleted this pass; else the first gate
    /// of the step back that holds it.
    pub held: Option<Blocked>,
}

impl Return {
    /// True when the pod is deleted this pass.
    pub fn deletes(&self) -> bool {
        self.held.is_none()
    }
}
