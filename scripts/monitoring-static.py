#!/usr/bin/env python3
# Static checks of deploy/monitoring/: the PrometheusRule against the real CRD, what every alert carries, the dashboard.
"""Static checks of deploy/monitoring/ (run by scripts/monitoring-test.sh).

    monitoring-static.py extract-rules PROMETHEUSRULE OUT
        Writes the PrometheusRule's `spec` (the `groups:` a Prometheus rule file holds) to OUT, for promtool.
    monitoring-static.py validate-crd PROMETHEUSRULE CRD
        Validates every PrometheusRule in PROMETHEUSRULE against the openAPIV3Schema of the CRD file CRD,
        strictly (an unknown field is an error, as with `kubectl apply`'s default strict field validation),
        and checks that the validator rejects two broken copies (a misspelled field, a malformed `for:`).
    monitoring-static.py check-alerts PROMETHEUSRULE ALERT_TESTS RUNBOOK DEPLOYMENT METRICS_DOC
        Every alert has a severity, summary, description and a runbook_url into the runbook page (RUNBOOK:
        its path, e.g. docs/runbook.md) whose anchor is a
        heading; the promtool unit tests (ALERT_TESTS: a directory, its *-test.yaml files) make each alert
        fire and not fire; StsStepperDown's threshold is 5 intervals of the watch Deployment's --interval;
        METRICS_DOC (docs/metrics.md) has one row per alert in its table of alerts, with its severity, and no
        other.
    monitoring-static.py check-dashboard DASHBOARD KUSTOMIZATION
        The dashboard JSON: unique panel ids, every panel with queries and a description, the
        namespace/statefulset variables used by the per-set panels; the kustomization ships it as a
        ConfigMap labelled grafana_dashboard: "1".

Exit status 0 when every check passes, 1 otherwise (each failure printed as `FAIL …`), 2 on bad usage.
"""

import copy
import json
import os
import re
import sys

import jsonschema
import yaml

FAILURES = []


def ok(message):
    print(f"ok   {message}")


def fail(message):
    FAILURES.append(message)
    print(f"FAIL {message}")


def load_docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def prometheus_rules(path):
    rules = [d for d in load_docs(path) if d.get("kind") == "PrometheusRule"]
    if not rules:
        sys.exit(f"{path}: no PrometheusRule (kind: PrometheusRule) in it")
    return rules


def alerts(rule_doc):
    return [r for g in rule_doc["spec"]["groups"] for r in g["rules"] if "alert" in r]


# ---------------------------------------------------------------------------------------------------
# extract-rules


class RuleFileDumper(yaml.SafeDumper):
    """Writes multi-line strings (the expressions) as literal blocks, line for line as in the source."""


RuleFileDumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


def extract_rules(prometheusrule, out):
    groups = [g for doc in prometheus_rules(prometheusrule) for g in doc["spec"]["groups"]]
    with open(out, "w") as f:
        yaml.dump({"groups": groups}, f, Dumper=RuleFileDumper, sort_keys=False, width=1000)
    ok(f"{len(groups)} rule group(s) of {prometheusrule} written to {out}")


# ---------------------------------------------------------------------------------------------------
# validate-crd


def crd_schema(crd_path, api_version, kind):
    """The openAPIV3Schema for (apiVersion, kind) in the CRD file, or None."""
    for doc in load_docs(crd_path):
        if doc.get("kind") != "CustomResourceDefinition":
            continue
        spec = doc["spec"]
        if spec["names"]["kind"] != kind:
            continue
        for version in spec.get("versions", []):
            if f"{spec['group']}/{version['name']}" == api_version:
                return (version.get("schema") or {}).get("openAPIV3Schema")
    return None


def strict(schema):
    """A copy of a structural schema in which objects with `properties` accept no other field (what a
    real API server reports with fieldValidation=Strict), unless x-kubernetes-preserve-unknown-fields."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) for k, v in schema.items()}
    if ("properties" in out and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


def schema_errors(validator, doc):
    return [f"{e.message} at {'/'.join(map(str, e.absolute_path)) or '(top level)'}"
            for e in validator.iter_errors(doc)]


def validate_crd(prometheusrule, crd_path):
    docs = prometheus_rules(prometheusrule)
    for doc in docs:
        name = (doc.get("metadata") or {}).get("name", "")
        schema = crd_schema(crd_path, doc.get("apiVersion"), doc["kind"])
        if schema is None:
            fail(f"{crd_path} defines no {doc.get('apiVersion')} {doc['kind']}")
            continue
        # CRD schemas are OpenAPI 3.0 schemas: draft 4 semantics, x-kubernetes-* extensions ignored.
        validator = jsonschema.Draft4Validator(strict(schema))
        errors = schema_errors(validator, doc)
        for e in errors:
            fail(f"PrometheusRule/{name}: {e}")
        if not errors:
            ok(f"PrometheusRule/{name} valid against the CRD schema in {crd_path} (strict)")
        # The validator must reject what a real API server rejects.
        rule = doc["spec"]["groups"][0]["rules"][0]
        broken = {
            "a misspelled field (annotation:)": ("annotation", rule.get("annotations")),
            "a malformed for: (15 minutes)": ("for", "15 minutes"),
        }
        for what, (key, value) in broken.items():
            bad = copy.deepcopy(doc)
            bad_rule = bad["spec"]["groups"][0]["rules"][0]
            bad_rule.pop("annotations" if key == "annotation" else key, None)
            bad_rule[key] = value
            if schema_errors(validator, bad):
                ok(f"the schema check rejects {what}")
            else:
                fail(f"the schema check accepts {what}: it checks nothing")


# ---------------------------------------------------------------------------------------------------
# check-alerts


def github_anchor(heading):
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def readme_anchors(readme):
    with open(readme) as f:
        return {github_anchor(m.group(1)) for m in re.finditer(r"^#+ (.+)$", f.read(), re.M)}


def watch_interval_seconds(deployment):
    """--interval of the sts-stepper container in the watch Deployment, in seconds (default 30s)."""
    for doc in load_docs(deployment):
        for c in doc["spec"]["template"]["spec"]["containers"]:
            args = " ".join(c.get("args", []))
            found = re.search(r"--interval[ =](\S+)", args)
            if found:
                m = re.fullmatch(r"(\d+)(s|m)", found.group(1))
                if not m:
                    sys.exit(f"{deployment}: --interval {found.group(1)!r} is not <N>s or <N>m")
                return int(m.group(1)) * (60 if m.group(2) == "m" else 1)
    return 30


def documented_alerts(metrics_doc):
    """{alert: severity} from the rows `| [`Name`](runbook.md#…) | … | severity |` of METRICS_DOC."""
    with open(metrics_doc) as f:
        rows = re.findall(r"^\| \[`(\w+)`\]\(runbook\.md#\w+\) \|.*\| (\w+) \|$", f.read(), re.M)
    return dict(rows)


def check_alerts(prometheusrule, alert_tests, readme, deployment, metrics_doc):
    anchors = readme_anchors(readme)
    tests = []
    files = sorted(os.path.join(alert_tests, n) for n in os.listdir(alert_tests) if n.endswith("-test.yaml"))
    for path in files:
        with open(path) as f:
            tests += yaml.safe_load(f)["tests"]
    ok(f"{len(tests)} promtool unit tests in {', '.join(files)}")
    fired, silent = set(), set()
    for t in tests:
        for case in t.get("alert_rule_test", []):
            (fired if case.get("exp_alerts") else silent).add(case["alertname"])
    documented = documented_alerts(metrics_doc)
    names = {a["alert"] for doc in prometheus_rules(prometheusrule) for a in alerts(doc)}
    for extra in sorted(set(documented) - names):
        fail(f"{metrics_doc} lists an alert {extra} that {prometheusrule} does not define")
    for doc in prometheus_rules(prometheusrule):
        for a in alerts(doc):
            name = a["alert"]
            notes = a.get("annotations", {})
            missing = [k for k in ("summary", "description", "runbook_url") if not notes.get(k)]
            if a.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
                missing.append("labels.severity (critical, warning or info)")
            if missing:
                fail(f"{name}: missing {', '.join(missing)}")
            else:
                ok(f"{name}: severity {a['labels']['severity']}, summary, description, runbook_url")
            url, _, anchor = notes.get("runbook_url", "").partition("#")
            if anchor and anchor in anchors and url.endswith("/" + readme):
                ok(f"{name}: runbook_url #{anchor} is a heading of {readme}")
            else:
                fail(f"{name}: runbook_url {notes.get('runbook_url')!r} names no heading of {readme}")
            for kind, names in (("fires", fired), ("stays silent", silent)):
                if name in names:
                    ok(f"{name}: {alert_tests} has a case where it {kind}")
                else:
                    fail(f"{name}: {alert_tests} has no case where it {kind}")
            severity = a.get("labels", {}).get("severity")
            if documented.get(name) == severity:
                ok(f"{name}: {metrics_doc} lists it, severity {severity}")
            else:
                fail(f"{name}: {metrics_doc}'s table of alerts lists it as {documented.get(name)!r}, "
                     f"the rule says severity {severity!r}")
            if name == "StsStepperDown":
                interval = watch_interval_seconds(deployment)
                if re.search(rf">\s*5\s*\*\s*{interval}\b", a["expr"]):
                    ok(f"StsStepperDown: threshold 5 * {interval} s, the watch --interval in {deployment}")
                else:
                    fail(f"StsStepperDown: expr has no `> 5 * {interval}` ({deployment} runs watch "
                         f"--interval {interval}s): {a['expr']!r}")


# ---------------------------------------------------------------------------------------------------
# check-dashboard


def check_dashboard(dashboard, kustomization):
    with open(dashboard) as f:
        dash = json.load(f)
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    for name in ("datasource", "namespace", "statefulset"):
        if name in variables:
            ok(f"dashboard variable ${name}")
        else:
            fail(f"dashboard has no template variable ${name}")
    panels = [p for p in dash.get("panels", []) if p.get("type") != "row"]
    ids = [p.get("id") for p in dash.get("panels", [])]
    if len(ids) != len(set(ids)) or None in ids:
        fail(f"dashboard panel ids are not unique: {ids}")
    for p in panels:
        exprs = [t.get("expr", "") for t in p.get("targets", [])]
        if not exprs or not all(exprs) or not p.get("description"):
            fail(f"panel {p.get('title')!r}: needs a description and a query in every target")
        elif any("sts_safe_rollout_" in e and "statefulset" in e and "$statefulset" not in e for e in exprs):
            fail(f"panel {p.get('title')!r}: a per-set query ignores $statefulset: {exprs}")
        else:
            ok(f"panel {p['title']!r}: {len(exprs)} quer{'y' if len(exprs) == 1 else 'ies'}")
    with open(kustomization) as f:
        k = yaml.safe_load(f)
    here = os.path.dirname(kustomization)
    missing = [r for r in k.get("resources", []) if not os.path.exists(os.path.join(here, r))]
    if missing:
        fail(f"{kustomization}: resources missing: {missing}")
    generated = [g for g in k.get("configMapGenerator", [])
                 if os.path.basename(dashboard) in g.get("files", [])]
    if not generated:
        fail(f"{kustomization}: no configMapGenerator ships {os.path.basename(dashboard)}")
    for g in generated:
        options = g.get("options", {})
        files_exist = all(os.path.exists(os.path.join(here, f)) for f in g["files"])
        if (options.get("labels", {}).get("grafana_dashboard") == "1"
                and options.get("disableNameSuffixHash") and files_exist):
            ok(f"ConfigMap {g['name']} (grafana_dashboard: \"1\") generated from {g['files']}")
        else:
            fail(f"{kustomization}: ConfigMap {g['name']} needs the files, label grafana_dashboard: \"1\" "
                 f"and disableNameSuffixHash (the Grafana sidecar reads it by label)")


COMMANDS = {
    "extract-rules": (extract_rules, 2),
    "validate-crd": (validate_crd, 2),
    "check-alerts": (check_alerts, 5),
    "check-dashboard": (check_dashboard, 2),
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS or len(sys.argv) - 2 != COMMANDS[sys.argv[1]][1]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    COMMANDS[sys.argv[1]][0](*sys.argv[2:])
    sys.exit(1 if FAILURES else 0)
