#!/usr/bin/env bats
# The GitOps sync recipes (docs/gitops.md, "Sync", "After a rollback"): the Argo CD jq expression run with
# jq on the real fixture StatefulSets, the desired and the live object normalized alike; every recipe run
# through scripts/gitops_diff.py (Argo CD's and Flux's normalization, diff and sync payload, modelled) on
# the objects a real API server stored around a rollback (fixtures/rollback/, with their managedFields);
# the recipes' annotation keys held to the stepper's list; the Components built with kubectl kustomize on
# top of an Argo CD argocd-cm and a Flux Kustomization; and deploy/validate.sh refusing a recipe that breaks
# the CRDs' schemas.
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
  yaml_json "$work/built/ks.yaml" | jq -e '.[0].spec | (.healthCheckExprs | length) == 1 and (.ignore | length) == 2
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
  sed 's/jsonPointers:/jsonPointer:/' "$repo/deploy/gitops/argocd-sync/argocd-cm-sync.yaml" >"$work/bad/cm.yaml"
  sed 's/labelSelector:/labelSelectors:/' "$repo/deploy/gitops/flux-sync/ignore.yaml" >"$work/bad/patch.yaml"
  run "$repo/deploy/validate.sh" "$work/bad"
  echo "$output"
  [ "$status" -eq 1 ]
  grep -q "FAIL bad/app.yaml Application/postgres .*ignoreDifference" <<<"$output"
  grep -q "FAIL bad/ks.yaml Kustomization/databases .*labelSelectors" <<<"$output"
  grep -q "FAIL bad/cm.yaml ConfigMap/argocd-cm (Argo CD ignoreDifferences): .*unknown field 'jsonPointer'" <<<"$output"
  grep -q "FAIL bad/patch.yaml (JSON 6902 patch): op 0: spec.ignore: .*labelSelectors" <<<"$output"
}

# --- after a rollback (fixtures/rollback/: a Kubernetes v1.36.2 API server, managedFields included) ---

# The four recipes: Argo CD's system-level argocd-cm and per-Application example, Flux's Component patch
# and per-Kustomization example, as "TOOL FILE".
recipes() {
  printf '%s\n' "argocd deploy/gitops/argocd-sync/argocd-cm-sync.yaml" \
    "argocd docs/examples/gitops/argocd-application.yaml" \
    "flux deploy/gitops/flux-sync/ignore.yaml" \
    "flux docs/examples/gitops/flux-kustomization.yaml"
}

# model TOOL RECIPE LIVE DESIRED: what TOOL makes of LIVE (a file of fixtures/rollback/) against DESIRED
# (a file of $work) under RECIPE (scripts/gitops_diff.py): {rules, diff, applied}.
model() {
  "$python" "$repo/scripts/gitops_diff.py" "$1" "$2" "$repo/fixtures/rollback/$3.json" "$work/$4.json"
}

# The Git side, derived from the captured objects: the failed commit (the manifest kubectl applied, as its
# last-applied-configuration holds it: nginx:9.9), a fix commit (nginx:1.26), and the last good template
# (nginx:1.25) with `partition: 0` and every stepper annotation set to another value than the cluster's.
manifests() {
  jq '.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] | fromjson' \
    "$repo/fixtures/rollback/1-rolled-back-by-stepper.json" >"$work/failed.json"
  jq '.spec.template.spec.containers[0].image = "nginx:1.26"' "$work/failed.json" >"$work/fix.json"
  jq --argjson keys "$(stepper_keys | jq -R . | jq -s .)" '.spec.template.spec.containers[0].image = "nginx:1.25"
    | .spec.updateStrategy = {type: "RollingUpdate", rollingUpdate: {partition: 0}}
    | .metadata.annotations += ($keys | map({key: ("safe-rollout.dev/" + .), value: "from Git"}) | from_entries)' \
    "$work/failed.json" >"$work/noise.json"
}

# stepper_keys: WRITTEN_BY_STEPPER, the `recorded` and `state` rows of DECLARED in rules/src/declared.rs
# (the stepper's own annotations on a set), each constant resolved to its name in
# rules/src/annotations.rs, sorted.
stepper_keys() {
  local declared="$repo/rules/src/declared.rs" names="$repo/rules/src/annotations.rs" constant
  sed -n '/^pub const DECLARED/,/^];/p' "$declared" |
    sed -n 's/^ *\(step(\|resume(\)*\(recorded\|state\)(\([A-Z_]*\)).*$/\3/p' |
    while read -r constant; do
      sed -n "s/^pub const $constant: &str = \"\\(.*\\)\";\$/\\1/p" "$names"
    done | sort
}

@test "after a rollback, at each moment: the reverted template is a difference until Git's is applied" {
  manifests
  # The derived failed commit is the failed revision: the ControllerRevision failed-revision names holds
  # its image; the revision the set is back on holds the live one.
  jq -e --slurpfile set "$repo/fixtures/rollback/1-rolled-back-by-stepper.json" --slurpfile git "$work/failed.json" '
    def image(name): .items[] | select(.metadata.name == name) | .data.spec.template.spec.containers[0].image;
    image($set[0].metadata.annotations["safe-rollout.dev/failed-revision"] | split(": ")[0])
      == $git[0].spec.template.spec.containers[0].image
    and image($set[0].status.currentRevision) == $set[0].spec.template.spec.containers[0].image' \
    "$repo/fixtures/rollback/1-rolled-back-controllerrevisions.json"
  while read -r tool recipe; do
    echo "$tool $recipe"
    # 1. Rolled back (the stepper wrote nginx:1.25 back and owns f:image): the failed commit and a fix
    # commit each differ from the cluster in the image alone (Argo CD: OutOfSync; Flux: drift) ...
    for commit in failed fix; do
      want=$(jq -r '.spec.template.spec.containers[0].image' "$work/$commit.json")
      out=$(model "$tool" "$repo/$recipe" 1-rolled-back-by-stepper "$commit")
      echo "rolled back, $commit: $(jq -c .diff <<<"$out")"
      jq -e --arg want "$want" '.diff == [{path: "/spec/template/spec/containers/0/image",
        live: "nginx:1.25", desired: $want}]' <<<"$out"
      # ... and a sync sends Git's template (Argo CD with RespectIgnoreDifferences=true; Flux's payload),
      jq -e --arg want "$want" '.applied.spec.template.spec.containers[0].image == $want' <<<"$out"
    done
    # with, for Argo CD, the partition as it is live (2), not the chart's.
    [ "$tool" = flux ] || jq -e '.applied.spec.updateStrategy.rollingUpdate.partition == 2' <<<"$out"
    # 2. The failed commit applied again (client-side, server-side): nothing left to sync (the stepper's
    # gate FailedRevision holds it); 3. a fix commit after it: a difference, and the sync sends the fix.
    for live in 2-failed-template-reapplied-client-side 3-failed-template-reapplied-server-side; do
      out=$(model "$tool" "$repo/$recipe" "$live" failed)
      echo "$live, failed: $(jq -c .diff <<<"$out")"
      jq -e '.diff == []' <<<"$out"
      model "$tool" "$repo/$recipe" "$live" fix | jq -e '.diff == [{path: "/spec/template/spec/containers/0/image",
        live: "nginx:9.9", desired: "nginx:1.26"}] and .applied.spec.template.spec.containers[0].image == "nginx:1.26"'
    done
  done < <(recipes)
}

@test "a partition-only and stepper-annotation-only difference is no difference, and a sync keeps the cluster's" {
  manifests
  while read -r tool recipe; do
    echo "$tool $recipe"
    for live in 1-rolled-back-by-stepper 3-failed-template-reapplied-server-side; do
      # The template as it is live (1.25 rolled back; 9.9 applied again), so only the noise differs.
      jq --slurpfile live "$repo/fixtures/rollback/$live.json" \
        '.spec.template.spec.containers[0].image = $live[0].spec.template.spec.containers[0].image' \
        "$work/noise.json" >"$work/desired.json"
      desired=desired
      out=$(model "$tool" "$repo/$recipe" "$live" "$desired")
      jq -c .diff <<<"$out"
      jq -e '.diff == []' <<<"$out"
    done
    # Argo CD with RespectIgnoreDifferences sends the live partition and the stepper's live record.
    if [ "$tool" = argocd ]; then
      out=$(model "$tool" "$repo/$recipe" 1-rolled-back-by-stepper noise)
      jq -e '.applied | .spec.updateStrategy.rollingUpdate.partition == 2
        and (.metadata.annotations["safe-rollout.dev/degraded-reason"] | startswith("RolledBack: "))
        and (.metadata.annotations | has("safe-rollout.dev/blocked-reason") | not)' <<<"$out"
    fi
  done < <(recipes)
}

@test "no recipe ignores the template or trusts a field manager" {
  manifests
  while read -r tool recipe; do
    out=$(model "$tool" "$repo/$recipe" 1-rolled-back-by-stepper failed)
    jq -c .rules <<<"$out"
    jq -e '.rules | (if type == "array" then map(.paths) | add else .jsonPointers + .jqPathExpressions end)
      | length > 0 and all(test("template") | not)' <<<"$out"
    [ "$tool" = flux ] || jq -e '.rules.managedFieldsManagers == []' <<<"$out"
    # Not as a YAML key anywhere in the file (a comment may name it).
    run grep -nE '^[[:space:]-]*managedFieldsManagers:' "$repo/$recipe"
    [ "$status" -eq 1 ]
  done < <(recipes)
}

@test "the recipes ignore exactly the stepper's annotations: WRITTEN_BY_STEPPER, the rows set by stepper" {
  manifests
  stepper_keys >"$work/keys"
  cat "$work/keys"
  [ "$(wc -l <"$work/keys")" -ge 12 ]
  # docs/annotations.md: the rows whose "set by" is the stepper alone (not a person too, not a pod).
  # shellcheck disable=SC2016 # the backquotes are Markdown's, not a command substitution
  sed -n 's/^| `\([a-z-]*\)` | stepper |.*/\1/p' "$repo/docs/annotations.md" | sort >"$work/documented"
  diff "$work/keys" "$work/documented"
  while read -r tool recipe; do
    model "$tool" "$repo/$recipe" 1-rolled-back-by-stepper failed |
      jq -r '.rules | (if type == "array" then map(.paths) | add else .jsonPointers end)[]
        | select(startswith("/metadata/annotations/")) | ltrimstr("/metadata/annotations/safe-rollout.dev~1")' |
      sort >"$work/recipe"
    echo "$recipe"
    diff "$work/keys" "$work/recipe"
  done < <(recipes)
}

@test "the recipe before issue 43 (managedFieldsManagers: sts-stepper) hid the reverted template and kept it" {
  manifests
  cat >"$work/old-cm.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm}
data:
  resource.customizations.ignoreDifferences.apps_StatefulSet: |
    jqPathExpressions:
      - select(.metadata.labels["safe-rollout.dev/guard"] == "true") | .spec.updateStrategy.rollingUpdate.partition
    managedFieldsManagers:
      - sts-stepper
YAML
  # sts-stepper owns f:image after the rollback: Synced on a fix commit, and the sync sends the live image.
  out=$("$python" "$repo/scripts/gitops_diff.py" argocd "$work/old-cm.yaml" \
    "$repo/fixtures/rollback/1-rolled-back-by-stepper.json" "$work/fix.json")
  jq -c '.diff' <<<"$out"
  jq -e '.diff == [] and .applied.spec.template.spec.containers[0].image == "nginx:1.25"' <<<"$out"
}
