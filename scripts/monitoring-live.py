#!/usr/bin/env python3
# Runs every dashboard query and every rule of deploy/monitoring/ on a real Prometheus loaded with synthetic series.
"""Live checks of deploy/monitoring/ on a real Prometheus (run by scripts/monitoring-test.sh).

    monitoring-live.py RULES DASHBOARD WORKDIR

1. Writes an hour of synthetic sts-stepper series (OpenMetrics, one sample per 15 s, ending 2 minutes ago)
   for a known situation: demo/web rolled out, demo/db stuck on PodNotReady since its step 50 minutes ago,
   demo/queue blocked by ApiError for 20 minutes while errored passes go on, demo/cache recovered a pod 5
   minutes ago, kafka/kafka-b waiting for its group; two steppers, team-b's hung 10 minutes ago; the API
   server failing to call the policy's webhook once a minute for the last 8 minutes (and another policy's
   webhook failing all along, and the policy refusing malformed writes itself: neither counts).
2. `promtool tsdb create-blocks-from openmetrics` turns them into TSDB blocks in WORKDIR/data.
3. Starts `prometheus` (PROMETHEUS, default on PATH) on 127.0.0.1:<free port> with those blocks and RULES
   as its rule file, waits (bounded) until it is ready and has evaluated every rule without error.
4. Every dashboard query (Grafana variables set to All; range queries over the last 30 minutes of data,
   instant ones at its end) and both variable queries must answer without error and return data;
   every rule expression, run at the data's end, must return exactly the series the situation makes
   it fire for.
Prometheus is killed on exit, whatever happens. Exit 0 when every check passes, 1 otherwise.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import yaml

STEP = 15  # seconds between two synthetic samples
SPAN = 3600  # seconds of synthetic data
WAIT = 30  # seconds: upper bound of every wait
GRAFANA = {"$namespace": ".*", "$statefulset": ".*", "$__rate_interval": "1m", "$__interval": "15s"}
A = {"job": "sts-stepper", "namespace": "sts-safe-rollout", "instance": "10.0.0.1:8080"}
B = {"job": "sts-stepper", "namespace": "team-b", "instance": "10.0.0.2:8080"}
# The series each rule expression returns at the data's end, as (namespace, statefulset) or (job, namespace).
EXPECTED = {
    "StsSafeRolloutStuck": {("demo", "db"), ("demo", "pg"), ("demo", "queue")},
    "StsSafeRolloutStalled": {("demo", "db")},
    "StsStepperDown": {("sts-stepper", "team-b")},
    "StsStepperApiErrors": {("sts-stepper", "sts-safe-rollout")},
    "StsSafeRolloutPodRecovered": {("demo", "cache")},
    "StsSafeRolloutApprovalOverdue": {("demo", "pg")},
    "StsSafeRolloutRolledBack": {("demo", "cart")},
    "StsSafeRolloutPolicyUnreachable": {("webhook", "clusterwide-sts-safe-rollout.kubewarden.admission")},
}
# The API server's admission webhook counter (k8s.io/apiserver pkg/admission/metrics) and its labels.
WEBHOOK_REJECTIONS = "apiserver_admission_webhook_rejection_count"
APISERVER = {"job": "apiserver", "instance": "10.0.0.10:6443", "type": "admit", "operation": "UPDATE"}
FAILURES = []


def check(condition, message):
    print(f"{'ok  ' if condition else 'FAIL'} {message}")
    if not condition:
        FAILURES.append(message)


# ---------------------------------------------------------------------------------------------------
# Synthetic series


def sets(t, end):
    """Per-StatefulSet figures at time t: {(namespace, name): dict}."""
    start = end - SPAN
    web_steps = [s for s in range(start + 300, start + 3000, 600) if s <= t]  # 5 steps, 10 min apart
    web_partition = 5 - len(web_steps)
    out = {
        ("demo", "web"): dict(replicas=5, updated=5 - web_partition, partition=web_partition,
                              last_step=web_steps[-1] if web_steps else None, steps=len(web_steps),
                              blocked="Settling" if 0 < web_partition < 5 else None, ready=5),
        ("demo", "db"): dict(replicas=3, updated=1, partition=2, last_step=start + 600, steps=1,
                             blocked="PodNotReady", ready=2),
        ("demo", "queue"): dict(replicas=3, updated=2, partition=1, last_step=end - 1500, steps=2,
                                blocked="ApiError" if t >= end - 1200 else "Settling", ready=3),
        ("demo", "cache"): dict(replicas=3, updated=3, partition=0, last_step=end - 2400, steps=3,
                                blocked=None, ready=3, recovered=1 if t >= end - 300 else None),
        # Waits for the application's approval since 15 minutes before the end (timeout 600 s); web waits
        # too in the last 5 minutes, within its timeout.
        ("demo", "pg"): dict(replicas=3, updated=1, partition=2, last_step=end - 1200, steps=1,
                             blocked="ApprovalPending" if t >= end - 900 else None, ready=3,
                             approval=(t - (end - 900), 600) if t >= end - 900 else None),
        # Rolled back by itself 10 minutes before the end (its counter appears then).
        ("demo", "cart"): dict(replicas=3, updated=3, partition=0, last_step=end - 900, steps=1,
                               blocked=None, ready=3, rollbacks=1 if t >= end - 600 else None),
        ("kafka", "kafka-b"): dict(replicas=3, updated=0, partition=3, last_step=None, steps=0,
                                   blocked="GroupBusy", ready=3),
    }
    return out


def labels(d):
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(d.items())) + "}"


def synthetic_openmetrics(end):
    """OpenMetrics text: each series' samples together, in time order, then `# EOF`."""
    times = range(end - SPAN, end + 1, STEP)
    series = {}  # "name{labels}" -> [(t, value)]

    def add(name, lbls, t, value):
        series.setdefault(f"{name}{labels(lbls)}", []).append((t, value))

    for t in times:
        for (ns, name), s in sets(t, end).items():
            per_set = dict(A, namespace=ns, statefulset=name)
            add("sts_safe_rollout_replicas", per_set, t, s["replicas"])
            add("sts_safe_rollout_current_replicas", per_set, t, s["replicas"] - s["updated"])
            add("sts_safe_rollout_updated_replicas", per_set, t, s["updated"])
            add("sts_safe_rollout_partition", per_set, t, s["partition"])
            add("sts_safe_rollout_steps_total", per_set, t, s["steps"])
            if s["last_step"] is not None:
                add("sts_safe_rollout_last_partition_update_timestamp_seconds", per_set, t, s["last_step"])
            if s["blocked"]:
                add("sts_safe_rollout_blocked", dict(per_set, reason=s["blocked"]), t, 1)
            if s.get("approval"):
                add("sts_safe_rollout_approval_wait_seconds", per_set, t, s["approval"][0])
                add("sts_safe_rollout_approval_timeout_seconds", per_set, t, s["approval"][1])
            if s.get("recovered"):
                add("sts_safe_rollout_recovered_pods_total", per_set, t, s["recovered"])
            if s.get("rollbacks"):
                add("sts_safe_rollout_rollbacks_total", per_set, t, s["rollbacks"])
            ksm = {"job": "kube-state-metrics", "namespace": ns, "statefulset": name}
            add("kube_statefulset_status_replicas_ready", ksm, t, s["ready"])
        # Stepper A passes every 30 s, errored ones since 20 minutes before the end; B hung 10 minutes ago.
        passes = (t - (end - SPAN)) // 30
        errored = max(0, (t - (end - 1200)) // 30)
        add("sts_safe_rollout_last_pass_timestamp_seconds", A, t, t)
        add("sts_safe_rollout_passes_total", dict(A, result="ok"), t, passes - errored)
        add("sts_safe_rollout_passes_total", dict(A, result="errored"), t, errored)
        add("sts_safe_rollout_leader", A, t, 1)
        for k in range(14):  # the stepper's buckets: 0.01 × 2^k s; every pass took 0.3 s
            le = 0.01 * 2 ** k
            add("sts_safe_rollout_pass_duration_seconds_bucket", dict(A, le=f"{le:g}"), t,
                passes if le >= 0.3 else 0)
        add("sts_safe_rollout_pass_duration_seconds_bucket", dict(A, le="+Inf"), t, passes)
        add("sts_safe_rollout_pass_duration_seconds_count", A, t, passes)
        add("sts_safe_rollout_pass_duration_seconds_sum", A, t, round(0.3 * passes, 3))
        hung = min(t, end - 600)
        add("sts_safe_rollout_last_pass_timestamp_seconds", B, t, hung)
        add("sts_safe_rollout_passes_total", dict(B, result="ok"), t, (hung - (end - SPAN)) // 60)
        add("sts_safe_rollout_leader", B, t, 1)
        ours = "clusterwide-sts-safe-rollout.kubewarden.admission"
        failing = dict(APISERVER, name=ours, error_type="calling_webhook_error", rejection_code="0")
        add(WEBHOOK_REJECTIONS, failing, t, 1 + max(0, (t - (end - 480)) // 60))
        answered = dict(APISERVER, name=ours, error_type="no_error", rejection_code="400")
        add(WEBHOOK_REJECTIONS, answered, t, 1 + (t - (end - SPAN)) // 60)
        other = dict(APISERVER, name="clusterwide-other.kubewarden.admission", error_type="calling_webhook_error",
                     rejection_code="0")
        add(WEBHOOK_REJECTIONS, other, t, 1 + (t - (end - SPAN)) // 60)
    lines = [f"{key} {value} {t}" for key, samples in series.items() for t, value in samples]
    return "\n".join(lines) + "\n# EOF\n"


# ---------------------------------------------------------------------------------------------------
# Prometheus


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, path, params):
    query = urllib.parse.urlencode(params, doseq=True)
    try:
        with urllib.request.urlopen(f"{url}{path}?{query}", timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)


def start_prometheus(binary, workdir, rules):
    config = os.path.join(workdir, "prometheus.yml")
    with open(config, "w") as f:
        yaml.safe_dump({"global": {"evaluation_interval": "1s"}, "rule_files": [os.path.abspath(rules)]}, f)
    log_path = os.path.join(workdir, "prometheus.log")
    for attempt in range(1, 6):  # the free port may be taken before Prometheus binds it: retry
        port = free_port()
        log = open(log_path, "w")
        proc = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={workdir}/data",
             f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=1d"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return proc, url
            except OSError:
                pass
            time.sleep(0.2)
        proc.kill()
        proc.wait()
        with open(log_path) as f:
            tail = f.read()[-3000:]
        if "address already in use" not in tail or attempt == 5:
            sys.exit(f"prometheus did not become ready within {WAIT}s; log:\n{tail}")
    raise AssertionError("unreachable")


def wait_rules_evaluated(url, count):
    """The rules as Prometheus reports them once each has been evaluated (bounded wait)."""
    deadline = time.monotonic() + WAIT
    while True:
        groups = get(url, "/api/v1/rules", {})["data"]["groups"]
        rules = [r for g in groups for r in g["rules"]]
        if len(rules) == count and all(r.get("lastEvaluation", "").startswith("2") for r in rules):
            return rules
        if time.monotonic() > deadline:
            sys.exit(f"Prometheus had not evaluated {count} rules within {WAIT}s: {rules}")
        time.sleep(0.5)


# ---------------------------------------------------------------------------------------------------
# Checks


def grafana(expr):
    for var, value in GRAFANA.items():
        expr = expr.replace(var, value)
    return expr


def check_dashboard(url, dashboard, end):
    with open(dashboard) as f:
        dash = json.load(f)
    for v in dash["templating"]["list"]:
        if v["type"] != "query":
            continue
        m = re.fullmatch(r"label_values\((.+), (\w+)\)", v["query"]["query"])
        check(m is not None, f"variable ${v['name']}: label_values(SELECTOR, LABEL)")
        if m:
            answer = get(url, f"/api/v1/label/{m.group(2)}/values",
                         {"match[]": grafana(m.group(1)), "start": end - SPAN, "end": end})
            check(answer.get("status") == "success" and answer["data"],
                  f"variable ${v['name']}: {answer.get('data') or answer.get('error')}")
    for p in dash["panels"]:
        for t in p.get("targets", []):
            expr = grafana(t["expr"])
            if t.get("instant"):
                answer = get(url, "/api/v1/query", {"query": expr, "time": end})
            else:
                answer = get(url, "/api/v1/query_range",
                             {"query": expr, "start": end - 1800, "end": end, "step": 60})
            result = answer.get("data", {}).get("result", [])
            check(answer.get("status") == "success" and len(result) > 0,
                  f"panel {p['title']!r} {t['refId']}: {len(result)} series"
                  + (f", error {answer.get('error')}" if answer.get("status") != "success" else "")
                  + f" <- {expr}")


def key(labels):
    """What a rule's series is about: (namespace, statefulset), ("webhook", name), or (job, namespace)."""
    if "statefulset" in labels:
        return labels.get("namespace"), labels["statefulset"]
    if "name" in labels:
        return "webhook", labels["name"]
    return labels.get("job"), labels.get("namespace")


def check_rules(url, rules_file, end):
    with open(rules_file) as f:
        groups = yaml.safe_load(f)["groups"]
    rules = [r for g in groups for r in g["rules"]]
    evaluated = wait_rules_evaluated(url, len(rules))
    for r in evaluated:
        check(r["health"] == "ok" and not r.get("lastError"),
              f"Prometheus evaluates {r['name']}: health {r['health']} {r.get('lastError', '')}")
    for r in rules:
        answer = get(url, "/api/v1/query", {"query": r["expr"], "time": end})
        result = answer.get("data", {}).get("result", [])
        got = {key(m["metric"]) for m in result}
        want = EXPECTED.get(r.get("alert"))
        check(answer.get("status") == "success" and got == want,
              f"rule {r.get('alert')} at the data's end returns {sorted(got)}, want {sorted(want or [])}"
              + (f", error {answer.get('error')}" if answer.get("status") != "success" else ""))


def main(rules, dashboard, workdir):
    end = int(time.time()) // STEP * STEP - 120
    om = os.path.join(workdir, "series.om")
    with open(om, "w") as f:
        f.write(synthetic_openmetrics(end))
    subprocess.run([os.environ.get("PROMTOOL", "promtool"), "tsdb", "create-blocks-from", "openmetrics",
                    "--quiet", om, os.path.join(workdir, "data")], check=True)
    print(f"ok   {SPAN // 60} minutes of synthetic series loaded into TSDB blocks")
    proc, url = start_prometheus(os.environ.get("PROMETHEUS", "prometheus"), workdir, rules)
    try:
        print(f"ok   prometheus on {url} (pid {proc.pid})")
        check_rules(url, rules, end)
        check_dashboard(url, dashboard, end)
    finally:
        proc.kill()
        proc.wait()
    return 1 if FAILURES else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    # SIGTERM (a killed make) unwinds through main's `finally`, which kills Prometheus.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main(*sys.argv[1:]))
