//! Scenarios behind `sts-stepper simulate`: format, run, timeline and summary.
//!
//! - [`spec`]: the YAML format ([`Scenario`], its events and [`Action`]s);
//! - [`run`](mod@run): [`Player`] plays one second at a time, [`run()`] a whole scenario into a
//!   [`Run`] with its [`Summary`]; `play` carries out the actions and the stepper's passes;
//! - [`frame`]: one line of the timeline ([`Frame`], [`PodView`]); [`render`](mod@render): the text.

pub mod frame;
mod play;
pub mod render;
pub mod run;
pub mod spec;

pub use frame::{Frame, PodView};
pub use render::{render, render_summary};
pub use run::{Player, Run, Summary, run};
pub use spec::{
    Action, ApplicationSpec, ApplySpec, Event, Scenario, SetSpec, StepperMode, StepperSpec,
    TimingSpec,
};

/// Runs `text` (a scenario file) and renders it (the `simulate` subcommand).
///
/// # Errors
/// The scenario does not parse, or its initial CREATE is refused.
pub fn simulate(text: &str, native: bool, seed: u64) -> Result<String, String> {
    let scenario = Scenario::from_yaml(text)?;
    let run = run(&scenario, native, seed)?;
    Ok(render(&run, &scenario))
}
