//! The border for the HTTP check: its annotations into one [`HttpCheckConfig`].
//!
//! `<prefix>/http-check: <name>` names a URL configured on the stepper (`--http-check NAME=URL`), never
//! a URL: whoever may edit a StatefulSet must not make the stepper call an address of their choosing.
//! Whether the name is configured is the gates' to say (`InvalidAnnotation`, they know the flags);
//! here the form is read:
//!
//! - `<prefix>/http-check-jsonpath`: a JSONPath (RFC 9535, as `jsonpath-rust` reads it) selecting
//!   exactly one value of the endpoint's JSON answer, e.g. `$.status` or `$.brokers[0].state`;
//! - `<prefix>/http-check-expect`: what that value must be — [`Expect`]'s grammar:
//!   `green` (equal, as text), `in(green,yellow)` (one of), or a number compared: `>=3`, `>3`, `<=3`,
//!   `<3`, `==3`.
//!
//! The counting annotations are the Prometheus check's ([`super::check::limits`]).

use jsonpath_rust::parser::parse_json_path;
use k8s_openapi::api::apps::v1::StatefulSet;
use sts_safe_rollout_rules::annotations as names;

use super::check::{CheckLimits, limits};
use super::endpoints::{Flag, is_dns_label};
use super::error::{ConfigError, ExpectError, JsonPathError};
use super::keys::Keys;

/// The flag configuring the endpoints a set's `http-check` names (`--http-check NAME=URL`, or an entry
/// of `--http-check-config`).
pub const FLAG: Flag = Flag {
    flag: "--http-check",
    named: true,
    noun: "check",
    none: "no --http-check NAME=URL flag",
};

/// A set's HTTP check, read from its annotations.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpCheckConfig {
    /// The check's name (`http-check`'s value): which `--http-check NAME=URL` to call.
    pub name: String,
    /// The JSONPath of the value read from the answer (`http-check-jsonpath`).
    pub jsonpath: String,
    /// What the value must be (`http-check-expect`).
    pub expect: Expect,
    /// How its checks are counted.
    pub limits: CheckLimits,
}

/// A numeric comparison of [`Expect::Compare`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `>=`
    Ge,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `<`
    Lt,
    /// `==`
    Eq,
}

impl Op {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Ge => ">=",
            Op::Gt => ">",
            Op::Le => "<=",
            Op::Lt => "<",
            Op::Eq => "==",
        }
    }

    /// `value <op> bound`.
    pub fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Op::Ge => value >= bound,
            Op::Gt => value > bound,
            Op::Le => value <= bound,
            Op::Lt => value < bound,
            Op::Eq => value == bound,
        }
    }
}

/// What the value must be (`http-check-expect`).
#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    /// `green`: the value, as text (a JSON string's content; a number, `true`/`false` or `null` as
    /// written), equals this.
    Equals(String),
    /// `in(green,yellow)`: the value, as text, is one of these.
    OneOf(Vec<String>),
    /// `>=3` (also `>`, `<=`, `<`, `==`): the value is a number (or a string holding one) and compares so.
    Compare(Op, f64),
}

/// Reads an `http-check-expect` value.
///
/// # Errors
/// Why the value is not of [`Expect`]'s grammar ([`ExpectError`], without the annotation's name).
pub fn parse_expect(value: &str) -> Result<Expect, ExpectError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(ExpectError::Empty);
    }
    if let Some(list) = value.strip_prefix("in(") {
        let list = list.strip_suffix(')').ok_or(ExpectError::Unclosed)?;
        let items: Vec<String> = list.split(',').map(|i| i.trim().to_string()).collect();
        if items.iter().any(String::is_empty) {
            return Err(ExpectError::EmptyItem);
        }
        return Ok(Expect::OneOf(items));
    }
    for (text, op) in [
        (">=", Op::Ge),
        ("<=", Op::Le),
        ("==", Op::Eq),
        (">", Op::Gt),
        ("<", Op::Lt),
    ] {
        if let Some(n) = value.strip_prefix(text) {
            return match n.trim().parse::<f64>() {
                Ok(n) if n.is_finite() => Ok(Expect::Compare(op, n)),
                _ => Err(ExpectError::NotANumber {
                    operand: n.trim().to_string(),
                    op: text,
                }),
            };
        }
    }
    if value.starts_with(['>', '<', '=', '!']) {
        return Err(ExpectError::UnknownComparison);
    }
    Ok(Expect::Equals(value.to_string()))
}

/// Checks an `http-check-jsonpath` value: a JSONPath starting at the root (`$`).
///
/// # Errors
/// Why it is not one ([`JsonPathError`], without the annotation's name).
pub fn check_jsonpath(value: &str) -> Result<(), JsonPathError> {
    if !value.starts_with('$') {
        return Err(JsonPathError::NoRoot);
    }
    parse_json_path(value)
        .map(|_| ())
        .map_err(|e| JsonPathError::Syntax(e.to_string()))
}

/// Reads the set's HTTP check: `Ok(None)` without `http-check` (then `http-check-jsonpath` and
/// `http-check-expect` must be absent too: a check half configured is never silently dropped).
///
/// # Errors
/// [`ConfigError::WithoutHttpCheck`], [`ConfigError::HttpCheckName`],
/// [`ConfigError::MissingJsonPath`], [`ConfigError::JsonPath`], [`ConfigError::MissingExpect`],
/// [`ConfigError::Expect`], [`ConfigError::CheckCount`].
pub fn http_check_config(
    set: &StatefulSet,
    keys: &Keys,
) -> Result<Option<HttpCheckConfig>, ConfigError> {
    let all = set.metadata.annotations.as_ref();
    let get = |key: &str| all.and_then(|a| a.get(key)).map(|v| v.trim());
    let (jsonpath, expect) = (
        get(keys.of(names::HTTP_CHECK_JSONPATH)),
        get(keys.of(names::HTTP_CHECK_EXPECT)),
    );
    let Some(name) = get(keys.of(names::HTTP_CHECK)) else {
        if let Some(key) = [
            (keys.of(names::HTTP_CHECK_JSONPATH), jsonpath),
            (keys.of(names::HTTP_CHECK_EXPECT), expect),
        ]
        .into_iter()
        .find_map(|(k, v)| v.map(|_| k))
        {
            return Err(ConfigError::WithoutHttpCheck {
                key: key.to_string(),
                check: keys.of(names::HTTP_CHECK).to_string(),
            });
        }
        return Ok(None);
    };
    if !is_dns_label(name) {
        return Err(ConfigError::HttpCheckName {
            key: keys.of(names::HTTP_CHECK).to_string(),
            value: name.to_string(),
        });
    }
    let Some(jsonpath) = jsonpath else {
        return Err(ConfigError::MissingJsonPath {
            key: keys.of(names::HTTP_CHECK_JSONPATH).to_string(),
        });
    };
    check_jsonpath(jsonpath).map_err(|problem| ConfigError::JsonPath {
        key: keys.of(names::HTTP_CHECK_JSONPATH).to_string(),
        value: jsonpath.to_string(),
        problem: Box::new(problem),
    })?;
    let Some(expect) = expect else {
        return Err(ConfigError::MissingExpect {
            key: keys.of(names::HTTP_CHECK_EXPECT).to_string(),
        });
    };
    let expect = parse_expect(expect).map_err(|problem| ConfigError::Expect {
        key: keys.of(names::HTTP_CHECK_EXPECT).to_string(),
        value: expect.to_string(),
        problem: Box::new(problem),
    })?;
    Ok(Some(HttpCheckConfig {
        name: name.to_string(),
        jsonpath: jsonpath.to_string(),
        expect,
        limits: limits(set, keys)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expect_grammar() {
        assert_eq!(parse_expect("green"), Ok(Expect::Equals("green".into())));
        assert_eq!(
            parse_expect("in(green, yellow)"),
            Ok(Expect::OneOf(vec!["green".into(), "yellow".into()]))
        );
        assert_eq!(parse_expect(">=3"), Ok(Expect::Compare(Op::Ge, 3.0)));
        assert_eq!(parse_expect("> 2.5"), Ok(Expect::Compare(Op::Gt, 2.5)));
        assert_eq!(parse_expect("<1"), Ok(Expect::Compare(Op::Lt, 1.0)));
        assert_eq!(parse_expect("==0"), Ok(Expect::Compare(Op::Eq, 0.0)));
        for bad in ["", " ", "in(green", "in(a,,b)", ">=x", "<", "!=3", "=>3"] {
            assert!(parse_expect(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_jsonpath_is_checked() {
        for good in ["$.status", "$.a.b[0].c", "$['number_of_nodes']"] {
            assert_eq!(check_jsonpath(good), Ok(()), "{good}");
        }
        for bad in ["status", "$.a[", "$..[?", ""] {
            assert!(check_jsonpath(bad).is_err(), "{bad:?}");
        }
    }
}
