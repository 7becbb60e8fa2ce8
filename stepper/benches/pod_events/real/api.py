# The API server calls of fleet.py and churn.py: one TLS connection, JSON in and out.
import http.client, json, ssl
import os
from urllib.parse import urlparse
# The API server and an admin's client certificate, as the control plane's fake_kubelet.py takes them.
SERVER = urlparse(os.environ.get("K8S_SERVER", "https://127.0.0.1:6443"))
def conn():
    ctx = ssl.create_default_context(cafile=os.environ["K8S_CA"])
    ctx.load_cert_chain(os.environ["K8S_CLIENT_CERT"], os.environ["K8S_CLIENT_KEY"])
    return http.client.HTTPSConnection(SERVER.hostname, SERVER.port or 443, context=ctx)
def call(c, method, path, body=None, ctype="application/json"):
    data = None if body is None else json.dumps(body, separators=(",", ":"))
    c.request(method, path, body=data, headers={"Content-Type": ctype} if data else {})
    r = c.getresponse(); out = r.read()
    if r.status >= 300 and r.status != 409:
        raise SystemExit(f"{method} {path}: {r.status} {out[:300]}")
    return json.loads(out) if out else None
def status_annotation(ip, lsn):
    return json.dumps({"conn_url": f"postgres://{ip}:5432/postgres", "api_url": f"http://{ip}:8008/patroni",
        "state": "running", "role": "replica", "version": "4.0.4", "xlog_location": lsn,
        "replication_state": "streaming", "timeline": 3, "dcs_last_seen": 1795676400 + lsn % 1000,
        "pending_restart": False, "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": True,
        "replicatefrom": "patronidemo-0"}, "pending_restart_reason": {}, "receive_lsn": lsn, "replay_lsn": lsn},
        separators=(",", ":"))
