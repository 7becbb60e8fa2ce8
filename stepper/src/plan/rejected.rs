//! A write the API server refused (a step, or the status annotations): its record in
//! `<prefix>/degraded-reason`, so the Warning Event that tells the set's owner goes out when the
//! refusal first appears and again only when its message changes — not once per pass.
//!
//! The record is `<Kind>: <detail>` (`StepRejected: admission webhook "x" denied the request: …`),
//! the shape every writer of `degraded-reason` uses (GitOps health reads any value as Degraded). It
//! is written by a metadata-only JSON Patch of its own after the refused write, pinned by `test` ops,
//! and removed again by the write that succeeds (a step; for a refused status write, the next status
//! write), or once no step is pending any more.

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, Patch, PatchOperation, TestOperation};
use serde_json::{Value, json};

use crate::config::Keys;
use crate::gates::Verdict;
use crate::plan::events::{STATUS_WRITE_REJECTED, STEP_REJECTED};

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
    /// The Event reason and record kind: [`STEP_REJECTED`] or [`STATUS_WRITE_REJECTED`].
    pub fn reason(self) -> &'static str {
        match self {
            RefusedWrite::Step => STEP_REJECTED,
            RefusedWrite::StatusAnnotations => STATUS_WRITE_REJECTED,
        }
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

    /// The `<prefix>/degraded-reason` value: `<Kind>: <detail>`, the detail cut at [`MAX_DETAIL`]
    /// bytes (on a character boundary), so the same refusal always gives the same value.
    pub fn record(&self) -> String {
        let mut detail = self.message.clone();
        if detail.len() > MAX_DETAIL {
            let mut end = MAX_DETAIL;
            while !detail.is_char_boundary(end) {
                end -= 1;
            }
            detail.truncate(end);
            detail.push('…');
        }
        format!("{}: {detail}", self.write.reason())
    }

    /// True when `recorded` (the `degraded-reason` on the set as read) is not this refusal's record:
    /// the refusal is new or its message changed, so it is announced.
    pub fn is_news(&self, recorded: Option<&str>) -> bool {
        recorded != Some(self.record().as_str())
    }
}

/// What a record patch needs of the set as last known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordBase<'a> {
    /// `metadata.annotations` is present (the record adds a key; else it adds the map).
    pub annotated: bool,
    /// `metadata.resourceVersion`.
    pub resource_version: Option<&'a str>,
    /// The `degraded-reason` on it, if any.
    pub recorded: Option<&'a str>,
}

/// The metadata-only JSON Patch that records `value` in `degraded-reason` on the set `base`
/// describes: `test` the old value and `add` the new one; with no old value, `test` the
/// `resourceVersion` (a set changed since it was read is left for the next pass) and add the key
/// (the whole annotations map when the set has none — only ever pinned to the `resourceVersion`
/// read: a set read without one is tested against `""`, which no stored object has).
pub fn record_patch(keys: &Keys, base: RecordBase<'_>, value: &str) -> Patch {
    let key = &keys.degraded_reason;
    let path = ptr(&["metadata", "annotations", key]);
    let mut ops = Vec::new();
    match (base.recorded, base.resource_version) {
        (Some(old), _) => ops.push(test(path.clone(), json!(old))),
        (None, Some(rv)) => ops.push(test(ptr(&["metadata", "resourceVersion"]), json!(rv))),
        // Never a whole map unpinned (`plan::patch::annotation_ops`): `""` is no stored version.
        (None, None) if !base.annotated => {
            ops.push(test(ptr(&["metadata", "resourceVersion"]), json!("")));
        }
        (None, None) => {}
    }
    ops.push(PatchOperation::Add(if base.annotated {
        AddOperation {
            path,
            value: json!(value),
        }
    } else {
        AddOperation {
            path: ptr(&["metadata", "annotations"]),
            value: json!({ key.as_str(): value }),
        }
    }));
    Patch(ops)
}

/// The JSON Pointer of `tokens` (as [`crate::plan::patch::ptr`], which imports this module).
fn ptr(tokens: &[&str]) -> PointerBuf {
    PointerBuf::from_tokens(tokens.iter().copied())
}

fn test(path: PointerBuf, value: Value) -> PatchOperation {
    PatchOperation::Test(TestOperation { path, value })
}

/// The kind of a `degraded-reason` value (`StepRejected` of `StepRejected: …`).
fn kind(recorded: Option<&str>) -> Option<&str> {
    recorded.and_then(|r| r.split_once(':')).map(|(k, _)| k)
}

/// True when a successful step removes `recorded`: the refusal of a step or of a status write
/// (the step's patch carries the status annotations too).
pub fn cleared_by_step(recorded: Option<&str>) -> bool {
    matches!(kind(recorded), Some(STEP_REJECTED | STATUS_WRITE_REJECTED))
}

/// True when a pass whose `verdict` is not a step removes `recorded` with its status annotations:
/// a refused status write (the write that removes it is itself a status write that succeeded), and a
/// refused step once no step is pending (`Idle`, `Unguarded`).
pub fn cleared_without_step(recorded: Option<&str>, verdict: &Verdict) -> bool {
    match kind(recorded) {
        Some(STATUS_WRITE_REJECTED) => !matches!(verdict, Verdict::Step { .. }),
        Some(STEP_REJECTED) => matches!(verdict, Verdict::Idle(_) | Verdict::Unguarded(_)),
        _ => false,
    }
}
