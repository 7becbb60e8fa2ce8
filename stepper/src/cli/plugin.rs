//! How the binary names itself: `sts-stepper`, or the kubectl plugin `kubectl safe-rollout` when run
//! through a `kubectl-safe_rollout` link (kubectl plugins: a `-` in the command is `_` in the file name).

use clap::{CommandFactory, FromArgMatches};

use crate::cli::args::{Cli, long_about};

/// The file name of the kubectl plugin: kubectl runs `kubectl-safe_rollout` on PATH for `kubectl
/// safe-rollout …` (kubectl plugins: a `-` in the command is `_` in the file name).
pub const PLUGIN_FILE: &str = "kubectl-safe_rollout";
/// How a person types the plugin.
pub const PLUGIN_COMMAND: &str = "kubectl safe-rollout";

/// True when `argv0` (the path the binary was run as) is the kubectl plugin link ([`PLUGIN_FILE`]).
pub fn is_plugin(argv0: &str) -> bool {
    std::path::Path::new(argv0)
        .file_name()
        .and_then(|f| f.to_str())
        .is_some_and(|f| f == PLUGIN_FILE || f == format!("{PLUGIN_FILE}.exe"))
}

/// The clap command as run from `argv0`: as the kubectl plugin, usage lines, examples and errors
/// say `kubectl safe-rollout …`; otherwise `sts-stepper …`.
pub fn command(argv0: &str) -> clap::Command {
    let cmd = Cli::command();
    if is_plugin(argv0) {
        cmd.name(PLUGIN_FILE)
            .bin_name(PLUGIN_COMMAND)
            .display_name(PLUGIN_COMMAND)
            .long_about(long_about().replace("sts-stepper ", &format!("{PLUGIN_COMMAND} ")))
    } else {
        cmd
    }
}

/// Parses a command line whose first item is the path the binary was run as ([`command`]).
///
/// # Errors
/// clap's error (its `exit()` prints usage or help and exits 2 or 0).
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let argv0 = args
        .first()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut cmd = command(&argv0);
    let matches = cmd.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}
