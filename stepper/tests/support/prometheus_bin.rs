//! The `prometheus` binary of the tests that run a real Prometheus, or a loud skip.
//!
//! [`prometheus_bin`]: `$PROMETHEUS_BIN`, else `prometheus` on `PATH` (Debian's package); absent → the
//! test fails (`scripts/setup.sh`, run by `make test`, installs it), unless the run accepts skipping
//! with `ALLOW_SKIP=1`: then a loud `SKIPPED` line on stderr, the test's name appended to the skip log
//! (`$SKIP_LOG`, else `<target dir>/tmp/test-skips.log`, counted by `make test`) and `None` (the test
//! then returns: [`prometheus_or_skip!`]).
#![allow(dead_code)] // each test crate uses a subset

use std::io::Write;
use std::path::{Path, PathBuf};

/// The `prometheus` binary, or return from the test (under `ALLOW_SKIP=1`, after the harness logged the
/// skip; otherwise the harness fails the test).
#[allow(unused_macros)] // each test crate uses a subset
macro_rules! prometheus_or_skip {
    () => {
        match $crate::support::prometheus_bin::prometheus_bin() {
            Some(bin) => bin,
            None => return,
        }
    };
}
#[allow(unused_imports)] // each test crate uses a subset
pub(crate) use prometheus_or_skip;

/// The `prometheus` binary, or `None` after a loud `SKIPPED` line when the run allows skipping (see the
/// module doc).
///
/// # Panics
/// `$PROMETHEUS_BIN` names no file; or no Prometheus and `ALLOW_SKIP` is not `1`.
pub fn prometheus_bin() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("PROMETHEUS_BIN") {
        let bin = PathBuf::from(bin);
        assert!(
            bin.is_file(),
            "PROMETHEUS_BIN={} is not a file",
            bin.display()
        );
        return Some(bin);
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("prometheus"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        skip_or_fail("prometheus not installed (Debian package prometheus)");
    }
    found
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
    // Straight to stderr: the test harness captures `eprintln!` of passing tests.
    let stars = "*".repeat(72);
    let _ = writeln!(
        std::io::stderr(),
        "\n{stars}\nSKIPPED: {test}: {message}\n{stars}"
    );
}
