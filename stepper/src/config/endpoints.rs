//! The endpoints a set's annotations name ([`Named`]) against those the stepper has configured
//! ([`Served`]), judged once for every kind: a set's `http-check` or `pre-update-webhook` naming an
//! endpoint the stepper lacks is `InvalidAnnotation` ([`Served::unknown`]); a check whose flag the machine
//! running `status --local` or `step` lacks is one it cannot judge ([`Served::missing`]).
//!
//! A set never carries a URL: whoever may edit a StatefulSet must not make the stepper call an address
//! of their choosing. An annotation names an endpoint of the stepper's own configuration (`--http-check
//! NAME=URL`, `--webhook NAME=URL`, a file's entry), or asks for the one endpoint a flag configures
//! (`--prometheus-url`). A new kind of endpoint is one [`Flag`] constant beside its configuration and
//! one line each in `SetConfig::named_endpoints` and the client's list of what it serves: nothing here.

use std::collections::{BTreeMap, BTreeSet};

pub use super::dns::is_dns_label;
use super::serves::Serves;

/// A flag of the stepper that configures the endpoints a set's annotations may ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flag {
    /// The flag as written: `--http-check`.
    pub flag: &'static str,
    /// Whether a set names one of several (`--http-check NAME=URL`) or asks for the one the flag sets
    /// (`--prometheus-url URL`).
    pub named: bool,
    /// What one is called in a message: `check`, `webhook`.
    pub noun: &'static str,
    /// What the message says when the stepper has none: `no --http-check NAME=URL flag`.
    pub none: &'static str,
}

impl Flag {
    /// The flag to add for `name`: `--http-check es-health=URL`; unnamed, `--prometheus-url URL`.
    pub fn to_add(&self, name: Option<&str>) -> String {
        match name.filter(|_| self.named) {
            Some(name) => format!("{} {name}=URL", self.flag),
            None => format!("{} URL", self.flag),
        }
    }
}

/// One endpoint a set's annotations ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Named<'a> {
    /// The annotation asking (full key): `safe-rollout.dev/http-check`.
    pub annotation: &'a str,
    /// The flag that configures such endpoints.
    pub flag: Flag,
    /// The name given (`None` for an unnamed flag's endpoint).
    pub name: Option<&'a str>,
}

/// The endpoints the stepper has configured, by flag: for a named flag, its names (an empty list: the
/// flag is known and none is configured); for an unnamed one, whether it is set. A flag absent from
/// both is not known here (`wait`, the simulation, the library's default): its names are not judged,
/// and an endpoint the stepper cannot reach is an error of the check that asks for it (held, fail
/// closed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Served {
    /// Named flags → the names configured, sorted.
    names: BTreeMap<&'static str, Vec<String>>,
    /// Unnamed flags that are set.
    set: BTreeSet<&'static str>,
    /// (named flag, name) → the sets that endpoint serves ([`Serves`]); an endpoint absent here is
    /// not judged (the checks, which only read; the simulation).
    serves: BTreeMap<(&'static str, String), Serves>,
}

impl Served {
    /// Records that `flag` is configured: with `names` for a named flag (sorted here; empty: the flag is
    /// known and none is configured), set for an unnamed one (`names` unused).
    pub fn insert(&mut self, flag: &Flag, mut names: Vec<String>) {
        if flag.named {
            names.sort();
            names.dedup();
            self.names.insert(flag.flag, names);
        } else {
            self.set.insert(flag.flag);
        }
    }

    /// `self` with `flag`'s endpoints recorded ([`Served::insert`]).
    pub fn with(mut self, flag: &Flag, names: Vec<String>) -> Self {
        self.insert(flag, names);
        self
    }

    /// Records that endpoint `name` of the named flag `flag` serves only the sets `serves` admits.
    pub fn bind(&mut self, flag: &Flag, name: &str, serves: Serves) {
        self.serves.insert((flag.flag, name.to_string()), serves);
    }

    /// The `InvalidAnnotation` detail when `named` names an endpoint that does not serve set `set` in
    /// `namespace` (`<key>: "cache" names webhook cache, which serves e2e/cache, not manual/cache`);
    /// `None` when it does, or when it is not bound here.
    pub fn refused(&self, named: &Named<'_>, namespace: &str, set: &str) -> Option<String> {
        let name = named.name.filter(|_| named.flag.named)?;
        let serves = self.serves.get(&(named.flag.flag, name.to_string()))?;
        (!serves.admits(namespace, set)).then(|| {
            format!(
                "{}: {name:?} names {} {name}, which serves {serves}, not {namespace}/{set} (its serves on the stepper)",
                named.annotation, named.flag.noun
            )
        })
    }

    /// The names configured under the named flag `flag`; `None` when it is not known here.
    pub fn names(&self, flag: &str) -> Option<&[String]> {
        self.names.get(flag).map(Vec::as_slice)
    }

    /// Forgets the named flags of which none is configured, so that their names are not judged: a
    /// machine with no `--http-check` at all (`status --local`) judges none of those checks.
    pub fn forget_empty(&mut self) {
        self.names.retain(|_, names| !names.is_empty());
    }

    /// The `InvalidAnnotation` detail when `named` gives a name its flag does not configure here
    /// (`<key>: "es" names no check configured on the stepper; configured: a, b`); `None` when it
    /// does, when it gives no name, or when the flag is not known here.
    pub fn unknown(&self, named: &Named<'_>) -> Option<String> {
        let name = named.name.filter(|_| named.flag.named)?;
        let configured = self.names.get(named.flag.flag)?;
        if configured.iter().any(|c| c == name) {
            return None;
        }
        let names = if configured.is_empty() {
            format!("none ({})", named.flag.none)
        } else {
            configured.join(", ")
        };
        Some(format!(
            "{}: {name:?} names no {} configured on the stepper; configured: {names}",
            named.annotation, named.flag.noun
        ))
    }

    /// The flag to add so that this machine reaches `named` as the stepper would ([`Flag::to_add`]);
    /// `None` when it does.
    pub fn missing(&self, named: &Named<'_>) -> Option<String> {
        let reached = if named.flag.named {
            let name = named.name.unwrap_or_default();
            self.names
                .get(named.flag.flag)
                .is_some_and(|names| names.iter().any(|n| n == name))
        } else {
            self.set.contains(named.flag.flag)
        };
        (!reached).then(|| named.flag.to_add(named.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECK: Flag = Flag {
        flag: "--x-check",
        named: true,
        noun: "check",
        none: "no --x-check NAME=URL flag",
    };
    const URL: Flag = Flag {
        flag: "--x-url",
        named: false,
        noun: "endpoint",
        none: "no --x-url",
    };

    fn named(flag: Flag, name: Option<&str>) -> Named<'_> {
        Named {
            annotation: "p/x",
            flag,
            name,
        }
    }

    #[test]
    fn a_name_is_judged_only_against_a_known_flag() {
        let es = named(CHECK, Some("es"));
        assert_eq!(Served::default().unknown(&es), None);
        let none = Served::default().with(&CHECK, vec![]);
        assert_eq!(
            none.unknown(&es).as_deref(),
            Some(
                "p/x: \"es\" names no check configured on the stepper; configured: none (no \
                 --x-check NAME=URL flag)"
            )
        );
        let two = Served::default().with(&CHECK, vec!["kafka".into(), "db".into()]);
        assert!(two.unknown(&es).unwrap().ends_with("configured: db, kafka"));
        let with_es = two.with(&CHECK, vec!["es".into()]);
        assert_eq!(with_es.unknown(&es), None);
        assert_eq!(
            with_es.unknown(&named(URL, None)),
            None,
            "unnamed: not judged"
        );
    }

    #[test]
    fn a_bound_endpoint_refuses_a_set_it_does_not_serve() {
        let cache = named(CHECK, Some("cache"));
        let mut s = Served::default().with(&CHECK, vec!["cache".into()]);
        assert_eq!(
            s.refused(&cache, "manual", "cache"),
            None,
            "unbound: not judged"
        );
        let serves = Serves::parse(&["e2e/cache"], "serves").expect("valid");
        s.bind(&CHECK, "cache", serves);
        assert_eq!(s.refused(&cache, "e2e", "cache"), None);
        assert_eq!(
            s.refused(&cache, "manual", "cache").as_deref(),
            Some(
                "p/x: \"cache\" names check cache, which serves e2e/cache, not manual/cache (its \
                 serves on the stepper)"
            )
        );
        assert_eq!(
            s.refused(&named(CHECK, Some("other")), "manual", "cache"),
            None
        );
    }

    #[test]
    fn forgetting_the_empty_flags_stops_judging_them() {
        let mut s = Served::default().with(&CHECK, vec![]).with(&URL, vec![]);
        s.forget_empty();
        assert_eq!(s.names("--x-check"), None);
        assert_eq!(
            s.missing(&named(URL, None)),
            None,
            "an unnamed flag is kept"
        );
    }

    #[test]
    fn the_flag_to_add_names_what_is_missing() {
        let s = Served::default().with(&CHECK, vec!["es".into()]);
        assert_eq!(s.missing(&named(CHECK, Some("es"))), None);
        assert_eq!(
            s.missing(&named(CHECK, Some("db"))).as_deref(),
            Some("--x-check db=URL")
        );
        assert_eq!(s.missing(&named(URL, None)).as_deref(), Some("--x-url URL"));
        let s = s.with(&URL, vec![]);
        assert_eq!(s.missing(&named(URL, None)), None);
    }

    #[test]
    fn dns_labels() {
        assert!(is_dns_label("es-health"));
        assert!(is_dns_label("kafka1"));
        for bad in ["", "-a", "a-", "Es", "a_b", "a.b", &"a".repeat(64)] {
            assert!(!is_dns_label(bad), "{bad:?}");
        }
    }
}
