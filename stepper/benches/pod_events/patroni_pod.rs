//! A member pod of a Patroni cluster as the API server sends it in a watch event after Patroni's loop
//! patched its `status` annotation: built from the Running, Ready pod of `fixtures/api/scale/pod-running.json`
//! (captured from Kubernetes v1.36.2) with the container of Patroni's own Kubernetes example
//! (`kubernetes/patroni_k8s.yaml` in the Patroni repository: its 15 `PATRONI_*` variables, ports, readiness
//! probe), the labels and annotations Patroni and kubectl write, and the `managedFields` the API server
//! keeps for kube-controller-manager, the kubelet and Patroni. The fixture has no `managedFields` (it was
//! captured without them), so these are written here in the API server's shape (`fieldsV1` derived from
//! the fields each manager set, as server-side apply records them).

use serde_json::{Map, Value, json};

/// The `status` annotation Patroni's Kubernetes DCS writes on its member's pod every loop (compact JSON,
/// as `json.dumps(..., separators=(',', ':'))`): its connection and REST URLs, state, role, WAL position,
/// timeline, replication state, tags. `lsn` stands for the WAL position, which moves with every write.
pub fn status_annotation(ip: &str, lsn: u64) -> String {
    json!({
        "conn_url": format!("postgres://{ip}:5432/postgres"),
        "api_url": format!("http://{ip}:8008/patroni"),
        "state": "running",
        "role": "replica",
        "version": "4.0.4",
        "xlog_location": lsn,
        "replication_state": "streaming",
        "timeline": 3,
        "dcs_last_seen": 1_795_676_400u64 + lsn % 1000,
        "pending_restart": false,
        "tags": {"nofailover": false, "noloadbalance": false, "clonefrom": true,
                 "replicatefrom": "patronidemo-0"},
        "pending_restart_reason": {},
        "receive_lsn": lsn,
        "replay_lsn": lsn,
    })
    .to_string()
}

/// Patroni's container in its Kubernetes example (`patroni_k8s.yaml`), as the API server defaults it.
fn container() -> Value {
    let field = |path: &str| json!({"fieldRef": {"apiVersion": "v1", "fieldPath": path}});
    let secret = |key: &str| json!({"secretKeyRef": {"name": "patronidemo", "key": key}});
    let env = [
        (
            "PATRONI_KUBERNETES_POD_IP",
            None,
            Some(field("status.podIP")),
        ),
        (
            "PATRONI_KUBERNETES_NAMESPACE",
            None,
            Some(field("metadata.namespace")),
        ),
        ("PATRONI_KUBERNETES_BYPASS_API_SERVICE", Some("true"), None),
        ("PATRONI_KUBERNETES_USE_ENDPOINTS", Some("true"), None),
        (
            "PATRONI_KUBERNETES_LABELS",
            Some("{application: patroni, cluster-name: patronidemo}"),
            None,
        ),
        ("PATRONI_SUPERUSER_USERNAME", Some("postgres"), None),
        (
            "PATRONI_SUPERUSER_PASSWORD",
            None,
            Some(secret("superuser-password")),
        ),
        ("PATRONI_REPLICATION_USERNAME", Some("standby"), None),
        (
            "PATRONI_REPLICATION_PASSWORD",
            None,
            Some(secret("replication-password")),
        ),
        ("PATRONI_SCOPE", Some("patronidemo"), None),
        ("PATRONI_NAME", None, Some(field("metadata.name"))),
        (
            "PATRONI_POSTGRESQL_DATA_DIR",
            Some("/home/postgres/pgdata/pgroot/data"),
            None,
        ),
        ("PATRONI_POSTGRESQL_PGPASS", Some("/tmp/pgpass"), None),
        ("PATRONI_POSTGRESQL_LISTEN", Some("0.0.0.0:5432"), None),
        ("PATRONI_RESTAPI_LISTEN", Some("0.0.0.0:8008"), None),
    ]
    .map(|(name, value, from)| match (value, from) {
        (Some(v), _) => json!({"name": name, "value": v}),
        (None, f) => json!({"name": name, "valueFrom": f}),
    });
    json!({
        "name": "patronidemo", "image": "patroni:4.0.4", "imagePullPolicy": "IfNotPresent",
        "env": env,
        "ports": [{"containerPort": 8008, "protocol": "TCP"}, {"containerPort": 5432, "protocol": "TCP"}],
        "readinessProbe": {"httpGet": {"path": "/readiness", "port": 8008, "scheme": "HTTP"},
                           "initialDelaySeconds": 3, "periodSeconds": 10, "timeoutSeconds": 5,
                           "successThreshold": 1, "failureThreshold": 3},
        "resources": {},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "volumeMounts": [{"mountPath": "/home/postgres/pgdata", "name": "pgdata"},
                         {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                          "name": "kube-api-access-dbvtl", "readOnly": true}]
    })
}

/// The `fieldsV1` of `value` as server-side apply records it: `f:<field>` per object field, list items
/// keyed by their `name` or `type` (`k:{...}`), `.` for an object's own presence.
fn fields_v1(value: &Value) -> Value {
    match value {
        Value::Object(o) => {
            let mut f = Map::new();
            for (k, v) in o {
                f.insert(format!("f:{k}"), fields_v1(v));
            }
            Value::Object(f)
        }
        Value::Array(items) => {
            let mut f = Map::new();
            for item in items {
                let key = ["name", "type", "containerPort", "mountPath", "key"]
                    .iter()
                    .find_map(|k| item.get(*k).map(|v| format!("k:{{\"{k}\":{v}}}")));
                let Some(key) = key else { continue };
                let mut inner = fields_v1(item);
                if let Some(o) = inner.as_object_mut() {
                    o.insert(".".into(), json!({}));
                }
                f.insert(key, inner);
            }
            Value::Object(f)
        }
        _ => json!({}),
    }
}

fn managed(manager: &str, subresource: Option<&str>, fields: Value) -> Value {
    let mut entry = json!({"manager": manager, "operation": "Update", "apiVersion": "v1",
                           "time": "2026-11-26T07:19:33Z", "fieldsType": "FieldsV1",
                           "fieldsV1": fields_v1(&fields)});
    if let Some(s) = subresource {
        entry["subresource"] = json!(s);
    }
    entry
}

/// Member `n` of the fleet (`patronidemo-<n % 1000>`-like names in namespace `db-<n / 1000>`), its
/// Patroni `status` at WAL position `lsn` and resourceVersion `rv`.
pub fn pod(fixture: &Value, n: usize, lsn: u64, rv: u64) -> Value {
    let mut pod = fixture.clone();
    let set = format!("patroni-{}", n / 5);
    let name = format!("{set}-{}", n % 5);
    let ip = format!("10.244.{}.{}", n / 250, n % 250 + 2);
    let meta = &mut pod["metadata"];
    meta["name"] = json!(name);
    meta["generateName"] = json!(format!("{set}-"));
    meta["namespace"] = json!(format!("db-{}", n / 1000));
    meta["uid"] = json!(format!("7c1e5a0e-0000-4000-8000-{n:012}"));
    meta["resourceVersion"] = json!(rv.to_string());
    meta["labels"] = json!({
        "application": "patroni", "cluster-name": set, "role": "replica",
        "apps.kubernetes.io/pod-index": (n % 5).to_string(),
        "controller-revision-hash": format!("{set}-7d7ff66b47"),
        "statefulset.kubernetes.io/pod-name": name,
    });
    meta["ownerReferences"][0]["name"] = json!(set);
    meta["ownerReferences"][0]["uid"] = json!(format!("44b73402-0000-4000-8000-{:012}", n / 5));
    meta["annotations"] = json!({
        "kubectl.kubernetes.io/default-container": "patronidemo",
        "kubectl.kubernetes.io/restartedAt": "2026-11-26T07:10:00Z",
        "status": status_annotation(&ip, lsn),
    });
    pod["spec"]["containers"] = json!([container()]);
    pod["spec"]["hostname"] = json!(name);
    pod["spec"]["subdomain"] = json!(set);
    pod["spec"]["volumes"]
        .as_array_mut()
        .expect("fixture volumes")
        .push(json!({"name": "pgdata", "persistentVolumeClaim": {"claimName": format!("pgdata-{name}")}}));
    pod["status"]["podIP"] = json!(ip);
    pod["status"]["podIPs"] = json!([{"ip": ip}]);
    pod["status"]["hostIPs"] = json!([{"ip": "127.0.0.1"}]);
    let kcm = json!({"metadata": {"generateName": "", "labels": pod["metadata"]["labels"],
                                  "ownerReferences": [{"uid": ""}]},
                     "spec": pod["spec"]});
    let kubelet = json!({"status": pod["status"]});
    let patroni = json!({"metadata": {"annotations": {"status": ""}, "labels": {"role": ""}}});
    pod["metadata"]["managedFields"] = json!([
        managed("kube-controller-manager", None, kcm),
        managed("kubelet", Some("status"), kubelet),
        managed("Patroni", None, patroni),
    ]);
    pod
}

/// One line of a watch response, `{"type":"MODIFIED","object":…}` and its newline: `type` first, as the
/// API server writes it (serde reads the object in place only when the tag comes first).
pub fn modified(pod: &Value) -> String {
    format!("{{\"type\":\"MODIFIED\",\"object\":{pod}}}\n")
}
