//! A write the API server refused (a step, or the status annotations): its record in
//! `<prefix>/degraded-reason`, so the Warning Event that tells the set's owner goes out when the
//! refusal first appears and again only when its message changes — not once per pass.
//!
//! The record is `<Kind>: <detail>` (`StepRejected: admission webhook "x" denied the request: …`),
//! the shape every writer of `degraded-reason` uses (GitOps health reads any value as Degraded). It
//! is written by a metadata-only JSON Patch of its own after the refused write, pinned by `test` ops,
//! and removed again by the write that succeeds (a step; for a refused status write, the next status
//! write), or once no step is pending any more.

use crate::gates::Verdict;
use crate::model::degraded::{DegradedKind, Record};

/// Longest detail kept in the record (bytes; the Event note is at most 1 kB).
const MAX_DETAIL: usize = 600;

/// Which write the API server refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusedWrite {
    /// The step's JSON Patch (or a step the API server accepted but stored with another partition).
    Step,
    /// The metadata-only patch of the status annotations.
    StatusAnnotations,
}

impl RefusedWrite {
    /// The record's kind: [`DegradedKind::StepRejected`] or [`DegradedKind::StatusWriteRejected`].
    pub fn kind(self) -> DegradedKind {
        match self {
            RefusedWrite::Step => DegradedKind::StepRejected,
            RefusedWrite::StatusAnnotations => DegradedKind::StatusWriteRejected,
        }
    }

    /// The Event reason, the record kind's name: `StepRejected` or `StatusWriteRejected`.
    pub fn reason(self) -> &'static str {
        self.kind().as_str()
    }
}

/// A refused write and the API server's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The write.
    pub write: RefusedWrite,
    /// The API server's message, on one line.
    pub message: String,
}

impl Rejection {
    /// The refusal of `write` with the server's `message` (whitespace folded to single spaces).
    pub fn new(write: RefusedWrite, message: &str) -> Self {
        Rejection {
            write,
            message: message.split_whitespace().collect::<Vec<_>>().join(" "),
        }
    }

    /// The `<prefix>/degraded-reason` record, its detail cut at `MAX_DETAIL` bytes (on a character
    /// boundary), so the same refusal always gives the same record.
    pub fn degraded(&self) -> Record {
        Record::new(self.write.kind(), self.detail())
    }

    /// The `<prefix>/degraded-reason` value: `<Kind>: <detail>` ([`Rejection::degraded`]).
    pub fn record(&self) -> String {
        self.degraded().value()
    }

    fn detail(&self) -> String {
        let mut detail = self.message.clone();
        if detail.len() > MAX_DETAIL {
            let mut end = MAX_DETAIL;
            while !detail.is_char_boundary(end) {
                end -= 1;
            }
            detail.truncate(end);
            detail.push('…');
        }
        detail
    }

    /// True when `recorded` (the `degraded-reason` on the set as read) is not this refusal's record:
    /// the refusal is new or its message changed, so it is announced.
    pub fn is_news(&self, recorded: Option<&str>) -> bool {
        recorded != Some(self.record().as_str())
    }
}

/// True when a successful step removes `recorded`: the refusal of a step or of a status write (the
/// step's patch carries the status annotations too) — [`DegradedKind::cleared_by_step`] for a refusal.
pub fn cleared_by_step(recorded: Option<&str>) -> bool {
    recorded
        .and_then(DegradedKind::of)
        .is_some_and(|k| k.refused() && k.cleared_by_step(false))
}

/// True when a pass whose `verdict` is not a step removes `recorded` with its status annotations: a
/// refused status write, and a refused step once no step is pending (`Idle`, `Unguarded`) —
/// [`DegradedKind::cleared_without_step`] for a refusal.
pub fn cleared_without_step(recorded: Option<&str>, verdict: &Verdict) -> bool {
    let nothing_to_step = matches!(verdict, Verdict::Idle(_) | Verdict::Unguarded(_));
    !matches!(verdict, Verdict::Step { .. })
        && recorded
            .and_then(DegradedKind::of)
            .is_some_and(|k| k.refused() && k.cleared_without_step(nothing_to_step))
}
