#!/usr/bin/env bash
# Tests deploy/monitoring/ (the alerts and the Grafana dashboard): `make monitoring-tests`, part of `make test`.
#
#   1. the PrometheusRule against the openAPIV3Schema of the real Prometheus Operator CRD
#      (fixtures/crds/monitoring.coreos.com_prometheusrules.yaml), strictly, with jsonschema;
#   2. every alert: severity, summary, description, a runbook_url that is a heading of docs/runbook.md, a row in
#      docs/metrics.md's table of alerts, a case in tests/monitoring/*-test.yaml where it fires and one where it
#      does not; StsStepperDown's
#      threshold = 5 × the watch Deployment's --interval; the dashboard's structure and its ConfigMap;
#   3. `promtool check rules` and `promtool test rules` on the PrometheusRule's `groups:` (extracted from it
#      here, so there is one copy of the rules);
#   4. a real Prometheus on 127.0.0.1 (scripts/monitoring-live.py): an hour of synthetic series backfilled
#      with `promtool tsdb create-blocks-from openmetrics`, the rules loaded and evaluated without error,
#      every rule expression returning the series it must, every dashboard query answering with data.
#
# Needs promtool and prometheus (Debian's `prometheus` package; .ci/run installs it) and python3 with PyYAML
# and jsonschema (installed from PyPI into the project's venv, scripts/python-env.sh). A missing promtool or prometheus FAILS the run, unless
# ALLOW_SKIP=1, which skips steps 3 and 4 with a loud banner. Exits 1 if any check failed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# PyYAML and jsonschema in the project's Python venv (scripts/python-env.sh).
PYTHON=$(scripts/python-env.sh pyyaml jsonschema)
RULE=deploy/monitoring/prometheusrule.yaml
DASHBOARD=deploy/monitoring/sts-safe-rollout-dashboard.json
CRD=fixtures/crds/monitoring.coreos.com_prometheusrules.yaml
# The promtool unit tests: every tests/monitoring/*-test.yaml.
ALERT_TESTS=tests/monitoring
export PROMTOOL=${PROMTOOL:-promtool} PROMETHEUS=${PROMETHEUS:-prometheus}

[ -f "$CRD" ] || { echo "monitoring-test.sh: $CRD is missing" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
failed=0 checks_passed=0 checks_failed=0
step() { echo; echo "--- $*"; }
# One check: counted for make test's summary (the last line, "monitoring: N passed, N failed").
run() {
    if "$@"; then checks_passed=$((checks_passed + 1)); else failed=1 checks_failed=$((checks_failed + 1)); fi
}
counts() { echo "monitoring: $checks_passed passed, $checks_failed failed"; }

step "the PrometheusRule against the CRD's openAPIV3Schema"
run "$PYTHON" scripts/monitoring-static.py validate-crd "$RULE" "$CRD"

step "every alert: labels, annotations, runbook, unit tests; the dashboard"
run "$PYTHON" scripts/monitoring-static.py check-alerts "$RULE" "$ALERT_TESTS" docs/runbook.md \
    deploy/stepper/watch/deployment.yaml docs/metrics.md
run "$PYTHON" scripts/monitoring-static.py check-dashboard "$DASHBOARD" deploy/monitoring/kustomization.yaml

missing=()
for tool in "$PROMTOOL" "$PROMETHEUS"; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    echo "!!! ${missing[*]} not installed (apt-get install prometheus; .ci/run installs it)."
    echo "!!! promtool check/test rules and the queries on a real Prometheus did NOT run."
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    [ "${ALLOW_SKIP:-}" = 1 ] || { echo "FAIL: set ALLOW_SKIP=1 to skip them knowingly"; exit 1; }
    echo "ALLOW_SKIP=1: skipped"
    if [ -n "${SKIP_LOG:-}" ]; then
        mkdir -p "$(dirname "$SKIP_LOG")"
        echo "monitoring-test.sh: ${missing[*]} not installed (promtool and live-query checks)" >>"$SKIP_LOG"
    fi
    counts
    exit "$failed"
fi

step "promtool check rules, promtool test rules"
# promtool finds the rule file relative to the unit-test files: they all go into the temp dir.
"$PYTHON" scripts/monitoring-static.py extract-rules "$RULE" "$tmp/rules.yaml"
cp "$ALERT_TESTS"/*-test.yaml "$tmp/"
run "$PROMTOOL" check rules "$tmp/rules.yaml"
run "$PROMTOOL" test rules "$tmp"/*-test.yaml

step "the unit tests catch a weakened or broken rule"
# Each mutation, applied to the extracted rules alone, must make `promtool test rules` fail.
mutations=(
    's/reason!~"Paused|Settling|GroupBusy|Throttled"/reason!~"Paused|GroupBusy|Throttled"/'  # Stuck on Settling
    's/for: 15m/for: 10m/'                                                                # Stuck too early
    's/changes(\(.*\)) > 0/changes(\1) > 99/'                                            # Stalled on fresh staging
    's/_seconds) < 1800/_seconds) < 60/'                                                  # Stalled without history
    's/(sts_safe_rollout_partition) > 0/(sts_safe_rollout_partition) >= 0/'                 # Stalled on OnDelete sets
    's/(sts_safe_rollout_blocked{reason="GroupBusy"}) == 1/(sts_safe_rollout_blocked{reason="GroupBusy"}) == 2/'
    's/> 5 \* 30/> 5 * 60/'                                                               # Down too late
    's/absent(sts_safe_rollout_last_pass_timestamp_seconds)/vector(0) < 0/'               # Down: no metrics missed
    's/errored|failed"}\[2m\]/errored|failed"}[5m]/'                                      # ApiErrors on a blip
    's/unless sts_safe_rollout_recovered_pods_total offset 15m/unless sts_safe_rollout_recovered_pods_total/'
    's/_wait_seconds) > max by/_wait_seconds) >= max by/'                                 # ApprovalOverdue at the timeout
    's/for: 2m/for: 5m/'                                                                  # ApprovalOverdue too late
    's/unless sts_safe_rollout_rollbacks_total offset 30m/unless sts_safe_rollout_rollbacks_total/'  # RolledBack: first missed
    's/rollbacks_total\[30m\])) > 0/rollbacks_total[30m])) > 1/'                                 # RolledBack: second missed
    's/^\( *\)) >= 3$/\1) >= 1/'                                                             # PolicyUnreachable on a blip
    's/error_type="calling_webhook_error"/error_type!=""/g'                                 # PolicyUnreachable on its own answers
    's/name="clusterwide-sts-safe-rollout.kubewarden.admission", //g'                        # PolicyUnreachable on another policy
    's/^\( *\)unless$/\1and/'                                                                # PolicyUnreachable: a new series missed
)
for m in "${mutations[@]}"; do
    mkdir -p "$tmp/mutant"
    sed "$m" "$tmp/rules.yaml" >"$tmp/mutant/rules.yaml"
    cp "$ALERT_TESTS"/*-test.yaml "$tmp/mutant/"
    if cmp -s "$tmp/rules.yaml" "$tmp/mutant/rules.yaml"; then
        echo "FAIL mutation $m changes nothing: the rule it targets changed; update the mutation"
        failed=1 checks_failed=$((checks_failed + 1))
    elif "$PROMTOOL" test rules "$tmp/mutant"/*-test.yaml >/dev/null 2>&1; then
        echo "FAIL the unit tests pass with the rules mutated by $m"
        failed=1 checks_failed=$((checks_failed + 1))
    else
        echo "ok   the unit tests fail with $m"
        checks_passed=$((checks_passed + 1))
    fi
done

step "rules and dashboard queries on a real Prometheus ($("$PROMETHEUS" --version 2>&1 | head -n 1))"
mkdir "$tmp/live"
run "$PYTHON" scripts/monitoring-live.py "$tmp/rules.yaml" "$DASHBOARD" "$tmp/live"

echo
if [ "$failed" = 0 ]; then echo "monitoring-test.sh: all checks passed"; else echo "monitoring-test.sh: FAILED"; fi
counts
exit "$failed"
