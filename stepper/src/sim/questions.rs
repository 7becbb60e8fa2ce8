//! The harm oracle's account of the questions asked of each pod and of the answers given (docs/approvals.md,
//! "One question, one answer"): an answer counts only for the last question asked of the pod.
//!
//! On the pods (the handshake), a question is a stepper write that sets or changes the request
//! (`update-requested`, `update-requested-at`, `update-request-phase`), an answer the application's
//! write of `update-approved`; each is numbered in the order the API server applied it (one sequence
//! for the world), so a question and an answer of the same virtual second are still ordered. Through
//! the webhook, a question is a `requestId`: a pod's last question changes when a call covering it
//! carries another id, and an `Approve` counts only when the application started on its request after
//! that change (its work is keyed on the id: an id seen before another question was asked — A → B → A
//! with the same id — would be a reuse of what it concluded about A before B).
//!
//! It records only; nothing the stepper, the controller or the application reads.

use std::collections::BTreeMap;

/// The questions and answers seen so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Questions {
    /// The number of the last write seen.
    seq: u64,
    /// Per pod uid: the number of the last question asked of it.
    asked: BTreeMap<String, u64>,
    /// Per pod uid: the approval on it, with the number of the write that set it and its revision.
    approved: BTreeMap<String, (u64, String)>,
    /// Per ordinal: the webhook's last question covering the pod (`requestId`) and the virtual
    /// second it became the last.
    webhook_last: BTreeMap<u32, (String, i64)>,
}

/// The request's annotations (short names): a write setting or changing one of them asks a question.
const REQUEST: [&str; 3] = [
    sts_safe_rollout_rules::annotations::UPDATE_REQUESTED,
    sts_safe_rollout_rules::annotations::UPDATE_REQUESTED_AT,
    sts_safe_rollout_rules::annotations::UPDATE_REQUEST_PHASE,
];

impl Questions {
    /// A stepper write on the pod `uid` changed its annotations from `before` to `after` (full keys
    /// under `prefix`): a question when it set or changed a request annotation; an approval it removed
    /// is gone.
    pub fn note_stepper_write(
        &mut self,
        uid: &str,
        prefix: &str,
        before: &BTreeMap<String, String>,
        after: &BTreeMap<String, String>,
    ) {
        self.seq += 1;
        let key = |n: &str| sts_safe_rollout_rules::annotations::key(prefix, n);
        let asks = REQUEST.iter().any(|n| {
            let k = key(n);
            after.get(&k).is_some() && after.get(&k) != before.get(&k)
        });
        if asks {
            self.asked.insert(uid.to_string(), self.seq);
        }
        let approved = key(sts_safe_rollout_rules::annotations::UPDATE_APPROVED);
        if !after.contains_key(&approved) {
            self.approved.remove(uid);
        }
    }

    /// The application approved `revision` on the pod `uid`.
    pub fn note_approval(&mut self, uid: &str, revision: &str) {
        self.seq += 1;
        self.approved
            .insert(uid.to_string(), (self.seq, revision.to_string()));
    }

    /// Why the approval on the pod `uid` does not answer the last question asked of it about
    /// `revision`: none recorded, another revision's, or one given before that question; `None` when
    /// it does.
    pub fn stale_approval(&self, uid: &str, revision: &str) -> Option<String> {
        let Some((at, approved)) = self.approved.get(uid) else {
            return Some(format!("no recorded approval of {revision}"));
        };
        if approved != revision {
            return Some(format!("its recorded approval is of {approved}"));
        }
        match self.asked.get(uid) {
            Some(asked) if asked > at => Some(format!(
                "approved {revision} (write #{at}) before the last question asked of it (write #{asked})"
            )),
            _ => None,
        }
    }

    /// A webhook call at second `t` asked `request_id` about the pods at `ordinals`.
    pub fn note_webhook_call(&mut self, ordinals: &[u32], request_id: &str, t: i64) {
        for o in ordinals {
            let same = self
                .webhook_last
                .get(o)
                .is_some_and(|(id, _)| id == request_id);
            if !same {
                self.webhook_last.insert(*o, (request_id.to_string(), t));
            }
        }
    }

    /// Why an `Approve` of `request_id`, on which the application started at second `first_seen`,
    /// does not answer the last question asked about the pod at `ordinal`: another id is the last, or
    /// the work started before this id became the last; `None` when it answers it.
    pub fn stale_webhook_approval(
        &self,
        ordinal: u32,
        request_id: &str,
        first_seen: i64,
    ) -> Option<String> {
        match self.webhook_last.get(&ordinal) {
            Some((id, _)) if id != request_id => Some(format!(
                "its Approve answered request {request_id}, the last question was {id}"
            )),
            Some((_, since)) if first_seen < *since => Some(format!(
                "its Approve of request {request_id} rests on work started at t={first_seen}, before \
                 that request became the last question asked of it (t={since})"
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (format!("p/{k}"), (*v).to_string()))
            .collect()
    }

    #[test]
    fn an_approval_before_the_last_question_is_stale() {
        let mut q = Questions::default();
        q.note_stepper_write("u", "p", &map(&[]), &map(&[("update-requested", "A")]));
        q.note_approval("u", "A");
        assert_eq!(q.stale_approval("u", "A"), None);
        // Asked about B: the approval of A stays on the pod (an old stepper left it).
        let before = map(&[("update-requested", "A"), ("update-approved", "A")]);
        let after = map(&[("update-requested", "B"), ("update-approved", "A")]);
        q.note_stepper_write("u", "p", &before, &after);
        assert!(q.stale_approval("u", "A").is_some());
        // A withdrawal asks nothing; a removed approval is gone.
        q.note_stepper_write("u", "p", &after, &map(&[]));
        assert_eq!(
            q.stale_approval("u", "A").as_deref(),
            Some("no recorded approval of A")
        );
        q.note_approval("u", "B");
        assert_eq!(
            q.stale_approval("u", "A").as_deref(),
            Some("its recorded approval is of B")
        );
    }

    #[test]
    fn a_webhook_id_seen_before_another_question_is_stale() {
        let mut q = Questions::default();
        q.note_webhook_call(&[4], "a", 10);
        assert_eq!(q.stale_webhook_approval(4, "a", 10), None);
        q.note_webhook_call(&[4], "b", 20);
        assert!(q.stale_webhook_approval(4, "a", 10).is_some());
        q.note_webhook_call(&[4], "a", 30);
        q.note_webhook_call(&[4], "a", 31);
        assert!(
            q.stale_webhook_approval(4, "a", 10).is_some(),
            "A → B → A under one id"
        );
        assert_eq!(q.stale_webhook_approval(4, "a", 30), None);
    }
}
