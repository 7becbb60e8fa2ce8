#!/usr/bin/env python3
"""A worked answerer for sts-stepper's approval webhook (docs/approvals.md, "Webhook").

The stepper POSTs an UpdateApprovalRequest (apiVersion safe-rollout.dev/v1alpha1) before each step and
steps only when the answer's body says {"decision": "Approve"}. This answerer, stdlib only:

- answers a request it does not understand with HTTP 400 (an error for the stepper: it holds the step
  and retries; it never approves);
- for phase "Update": approves once ready_to_go(pod) says so for every pod, else answers Wait with the
  reason and retryAfterSeconds;
- for phase "Switchover": starts the switchover once per requestId (the id is the same on every retry
  of one question), answers Wait while it runs, and Approve once it is done; the stepper still waits
  until the pod no longer matches primary-selector, then asks again with phase "Update";
- answers Deny with a reason when maintenance() says the application must not lose a pod now.

Usage: approval-webhook.py [PORT [ADDRESS]]   (default 8080 on every address; serve it behind a
Service, and run the stepper with --webhook db-approver=http://approval-webhook.demo:8080/approve
--webhook-serves db-approver=demo/*).
Replace the three functions marked "your application" with real checks.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

API_VERSION = "safe-rollout.dev/v1alpha1"
KIND = "UpdateApprovalRequest"

switchovers = {}  # requestId -> "running" | "done"
lock = threading.Lock()


def maintenance():
    """Your application: a reason not to lose any pod now (a backup, a resync), or None."""
    return None


def ready_to_go(pod):
    """Your application: None when `pod` (a request's pod: name, uid, ordinal, labels) may be replaced
    now, else why not (connections still draining, a replica that is the last in-sync copy)."""
    return None


def switch_over(pod, request_id):
    """Your application: move the primary role away from `pod` (promote a caught-up replica that is not
    in this step and is already on updateRevision if one is, then move the primary-selector label).
    Runs in a thread; returns when done."""
    with lock:
        switchovers[request_id] = "done"


def decide(request):
    """The answer (a dict) to one request."""
    blocked = maintenance()
    if blocked:
        return {"decision": "Deny", "reason": blocked}
    if request["phase"] == "Switchover":
        primary = next(p for p in request["pods"] if p.get("primary"))
        rid = request["requestId"]
        with lock:
            state = switchovers.get(rid)
            if state is None:
                switchovers[rid] = "running"
                threading.Thread(target=switch_over, args=(primary, rid), daemon=True).start()
        if state != "done":
            return {
                "decision": "Wait",
                "reason": "switching the primary role away from " + primary["name"],
                "retryAfterSeconds": 10,
            }
        return {"decision": "Approve", "reason": "role moved away from " + primary["name"]}
    for pod in request["pods"]:
        why = ready_to_go(pod)
        if why:
            return {"decision": "Wait", "reason": pod["name"] + ": " + why, "retryAfterSeconds": 15}
    return {"decision": "Approve", "reason": "ready"}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length))
            if request.get("apiVersion") != API_VERSION or request.get("kind") != KIND:
                raise ValueError("not an " + KIND + " of " + API_VERSION)
            answer, status = decide(request), 200
        except (ValueError, KeyError, TypeError, StopIteration) as e:
            # Not a decision: the stepper counts an error and asks again; it never approves on this.
            answer, status = {"error": str(e)}, 400
        body = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
    address = sys.argv[2] if len(sys.argv) > 2 else ""
    ThreadingHTTPServer((address, port), Handler).serve_forever()
