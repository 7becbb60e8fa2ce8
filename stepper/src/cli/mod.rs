//! Layer `cli`: the command line — its subcommands and global flags ([`args`]), the flag groups they
//! share ([`flags`]; the checks' own, [`checks`]), `watch`'s leader-election flags ([`leader`]), the value parsers ([`values`]),
//! which namespace a command means ([`namespace`], kubectl's rules), the binary's name as a
//! kubectl plugin ([`plugin`]), the approval webhooks' file ([`webhook_file`]) and `preview`'s scopes
//! ([`preview`]), and `status`'s flags about the in-cluster stepper's record ([`record`]), `release`'s
//! ([`release`]) and `wait`'s ([`wait`]).
//!
//! May import `leader`, `gates` (`--help` lists [`crate::gates::GATES`]), `config`, `model` (ARCHITECTURE.md,
//! "Layers"); only `commands` imports it.

pub mod args;
pub mod checks;
pub mod endpoint_file;
pub mod flags;
pub mod http_check_file;
pub mod leader;
pub mod namespace;
pub mod plugin;
pub mod preview;
pub mod record;
pub mod release;
pub mod values;
pub mod wait;
pub mod webhook_file;

pub use args::{
    Cli, Command, GlobalArgs, LogFormat, OnceArgs, PauseArgs, ResumeArgs, SimulateArgs, StatusArgs,
    StepArgs, WatchArgs,
};
pub use checks::{CheckArgs, HttpCheckArgs, PrometheusArgs, WebhookArgs};
pub use flags::{GateArgs, OutputFormat, PassArgs, ScopeArgs};
pub use namespace::NamespaceSource;
pub use preview::{PreviewArgs, PreviewScope};
pub use record::RecordArgs;
pub use release::ReleaseArgs;
pub use values::{Target, TargetRef};
pub use wait::WaitArgs;
