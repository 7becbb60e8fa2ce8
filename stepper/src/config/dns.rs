//! The forms of Kubernetes names ([RFC 1123]): what every endpoint's name and every `serves` pattern
//! is checked against.
//!
//! [RFC 1123]: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/

/// True for a DNS label (RFC 1123): 1–63 of `a-z`, `0-9`, `-`, starting and ending alphanumeric. The
/// form of every endpoint's name (`--http-check NAME=URL`, `--webhook NAME=URL`, a file's `name`).
pub fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// True for a DNS subdomain (RFC 1123), a StatefulSet's name: DNS labels joined by `.`, at most 253.
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}
