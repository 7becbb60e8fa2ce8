//! When a connection to the API server is read ([`Pacer`]): at once, or in batches a few
//! milliseconds apart once it carries a stream (a watch).
//!
//! Each wakeup of the stepper for a pod's watch event costs more CPU than decoding it: on a 2-core
//! machine with a real API server, a thread woken from `epoll_wait`, another woken through tokio's
//! eventfd and futex to run the task, the `recvfrom`s, the caches of both gone cold (BENCHMARKS.md,
//! "CPU per pod watch event"). Edge-triggered epoll (tokio's) reports every segment that arrives,
//! read or not, so a pause in the reader alone does not save the wakeups; the kernel's
//! `SO_RCVLOWAT` does: with it, `epoll` reports a TCP socket readable only once that many bytes wait
//! (Linux `tcp_data_ready`, `tcp_epollin_ready`; socket(7)). So once a connection has carried reads
//! and no writes for [`STREAM_AFTER`] (a watch: one request, then only events), its socket is woken
//! at [`BATCH_BYTES`] and read anyway [`PAUSE`] after the last read; the first bytes after a quiet
//! spell are read at once, and a write (a new request on the connection) ends the batching.
//! The price: a watch event waits up to [`PAUSE`] when more than one arrives within it.

use std::time::{Duration, Instant};

/// The longest a byte waits in the socket while a stream is read in batches (100 ms: a StatefulSet
/// rollout's steps are seconds apart; at Patroni's one status patch per member every 10 s, a fleet
/// of 1,000 members sends ~10 pod events within it, one of 50,000 members fills [`BATCH_BYTES`]
/// first). A wakeup costs about the CPU of four events (BENCHMARKS.md, "CPU per pod watch event":
/// on a real API server at 150 events/s, 41 µs per event at 100 ms, 80–99 µs at 25 ms).
pub const PAUSE: Duration = Duration::from_millis(100);

/// Bytes waiting in the socket that wake the reader before [`PAUSE`] is over (256 KiB, ~27 pod
/// events of 9.4 KB, read in four reads of the buffer below TLS; Linux caps the mark at half the
/// largest receive buffer, `tcp_rmem`'s third value, 6 MiB by default, and grows the socket's
/// receive buffer to hold it: `tcp_set_rcvlowat`).
pub const BATCH_BYTES: usize = 256 * 1024;

/// How long a connection has been read without being written to before it counts as a stream
/// (1 s: an answer to a request comes sooner; a watch's events come for minutes).
pub const STREAM_AFTER: Duration = Duration::from_secs(1);

/// The socket's receive low-water mark the reader must set (`SO_RCVLOWAT`, bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LowWater {
    /// Wake on any byte (1, the kernel's default).
    Any,
    /// Wake at [`BATCH_BYTES`].
    Batch,
}

/// One connection's reading pace: whether it is read in batches, until when, and since when it was
/// last written to. Pure: the caller passes the time and applies the [`LowWater`] it returns.
#[derive(Clone, Debug)]
pub struct Pacer {
    last_write: Instant,
    batch_until: Option<Instant>,
}

impl Pacer {
    /// A connection opened at `now` (the request it was opened for is about to be written).
    pub fn new(now: Instant) -> Pacer {
        Pacer {
            last_write: now,
            batch_until: None,
        }
    }

    /// When the reader must read even if the socket has not reported [`BATCH_BYTES`]: `None` when
    /// the connection is not read in batches (the socket wakes it on any byte).
    pub fn deadline(&self) -> Option<Instant> {
        self.batch_until
    }

    /// Bytes were read at `now`: the low-water mark to set, if it changes (a stream's first read in
    /// batches), and the next batch is due [`PAUSE`] later.
    pub fn read(&mut self, now: Instant) -> Option<LowWater> {
        if now.saturating_duration_since(self.last_write) < STREAM_AFTER {
            return None;
        }
        let was = self.batch_until.replace(now + PAUSE);
        was.is_none().then_some(LowWater::Batch)
    }

    /// The socket was empty when read at its deadline: back to reading on any byte.
    pub fn dry(&mut self) -> Option<LowWater> {
        self.batch_until.take().map(|_| LowWater::Any)
    }

    /// The connection was written to at `now` (a request follows: its answer is read at once).
    pub fn wrote(&mut self, now: Instant) -> Option<LowWater> {
        self.last_write = now;
        self.dry()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_to_a_request_is_read_at_once() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0);
        assert_eq!(p.read(t0 + Duration::from_millis(5)), None);
        assert_eq!(p.read(t0 + Duration::from_millis(900)), None);
        assert_eq!(p.deadline(), None);
    }

    #[test]
    fn a_stream_is_read_in_batches_until_it_runs_dry() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0);
        let t1 = t0 + STREAM_AFTER;
        assert_eq!(p.read(t1), Some(LowWater::Batch));
        assert_eq!(p.deadline(), Some(t1 + PAUSE));
        let t2 = t1 + PAUSE;
        assert_eq!(p.read(t2), None, "already in batches");
        assert_eq!(p.deadline(), Some(t2 + PAUSE));
        assert_eq!(p.dry(), Some(LowWater::Any));
        assert_eq!(p.deadline(), None);
        assert_eq!(p.dry(), None);
        assert_eq!(
            p.read(t2 + PAUSE * 4),
            Some(LowWater::Batch),
            "the next event, then batches again"
        );
    }

    #[test]
    fn a_write_ends_the_batches_and_the_stream() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0);
        let t1 = t0 + STREAM_AFTER * 3;
        assert_eq!(p.read(t1), Some(LowWater::Batch));
        assert_eq!(p.wrote(t1), Some(LowWater::Any));
        assert_eq!(p.read(t1 + Duration::from_millis(10)), None);
        assert_eq!(p.deadline(), None);
        assert_eq!(p.wrote(t1), None, "not in batches: nothing to change");
    }
}
