//! The built-in answerers (docs/answerers.md): the approval webhook's questions answered by the stepper
//! itself for systems it knows — Patroni, Redis Sentinel, etcd — so that a team gets "the primary last"
//! with an annotation and an entry of `--answerer-config`, and no code of its own.
//!
//! A built-in answerer is a webhook the stepper runs in-process: a set's `<prefix>/pre-update-webhook`
//! names an entry of `--answerer-config` as it would name a `--webhook`, the gates ask the same
//! `UpdateApprovalRequest` ([`Question`]), and the answer is a `WebhookAnswer` that the gates record,
//! retry, time out and count exactly as a webhook's (`webhook-state`, `webhook-error-limit`,
//! `approval-timeout-seconds`). So the decision stays in the gates, and a system that cannot be reached
//! is an error — held, counted, `Degraded` past the limit — never an approval.
//!
//! One kind of system is one module behind one trait, [`System`] (as Argo Rollouts adds a metric source
//! as one `Provider`): what it reads of the system for a question ([`System::read`]), what it concludes
//! from that ([`System::decide`], pure, over plain data), and how it moves the role away
//! ([`System::act`]). [`answer`] runs them in that order for every kind.

pub mod address;
pub mod builtin;
pub mod file;
pub mod http_members;
pub mod kinds;
pub mod question;
pub mod system;

pub use builtin::Answerers;
pub use kinds::BuiltIn;
pub use question::Question;
pub use system::{Acted, System, Verdict, acted_answer, answer, verdict_answer};
