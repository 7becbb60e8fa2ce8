//! Harnesses shared by integration tests that need real processes or servers.
pub mod mock_api;
pub mod prometheus;
