#!/usr/bin/env bats
# The GitOps sync recipes (docs/gitops.md, "Sync"): the Argo CD jq expression run with jq on the real
# fixture StatefulSets, the desired and the live object normalized alike; the Components built with
# kubectl kustomize on top of an Argo CD argocd-cm and a Flux Kustomization; and deploy/validate.sh
# refusing a recipe that breaks the CRDs' schemas.
#
#   bats deploy/gitops.bats     (make validate-manifests; part of make test)

setup() {
  repo=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  work=$(mktemp -d)
  python=$("$repo/scripts/python-env.sh" pyyaml)
}

teardown() {
  rm -rf "$work"
}

# yaml_json FILE: the YAML documents of FILE as one JSON list.
yaml_json() {
  "$python" -c 'import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))' "$1"
}

# The jq path expression argocd-sync ships (argo-cd runs `del(<expression>)` on both sides of a diff).
jq_expression() {
  yaml_json "$repo/deploy/gitops/argocd-sync/argocd-cm-sync.yaml" |
    jq -r '.[0].data["resource.customizations.ignoreDifferences.apps_StatefulSet"]' >"$work/ignore.yaml"
  yaml_json "$work/ignore.yaml" | jq -r '.[0].jqPathExpressions[0]'
}

# live PARTITION LABELLED: moment 2's StatefulSet as the API server stores it, at PARTITION, with the
# opt-in label when LABELLED is 1.
live() {
  jq --argjson p "$1" --argjson labelled "$2" '.items[0]
    | .spec.updateStrategy.rollingUpdate.partition = $p
    | if $labelled == 1 then .metadata.labels["safe-rollout.dev/guard"] = "true" else . end' \
    "$repo/fixtures/api/2-stepped-4-statefulsets.json"
}

@test "argocd-sync: an opted-in set's partition is out of the diff on both sides, an unlabelled one's is not" {
  expr=$(jq_expression)
  echo "$expr"
  # Desired (the chart renders partition 0) and live (the stepper holds it at 4): equal once normalized.
  desired=$(live 0 1 | jq -c "del($expr) | .spec")
  actual=$(live 4 1 | jq -c "del($expr) | .spec")
  [ "$desired" = "$actual" ]
  [ "$(live 4 1 | jq "del($expr) | .spec.updateStrategy.rollingUpdate | has(\"partition\")")" = false ]
  # Without the label the partition is a real difference, as Argo CD shows it.
  [ "$(live 4 0 | jq -c "del($expr) | .spec.updateStrategy.rollingUpdate")" = '{"partition":4}' ]
  [ "$(live 0 0 | jq -c "del($expr) | .spec")" != "$(live 4 0 | jq -c "del($expr) | .spec")" ]
  # A manifest without rollingUpdate at all: nothing to delete, no error.
  live 0 1 | jq -e "del(.spec.updateStrategy.rollingUpdate) | del($expr) | .spec.updateStrategy.type == \"RollingUpdate\""
}

@test "argocd and argocd-sync together patch one argocd-cm with both keys, keeping Argo CD's own" {
  mkdir -p "$work/k"
  cat >"$work/k/argocd-cm.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm}
data:
  url: https://argocd.example.com
YAML
  cat >"$work/k/kustomization.yaml" <<YAML
resources: [argocd-cm.yaml]
components:
  - $(realpath --relative-to="$work/k" "$repo/deploy/gitops/argocd")
  - $(realpath --relative-to="$work/k" "$repo/deploy/gitops/argocd-sync")
YAML
  kubectl kustomize "$work/k" >"$work/out.yaml"
  yaml_json "$work/out.yaml" | jq -e '.[0].data | has("url") and has("resource.customizations.health.apps_StatefulSet")
    and has("resource.customizations.ignoreDifferences.apps_StatefulSet")'
}

@test "flux and flux-sync together give a Kustomization the health check and the ignore rule, valid against its CRD" {
  mkdir -p "$work/k"
  cat >"$work/k/ks.yaml" <<'YAML'
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: databases, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps/databases
  prune: true
  wait: true
  timeout: 4h
  sourceRef: {kind: GitRepository, name: platform}
YAML
  cat >"$work/k/kustomization.yaml" <<YAML
resources: [ks.yaml]
components:
  - $(realpath --relative-to="$work/k" "$repo/deploy/gitops/flux")
  - $(realpath --relative-to="$work/k" "$repo/deploy/gitops/flux-sync")
YAML
  mkdir -p "$work/built"
  kubectl kustomize "$work/k" >"$work/built/ks.yaml"
  yaml_json "$work/built/ks.yaml" | jq -e '.[0].spec | (.healthCheckExprs | length) == 1
    and .ignore[0].target.labelSelector == "safe-rollout.dev/guard=true"'
  run "$repo/deploy/validate.sh" "$work/built"
  echo "$output"
  [ "$status" -eq 0 ]
  grep -q 'Kustomization/databases against the CRD schema' <<<"$output"
}

@test "validate.sh refuses a recipe the CRDs or Argo CD's format refuse" {
  mkdir -p "$work/bad"
  sed 's/ignoreDifferences:/ignoreDifference:/' "$repo/docs/examples/gitops/argocd-application.yaml" >"$work/bad/app.yaml"
  sed 's/labelSelector:/labelSelectors:/' "$repo/docs/examples/gitops/flux-kustomization.yaml" >"$work/bad/ks.yaml"
  sed 's/managedFieldsManagers:/managedFieldManagers:/' "$repo/deploy/gitops/argocd-sync/argocd-cm-sync.yaml" >"$work/bad/cm.yaml"
  sed 's/labelSelector:/labelSelectors:/' "$repo/deploy/gitops/flux-sync/ignore-partition.yaml" >"$work/bad/patch.yaml"
  run "$repo/deploy/validate.sh" "$work/bad"
  echo "$output"
  [ "$status" -eq 1 ]
  grep -q "FAIL bad/app.yaml Application/postgres .*ignoreDifference" <<<"$output"
  grep -q "FAIL bad/ks.yaml Kustomization/databases .*labelSelectors" <<<"$output"
  grep -q "FAIL bad/cm.yaml ConfigMap/argocd-cm (Argo CD ignoreDifferences): .*unknown field 'managedFieldManagers'" <<<"$output"
  grep -q "FAIL bad/patch.yaml (JSON 6902 patch): op 0: spec.ignore: .*labelSelectors" <<<"$output"
}
