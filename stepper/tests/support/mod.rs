//! Harnesses shared by integration tests that need real processes or servers.
pub mod counting;
pub mod fake_apiserver;
pub mod lease_server;
pub mod prometheus;
