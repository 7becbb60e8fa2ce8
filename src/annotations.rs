//! Annotation names shared by the policy and the stepper.
//!
//! Every annotation is `<prefix>/<name>`; the prefix defaults to [`DEFAULT_PREFIX`] and is set by the
//! policy setting `annotationPrefix` and the stepper flag `--annotation-prefix` (same meaning, so a MOCO
//! user can keep `moco.cybozu.com/force-rolling-update`).

/// The default annotation prefix (`safe-rollout.dev`).
pub const DEFAULT_PREFIX: &str = "safe-rollout.dev";

/// `"true"`: native, ungated rolling update. The policy strips the partition; the stepper skips the set.
pub const FORCE_ROLLING_UPDATE: &str = "force-rolling-update";
/// `"true"`, sticky: stamped once the set was fully Ready, so later template changes are staged.
pub const INITIALIZED: &str = "initialized";
/// RFC 3339 time of the last step. A request that lowers the partition must change it, or the policy
/// restores the old partition (that is how a step is told apart from a GitOps re-apply of `partition: 0`).
pub const LAST_PARTITION_UPDATE: &str = "last-partition-update";
/// `"true"`: the stepper holds the rollout (gate `Paused`).
pub const PAUSED: &str = "paused";
/// Step size: an integer count of pods, or a percentage of `spec.replicas` rounded up (`"25%"`); default 1.
pub const STEP: &str = "step";
/// Seconds to wait after a step before the next one (gate `Settling`); default 0.
pub const INITIAL_DELAY_SECONDS: &str = "initial-delay-seconds";

/// The value an annotation must have to count as set (`"true"`, exactly, as Kubernetes' own boolean
/// annotations: `"True"`, `"yes"` or `"1"` do not count).
pub const TRUE: &str = "true";

/// Builds the full annotation key `<prefix>/<name>`.
///
/// ```
/// use sts_safe_rollout::annotations::{key, DEFAULT_PREFIX, PAUSED};
/// assert_eq!(key(DEFAULT_PREFIX, PAUSED), "safe-rollout.dev/paused");
/// ```
pub fn key(prefix: &str, name: &str) -> String {
    format!("{prefix}/{name}")
}

/// Checks that `prefix` can stand before `/` in an annotation key: a DNS subdomain (RFC 1123) of at most
/// 253 characters, lowercase alphanumerics, `-` and `.`, each label starting and ending alphanumeric and at
/// most 63 characters (Kubernetes `IsDNS1123Subdomain`, as used for annotation key prefixes).
///
/// # Errors
/// A sentence saying what is wrong with the value, without the field name (callers add it).
pub fn validate_prefix(prefix: &str) -> Result<(), String> {
    if prefix.is_empty() {
        return Err(
            "must not be empty; expected a DNS subdomain such as \"safe-rollout.dev\"".into(),
        );
    }
    if prefix.len() > 253 {
        return Err(format!(
            "must be at most 253 characters (a DNS subdomain), got {}",
            prefix.len()
        ));
    }
    for label in prefix.split('.') {
        let valid = !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !valid {
            return Err(format!(
                "{prefix:?} is not a DNS subdomain: expected dot-separated labels of lowercase letters, \
                 digits and '-', each 1-63 characters, starting and ending with a letter or digit \
                 (for example \"safe-rollout.dev\")"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("safe-rollout.dev")]
    #[case("moco.cybozu.com")]
    #[case("a")]
    #[case("0-a.b9")]
    fn accepts_dns_subdomains(#[case] prefix: &str) {
        assert_eq!(validate_prefix(prefix), Ok(()));
    }

    #[rstest]
    #[case("")]
    #[case("Safe-Rollout.dev")]
    #[case("safe_rollout.dev")]
    #[case("-a.dev")]
    #[case("a-.dev")]
    #[case("a..dev")]
    #[case(".dev")]
    #[case("dev.")]
    #[case("a/b")]
    #[case("exa mple.com")]
    fn rejects_non_subdomains(#[case] prefix: &str) {
        assert!(validate_prefix(prefix).is_err(), "{prefix:?} accepted");
    }

    #[test]
    fn length_limits_are_enforced() {
        let label63 = "a".repeat(63);
        assert_eq!(validate_prefix(&label63), Ok(()));
        assert!(validate_prefix(&"a".repeat(64)).is_err());
        let long = [label63.as_str(); 4].join("."); // 255 chars
        let err = validate_prefix(&long).unwrap_err();
        assert!(err.contains("253"), "{err}");
        let ok253 = format!("{}.{}.{}.{}", label63, label63, label63, "a".repeat(61));
        assert_eq!(ok253.len(), 253);
        assert_eq!(validate_prefix(&ok253), Ok(()));
    }
}
