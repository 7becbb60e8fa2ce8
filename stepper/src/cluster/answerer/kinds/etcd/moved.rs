//! What etcd's answer to MoveLeader means (pure): started, refused, or an error — read from the body's
//! gRPC `code` and `message`, never the HTTP status (FailedPrecondition is HTTP 412 in etcd 3.4 and 3.5,
//! 400 from 3.6; etcdserver/api/v3rpc/rpctypes/error.go).

use super::decide::MoveLeader;
use super::gateway::{
    CallError, FAILED_PRECONDITION, GatewayError, NOT_LEADER, PERMISSION_DENIED, UNAUTHENTICATED,
};
use crate::cluster::answerer::system::Acted;

/// What etcd's answer to `m` means: `Ok` (`200 {}`, sent once the leader changed) → started, confirmed
/// by the next read; FailedPrecondition `etcdserver: not leader` → the leader changed since the read,
/// so started too (the next read decides again); another FailedPrecondition (`etcdserver: bad leader
/// transferee`: the target is no voter) → refused; Unauthenticated or PermissionDenied → an error of
/// the entry's credentials; anything else (no answer, `leader transfer took too long`) → an error.
pub fn moved(m: &MoveLeader, got: Result<(), CallError>) -> Acted {
    let what = format!("leadership {} → {}", m.leader, m.target);
    match got {
        Ok(()) => Acted::Started(format!("etcd: {what} moved; confirming")),
        Err(CallError::Etcd(_, e)) if e.code == FAILED_PRECONDITION && e.words() == NOT_LEADER => {
            Acted::Started(format!(
                "etcd: {what}: {} is no longer the leader ({NOT_LEADER}); reading again",
                m.leader
            ))
        }
        Err(
            e @ CallError::Etcd(
                _,
                GatewayError {
                    code: FAILED_PRECONDITION,
                    ..
                },
            ),
        ) => Acted::Refused(format!("etcd refused to move {what}: {e}")),
        Err(
            e @ CallError::Etcd(
                _,
                GatewayError {
                    code: UNAUTHENTICATED | PERMISSION_DENIED,
                    ..
                },
            ),
        ) => Acted::Failed(format!(
            "etcd: moving {what}: {e} (the entry's credentials)"
        )),
        Err(e) => Acted::Failed(format!("etcd: moving {what}: {e}")),
    }
}
