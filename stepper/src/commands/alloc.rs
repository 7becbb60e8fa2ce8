//! The process's memory allocator: `main.rs` installs [`Global`] as `#[global_allocator]`, and
//! `benches/watch_memory/` measures `watch`'s caches with the same one.
//!
//! The platform's own: glibc's malloc in a `x86_64-unknown-linux-gnu` build, musl's mallocng in the
//! image's static `x86_64-unknown-linux-musl` build (the binary users run). Chosen by measurement
//! (BENCHMARKS.md, "Resident memory"): with the image's binary at 10,000 StatefulSets and 50,000 pods
//! as a v1.36 API server returns them, mallocng held 114 MiB after the first LIST and 117–126 MiB over
//! ten re-lists, while mimalloc 0.1.52 held 173 MiB and 189–237 MiB (the heap in use is 92 MiB with
//! both). mallocng is slower: a `watch_pass` over 10,000 sets took 22.7 ms against mimalloc's 17.5 ms
//! (1 candidate, same load), a cost of well under 0.1 % of a core at one pass every 30 s.

/// The allocator of `sts-stepper`: `std::alloc::System`.
pub use std::alloc::System as Global;
