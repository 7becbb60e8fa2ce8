//! The programs the real systems need, or a loud skip: the rule of `support/prometheus_bin.rs` (a missing
//! program fails the test — `scripts/setup.sh`, run by `make test`, installs it — unless the run accepts
//! skipping with `ALLOW_SKIP=1`: then a loud `SKIPPED` line, the test's name appended to the skip log
//! `$SKIP_LOG`, else `<target dir>/tmp/test-skips.log`, which `make test` counts; scripts/skips.bats).

use std::io::Write;
use std::path::{Path, PathBuf};

/// PostgreSQL's server programs: `$PG_BIN_DIR`, else Debian's `/usr/lib/postgresql/15/bin` (package
/// `postgresql-15` installs them off `PATH`; `scripts/setup.sh` reads the same variable).
pub fn pg_bin_dir() -> PathBuf {
    std::env::var_os("PG_BIN_DIR").map_or_else(
        || PathBuf::from("/usr/lib/postgresql/15/bin"),
        PathBuf::from,
    )
}

/// `name` on `PATH`, as `command -v` finds it.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// True when every program is there (a name on `PATH`, or a path naming a file). Otherwise the test
/// fails naming the missing ones and their Debian packages, or, under `ALLOW_SKIP=1`, the skip is
/// logged and this returns false (the caller then returns).
///
/// `programs`: (program, Debian package) pairs.
///
/// # Panics
/// A program is missing and `ALLOW_SKIP` is not `1`.
pub fn require(programs: &[(&str, &str)]) -> bool {
    let missing: Vec<String> = programs
        .iter()
        .filter(|(program, _)| {
            if program.contains('/') {
                !Path::new(program).is_file()
            } else {
                on_path(program).is_none()
            }
        })
        .map(|(program, package)| format!("{program} (Debian package {package})"))
        .collect();
    if missing.is_empty() {
        return true;
    }
    skip_or_fail(&format!("not installed: {}", missing.join(", ")));
    false
}

/// A real component this test needs is missing: fails the test, unless `ALLOW_SKIP=1`, where the test's
/// name goes to the skip log and a loud `SKIPPED` line to stderr (the caller then returns).
///
/// # Panics
/// `ALLOW_SKIP` is not `1`.
fn skip_or_fail(message: &str) {
    assert!(
        std::env::var("ALLOW_SKIP").as_deref() == Ok("1"),
        "{message}; run `scripts/setup.sh` to install it, or set ALLOW_SKIP=1 to skip this test"
    );
    let test = std::thread::current()
        .name()
        .unwrap_or("an unnamed test")
        .to_string();
    let log = std::env::var_os("SKIP_LOG").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-skips.log"),
        PathBuf::from,
    );
    let logged = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| writeln!(f, "{}::{test}: {message}", env!("CARGO_CRATE_NAME")));
    assert!(
        logged.is_ok(),
        "cannot append to the skip log {}: {logged:?}",
        log.display()
    );
    let stars = "*".repeat(72);
    let _ = writeln!(
        std::io::stderr(),
        "\n{stars}\nSKIPPED: {test}: {message}\n{stars}"
    );
}
