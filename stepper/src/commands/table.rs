//! The text of `status`'s output: left-aligned columns ([`table`]), and what follows the table
//! ([`sections`]: health messages, canary plans, stuck pods).

use crate::plan::set_status::RolloutStatus;
use crate::rollout::health::HealthStatus;

/// Below the table: the health message of each set not Healthy or unguarded, the canary plans
/// (`pause_at_key`: the annotation), the RBAC the stepper recorded it lacks, then the stuck pods
/// (`recovery_on`: judged as with `--recover-stuck-pods`).
pub fn sections(items: &[RolloutStatus], recovery_on: bool, pause_at_key: &str) -> String {
    let mut out = String::new();
    let unhealthy: Vec<String> = items
        .iter()
        .filter(|i| i.health.status != HealthStatus::Healthy.as_str() || i.unguarded)
        .map(|i| {
            format!(
                "  {}/{} {}: {}\n",
                i.namespace, i.name, i.health.status, i.health.message
            )
        })
        .collect();
    if !unhealthy.is_empty() {
        out.push_str("\nHealth (as Argo CD and Flux report it with deploy/gitops/):\n");
        out.extend(unhealthy);
    }
    let plans_text: Vec<String> = items
        .iter()
        .filter_map(|i| {
            let plan = i.pause_plan.as_ref()?;
            Some(format!(
                "  {}/{} {}: {}\n",
                i.namespace, i.name, plan.written, plan.state
            ))
        })
        .collect();
    if !plans_text.is_empty() {
        out.push_str(&format!("\nPause points ({pause_at_key}):\n"));
        out.push_str(&plans_text.concat());
    }
    let rbac: Vec<String> = items
        .iter()
        .filter_map(|i| {
            let what = i.recorded.missing_rbac.as_ref()?;
            Some(format!("  {}/{} {what}\n", i.namespace, i.name))
        })
        .collect();
    if !rbac.is_empty() {
        out.push_str("\nRBAC the stepper lacks (recorded by it, missing-rbac):\n");
        out.extend(rbac);
    }
    let stuck: Vec<_> = items
        .iter()
        .filter_map(|i| Some((i, i.stuck_pod.as_ref()?)))
        .collect();
    if !stuck.is_empty() {
        let heading = if recovery_on {
            "with --recover-stuck-pods on the stepper"
        } else {
            "recovery off, --recover-stuck-pods"
        };
        out.push_str(&format!("\nStuck pods ({heading}):\n"));
        for (item, p) in stuck {
            out.push_str(&format!(
                "  {}/{} {}: not Ready for {}s on revision {}, its ordinal runs {}: {}\n",
                item.namespace,
                item.name,
                p.name,
                p.not_ready_seconds,
                p.revision,
                p.expected_revision,
                p.recovery_message
            ));
        }
    }
    out
}

/// Left-aligned columns separated by two spaces; the last column is not padded.
pub fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
