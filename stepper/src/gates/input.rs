//! Everything a gate may read about one StatefulSet ([`GateInput`]): the set, its annotations, its pods,
//! the PDBs of its namespace, the fleet's view of it ([`FleetView`]), what the pass read for the I/O
//! gates, the flags and `now`; and the shape of a gate ([`Gate`]).

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::next_step;
use super::options::GateOptions;
use super::probes::Probes;
use crate::config::SetConfig;
use crate::model::pods::PdbView;
use crate::model::reasons::Blocked;
use crate::model::set;

/// What the rest of the fleet means for one set: the StatefulSet that holds its rollout group
/// ([`super::fleet::group_holder`]), `None` when the set has no group or nothing in the group is staged.
#[derive(Clone, Copy, Debug, Default)]
pub struct FleetView<'a> {
    /// The group's holder.
    pub group_holder: Option<&'a StatefulSet>,
    /// The namespaces `--namespace-selector` selects, as listed this pass; `None` without it.
    pub covered_namespaces: Option<&'a BTreeSet<String>>,
}

/// Everything a gate may read about one StatefulSet.
#[derive(Clone, Copy, Debug)]
pub struct GateInput<'a> {
    /// The set as listed.
    pub set: &'a StatefulSet,
    /// Its annotations, read once ([`SetConfig::parse`]).
    pub config: &'a SetConfig,
    /// Its pods by ordinal ([`crate::model::pods::pods_by_ordinal`]); empty when not listed.
    pub pods: &'a BTreeMap<u32, &'a Pod>,
    /// The PDBs of its namespace (others are ignored).
    pub pdbs: &'a [PdbView<'a>],
    /// The holder of its rollout group.
    pub fleet: FleetView<'a>,
    /// What the pass read for the I/O gates so far.
    pub probes: &'a Probes,
    /// The flags.
    pub opts: &'a GateOptions,
    /// When the snapshot was taken.
    pub now: Timestamp,
}

impl GateInput<'_> {
    /// `spec.updateStrategy.rollingUpdate.partition`, 0 when absent.
    pub fn partition(&self) -> i32 {
        set::partition(self.set).unwrap_or(0)
    }

    /// The partition the next step lowers to: `step_target` with the set's step size, clamped so it
    /// does not pass the next pause point of the canary plan ([`super::pause_points::Position::clamp`]).
    pub fn target(&self) -> i32 {
        next_step::target(self.set, self.config)
    }
}

/// One gate: passes, or returns the [`Blocked`] with its reason.
pub type Gate = fn(&GateInput<'_>) -> Result<(), Blocked>;
