//! Harnesses shared by integration tests that need real processes or servers.
pub mod counting;
pub mod fake_apiserver;
pub mod lease_server;
pub mod local_servers;
pub mod prometheus;
pub mod prometheus_app;
pub mod prometheus_bin;
pub mod test_ca;
