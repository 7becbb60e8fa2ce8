//! Checks a MutatingAdmissionPolicy's expressions against the CEL a Kubernetes 1.36 API server accepts for
//! it, before any cluster sees them: every expression parses, calls only allowlisted functions, names only
//! the variables the API declares, constructs only `JSONPatch`, reads only earlier `variables` (none in a
//! matchCondition), and loops over nothing.
//!
//! The allowlist is derived from the Kubernetes documentation:
//! - "Common Expression Language in Kubernetes" (kubernetes.io/docs/reference/using-api/cel/): the CEL
//!   standard definitions (operators, `size`, `has`, string `contains`/`startsWith`/`endsWith`/`matches`,
//!   conversions), the extended strings library (`charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`,
//!   `upperAscii`, `replace`, `split`, `substring`, `trim`, `join`) and optional types (`.?`, `[?]`,
//!   `optional.of`/`none`/`ofNonZeroValue`, `hasValue`, `value`, `or`, `orValue`).
//! - "Mutating Admission Policy" (kubernetes.io/docs/reference/access-authn-authz/mutating-admission-policy/):
//!   the variables `object`, `oldObject`, `request`, `params`, `namespaceObject`, `authorizer`, `variables`;
//!   the `JSONPatch` type and `jsonpatch.escapeKey`.
//!
//! Stricter than the API server on purpose: `params` is refused (the policy has no `paramKind`, so the API
//! server would refuse it as undeclared), and so are the comprehension macros (`all`, `exists`,
//! `exists_one`, `map`, `filter`): without a loop, an expression's cost is bounded by the size of the values
//! it compares, never multiplied by the length of a list in the pod template.

use std::collections::BTreeSet;

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr};

use crate::kubernetes_cel::{JSON_PATCH_TYPE, environment};
use crate::policy::MutatingPolicy;

/// Functions and operators (as cel-rust names them after parsing) the API server provides.
pub const ALLOWED_FUNCTIONS: &[&str] = &[
    // Operators of the standard definitions.
    "_?_:_",
    "_&&_",
    "_||_",
    "!_",
    "_==_",
    "_!=_",
    "_<_",
    "_<=_",
    "_>_",
    "_>=_",
    "_+_",
    "_-_",
    "_*_",
    "_/_",
    "_%_",
    "-_",
    "_[_]",
    "@in",
    "@not_strictly_false",
    // Standard functions.
    "size",
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "int",
    "uint",
    "double",
    "string",
    "bool",
    "type",
    "dyn",
    // Optional types.
    "_?._",
    "_[?_]",
    "optional.of",
    "optional.none",
    "optional.ofNonZeroValue",
    "hasValue",
    "value",
    "or",
    "orValue",
    // Kubernetes' extended strings library.
    "charAt",
    "indexOf",
    "lastIndexOf",
    "lowerAscii",
    "upperAscii",
    "replace",
    "split",
    "substring",
    "trim",
    "join",
    // MutatingAdmissionPolicy.
    "jsonpatch.escapeKey",
];

/// The root identifiers a MutatingAdmissionPolicy expression may name (no `params`: no `paramKind`).
pub const ALLOWED_VARIABLES: &[&str] = &[
    "object",
    "oldObject",
    "request",
    "namespaceObject",
    "authorizer",
    "variables",
];

/// One refused construct: where (e.g. `spec.variables[3] forced`) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The expression's place in the manifest.
    pub place: String,
    /// What is refused.
    pub problem: String,
}

/// Every violation in `policy` (empty when the API server would accept all its expressions, as far as
/// this check sees).
pub fn check(policy: &MutatingPolicy) -> Vec<Violation> {
    let env = match environment() {
        Ok(env) => env,
        Err(e) => {
            return vec![Violation {
                place: "environment".into(),
                problem: e.to_string(),
            }];
        }
    };
    let names: Vec<&str> = policy.variables.iter().map(|v| v.name.as_str()).collect();
    // Which `variables.X` each expression may read: a variable, those before it; a matchCondition, none.
    let variables = policy.variables.iter().enumerate().map(|(i, v)| {
        (
            format!("spec.variables[{i}] {}", v.name),
            v.expression.as_str(),
            &names[..i],
        )
    });
    let conditions = policy.match_conditions.iter().enumerate().map(|(i, e)| {
        (
            format!("spec.matchConditions[{i}]"),
            e.as_str(),
            &names[..0],
        )
    });
    let patches = policy.json_patches.iter().enumerate().map(|(i, e)| {
        (
            format!("spec.mutations[{i}].jsonPatch"),
            e.as_str(),
            &names[..],
        )
    });
    let mut violations = Vec::new();
    for (place, source, readable) in variables.chain(conditions).chain(patches) {
        let mut problems = BTreeSet::new();
        match env.parser().parse(source) {
            Err(e) => {
                problems.insert(format!("does not parse: {e}"));
            }
            Ok(expr) => walk(&expr, readable, &mut problems),
        }
        violations.extend(problems.into_iter().map(|problem| Violation {
            place: place.clone(),
            problem,
        }));
    }
    violations
}

/// The dotted name an expression spells (`jsonpatch.escapeKey`'s target `jsonpatch`), if any.
fn qualified(expr: &IdedExpr) -> Option<String> {
    match &expr.expr {
        Expr::Ident(name) => Some(name.clone()),
        Expr::Select(s) if !s.test => qualified(&s.operand).map(|q| format!("{q}.{}", s.field)),
        _ => None,
    }
}

fn walk(expr: &IdedExpr, readable: &[&str], problems: &mut BTreeSet<String>) {
    match &expr.expr {
        Expr::Call(call) => {
            // `jsonpatch.escapeKey(x)` and `optional.of(x)` parse as calls on an identifier target.
            let name = match call.target.as_deref().and_then(qualified) {
                Some(ns) if ["jsonpatch", "optional"].contains(&ns.as_str()) => {
                    format!("{ns}.{}", call.func_name)
                }
                _ => call.func_name.clone(),
            };
            if !ALLOWED_FUNCTIONS.contains(&name.as_str()) {
                problems.insert(format!(
                    "function `{name}` is not in the Kubernetes CEL allowlist"
                ));
            }
            if name.contains('.') {
                call.args.iter().for_each(|a| walk(a, readable, problems));
                return;
            }
            if let Some(target) = &call.target {
                walk(target, readable, problems);
            }
            call.args.iter().for_each(|a| walk(a, readable, problems));
        }
        Expr::Comprehension(c) => {
            problems.insert(format!(
                "a comprehension (all/exists/exists_one/map/filter over `{}`): loops are refused, their \
                 cost grows with the list",
                qualified(&c.iter_range).unwrap_or_else(|| "an expression".into())
            ));
        }
        Expr::Ident(name) => {
            if !ALLOWED_VARIABLES.contains(&name.as_str()) {
                problems.insert(format!(
                    "identifier `{name}` is not declared for a MutatingAdmissionPolicy"
                ));
            } else if name == "variables" {
                problems.insert("`variables` must be read as `variables.NAME`".into());
            }
        }
        Expr::Select(s) => {
            if let Expr::Ident(root) = &s.operand.expr
                && root == "variables"
            {
                if !readable.contains(&s.field.as_str()) {
                    problems.insert(format!(
                        "`variables.{}` is not a variable defined before this expression",
                        s.field
                    ));
                }
                return;
            }
            walk(&s.operand, readable, problems);
        }
        Expr::List(list) => list
            .elements
            .iter()
            .for_each(|e| walk(e, readable, problems)),
        Expr::Map(map) => map
            .entries
            .iter()
            .for_each(|e| walk_entry(&e.expr, readable, problems)),
        Expr::Struct(s) => {
            if s.type_name != JSON_PATCH_TYPE {
                problems.insert(format!(
                    "type `{}` cannot be constructed (only `{JSON_PATCH_TYPE}`)",
                    s.type_name
                ));
            }
            s.entries
                .iter()
                .for_each(|e| walk_entry(&e.expr, readable, problems));
        }
        Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn walk_entry(entry: &EntryExpr, readable: &[&str], problems: &mut BTreeSet<String>) {
    match entry {
        EntryExpr::StructField(f) => walk(&f.value, readable, problems),
        EntryExpr::MapEntry(m) => {
            walk(&m.key, readable, problems);
            walk(&m.value, readable, problems);
        }
    }
}
