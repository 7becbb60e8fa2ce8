//! `status`'s table as the command prints it: the in-cluster stepper's record first (RECORDED), with
//! whether it is current; with `--local` also the gates evaluated on this machine (NEXT (LOCAL VIEW)),
//! saying which flags it lacks for each set. The local view alone is [`super::status_table`].

use super::table::{sections, table};
use crate::plan::set_status::RolloutStatus;

/// How the table is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// `--local`: add the gates evaluated here.
    pub local: bool,
    /// Whether the records are current, in words ([`crate::rollout::record::Freshness::describe`]).
    pub freshness: String,
}

const HEAD: [&str; 7] = [
    "NAMESPACE",
    "STATEFULSET",
    "PARTITION",
    "UPDATED/READY/REPLICAS",
    "CURRENT-REVISION",
    "UPDATE-REVISION",
    "HEALTH",
];

/// The first seven cells of `item`'s row (all but NEXT).
fn common(item: &RolloutStatus) -> Vec<String> {
    let mut row = item.row().to_vec();
    row.truncate(7);
    row
}

/// The table of `items` as `view` says, the sections below it (`sections`), then where the records
/// come from and how current they are, and with `--local` what the local view cannot judge.
pub fn render(
    items: &[RolloutStatus],
    view: &View,
    recovery_on: bool,
    pause_at_key: &str,
) -> String {
    let mut out = if view.local {
        let mut rows: Vec<[String; 9]> = vec![cells(
            HEAD.iter()
                .map(|h| h.to_string())
                .chain(["RECORDED".into(), "NEXT (LOCAL VIEW)".into()]),
        )];
        rows.extend(items.iter().map(|i| {
            cells(
                common(i)
                    .into_iter()
                    .chain([recorded_cell(i), i.row()[7].clone()]),
            )
        }));
        table(&rows)
    } else {
        let mut rows: Vec<[String; 8]> = vec![cells(
            HEAD.iter()
                .map(|h| h.to_string())
                .chain(["RECORDED".into()]),
        )];
        rows.extend(
            items
                .iter()
                .map(|i| cells(common(i).into_iter().chain([recorded_cell(i)]))),
        );
        table(&rows)
    };
    out.push_str(&sections(items, recovery_on, pause_at_key));
    out.push_str(&format!(
        "\nRECORDED: what the in-cluster stepper wrote on each set (docs/annotations.md); records {}\n",
        view.freshness
    ));
    if view.local {
        out.push_str(
            "NEXT (LOCAL VIEW): the gates evaluated on this machine, with its own flags and RBAC, \
             not by the in-cluster stepper.\n",
        );
        for i in items
            .iter()
            .filter(|i| !i.local_view.missing_flags.is_empty())
        {
            out.push_str(&format!(
                "  {}/{}: not judged here without {}\n",
                i.namespace,
                i.name,
                i.local_view.missing_flags.join(", ")
            ));
        }
    } else {
        out.push_str("Evaluate the gates on this machine too: --local.\n");
    }
    out
}

/// The RECORDED cell: the record's summary, marked when the record is stale.
fn recorded_cell(item: &RolloutStatus) -> String {
    match item.recorded.stale {
        Some(true) => format!("STALE {}", item.recorded.summary),
        _ => item.recorded.summary.clone(),
    }
}

/// `N` cells from an iterator yielding exactly `N` (fewer are padded with empty cells).
fn cells<const N: usize>(it: impl IntoIterator<Item = String>) -> [String; N] {
    let mut out: [String; N] = std::array::from_fn(|_| String::new());
    for (slot, cell) in out.iter_mut().zip(it) {
        *slot = cell;
    }
    out
}
