//! A failed kube-rs request as a [`ClusterError`]: the API server's answer classified as it means it
//! ([`api_error::classify`]: a refusal, or another error status), anything else a transport error;
//! every message on one line (a log line, an annotation, an Event note).

use std::fmt::Display;

use crate::cluster::ClusterError;
use crate::cluster::api_error;

/// `e`, met while doing `action` (`get statefulset demo/web`), as a [`ClusterError`]: `Refused` for an
/// answer [`api_error::ApiAnswer::is_refusal`] calls one (the same request fails until a person
/// changes something), `Api` for another error status, `Transport` for no answer or an unreadable one.
pub(super) fn error(action: String, e: kube::Error) -> ClusterError {
    match e {
        kube::Error::Api(status) => {
            let answer = api_error::classify(&status);
            let message = one_line(&answer);
            let code = status.code;
            if answer.is_refusal() {
                ClusterError::Refused {
                    action,
                    code,
                    message,
                }
            } else {
                ClusterError::Api {
                    action,
                    code,
                    message,
                }
            }
        }
        other => ClusterError::Transport {
            action,
            message: one_line(&other),
        },
    }
}

/// `e`'s message on one line, its runs of whitespace (newlines included) one blank each.
pub(super) fn one_line(e: &impl Display) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
