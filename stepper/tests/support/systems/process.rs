//! The processes of a real system: each spawned in its own process group with its output in a log file,
//! stopped with SIGTERM (then SIGKILL past a grace), and a guard that cleans up after the test binary.
//!
//! A shared system lives in a `static` and is never dropped; a test binary killed mid-run drops nothing at
//! all. So every [`Workdir`] starts a guard: a `sh` in its own process group whose stdin is a pipe from the
//! test process. The pipe closes when the test process exits, however it exits (the kernel closes its
//! descriptors, even after SIGKILL), or when the [`Workdir`] is dropped; the guard then sends SIGTERM to
//! every process group still recorded (Patroni stops its PostgreSQL on SIGTERM), SIGKILL after
//! [`GUARD_GRACE_S`] seconds to what is left and to any postmaster still listed in a `postmaster.pid`
//! (Patroni starts PostgreSQL in a session of its own, patroni/postgresql/postmaster.py@v3.0.2 l.31), then
//! removes the data directory. The logs stay, under `<target>/tmp/systems/<system>/`, for the next reader.
//! Ctrl-C in a terminal signals the foreground process group only, which holds none of these.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Seconds the guard waits after SIGTERM before SIGKILL.
pub const GUARD_GRACE_S: u32 = 10;
/// Pause between two polls of a wait.
pub const POLL: Duration = Duration::from_millis(100);
/// Lines of a log quoted in an error.
const TAIL_LINES: usize = 15;

/// Runs after the test process lets go of its stdin: `$1` the file of recorded process groups, `$2` the
/// data directory. Ignores the terminal's signals: only the closed pipe ends it.
const GUARD_SCRIPT: &str = r#"
trap '' INT HUP TERM QUIT PIPE
cat >/dev/null 2>&1
groups() { cat "$1" 2>/dev/null; }
for g in $(groups "$1"); do kill -TERM -"$g" 2>/dev/null; done
i=0
while [ "$i" -lt $((GRACE * 10)) ]; do
  alive=
  for g in $(groups "$1"); do kill -0 -"$g" 2>/dev/null && alive=1; done
  [ -n "$alive" ] || break
  sleep 0.1
  i=$((i + 1))
done
for g in $(groups "$1"); do kill -KILL -"$g" 2>/dev/null; done
for f in "$2"/*/postmaster.pid; do
  [ -f "$f" ] || continue
  p=$(head -n 1 "$f")
  case "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" in
    *"-D ${f%/postmaster.pid} "*) kill -KILL "$p" ;;
  esac
done
rm -rf "$2"
"#;

/// The process groups alive, written to a file the guard reads.
struct Registry {
    file: PathBuf,
    groups: Mutex<BTreeSet<i32>>,
}

impl Registry {
    fn change(&self, f: impl FnOnce(&mut BTreeSet<i32>)) {
        let mut groups = self
            .groups
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut groups);
        let text: String = groups.iter().map(|g| format!("{g}\n")).collect();
        let tmp = self.file.with_extension("tmp");
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, &self.file);
        }
    }
}

/// A system's directories (data in a temp dir, logs under the target dir) and its guard.
pub struct Workdir {
    /// Where the system keeps its data; removed by the guard.
    pub data: PathBuf,
    /// Where its processes' logs go: `<target>/tmp/systems/<system>/`, emptied when it starts.
    pub logs: PathBuf,
    registry: Arc<Registry>,
    guard: Option<(Child, ChildStdin)>,
}

impl Workdir {
    /// A fresh data directory and log directory for `system`, and the guard over them.
    pub fn new(system: &str) -> Result<Workdir, String> {
        let data = tempfile::Builder::new()
            .prefix(&format!("sts-{system}-"))
            .tempdir()
            .map_err(|e| format!("temp dir for {system}: {e}"))?
            .keep();
        let logs = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("systems")
            .join(system);
        let _ = std::fs::remove_dir_all(&logs);
        std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
        let registry = Arc::new(Registry {
            file: data.join(".process-groups"),
            groups: Mutex::new(BTreeSet::new()),
        });
        registry.change(|_| {});
        let mut guard = Command::new("sh")
            .arg("-c")
            .arg(GUARD_SCRIPT)
            .arg("guard")
            .arg(&registry.file)
            .arg(&data)
            .env("GRACE", GUARD_GRACE_S.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("the guard of {system} (sh): {e}"))?;
        let stdin = guard.stdin.take().expect("piped stdin");
        Ok(Workdir {
            data,
            logs,
            registry,
            guard: Some((guard, stdin)),
        })
    }

    /// The log file of process `name`.
    pub fn log(&self, name: &str) -> PathBuf {
        self.logs.join(format!("{name}.log"))
    }

    /// Spawns `command` as process `name` in its own process group, stdin closed, stdout and stderr
    /// appended to [`Workdir::log`] after a line saying when it started.
    pub fn spawn(&self, name: &str, mut command: Command) -> Result<Proc, String> {
        let log = self.log(name);
        let mut file = File::options()
            .create(true)
            .append(true)
            .open(&log)
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let _ = writeln!(
            file,
            "=== harness: starting {name}: {command:?} (unix time {} s)",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        );
        let err = file.try_clone().map_err(|e| format!("{e}"))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("spawning {name} ({command:?}): {e}"))?;
        let pid = i32::try_from(child.id()).expect("pid fits i32");
        self.registry.change(|g| {
            g.insert(pid);
        });
        Ok(Proc {
            name: name.to_string(),
            child,
            log,
            registry: self.registry.clone(),
        })
    }
}

impl Drop for Workdir {
    /// Lets the guard run (stop what is left, remove the data) and waits for it, at most twice its grace.
    fn drop(&mut self) {
        if let Some((mut guard, stdin)) = self.guard.take() {
            drop(stdin);
            let deadline = Instant::now() + Duration::from_secs(2 * u64::from(GUARD_GRACE_S));
            while Instant::now() < deadline {
                if !matches!(guard.try_wait(), Ok(None)) {
                    return;
                }
                std::thread::sleep(POLL);
            }
        }
    }
}

/// One spawned process (the leader of its own process group) and its log.
pub struct Proc {
    name: String,
    child: Child,
    log: PathBuf,
    registry: Arc<Registry>,
}

impl Proc {
    /// Its pid (= its process group id).
    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("pid fits i32")
    }

    /// Its log file.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// True while it has not exited (reaps it when it has).
    pub fn running(&mut self) -> bool {
        let running = matches!(self.child.try_wait(), Ok(None));
        if !running {
            let pid = self.pid();
            self.registry.change(|g| {
                g.remove(&pid);
            });
        }
        running
    }

    /// Sends `signal` (`libc::SIGTERM`, …) to the process alone.
    pub fn signal(&self, signal: i32) -> Result<(), String> {
        send(self.pid(), signal).map_err(|e| format!("{} (pid {}): {e}", self.name, self.pid()))
    }

    /// SIGTERM, then waits up to `grace` for the exit; past it, SIGKILL to its whole group. Returns the
    /// seconds it took and whether it had to be killed.
    pub async fn stop(&mut self, grace: Duration) -> (Duration, bool) {
        let started = Instant::now();
        if self.running() {
            let _ = self.signal(libc::SIGTERM);
        }
        while self.running() {
            if started.elapsed() > grace {
                self.kill();
                return (started.elapsed(), true);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        (started.elapsed(), false)
    }

    /// [`Proc::stop`] for `Drop`: blocks the thread.
    pub fn stop_blocking(&mut self, grace: Duration) {
        let started = Instant::now();
        if self.running() {
            let _ = self.signal(libc::SIGTERM);
        }
        while self.running() {
            if started.elapsed() > grace {
                self.kill();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL to its process group, and reaps it.
    pub fn kill(&mut self) {
        if self.running() {
            let _ = send(-self.pid(), libc::SIGKILL);
            let _ = self.child.wait();
            self.running();
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// kill(2): `pid` < 0 names a process group.
pub fn send(pid: i32, signal: i32) -> Result<(), String> {
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(())
    } else {
        Err(format!(
            "kill({pid}, {signal}): {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// The uid and gid PostgreSQL runs as when the tests run as root (it refuses root: "root" execution of
/// the PostgreSQL server is not permitted, src/backend/main/main.c); `None` when not root (it runs as the
/// current user). Read from /etc/passwd (user `postgres`, created by Debian's postgresql-common).
pub fn postgres_user() -> Result<Option<(u32, u32)>, String> {
    // SAFETY: geteuid(2) has no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(|e| format!("/etc/passwd: {e}"))?;
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() > 3 && f[0] == "postgres")
        .and_then(|f| Some((f[2].parse().ok()?, f[3].parse().ok()?)))
        .map(Some)
        .ok_or_else(|| {
            "running as root, and there is no user postgres to run PostgreSQL as (Debian's \
             postgresql-common creates it)"
                .to_string()
        })
}

/// The last lines of `log`, indented, for an error message.
pub fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = &lines[lines.len().saturating_sub(TAIL_LINES)..];
    tail.iter().map(|l| format!("\n    | {l}")).collect()
}

/// Polls `probe` every [`POLL`] until it returns `Ok`, for at most `limit`.
///
/// # Errors
/// Nothing within `limit`: names `what`, the probe's last error, and each log with its last lines.
pub async fn wait_for<T, F, Fut>(
    what: &str,
    limit: Duration,
    logs: &[PathBuf],
    mut probe: F,
) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let started = Instant::now();
    loop {
        let last = match probe().await {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        if started.elapsed() > limit {
            let logs: String = logs
                .iter()
                .map(|l| format!("\n  log {}:{}", l.display(), log_tail(l)))
                .collect();
            return Err(format!(
                "waited {:.0} s for {what}; last: {last}{logs}",
                limit.as_secs_f64()
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}
