//! The pure decisions over the recorded API fixtures and small builders: gates, plans, patches, configuration, records.
//!
//! One test binary of modules, one per former file (cargo's guide on test organisation): the
//! stepper's crates are compiled and linked once for all of them instead of once per file
//! (BENCHMARKS.md, "A fresh machine"). Run one file's tests with `cargo test --test decisions NAME::`.

#[path = "../canary_support/mod.rs"]
mod canary_support;
#[path = "../common/mod.rs"]
mod common;
#[path = "../rollback_support/mod.rs"]
mod rollback_support;

mod answerer_etcd;
mod answerer_etcd_wire;
mod answerer_patroni;
mod answerer_sentinel;
mod answerer_sentinel_file;
mod answerer_sentinel_fixture;
mod approval_pending;
mod approvals;
mod cached;
mod check_errors;
mod config_errors;
mod degraded;
mod endpoint_auth;
mod example_approve_pods;
mod example_webhook;
mod failure;
mod fields;
mod fixture_moments;
mod gates_on_pods;
mod gates_on_set;
mod health;
mod metrics;
mod namespace;
mod one_question;
mod owner_check;
mod owner_condition;
mod partition_steps;
mod pause_at_config;
mod pause_plan_status;
mod pause_points;
mod pause_points_restart;
mod plan;
mod prometheus_check_config;
mod prometheus_check_pause;
mod prometheus_check_plan;
mod prometheus_check_result;
mod rbac;
mod reasons;
mod recovery;
mod rejected_record;
mod release_policy;
mod returning;
mod rollback;
mod rollout_group;
mod throttle;
mod webhook;
mod webhook_records;
