//! The policy's decision table (docs/design.md, "The policy: decision table") as one `match` over the facts
//! of a CREATE or UPDATE of an `apps/v1` StatefulSet.
//!
//! [`decide`] reads the objects ([`StatefulSetView`]), computes `Facts` once, and matches them one arm per
//! row, in the table's order. What the answer does to the object is [`Change`], applied by [`apply`]
//! (JSON editing, in `edit.rs`); the request around it (kind, subresource, operation) is `response.rs`.

use serde_json::Value;

use crate::Error;
use crate::annotations;
use crate::spec_compare::spec_equal_ignoring_partition;
use crate::view::StatefulSetView;

pub use crate::edit::apply;

/// Which row of the decision table applied (docs/design.md, "The policy: decision table", rows numbered from
/// the top; a row with several conditions has one variant each). Stable names, used in logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// docs/design.md row 1: not an `apps/v1 StatefulSet`, so a mis-scoped policy must not break the cluster.
    NotAStatefulSet,
    /// Row 1: a subresource (`status`, `scale`), which never carries a template change.
    Subresource,
    /// Row 1: DELETE or CONNECT.
    NotCreateOrUpdate,
    /// Row 2: annotated `<prefix>/force-rolling-update: "true"`, partition removed (native rolling update).
    Forced,
    /// Row 3: `updateStrategy.type: OnDelete`, nothing to stage.
    OnDelete,
    /// Row 4: CREATE of a guarded set, partition = `spec.replicas`.
    StagedOnCreate,
    /// Row 5: `.spec` changed on a set none of whose pods ever became Ready, partition removed, so a broken
    /// first deployment is fixed by a plain re-apply.
    NotInitialized,
    /// Row 6: `.spec` changed on an initialized set, partition = new `spec.replicas` (and the `initialized`
    /// stamp when the old object was fully Ready).
    StagedOnUpdate,
    /// Row 7: only the partition changed, and it was raised.
    PartitionRaised,
    /// Row 7: only the partition changed, lowered by a request that also changes
    /// `<prefix>/last-partition-update` (the stepper's step, or `sts-stepper step`).
    Stepped,
    /// Row 7: only the partition changed, lowered on a set that was never initialized.
    LoweredBeforeInitialized,
    /// Row 8: only the partition changed, lowered without the step stamp on an initialized set (a GitOps or
    /// `kubectl apply` re-apply of `partition: 0`, a hand edit): the old partition is restored.
    PartitionRestored,
    /// Row 9: neither `.spec` nor the partition changed (metadata-only update).
    MetadataOnly,
}

/// What to do with the object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Leave the object as it is.
    None,
    /// Set `.spec.updateStrategy.rollingUpdate.partition` to this count of pods and mark the set
    /// `<prefix>/guarded: "true"` (the partition is this project's to lower); optionally also stamp
    /// `<prefix>/initialized: "true"`.
    SetPartition {
        /// The new partition (an ordinal: pods with ordinal ≥ partition get `updateRevision`).
        partition: i32,
        /// Also add the `<prefix>/initialized: "true"` annotation.
        stamp_initialized: bool,
    },
    /// Remove `.spec.updateStrategy.rollingUpdate.partition`.
    RemovePartition,
}

/// The decision for one admission request: the table row and the change it calls for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The row of the decision table that applied.
    pub row: Row,
    /// The change to make to `request.object`.
    pub change: Change,
}

impl Decision {
    fn unchanged(row: Row) -> Self {
        Decision {
            row,
            change: Change::None,
        }
    }

    fn set_partition(row: Row, partition: i32, stamp_initialized: bool) -> Self {
        Decision {
            row,
            change: Change::SetPartition {
                partition,
                stamp_initialized,
            },
        }
    }
}

/// CREATE (no stored object) or UPDATE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operation {
    Create,
    Update,
}

/// How the request moves `spec.updateStrategy.rollingUpdate.partition` (absent counts as 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartitionMove {
    Raised,
    Lowered,
    Same,
}

/// A count the API server's validation refuses anyway (so the policy names it rather than guess).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Negative {
    Replicas(i32),
    Partition(i32),
}

/// The facts the table's rows are written in, computed once per request. The UPDATE-only facts are
/// `false`/`Same` on a CREATE; the counts are what the changes are made of.
#[derive(Debug, Clone, Copy)]
struct Facts {
    operation: Operation,
    /// `<prefix>/force-rolling-update: "true"` on the new object.
    forced: bool,
    /// `spec.updateStrategy.type` other than `RollingUpdate` (absent is `RollingUpdate`): `OnDelete`.
    on_delete: bool,
    /// A negative `spec.replicas` or partition on the new object.
    negative: Option<Negative>,
    /// UPDATE: `.spec` differs from the stored one other than in the partition.
    spec_changed: bool,
    /// UPDATE: how the partition moved.
    partition: PartitionMove,
    /// UPDATE: the request sets `<prefix>/last-partition-update` to a new value (removing it does not count).
    stamp_changed: bool,
    /// UPDATE: the stored object is initialized (some pod of it was ever Ready).
    initialized: bool,
    /// UPDATE: the stored object is fully Ready with at least one replica (a set scaled to 0 is trivially
    /// Ready but no pod of it ever was) and the new object lacks `<prefix>/initialized: "true"`.
    fully_ready_unstamped: bool,
    /// New `spec.replicas` (1 when absent).
    replicas: i32,
    /// The new object has a partition.
    has_partition: bool,
    /// The stored partition (0 when absent or on CREATE).
    old_partition: i32,
}

/// The decision table for an apps/v1 StatefulSet CREATE (`old` is `None`) or UPDATE (`old` is the stored
/// object), both the request's raw JSON. `prefix` is the annotation prefix (settings `annotationPrefix`).
///
/// # Errors
/// A malformed object, naming the field (`request.object.spec.replicas: invalid type: …`), and counts the
/// API server's validation refuses anyway (negative `spec.replicas` or partition), in its wording.
pub fn decide(new: &Value, old: Option<&Value>, prefix: &str) -> Result<Decision, Error> {
    let new = StatefulSetView::read(new, "request.object")?;
    let old = old
        .map(|o| StatefulSetView::read(o, "request.oldObject"))
        .transpose()?;
    decide_read(&new, old.as_ref(), prefix)
}

/// [`decide`] on objects already read.
///
/// # Errors
/// Negative `spec.replicas` or partition, in the API server's wording.
pub fn decide_read(
    new: &StatefulSetView,
    old: Option<&StatefulSetView>,
    prefix: &str,
) -> Result<Decision, Error> {
    table(&facts(new, old, prefix))
}

fn facts(new: &StatefulSetView, old: Option<&StatefulSetView>, prefix: &str) -> Facts {
    let replicas = new.replicas();
    let negative = match (replicas, new.partition) {
        (r, _) if r < 0 => Some(Negative::Replicas(r)),
        (_, Some(p)) if p < 0 => Some(Negative::Partition(p)),
        _ => None,
    };
    let mut facts = Facts {
        operation: Operation::Create,
        forced: new.is_forced(prefix),
        on_delete: !new.is_rolling_update(),
        negative,
        spec_changed: false,
        partition: PartitionMove::Same,
        stamp_changed: false,
        initialized: false,
        fully_ready_unstamped: false,
        replicas,
        has_partition: new.partition.is_some(),
        old_partition: 0,
    };
    if let Some(old) = old {
        let (before, after) = (old.partition.unwrap_or(0), new.partition.unwrap_or(0));
        let stamp = annotations::LAST_PARTITION_UPDATE;
        let new_stamp = new.annotation(prefix, stamp);
        facts.operation = Operation::Update;
        facts.spec_changed = !spec_equal_ignoring_partition(new.spec, old.spec);
        facts.partition = match after.cmp(&before) {
            std::cmp::Ordering::Greater => PartitionMove::Raised,
            std::cmp::Ordering::Less => PartitionMove::Lowered,
            std::cmp::Ordering::Equal => PartitionMove::Same,
        };
        facts.stamp_changed = new_stamp.is_some() && new_stamp != old.annotation(prefix, stamp);
        facts.initialized = old.is_initialized(prefix);
        facts.fully_ready_unstamped = old.replicas() > 0
            && old.is_fully_ready()
            && !new.is_annotation_true(prefix, annotations::INITIALIZED);
        facts.old_partition = before;
    }
    facts
}

/// docs/design.md's table, one arm per row in its order (rows with several conditions take one arm per
/// condition). The first row (other kinds, operations and subresources) is decided before the objects
/// are read, in `response.rs`. Kept on one line per arm, like the table it mirrors.
#[rustfmt::skip]
fn table(f: &Facts) -> Result<Decision, Error> {
    use Operation::{Create, Update};
    use PartitionMove::{Lowered, Raised, Same};
    use Row::*;
    let decision = match *f {
        // Row 2, CREATE or UPDATE, forced: remove the partition (a person asked for the native update).
        Facts { forced: true, has_partition: true, .. } => Decision { row: Forced, change: Change::RemovePartition },
        Facts { forced: true, has_partition: false, .. } => Decision::unchanged(Forced),
        // Row 3, CREATE or UPDATE, `OnDelete`: accept unchanged, nothing to stage.
        Facts { on_delete: true, .. } => Decision::unchanged(OnDelete),
        // Not a row: counts the API server's validation refuses anyway are refused, naming the field.
        Facts { negative: Some(n), .. } => return Err(refusal(n)),
        // Row 4, CREATE, guarded: partition = `spec.replicas`.
        Facts { operation: Create, replicas, .. } => Decision::set_partition(StagedOnCreate, replicas, false),
        // Row 5, UPDATE, `.spec` changed, not initialized: remove the partition (fixable by a plain re-apply).
        Facts { operation: Update, spec_changed: true, initialized: false, .. } => Decision { row: NotInitialized, change: Change::RemovePartition },
        // Row 6, UPDATE, `.spec` changed, initialized: partition = new replicas, and stamp if it was fully Ready.
        Facts { operation: Update, spec_changed: true, replicas, fully_ready_unstamped: stamp, .. } => Decision::set_partition(StagedOnUpdate, replicas, stamp),
        // Row 7, UPDATE, only the partition: raised, or lowered with the step stamp, or lowered before
        // initialization: accept unchanged.
        Facts { operation: Update, partition: Raised, .. } => Decision::unchanged(PartitionRaised),
        Facts { operation: Update, partition: Lowered, stamp_changed: true, .. } => Decision::unchanged(Stepped),
        Facts { operation: Update, partition: Lowered, initialized: false, .. } => Decision::unchanged(LoweredBeforeInitialized),
        // Row 8, UPDATE, only the partition, lowered without the stamp, initialized: restore the old partition.
        Facts { operation: Update, partition: Lowered, old_partition, .. } => Decision::set_partition(PartitionRestored, old_partition, false),
        // Row 9, UPDATE, metadata only: accept unchanged.
        Facts { operation: Update, partition: Same, .. } => Decision::unchanged(MetadataOnly),
    };
    Ok(decision)
}

/// The API server's own refusal of a negative count (`ValidateNonnegativeField`).
fn refusal(n: Negative) -> Error {
    let (field, value) = match n {
        Negative::Replicas(r) => ("spec.replicas", r),
        Negative::Partition(p) => ("spec.updateStrategy.rollingUpdate.partition", p),
    };
    Error::Negative { field, value }
}
