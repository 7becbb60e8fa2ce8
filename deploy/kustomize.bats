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

# build RESOURCE COMPONENT...: kustomizes them (repository paths, or absolute ones) from a temporary
# directory (paths made relative, as kustomize wants), the objects as one JSON list in $work/out.json.
build() {
  local resource=$1
  shift
  mkdir -p "$work/k"
  {
    echo "resources:"
    echo "  - $(realpath --relative-to="$work/k" "$repo/$resource")"
    echo "components:"
    for c in "$@"; do
      case $c in /*) ;; *) c=$repo/$c ;; esac
      echo "  - $(realpath --relative-to="$work/k" "$c")"
    done
  } >"$work/k/kustomization.yaml"
  kubectl kustomize "$work/k" >"$work/out.yaml"
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
