//! A writer loop against a system's primary, as an application would run during a rollout: one write
//! per tick, each with a fresh id, reconnecting (to whoever is primary now) after a failure. It counts the
//! writes the system acknowledged and the gaps in which none was; the system's own `present` query then
//! tells whether an acknowledged write was lost.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

/// Seconds one write may take before it counts as failed (its outcome then unknown).
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(1);
/// Distinct error texts kept in a report.
const ERRORS_KEPT: usize = 8;

/// Where the writes go: one system's client, which finds the primary itself.
pub trait Sink: Send + 'static {
    /// Writes the item `id` to the primary; `Ok` only once the system acknowledged it. On `Err` the sink
    /// forgets its connection and finds the primary again on the next write.
    fn write(&mut self, id: u64) -> impl Future<Output = Result<(), String>> + Send;
}

/// What a writer saw.
#[derive(Debug, Clone, Default)]
pub struct WriteReport {
    /// Writes tried (a count).
    pub attempted: u64,
    /// The ids the system acknowledged, in order.
    pub acknowledged: Vec<u64>,
    /// Writes that failed or timed out (a count; their ids may or may not be stored).
    pub failed: u64,
    /// Each stretch without a write acknowledged, around one or more failures: from the last
    /// acknowledged write before the first failure (or the start) to the next acknowledged one, or to the
    /// end when none came.
    pub gaps: Vec<Duration>,
    /// The first distinct error texts, for the assertion messages.
    pub errors: Vec<String>,
}

impl WriteReport {
    /// The acknowledged ids that `present` (what the system holds now) lacks: lost writes.
    pub fn lost(&self, present: &BTreeSet<u64>) -> Vec<u64> {
        self.acknowledged
            .iter()
            .copied()
            .filter(|id| !present.contains(id))
            .collect()
    }

    /// The longest gap (zero without one).
    pub fn longest_gap(&self) -> Duration {
        self.gaps.iter().copied().max().unwrap_or_default()
    }

    /// One line: counts and gaps in seconds.
    pub fn summary(&self) -> String {
        let gaps: Vec<String> = self
            .gaps
            .iter()
            .map(|g| format!("{:.2} s", g.as_secs_f64()))
            .collect();
        format!(
            "{} writes, {} acknowledged, {} failed, gaps [{}], errors {:?}",
            self.attempted,
            self.acknowledged.len(),
            self.failed,
            gaps.join(", "),
            self.errors
        )
    }
}

/// A running writer loop.
pub struct Writer {
    stop: Arc<AtomicBool>,
    acknowledged: Arc<AtomicU64>,
    task: JoinHandle<WriteReport>,
}

impl Writer {
    /// Starts writing to `sink`, `per_second` writes a second, ids from 1, on the current runtime.
    pub fn start<S: Sink>(sink: S, per_second: u32) -> Writer {
        Writer::start_with(sink, per_second, WRITE_TIMEOUT)
    }

    /// [`Writer::start`] with each write allowed `write_timeout` (a client that waits on a paused
    /// server rather than giving up after [`WRITE_TIMEOUT`]).
    pub fn start_with<S: Sink>(mut sink: S, per_second: u32, write_timeout: Duration) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let acknowledged = Arc::new(AtomicU64::new(0));
        let (stopped, acked) = (stop.clone(), acknowledged.clone());
        let task = tokio::spawn(async move {
            let mut report = WriteReport::default();
            let mut tick = tokio::time::interval(Duration::from_secs(1) / per_second.max(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut last_ack = Instant::now();
            let mut failing = false;
            while !stopped.load(Ordering::Relaxed) {
                tick.tick().await;
                report.attempted += 1;
                let id = report.attempted;
                let outcome = match tokio::time::timeout(write_timeout, sink.write(id)).await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(format!("no acknowledgement within {write_timeout:?}")),
                };
                match outcome {
                    Ok(()) => {
                        if failing {
                            report.gaps.push(last_ack.elapsed());
                            failing = false;
                        }
                        last_ack = Instant::now();
                        report.acknowledged.push(id);
                        acked.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        failing = true;
                        report.failed += 1;
                        if report.errors.len() < ERRORS_KEPT && !report.errors.contains(&e) {
                            report.errors.push(e);
                        }
                    }
                }
            }
            if failing {
                report.gaps.push(last_ack.elapsed());
            }
            report
        });
        Writer {
            stop,
            acknowledged,
            task,
        }
    }

    /// Writes acknowledged so far (a count).
    pub fn acknowledged(&self) -> u64 {
        self.acknowledged.load(Ordering::Relaxed)
    }

    /// Waits until `more` further writes are acknowledged, at most `limit`.
    ///
    /// # Errors
    /// Fewer within `limit`: says how many came.
    pub async fn wait_acknowledged(&self, more: u64, limit: Duration) -> Result<(), String> {
        let from = self.acknowledged();
        let started = Instant::now();
        while self.acknowledged() < from + more {
            if started.elapsed() > limit {
                return Err(format!(
                    "{} of {more} writes acknowledged within {limit:?}",
                    self.acknowledged() - from
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }

    /// Stops the loop after the write in flight and returns what it saw.
    pub async fn stop(self) -> WriteReport {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.expect("the writer task does not panic")
    }
}
