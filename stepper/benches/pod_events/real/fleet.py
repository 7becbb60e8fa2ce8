# fleet.py [SETS]: in namespace db, SETS (default 200) StatefulSets of 5 Patroni members each (Patroni's own
# kubernetes/patroni_k8s.yaml container), their pods as kube-controller-manager creates them, Running and Ready as
# the kubelet reports them, and Patroni's status annotation on each (fixtures/api/scale/pod-running.json).
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api import conn, call, status_annotation
SETS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
fix = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../fixtures/api/scale/pod-running.json")))
c = conn()
call(c, "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "db"}})
call(c, "POST", "/api/v1/namespaces/db/serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})
def env(n, v=None, f=None, s=None):
    e = {"name": n}
    if v is not None: e["value"] = v
    if f: e["valueFrom"] = {"fieldRef": {"fieldPath": f}}
    if s: e["valueFrom"] = {"secretKeyRef": {"name": "patronidemo", "key": s}}
    return e
container = {"name": "patronidemo", "image": "patroni:4.0.4", "imagePullPolicy": "IfNotPresent",
  "env": [env("PATRONI_KUBERNETES_POD_IP", f="status.podIP"), env("PATRONI_KUBERNETES_NAMESPACE", f="metadata.namespace"),
          env("PATRONI_KUBERNETES_BYPASS_API_SERVICE", "true"), env("PATRONI_KUBERNETES_USE_ENDPOINTS", "true"),
          env("PATRONI_KUBERNETES_LABELS", "{application: patroni, cluster-name: patronidemo}"),
          env("PATRONI_SUPERUSER_USERNAME", "postgres"), env("PATRONI_SUPERUSER_PASSWORD", s="superuser-password"),
          env("PATRONI_REPLICATION_USERNAME", "standby"), env("PATRONI_REPLICATION_PASSWORD", s="replication-password"),
          env("PATRONI_SCOPE", "patronidemo"), env("PATRONI_NAME", f="metadata.name"),
          env("PATRONI_POSTGRESQL_DATA_DIR", "/home/postgres/pgdata/pgroot/data"), env("PATRONI_POSTGRESQL_PGPASS", "/tmp/pgpass"),
          env("PATRONI_POSTGRESQL_LISTEN", "0.0.0.0:5432"), env("PATRONI_RESTAPI_LISTEN", "0.0.0.0:8008")],
  "ports": [{"containerPort": 8008, "protocol": "TCP"}, {"containerPort": 5432, "protocol": "TCP"}],
  "readinessProbe": {"httpGet": {"path": "/readiness", "port": 8008, "scheme": "HTTP"}, "initialDelaySeconds": 3,
                     "periodSeconds": 10, "timeoutSeconds": 5, "successThreshold": 1, "failureThreshold": 3},
  "volumeMounts": [{"mountPath": "/home/postgres/pgdata", "name": "pgdata"}]}
for i in range(SETS):
    name = f"patroni-{i}"
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": name, "labels": {"application": "patroni"}},
           "spec": {"replicas": 5, "serviceName": name, "selector": {"matchLabels": {"cluster-name": name}},
                    "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                    "template": {"metadata": {"labels": {"application": "patroni", "cluster-name": name}},
                                 "spec": {"containers": [container], "volumes": [{"name": "pgdata", "emptyDir": {}}]}}}}
    s = call(c, "POST", "/apis/apps/v1/namespaces/db/statefulsets?fieldManager=kubectl", sts)
    uid = s["metadata"]["uid"]
    for o in range(5):
        n = i * 5 + o
        pname = f"{name}-{o}"; ip = f"10.244.{n // 250}.{n % 250 + 2}"
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": pname, "generateName": f"{name}-",
                            "labels": {"application": "patroni", "cluster-name": name, "role": "replica",
                                       "apps.kubernetes.io/pod-index": str(o),
                                       "controller-revision-hash": f"{name}-7d7ff66b47",
                                       "statefulset.kubernetes.io/pod-name": pname},
                            "annotations": {"kubectl.kubernetes.io/default-container": "patronidemo",
                                            "kubectl.kubernetes.io/restartedAt": "2026-11-26T07:10:00Z"},
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name,
                                                 "uid": uid, "controller": True, "blockOwnerDeletion": True}]},
               "spec": dict(fix["spec"], containers=[container], hostname=pname, subdomain=name, nodeName="e2e-node",
                            volumes=[{"name": "pgdata", "persistentVolumeClaim": {"claimName": f"pgdata-{pname}"}}])}
        pod["spec"].pop("serviceAccount", None)
        call(c, "POST", "/api/v1/namespaces/db/pods?fieldManager=kube-controller-manager", pod)
        st = dict(fix["status"], podIP=ip, podIPs=[{"ip": ip}], hostIPs=[{"ip": "127.0.0.1"}])
        st["containerStatuses"] = [dict(st["containerStatuses"][0], name="patronidemo", image="patroni:4.0.4")]
        call(c, "PATCH", f"/api/v1/namespaces/db/pods/{pname}/status?fieldManager=kubelet", {"status": st},
             "application/merge-patch+json")
        call(c, "PATCH", f"/api/v1/namespaces/db/pods/{pname}?fieldManager=Patroni",
             {"metadata": {"annotations": {"status": status_annotation(ip, 50331648)}}}, "application/merge-patch+json")
print("created", SETS, "sets,", SETS * 5, "pods")
