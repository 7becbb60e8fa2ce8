//! `preview`: which existing StatefulSets a scope of the policy would guard, and what each does on its
//! next template change ([`crate::rollout::preview`]). Reads only: a LIST of the StatefulSets the scope
//! selects, one of all of them in the same namespaces (to count the others), and for the namespace-label
//! scope a LIST of the namespaces it selects.
//!
//! Why a subcommand and not `status --would-guard`: `status` shows the stepper's verdict on the sets the
//! policy already guards, in a versioned document (`RolloutStatusList`); `preview` asks a different
//! question — of sets that are not guarded yet, under a scope the cluster may not run — with its own
//! flags (a namespace selector, the cluster-wide scope) and its own columns. A flag that changed what
//! `status` lists and prints would make its table and document mean two things.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::{Api, ListParams};

use super::context::{Context, Exit};
use super::table::table;
use crate::cli::namespace::query_namespaces;
use crate::cli::{PreviewArgs, PreviewScope};
use crate::cluster::Cluster;
use crate::cluster::kube::{KubeCluster, Scope};
use crate::config::{Keys, SetConfig};
use crate::rollout::preview::{NextChange, Preview, guarded_word, preview, staged_now_word};

/// Prints the preview of the scope the flags name.
///
/// # Errors
/// A failed LIST (of StatefulSets or of namespaces).
pub async fn run(ctx: &Context, args: &PreviewArgs) -> Result<Exit> {
    let namespaces = query_namespaces(&ctx.global.namespaces, args.all_namespaces, &ctx.namespace);
    let text = preview_text(&ctx.client, &args.scope(), namespaces, &ctx.keys).await?;
    print!("{text}");
    Ok(Exit::Ok)
}

/// The preview of `scope` over `namespaces` (empty: every namespace) as `preview` prints it: a table of
/// the sets the scope would guard, then the scope in words and how many sets it leaves out.
///
/// # Errors
/// A failed LIST.
pub async fn preview_text(
    client: &Client,
    scope: &PreviewScope,
    namespaces: Vec<String>,
    keys: &Arc<Keys>,
) -> Result<String> {
    let over = |label_selector: Option<String>| {
        KubeCluster::new(
            client.clone(),
            Scope {
                namespaces: namespaces.clone(),
                label_selector,
                field_selector: None,
            },
            None,
        )
    };
    let all = over(None).list_statefulsets().await?;
    let selected = match scope {
        PreviewScope::ObjectLabel(selector) => {
            let picked = over(Some(selector.clone())).list_statefulsets().await?;
            let names: BTreeSet<(String, String)> = picked.iter().map(|s| key_of(s)).collect();
            all.iter()
                .filter(|s| names.contains(&key_of(s)))
                .cloned()
                .collect()
        }
        PreviewScope::NamespaceLabel(selector) => {
            let labelled = labelled_namespaces(client, selector).await?;
            all.iter()
                .filter(|s| labelled.contains(s.metadata.namespace.as_deref().unwrap_or("")))
                .cloned()
                .collect()
        }
        PreviewScope::ClusterWide => all.clone(),
    };
    let previews: Vec<Preview> = selected
        .iter()
        .map(|s| preview(s, &SetConfig::parse(s, keys)))
        .collect();
    Ok(render(scope, &namespaces, all.len(), previews))
}

fn key_of(set: &StatefulSet) -> (String, String) {
    (
        set.metadata.namespace.clone().unwrap_or_default(),
        set.metadata.name.clone().unwrap_or_default(),
    )
}

/// The names of the namespaces `selector` matches (one LIST, the API server applies the selector).
///
/// # Errors
/// A failed LIST; a selector the API server cannot parse is its 400, named.
async fn labelled_namespaces(client: &Client, selector: &str) -> Result<BTreeSet<String>> {
    let api: Api<Namespace> = Api::all(client.clone());
    let list = api
        .list(&ListParams::default().labels(selector))
        .await
        .with_context(|| format!("listing the namespaces labelled {selector}"))?;
    Ok(list
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect())
}

/// The table, then the scope in words and the count of sets left out (`listed`: every set in the
/// namespaces looked at).
fn render(
    scope: &PreviewScope,
    namespaces: &[String],
    listed: usize,
    mut previews: Vec<Preview>,
) -> String {
    previews.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let (excluded, guarded): (Vec<Preview>, Vec<Preview>) = previews
        .into_iter()
        .partition(|p| p.next == NextChange::ExcludedNamespace);
    let place = match namespaces {
        [] => "every namespace".to_string(),
        [one] => format!("namespace {one}"),
        many => format!("namespaces {}", many.join(", ")),
    };
    let mut out = String::new();
    if guarded.is_empty() {
        let place = if namespaces.is_empty() {
            "any namespace"
        } else {
            &place
        };
        out.push_str(&format!("No StatefulSet in {place} is in this scope.\n"));
    } else {
        let mut rows = vec![[
            "NAMESPACE".to_string(),
            "STATEFULSET".into(),
            "STRATEGY".into(),
            "GUARDED-NOW".into(),
            "STAGED-NOW".into(),
            "ON-NEXT-TEMPLATE-CHANGE".into(),
        ]];
        rows.extend(guarded.iter().map(|p| {
            [
                p.namespace.clone(),
                p.name.clone(),
                p.strategy.clone(),
                guarded_word(p).into(),
                staged_now_word(p),
                p.next.to_string(),
            ]
        }));
        out.push_str(&table(&rows));
    }
    let staged = guarded
        .iter()
        .filter(|p| matches!(p.next, NextChange::Staged { .. }))
        .count();
    out.push_str(&format!("\nScope: {scope}, in {place}.\n"));
    out.push_str(&format!(
        "{} of {listed} StatefulSets are in this scope, {staged} of them staged on their next template change; \
         {} keep the native rolling update",
        guarded.len(),
        listed.saturating_sub(guarded.len())
    ));
    if excluded.is_empty() {
        out.push_str(".\n");
    } else {
        let names: Vec<String> = excluded
            .iter()
            .map(|p| format!("{}/{}", p.namespace, p.name))
            .collect();
        out.push_str(&format!(
            " ({} in the namespaces the policy always excludes: {}).\n",
            excluded.len(),
            names.join(", ")
        ));
    }
    out
}
