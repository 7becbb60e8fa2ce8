//! Whether a pass needs pods at all ([`needs_pods`]), decided from the StatefulSet list alone.

use std::borrow::Borrow;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::config::{Keys, SetConfig};
use crate::gates;
use crate::model::set;

/// True when some StatefulSet of `sets` (owned or shared) is guarded, has a staged update and a
/// partition > 0, or has approval requests to withdraw ([`gates::withdraws_requests`]): only then do
/// the gates need pods and PDBs, so a pass over a cluster with nothing staged costs one LIST.
pub fn needs_pods<S: Borrow<StatefulSet>>(sets: &[S], keys: &Arc<Keys>) -> bool {
    sets.iter().map(Borrow::borrow).any(|s| {
        let config = SetConfig::parse(s, keys);
        (config.guarded(s) && set::has_staged_update(s) && set::partition(s).unwrap_or(0) > 0)
            || gates::withdraws_requests(&config)
    })
}
