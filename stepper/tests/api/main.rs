//! The stepper's I/O: passes, caches, leader election, checks and webhooks against a mocked API server and local servers on 127.0.0.1 (real bodies), and the binary's command line.
//!
//! One test binary of modules, one per former file (cargo's guide on test organisation): the
//! stepper's crates are compiled and linked once for all of them instead of once per file
//! (BENCHMARKS.md, "A fresh machine"). Run one file's tests with `cargo test --test api NAME::`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../mock_api/mod.rs"]
mod mock_api;
#[path = "../support/mod.rs"]
mod support;

mod api_errors_classified;
mod api_errors_client;
mod approvals_api;
mod caches;
mod check_concurrency;
mod check_no_answer;
mod cli_cluster;
mod cli_flags;
mod cli_help;
mod cli_plugin;
mod http_check;
mod isolation;
mod kube_client_tls;
mod kube_owner;
mod kube_pass_errors;
mod kube_pass_reads;
mod kube_pass_writes;
mod kube_revision;
mod kube_single_set;
mod leader;
mod leader_cluster;
mod leadership_lost;
mod logs;
mod metrics_endpoints;
mod modes_api;
mod one_question_api;
mod pause_api;
mod pause_points_api;
mod pod_churn;
mod preview;
mod prometheus_real_auth;
mod prometheus_real_counting;
mod prometheus_real_pass;
mod prometheus_real_queries;
mod reads;
mod recovery_api;
mod rejected_writes;
mod release_api;
mod return_not_ready_api;
mod returning_api;
mod scope_api;
mod secured_http_check;
mod secured_webhook;
mod status_heartbeat;
mod status_record;
mod status_unguarded;
mod typed_reads;
mod unwritten;
mod wait_staged_api;
mod webhook_api;
mod webhook_tls;
mod wrappers;
