//! Harnesses shared by integration tests: real processes and servers, and the runs of the simulated
//! scenarios.
pub mod counting;
pub mod fake_apiserver;
pub mod lease_server;
pub mod local_servers;
pub mod prometheus;
pub mod prometheus_app;
pub mod prometheus_bin;
pub mod sim_runs;
pub mod test_ca;
