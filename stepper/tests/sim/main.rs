//! Whole rollouts on the simulated StatefulSet controller (`sts_stepper::sim`): scenarios, the property tests (both stepper modes), the simulation's own parts.
//!
//! One test binary of modules, one per former file (cargo's guide on test organisation): the
//! stepper's crates are compiled and linked once for all of them instead of once per file
//! (BENCHMARKS.md, "A fresh machine"). Run one file's tests with `cargo test --test sim NAME::`.

#[path = "../rollback_support/mod.rs"]
mod rollback_support;
#[path = "../sim_canary_cases/mod.rs"]
mod sim_canary_cases;
#[path = "../support/mod.rs"]
mod support;

mod sim_app_gates;
mod sim_approvals;
mod sim_auto_rollback;
mod sim_bad_revisions;
mod sim_canary;
mod sim_canary_trial;
mod sim_fleet;
mod sim_incidents;
mod sim_interference;
mod sim_modes;
mod sim_one_question;
mod sim_properties;
mod sim_recovery;
mod sim_rollback;
mod sim_rollback_bad_image;
mod sim_rollback_properties;
mod sim_rollouts;
mod sim_subcommand;
mod sim_webhook;
mod simulated;
