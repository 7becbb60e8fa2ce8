#!/usr/bin/env bats
# The stepper's kustomize Components built for real (`kubectl kustomize`, kustomize v5 inside kubectl) on
# top of the CronJob (deploy/stepper/) and the Deployment (deploy/stepper/watch/), as a user's own
# kustomization would use them: the objects they add and the patches they make.
#
#   bats deploy/kustomize.bats     (make validate-manifests; part of make test)

setup() {
  repo=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  work=$(mktemp -d)
  # YAML to JSON, with the project's venv (scripts/python-env.sh; PyYAML).
  python=$("$repo/scripts/python-env.sh" pyyaml)
}

teardown() {
  rm -rf "$work"
}

# build RESOURCES COMPONENT...: kustomizes them (repository paths, or absolute ones; RESOURCES one path or
# several separated by spaces) from a temporary directory (paths made relative, as kustomize wants), the
# objects as one JSON list in $work/out.json.
build() {
  local resources=$1 r
  shift
  mkdir -p "$work/k"
  {
    echo "resources:"
    for r in $resources; do
      echo "  - $(realpath --relative-to="$work/k" "$repo/$r")"
    done
    echo "components:"
    for c in "$@"; do
      case $c in /*) ;; *) c=$repo/$c ;; esac
      echo "  - $(realpath --relative-to="$work/k" "$c")"
    done
  } >"$work/k/kustomization.yaml"
  kubectl kustomize "$work/k" >"$work/out.yaml" || return 1
  "$python" -c 'import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))' \
    "$work/out.yaml" >"$work/out.json"
}

# pod_spec KIND: the pod spec of the stepper's Deployment or CronJob.
pod_spec() {
  jq --arg kind "$1" '.[] | select(.kind == $kind and .metadata.name == "sts-stepper")
    | if .kind == "CronJob" then .spec.jobTemplate.spec.template.spec else .spec.template.spec end' "$work/out.json"
}

# assert_webhook_file KIND: the generated ConfigMap is mounted and named by --webhook-config.
assert_webhook_file() {
  local spec cm
  spec=$(pod_spec "$1")
  cm=$(jq -r '.[] | select(.kind == "ConfigMap" and (.metadata.name | startswith("sts-stepper-webhooks-"))) | .metadata.name' "$work/out.json")
  echo "ConfigMap: $cm"
  [ -n "$cm" ]
  # Its data is the component's webhooks.yaml, byte for byte.
  diff <(jq -j --arg cm "$cm" '.[] | select(.metadata.name == $cm) | .data["webhooks.yaml"]' "$work/out.json") \
    "$repo/deploy/stepper/webhooks/webhooks.yaml"
  [ "$(jq -r '.volumes[] | select(.name == "webhooks") | .configMap.name' <<<"$spec")" = "$cm" ]
  [ "$(jq -r '.containers[0].volumeMounts[] | select(.name == "webhooks") | .mountPath' <<<"$spec")" = /etc/sts-stepper/webhooks ]
  [ "$(jq -r '.containers[0].args[-1]' <<<"$spec")" = --webhook-config=/etc/sts-stepper/webhooks/webhooks.yaml ]
}

@test "webhooks on the Deployment: the file mounted and named, the other args kept, with the approvals RBAC" {
  build deploy/stepper/watch deploy/stepper/approvals deploy/stepper/webhooks
  assert_webhook_file Deployment
  [ "$(pod_spec Deployment | jq -r '.containers[0].args[0]')" = watch ]
  [ "$(pod_spec Deployment | jq '[.containers[0].args[] | select(. == "--leader-election")] | length')" -eq 1 ]
  # The approvals component still grants pod patch.
  jq -e '[.[] | select(.kind == "ClusterRole") | .rules[] | select(.resources == ["pods"] and (.verbs | index("patch")))] | length > 0' "$work/out.json"
}

@test "webhooks on the CronJob: the same in its job's pod" {
  build deploy/stepper deploy/stepper/webhooks
  assert_webhook_file CronJob
  [ "$(pod_spec CronJob | jq -r '.containers[0].args[0]')" = once ]
}

@test "a user's own Component after it replaces the webhooks (docs/approvals.md): new data, new name, followed" {
  mkdir -p "$work/mine"
  sed 's/db-approver/kafka-can-roll/' "$repo/deploy/stepper/webhooks/webhooks.yaml" >"$work/mine/webhooks.yaml"
  cat >"$work/mine/kustomization.yaml" <<'YAML'
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
configMapGenerator:
  - name: sts-stepper-webhooks
    namespace: sts-safe-rollout
    behavior: replace
    files: [webhooks.yaml]
YAML
  build deploy/stepper/watch deploy/stepper/webhooks "$work/mine"
  local cm
  cm=$(jq -r '.[] | select(.kind == "ConfigMap" and (.metadata.name | startswith("sts-stepper-webhooks-"))) | .metadata.name' "$work/out.json")
  [ "$(wc -l <<<"$cm")" -eq 1 ]
  jq -e --arg cm "$cm" '.[] | select(.metadata.name == $cm) | .data["webhooks.yaml"] | contains("kafka-can-roll")' "$work/out.json"
  [ "$(pod_spec Deployment | jq -r '.volumes[] | select(.name == "webhooks") | .configMap.name')" = "$cm" ]
}

@test "without the component, no webhook file" {
  build deploy/stepper/watch
  [ "$(pod_spec Deployment | jq '[.containers[0].args[] | select(startswith("--webhook-config"))] | length')" -eq 0 ]
  [ "$(pod_spec Deployment | jq '.volumes // [] | length')" -eq 0 ]
}

# assert_answerer_file KIND: the generated ConfigMap is mounted and named by --answerer-config, and the
# optional credentials Secret is mounted at /etc/answerers.
assert_answerer_file() {
  local spec cm
  spec=$(pod_spec "$1")
  cm=$(jq -r '.[] | select(.kind == "ConfigMap" and (.metadata.name | startswith("sts-stepper-answerers-"))) | .metadata.name' "$work/out.json")
  echo "ConfigMap: $cm"
  [ -n "$cm" ]
  [ "$(jq -r --arg cm "$cm" '.[] | select(.metadata.name == $cm) | .metadata.namespace' "$work/out.json")" = sts-safe-rollout ]
  # Its data is the component's answerers.yaml, byte for byte.
  diff <(jq -j --arg cm "$cm" '.[] | select(.metadata.name == $cm) | .data["answerers.yaml"]' "$work/out.json") \
    "$repo/deploy/stepper/answerers/answerers.yaml"
  [ "$(jq -r '.volumes[] | select(.name == "answerers") | .configMap.name' <<<"$spec")" = "$cm" ]
  [ "$(jq -c '.containers[0].volumeMounts[] | select(.name == "answerers") | [.mountPath, .readOnly]' <<<"$spec")" = '["/etc/sts-stepper/answerers",true]' ]
  # The credentials: the Secret by its own name (no generator, no hash), optional so the pod starts without it.
  [ "$(jq -c '.volumes[] | select(.name == "answerer-credentials") | .secret' <<<"$spec")" = '{"optional":true,"secretName":"sts-stepper-answerer-credentials"}' ]
  [ "$(jq -c '.containers[0].volumeMounts[] | select(.name == "answerer-credentials") | [.mountPath, .readOnly]' <<<"$spec")" = '["/etc/answerers",true]' ]
  [ "$(jq -r '.containers[0].args[-1]' <<<"$spec")" = --answerer-config=/etc/sts-stepper/answerers/answerers.yaml ]
  [ "$(jq '[.containers[0].args[] | select(startswith("--answerer-config"))] | length' <<<"$spec")" -eq 1 ]
}

@test "answerers on the Deployment: the file and the credentials mounted, the file named, the other args kept" {
  build deploy/stepper/watch deploy/stepper/answerers
  assert_answerer_file Deployment
  [ "$(pod_spec Deployment | jq -r '.containers[0].args[0]')" = watch ]
  [ "$(pod_spec Deployment | jq '[.containers[0].args[] | select(. == "--leader-election")] | length')" -eq 1 ]
  [ "$(stepper_selectors Deployment)" = "$GUARD" ]
  # No Secret is made: the credentials are the user's.
  [ "$(jq '[.[] | select(.kind == "Secret")] | length' "$work/out.json")" -eq 0 ]
}

@test "answerers on the CronJob: the same in its job's pod" {
  build deploy/stepper deploy/stepper/answerers
  assert_answerer_file CronJob
  [ "$(pod_spec CronJob | jq -r '.containers[0].args[0]')" = once ]
  [ "$(stepper_selectors CronJob)" = "$GUARD" ]
}

@test "a user's own Component after it replaces the answerers (docs/answerers.md, Installing): new data, new name, followed" {
  mkdir -p "$work/mine"
  sed 's/pg-main/pg-orders/' "$repo/deploy/stepper/answerers/answerers.yaml" >"$work/mine/answerers.yaml"
  cat >"$work/mine/kustomization.yaml" <<'YAML'
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
configMapGenerator:
  - name: sts-stepper-answerers
    namespace: sts-safe-rollout
    behavior: replace
    files: [answerers.yaml]
YAML
  local cm kind resources
  for resources in deploy/stepper/watch deploy/stepper; do
    kind=Deployment
    [ "$resources" = deploy/stepper ] && kind=CronJob
    build "$resources" deploy/stepper/answerers "$work/mine"
    cm=$(jq -r '.[] | select(.kind == "ConfigMap" and (.metadata.name | startswith("sts-stepper-answerers-"))) | .metadata.name' "$work/out.json")
    [ "$(wc -l <<<"$cm")" -eq 1 ]
    jq -e --arg cm "$cm" '.[] | select(.metadata.name == $cm) | .data["answerers.yaml"] | contains("pg-orders") and (contains("pg-main") | not)' "$work/out.json"
    [ "$(pod_spec $kind | jq -r '.volumes[] | select(.name == "answerers") | .configMap.name')" = "$cm" ]
    [ "$(pod_spec $kind | jq -r '.containers[0].args[-1]')" = --answerer-config=/etc/sts-stepper/answerers/answerers.yaml ]
  done
  # The hash follows the contents: the example's name is another.
  build deploy/stepper/watch deploy/stepper/answerers
  [ "$(pod_spec Deployment | jq -r '.volumes[] | select(.name == "answerers") | .configMap.name')" != "$cm" ]
}

@test "each example of docs/examples/answerers/ after the Component: its file mounted, byte for byte, the NetworkPolicy left out" {
  local cm dir kind resources
  for dir in patroni redis-sentinel etcd; do
    for resources in deploy/stepper/watch deploy/stepper; do
      kind=Deployment
      [ "$resources" = deploy/stepper ] && kind=CronJob
      build "$resources" deploy/stepper/answerers "docs/examples/answerers/$dir"
      cm=$(jq -r '.[] | select(.kind == "ConfigMap" and (.metadata.name | startswith("sts-stepper-answerers-"))) | .metadata.name' "$work/out.json")
      [ "$(wc -l <<<"$cm")" -eq 1 ]
      diff <(jq -j --arg cm "$cm" '.[] | select(.metadata.name == $cm) | .data["answerers.yaml"]' "$work/out.json") \
        "$repo/docs/examples/answerers/$dir/answerers.yaml"
      [ "$(pod_spec $kind | jq -r '.volumes[] | select(.name == "answerers") | .configMap.name')" = "$cm" ]
      [ "$(pod_spec $kind | jq -r '.containers[0].args[-1]')" = --answerer-config=/etc/sts-stepper/answerers/answerers.yaml ]
      # The NetworkPolicy beside it belongs to the database's namespace and is applied there by hand.
      jq -e '[.[] | select(.kind == "NetworkPolicy")] | length == 0' "$work/out.json"
    done
  done
}

@test "without the component, no answerer file and no credentials" {
  for resources in deploy/stepper/watch deploy/stepper; do
    build "$resources"
    jq -e '[.[] | select(.kind == "ConfigMap" and (.metadata.name | startswith("sts-stepper-answerers")))] | length == 0' "$work/out.json"
  done
  [ "$(pod_spec CronJob | jq '[.containers[0].args[] | select(startswith("--answerer-config"))] | length')" -eq 0 ]
  [ "$(pod_spec CronJob | jq '.volumes // [] | length')" -eq 0 ]
}

@test "answerers and webhooks together: both files, both flags, every volume, in both kinds; valid (deploy/validate.sh)" {
  mkdir -p "$work/built"
  local kind resources
  for resources in deploy/stepper/watch deploy/stepper; do
    kind=Deployment
    [ "$resources" = deploy/stepper ] && kind=CronJob
    build "$resources" deploy/stepper/webhooks deploy/stepper/answerers
    assert_answerer_file $kind
    [ "$(pod_spec $kind | jq -r '.containers[0].args[-2]')" = --webhook-config=/etc/sts-stepper/webhooks/webhooks.yaml ]
    [ "$(pod_spec $kind | jq -c '[.volumes[].name] | sort')" = '["answerer-credentials","answerers","webhooks"]' ]
    cp "$work/out.yaml" "$work/built/$kind.yaml"
  done
  run "$repo/deploy/validate.sh" "$work/built"
  echo "$output"
  [ "$status" -eq 0 ]
  grep -q 'Deployment/sts-stepper against Kubernetes' <<<"$output"
  grep -q 'CronJob/sts-stepper against Kubernetes' <<<"$output"
}

# The label that makes a set guarded by default (opt-in), as a selector string.
GUARD=safe-rollout.dev/guard=true

# policy_scope: the policy's scope as JSON {objectSelector, namespaceSelector}, from the Kubewarden
# ClusterAdmissionPolicy or the native binding, whichever the build holds.
policy_scope() {
  jq -c '.[] | if .kind == "ClusterAdmissionPolicy" then .spec
    elif .kind == "MutatingAdmissionPolicyBinding" then .spec.matchResources else empty end
    | {objectSelector, namespaceSelector}' "$work/out.json"
}

# The control-plane exclusion every mode keeps.
assert_control_plane_excluded() {
  policy_scope | jq -e '.namespaceSelector.matchExpressions == [{"key": "kubernetes.io/metadata.name",
    "operator": "NotIn", "values": ["kube-system", "kube-public", "kube-node-lease", "kubewarden"]}]'
}

# stepper_selectors KIND: the stepper's --selector values, one per line.
stepper_namespace_selectors() {
  pod_spec "$1" | jq -r '.containers[0].args[] | select(startswith("--namespace-selector=")) | sub("^--namespace-selector="; "")'
}

stepper_selectors() {
  pod_spec "$1" | jq -r '.containers[0].args[] | select(startswith("--selector=") or . == "-l") | sub("^--selector="; "")'
}

@test "opt-in by default, Kubewarden and CronJob: the policy and the stepper select the same label" {
  build deploy
  policy_scope
  [ "$(policy_scope | jq -c .objectSelector)" = '{"matchLabels":{"safe-rollout.dev/guard":"true"}}' ]
  assert_control_plane_excluded
  # The stepper's selector is the policy's matchLabels written as key=value.
  [ "$(policy_scope | jq -r '.objectSelector.matchLabels | to_entries | map("\(.key)=\(.value)") | join(",")')" = "$GUARD" ]
  [ "$(stepper_selectors CronJob)" = "$GUARD" ]
  [ "$(pod_spec CronJob | jq -c '.containers[0].args')" = '["once","--selector=safe-rollout.dev/guard=true","--log-format","json"]' ]
}

@test "opt-in by default, native and the HA Deployment: the binding and the stepper select the same label" {
  build "deploy/native deploy/stepper/watch"
  [ "$(policy_scope | jq -c .objectSelector)" = '{"matchLabels":{"safe-rollout.dev/guard":"true"}}' ]
  assert_control_plane_excluded
  [ "$(stepper_selectors Deployment)" = "$GUARD" ]
  # The policy itself matches every StatefulSet write: the scope is the binding's alone.
  jq -e '.[] | select(.kind == "MutatingAdmissionPolicy") | .spec.matchConstraints | has("objectSelector") | not' "$work/out.json"
}

@test "the cluster-wide Component: no object selector on the policy, no --selector on the stepper, the rest kept" {
  build deploy deploy/scope/cluster-wide
  [ "$(policy_scope | jq -c .objectSelector)" = null ]
  assert_control_plane_excluded
  [ "$(pod_spec CronJob | jq -c '.containers[0].args')" = '["once","--log-format","json"]' ]
  build "deploy/native deploy/stepper/watch" deploy/scope/cluster-wide
  [ "$(policy_scope | jq -c .objectSelector)" = null ]
  [ -z "$(stepper_selectors Deployment)" ]
  [ "$(pod_spec Deployment | jq -r '.containers[0].args[0:2] | join(" ")')" = "watch --interval=30s" ]
  [ "$(pod_spec Deployment | jq '.containers[0].args | length')" -eq 11 ]
}

@test "the namespace-label Component: the label moves to the namespaceSelector, beside the exclusion" {
  for resources in deploy "deploy/native deploy/stepper/watch"; do
    build "$resources" deploy/scope/namespace-label
    [ "$(policy_scope | jq -c .objectSelector)" = null ]
    [ "$(policy_scope | jq -c .namespaceSelector.matchLabels)" = '{"safe-rollout.dev/guard":"true"}' ]
    assert_control_plane_excluded
  done
  [ -z "$(stepper_selectors Deployment)" ]
  [ "$(stepper_namespace_selectors Deployment)" = safe-rollout.dev/guard=true ]
  # The stepper may list the namespaces it judges the scope by.
  jq -e '.[] | select(.kind == "ClusterRole" and .metadata.name == "sts-stepper-list-namespaces")
         | .rules[] | select(.resources == ["namespaces"] and .verbs == ["list"])' "$work/out.json" >/dev/null
  build deploy deploy/scope/namespace-label
  [ -z "$(stepper_selectors CronJob)" ]
  [ "$(stepper_namespace_selectors CronJob)" = safe-rollout.dev/guard=true ]
}

@test "a scope Component refuses to build over a selector it does not know (its test ops)" {
  mkdir -p "$work/mine"
  cat >"$work/mine/kustomization.yaml" <<'YAML'
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
patches:
  - target: {kind: CronJob, name: sts-stepper}
    patch: |
      - op: replace
        path: /spec/jobTemplate/spec/template/spec/containers/0/args/1
        value: --selector=tier=db
YAML
  build deploy "$work/mine"
  [ "$(stepper_selectors CronJob)" = tier=db ]
  run build deploy "$work/mine" deploy/scope/cluster-wide
  [ "$status" -ne 0 ]
  echo "$output"
}

@test "the webhooks Component on top of the cluster-wide one still appends its flag last" {
  build deploy/stepper/watch deploy/scope/cluster-wide deploy/stepper/webhooks
  assert_webhook_file Deployment
  [ -z "$(stepper_selectors Deployment)" ]
}

@test "every scope mode, built, is valid against the Kubernetes schemas and Kubewarden's CRD (deploy/validate.sh)" {
  mkdir -p "$work/built"
  local mode
  for mode in "" deploy/scope/cluster-wide deploy/scope/namespace-label; do
    build deploy $mode
    cp "$work/out.yaml" "$work/built/kubewarden-cronjob-${mode##*/}.yaml"
    build "deploy/native deploy/stepper/watch" $mode
    cp "$work/out.yaml" "$work/built/native-ha-${mode##*/}.yaml"
  done
  run "$repo/deploy/validate.sh" "$work/built"
  echo "$output"
  [ "$status" -eq 0 ]
  # The ClusterAdmissionPolicy of each of the three Kubewarden builds was checked against the CRD.
  [ "$(grep -c 'ClusterAdmissionPolicy/sts-safe-rollout against the CRD schema' <<<"$output")" -eq 3 ]
}

@test "the prometheus Component: the URL from a generated ConfigMap into STS_STEPPER_PROMETHEUS_URL, both kinds" {
  for resources in deploy/stepper/watch deploy/stepper; do
    build "$resources" deploy/stepper/prometheus
    local kind=Deployment cm
    [ "$resources" = deploy/stepper ] && kind=CronJob
    cm=$(jq -r '.[] | select(.kind == "ConfigMap" and (.metadata.name | startswith("sts-stepper-prometheus-"))) | .metadata.name' "$work/out.json")
    [ -n "$cm" ]
    [ "$(jq -r --arg cm "$cm" '.[] | select(.metadata.name == $cm) | .data.url' "$work/out.json")" = http://prometheus-operated.monitoring:9090 ]
    [ "$(pod_spec $kind | jq -r '.containers[0].env[] | select(.name == "STS_STEPPER_PROMETHEUS_URL") | .valueFrom.configMapKeyRef.name')" = "$cm" ]
    # The env the container had is kept.
    pod_spec $kind | jq -e '[.containers[0].env[].name] | index("STS_STEPPER_ANNOTATION_PREFIX")'
  done
}

@test "the http-checks Component appends one --http-check NAME=URL, the opt-in --selector kept" {
  build deploy/stepper/watch deploy/stepper/http-checks
  [ "$(pod_spec Deployment | jq -r '.containers[0].args[-1]')" = --http-check=es-health=http://elasticsearch.search:9200/_cluster/health ]
  [ "$(stepper_selectors Deployment)" = "$GUARD" ]
  build deploy/stepper deploy/stepper/http-checks
  [ "$(pod_spec CronJob | jq -r '.containers[0].args[-1]')" = --http-check=es-health=http://elasticsearch.search:9200/_cluster/health ]
}

@test "the release bundle: one file per mode, the image and the policy pinned by digest, each mode's objects only" {
  local digest policy_digest
  digest=sha256:$(printf 'ab%.0s' $(seq 32)) policy_digest=sha256:$(printf 'ef%.0s' $(seq 32))
  run "$repo/deploy/release.sh" "registry.example/sts-stepper@$digest" \
    "registry://registry.example/policies/sts-safe-rollout@$policy_digest" "$work/rel"
  echo "$output"
  [ "$status" -eq 0 ]
  grep -q "validations passed, 0 failed" <<<"$output"
  kinds() { "$python" -c 'import sys, yaml; [print(d["kind"]) for d in yaml.safe_load_all(open(sys.argv[1])) if d]' "$work/rel/install-$1.yaml" | sort | tr '\n' ' '; }
  [ "$(kinds kubewarden-cronjob)" = "ClusterAdmissionPolicy ClusterRole ClusterRoleBinding CronJob Namespace PolicyServer ServiceAccount " ]
  [ "$(kinds kubewarden-ha)" = "ClusterAdmissionPolicy ClusterRole ClusterRoleBinding Deployment Namespace PodDisruptionBudget PolicyServer Role RoleBinding Service ServiceAccount " ]
  [ "$(kinds native-ha)" = "ClusterRole ClusterRoleBinding Deployment MutatingAdmissionPolicy MutatingAdmissionPolicyBinding Namespace PodDisruptionBudget Role RoleBinding Service ServiceAccount " ]
  for mode in kubewarden-cronjob kubewarden-ha native-ha; do
    # Every container runs the pinned image (the PolicyServer's spec.image, two spaces in, is Kubewarden's).
    [ "$(grep -E '^ {3,}image: ' "$work/rel/install-$mode.yaml" | sort -u | sed 's/^ *//')" = "image: registry.example/sts-stepper@$digest" ]
    # Opt-in in every mode.
    grep -q -- '--selector=safe-rollout.dev/guard=true' "$work/rel/install-$mode.yaml"
  done
  # The Kubewarden policy module by digest, in both Kubewarden files and their headers.
  for mode in kubewarden-cronjob kubewarden-ha; do
    [ "$(grep -c "^  module: registry://registry.example/policies/sts-safe-rollout@$policy_digest\$" "$work/rel/install-$mode.yaml")" -eq 1 ]
    grep -q "^#   policy registry://registry.example/policies/sts-safe-rollout@$policy_digest\$" "$work/rel/install-$mode.yaml"
  done
  # A tag is not a digest: neither for the image nor for the policy module.
  run "$repo/deploy/release.sh" registry.example/sts-stepper:v9.9.9 "registry://r/p@$policy_digest" "$work/rel2"
  [ "$status" -eq 2 ]
  grep -q "is not REPOSITORY@sha256:" <<<"$output"
  run "$repo/deploy/release.sh" "registry.example/sts-stepper@$digest" registry://r/p:v1 "$work/rel2"
  [ "$status" -eq 2 ]
  grep -q "policy module 'registry://r/p:v1' is not registry://HOST/REPOSITORY@sha256:<64 hex digits>" <<<"$output"
  run "$repo/deploy/release.sh" "registry.example/sts-stepper@$digest" "registry://r/p@sha256:abc" "$work/rel2"
  [ "$status" -eq 2 ]
  [ ! -e "$work/rel2" ]
}

# component FILE VALUE: "Kind/name …" of the objects in FILE whose label app.kubernetes.io/component equals VALUE,
# in file order: what `kubectl delete -f FILE -l app.kubernetes.io/component=VALUE` deletes (kubectl filters the
# file's objects by their own labels, cli-runtime's Builder.visitByPaths → FilterByLabelSelector).
component() {
  "$python" -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
print(" ".join(d["kind"] + "/" + d["metadata"]["name"] for d in docs
               if (d["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == sys.argv[2]))' "$1" "$2"
}

@test "the uninstall's selectors: component=policy is exactly each release file's policy, component=stepper all the rest" {
  run "$repo/deploy/release.sh" "registry.example/sts-stepper@sha256:$(printf 'cd%.0s' $(seq 32))" \
    "registry://registry.example/policies/sts-safe-rollout@sha256:$(printf 'ef%.0s' $(seq 32))" "$work/rel"
  [ "$status" -eq 0 ]
  local mode file total
  for mode in kubewarden-cronjob kubewarden-ha; do
    [ "$(component "$work/rel/install-$mode.yaml" policy)" = "ClusterAdmissionPolicy/sts-safe-rollout PolicyServer/sts-safe-rollout" ]
  done
  [ "$(component "$work/rel/install-native-ha.yaml" policy)" = "MutatingAdmissionPolicy/sts-safe-rollout MutatingAdmissionPolicyBinding/sts-safe-rollout" ]
  [ "$(component "$work/rel/install-kubewarden-cronjob.yaml" stepper)" = "Namespace/sts-safe-rollout ServiceAccount/sts-stepper ClusterRole/sts-stepper ClusterRoleBinding/sts-stepper CronJob/sts-stepper" ]
  for mode in kubewarden-ha native-ha; do
    [ "$(component "$work/rel/install-$mode.yaml" stepper)" = "Namespace/sts-safe-rollout ServiceAccount/sts-stepper Role/sts-stepper-leader-election ClusterRole/sts-stepper RoleBinding/sts-stepper-leader-election ClusterRoleBinding/sts-stepper Service/sts-stepper-metrics Deployment/sts-stepper PodDisruptionBudget/sts-stepper" ]
  done
  # Every object is in exactly one of the two: the uninstall leaves nothing behind.
  for mode in kubewarden-cronjob kubewarden-ha native-ha; do
    file=$work/rel/install-$mode.yaml
    total=$(grep -c '^kind:' "$file")
    [ $(( $(component "$file" policy | wc -w) + $(component "$file" stepper | wc -w) )) -eq "$total" ]
  done
  # The stepper's opt-in Components carry it too (objects they add go with the stepper).
  build deploy/stepper/watch deploy/stepper/approvals deploy/stepper/recovery
  [ "$(jq '[.[] | select(.kind | test("Role")) | select(.metadata.labels["app.kubernetes.io/component"] != "stepper")] | length' "$work/out.json")" -eq 0 ]
}

@test "the Kubewarden policy is served by its own PolicyServer: 2 replicas, a PDB, validated strictly against Kubewarden's CRD" {
  build deploy
  [ "$(jq -r '.[] | select(.kind == "ClusterAdmissionPolicy") | .spec.policyServer' "$work/out.json")" = sts-safe-rollout ]
  local ps
  ps=$(jq -c '.[] | select(.kind == "PolicyServer" and .metadata.name == "sts-safe-rollout") | .spec' "$work/out.json")
  [ "$(jq '.replicas >= 2' <<<"$ps")" = true ]
  # Exactly one of the PDB's two fields (the controller refuses both).
  [ "$(jq '[has("minAvailable"), has("maxUnavailable")] | map(select(.)) | length' <<<"$ps")" -eq 1 ]
  [ "$(jq -r '.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchLabels["kubewarden/policy-server"]' <<<"$ps")" = sts-safe-rollout ]
  # validate.sh checks it against the real CRD, strictly: a misspelt field and a string replica count fail.
  mkdir -p "$work/ps"
  cp "$repo/deploy/policy/policy-server.yaml" "$work/ps/good.yaml"
  sed 's/minAvailable:/minAvaliable:/' "$repo/deploy/policy/policy-server.yaml" >"$work/ps/misspelt.yaml"
  sed 's/replicas: 2/replicas: "two"/' "$repo/deploy/policy/policy-server.yaml" >"$work/ps/string.yaml"
  run "$repo/deploy/validate.sh" "$work/ps"
  echo "$output"
  [ "$status" -eq 1 ]
  grep -q "^ok   ps/good.yaml PolicyServer/sts-safe-rollout against the CRD schema" <<<"$output"
  grep -q "^FAIL ps/misspelt.yaml PolicyServer/sts-safe-rollout: Additional properties are not allowed ('minAvaliable'" <<<"$output"
  grep -q "^FAIL ps/string.yaml PolicyServer/sts-safe-rollout: 'two' is not of type 'integer'" <<<"$output"
}

@test "make release pins what make publish and push-image recorded, and says when it has neither" {
  local dist=$work/dist img pol
  img=sha256:$(printf '12%.0s' $(seq 32)) pol=sha256:$(printf '34%.0s' $(seq 32))
  mkdir -p "$dist"
  run make -s -C "$repo" release DIST="$dist" REGISTRY=registry.example/org
  echo "$output"
  [ "$status" -eq 0 ]
  grep -q "release: no DIGEST= and no $dist/sts-stepper.digest (make push-image): placeholder digest sha256:0\{64\}, for review only" <<<"$output"
  grep -q "release: no POLICY_DIGEST= and no $dist/policy.digest (make publish): placeholder policy digest sha256:0\{64\}, for review only" <<<"$output"
  grep -q "^  module: registry://registry.example/org/policies/sts-safe-rollout@sha256:0\{64\}$" "$dist/release/install-kubewarden-ha.yaml"
  # The digests the pushes recorded (buildah's --digestfile, kwctl push -o json or runner push --digestfile).
  printf '%s' "$img" >"$dist/sts-stepper.digest"
  printf '%s' "$pol" >"$dist/policy.digest"
  run make -s -C "$repo" release DIST="$dist" REGISTRY=registry.example/org
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(grep -c placeholder <<<"$output")" -eq 0 ]
  grep -q "^  module: registry://registry.example/org/policies/sts-safe-rollout@$pol$" "$dist/release/install-kubewarden-cronjob.yaml"
  grep -q "image: registry.example/org/sts-stepper@$img$" "$dist/release/install-native-ha.yaml"
}

# fake_kwctl DIR ANSWER: a kwctl on DIR that annotates by copying and answers `push -o json` with ANSWER.
fake_kwctl() {
  mkdir -p "$1"
  cat >"$1/kwctl" <<SH
#!/usr/bin/env bash
case "\$1" in
  annotate) cp "\${@: -1}" "\$(sed -n 's/.* -o \([^ ]*\) .*/\1/p' <<<"\$*")" ;;
  push) echo "\$*" >>"$1/push.log"; printf '%s\n' '$2' ;;
esac
SH
  chmod +x "$1/kwctl"
}

@test "make publish records the digest kwctl push gives in dist/policy.digest, and refuses an answer without one" {
  # The Makefile in a directory of its own, its policy already built: the recipe alone runs (no cargo).
  local m=$work/make pol
  pol=sha256:$(printf '56%.0s' $(seq 32))
  mkdir -p "$m/rules"
  cp "$repo/Makefile" "$m/"
  echo 'version = "9.9.9"' >"$m/Cargo.toml"
  touch "$m/rules/Cargo.toml" "$m/Cargo.lock" "$m/metadata.yml" "$m/README.md"
  sleep 1 && touch "$m/policy.wasm"
  fake_kwctl "$work/bin" "{\"immutable_ref\":\"registry.example/org/policies/sts-safe-rollout@$pol\"}"
  PATH=$work/bin:$PATH run make -s -C "$m" publish REGISTRY=registry.example/org DIST="$work/dist"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(cat "$work/dist/policy.digest")" = "$pol" ]
  grep -q -- "push -o json annotated-policy.wasm registry://registry.example/org/policies/sts-safe-rollout:v9.9.9" "$work/bin/push.log"
  # An answer that names no digest: an error, and no digest file.
  rm -f "$work/dist/policy.digest"
  fake_kwctl "$work/bin" '{"immutable_ref":"registry.example/org/policies/sts-safe-rollout:v9.9.9"}'
  PATH=$work/bin:$PATH run make -s -C "$m" publish REGISTRY=registry.example/org DIST="$work/dist"
  echo "$output"
  [ "$status" -ne 0 ]
  grep -q "publish: kwctl push named no sha256 digest" <<<"$output"
  [ ! -e "$work/dist/policy.digest" ]
}
