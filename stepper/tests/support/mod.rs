//! Harnesses shared by integration tests: real processes and servers, the runs of the simulated
//! scenarios, and the API server's real error answers.
pub mod api_errors;
pub mod counting;
pub mod fake_apiserver;
pub mod https_server;
pub mod lease_server;
pub mod local_servers;
pub mod prometheus;
pub mod prometheus_app;
pub mod prometheus_bin;
pub mod sim_runs;
pub mod test_ca;
