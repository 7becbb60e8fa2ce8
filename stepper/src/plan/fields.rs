//! Every reader of the API objects in a pass and what it reads ([`readers`]), and their union
//! ([`union`]): what `watch`'s caches must keep of each StatefulSet, pod and PodDisruptionBudget
//! (`cluster::cached`), so that a pass decides on the caches as on a LIST (docs/design.md, "`once`
//! and `watch` decide the same"). Each reader declares its fields beside its code (the gates in
//! [`crate::gates::GATES`]); `stepper/tests/decisions/fields.rs` holds each to its declaration and the caches to
//! the union.

use crate::config;
use crate::gates;
use crate::model::fields::{self, Field, Reader, set};
use crate::plan::{figures, rbac, rollback};

/// What the pass itself reads to find a candidate's pods: the set's `spec.selector`
/// (`model::set::pod_selector`).
pub const PASS_READS: &[Field] = &[set("spec.selector")];

/// Every reader of a pass: the objects' identity and ownership, the annotations' parse, the gates and
/// their helpers, the pass's pod reads, the figures, the rollback's pins.
pub fn readers() -> Vec<Reader> {
    let mut all = vec![
        fields::IDENTITY,
        fields::OWNERSHIP,
        Reader {
            name: "config::SetConfig::parse",
            fields: config::READS,
        },
        Reader {
            name: "pass::reads (a candidate's pods)",
            fields: PASS_READS,
        },
        Reader {
            name: "plan::figures",
            fields: figures::READS,
        },
        Reader {
            name: "plan::rollback (its pins)",
            fields: rollback::READS,
        },
        Reader {
            name: "plan::rbac (the RBAC a set will need)",
            fields: rbac::READS,
        },
    ];
    all.extend(gates::readers());
    all
}

/// The union of [`readers`]' fields, sorted, each once.
pub fn union() -> Vec<Field> {
    let mut all: Vec<Field> = readers()
        .iter()
        .flat_map(|r| r.fields.iter().copied())
        .collect();
    all.sort();
    all.dedup();
    all
}
