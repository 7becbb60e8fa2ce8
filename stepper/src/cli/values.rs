//! The command line's value parsers: a target StatefulSet, an annotation prefix, a duration.

use jiff::SignedDuration;
use sts_safe_rollout_rules::annotations;

/// A StatefulSet named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Parses `NAMESPACE/NAME`.
///
/// # Errors
/// A message naming the expected form.
pub fn parse_target(s: &str) -> Result<Target, String> {
    match s.split_once('/') {
        Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok(Target {
                namespace: ns.into(),
                name: name.into(),
            })
        }
        _ => Err(format!("{s:?}: expected NAMESPACE/NAME, e.g. demo/web")),
    }
}

/// Parses an annotation prefix with the policy's rule (`annotations::validate_prefix`).
///
/// # Errors
/// Why the prefix is not a DNS subdomain.
pub fn parse_prefix(s: &str) -> Result<String, String> {
    annotations::validate_prefix(s).map(|()| s.to_string())
}

/// Parses a positive duration such as `30s`, `2m`, `1h30m` (jiff's friendly format, or ISO 8601).
///
/// # Errors
/// A message with the expected form.
pub fn parse_duration(s: &str) -> Result<SignedDuration, String> {
    match s.parse::<SignedDuration>() {
        Ok(d) if d.is_positive() => Ok(d),
        _ => Err(format!(
            "{s:?}: expected a positive duration such as 30s, 5m or 1h30m"
        )),
    }
}
