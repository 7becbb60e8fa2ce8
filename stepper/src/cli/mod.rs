//! Layer `cli`: the command line — its flags and subcommands ([`args`]), `watch`'s leader-election
//! flags ([`leader`]), the value parsers ([`values`]) and the binary's name as a kubectl plugin
//! ([`plugin`]).
//!
//! May import `leader`, `config`, `model` (ARCHITECTURE.md, "Layers"); only `commands` imports it.

pub mod args;
pub mod leader;
pub mod plugin;
pub mod values;

pub use args::{
    Cli, Command, GlobalArgs, LogFormat, PauseArgs, ResumeArgs, SimulateArgs, StatusArgs, StepArgs,
    WaitArgs, WatchArgs,
};
pub use values::Target;
