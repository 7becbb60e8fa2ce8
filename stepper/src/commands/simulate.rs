//! `simulate`: plays a scenario file on the simulated cluster (no API server) and prints its timeline.

use anyhow::{Context as _, Result};

use super::context::Exit;
use crate::cli::SimulateArgs;

/// Plays `args.scenario` and prints the timeline on stdout.
///
/// # Errors
/// The file cannot be read, or the scenario is invalid.
pub fn run(args: &SimulateArgs) -> Result<Exit> {
    let text = std::fs::read_to_string(&args.scenario)
        .with_context(|| format!("read scenario {}", args.scenario.display()))?;
    let out = crate::sim::scenario::simulate(&text, args.native, args.seed)
        .map_err(|e| anyhow::anyhow!("scenario {}: {e}", args.scenario.display()))?;
    print!("{out}");
    Ok(Exit::Ok)
}
