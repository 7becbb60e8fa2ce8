#!/usr/bin/env bats
# End-to-end tests of the compiled policy, one (at least) per row of the decision table in docs/design.md.
#
# Written for real kwctl:      make annotated-policy.wasm && bats e2e.bats
# In CI, through the runner:   KWCTL="target/debug/runner" POLICY=policy.wasm bats e2e.bats
# (`make e2e-tests` picks kwctl when installed, else the runner.)

setup() {
  KWCTL=${KWCTL:-kwctl}
  POLICY=${POLICY:-annotated-policy.wasm}
}

# evaluate FILE [kwctl flags...]: runs the policy on test_data/FILE; the AdmissionResponse is in $output.
evaluate() {
  local file=$1
  shift
  # Need to run the command inside of `bash -c` because of a bats limitation with pipes and redirects.
  run bash -c "$KWCTL run --request-path test_data/$file $* $POLICY 2>/dev/null"
  # this prints the output when one of the checks below fails
  echo "output = ${output}"
}

# assert_patch JSON: the request was allowed with exactly this JSON Patch.
assert_patch() {
  [ "$status" -eq 0 ]
  [ "$(jq -r '.allowed' <<<"$output")" = "true" ]
  [ "$(jq -r '.patchType' <<<"$output")" = "JSONPatch" ]
  local got want
  got=$(jq -cS '.patch | @base64d | fromjson' <<<"$output")
  want=$(jq -cS '.' <<<"$1")
  echo "patch = ${got}"
  [ "$got" = "$want" ]
}

# assert_unchanged: allowed, no patch.
assert_unchanged() {
  [ "$status" -eq 0 ]
  [ "$(jq -r '.allowed' <<<"$output")" = "true" ]
  [ "$(jq -r '.patch' <<<"$output")" = "null" ]
}

PARTITION=/spec/updateStrategy/rollingUpdate/partition

@test "CREATE: a guarded StatefulSet is staged, partition = replicas, and marked guarded" {
  evaluate create.json
  assert_patch '[{"op":"add","path":"/metadata/annotations/safe-rollout.dev~1guarded","value":"true"},
                 {"op":"replace","path":"'$PARTITION'","value":3}]'
}

@test "CREATE: force-rolling-update strips the partition" {
  evaluate create-forced.json
  assert_patch '[{"op":"remove","path":"'$PARTITION'"}]'
}

@test "CREATE: OnDelete is accepted unchanged" {
  evaluate create-ondelete.json
  assert_unchanged
}

@test "UPDATE: force-rolling-update strips the partition" {
  evaluate update-forced.json
  assert_patch '[{"op":"remove","path":"'$PARTITION'"}]'
}

@test "UPDATE: OnDelete is accepted unchanged" {
  evaluate update-ondelete.json
  assert_unchanged
}

@test "UPDATE: template change on a fully Ready set is staged and stamped initialized" {
  evaluate update-template.json
  assert_patch '[{"op":"add","path":"/metadata/annotations/safe-rollout.dev~1guarded","value":"true"},
                 {"op":"add","path":"/metadata/annotations/safe-rollout.dev~1initialized","value":"true"},
                 {"op":"replace","path":"'$PARTITION'","value":3}]'
}

@test "UPDATE: template change in the middle of a rollout restages at replicas" {
  evaluate update-template-initialized.json
  assert_patch '[{"op":"add","path":"/metadata/annotations/safe-rollout.dev~1guarded","value":"true"},
                 {"op":"replace","path":"'$PARTITION'","value":3}]'
}

@test "UPDATE: template change on a set that never became Ready removes the partition" {
  evaluate update-template-not-initialized.json
  assert_patch '[{"op":"remove","path":"'$PARTITION'"}]'
}

@test "UPDATE: raising the partition is accepted unchanged" {
  evaluate update-partition-raised.json
  assert_unchanged
}

@test "UPDATE: the stepper's step (partition lowered with a new last-partition-update) is accepted" {
  evaluate update-partition-stepped.json
  assert_unchanged
}

@test "UPDATE: a re-apply of partition 0 in the middle of a rollout is undone" {
  evaluate update-partition-reapplied.json
  assert_patch '[{"op":"add","path":"/metadata/annotations/safe-rollout.dev~1guarded","value":"true"},
                 {"op":"replace","path":"'$PARTITION'","value":2}]'
}

@test "UPDATE: lowering the partition of a set that never became Ready is accepted" {
  evaluate update-partition-not-initialized.json
  assert_unchanged
}

@test "UPDATE: metadata only is accepted unchanged" {
  evaluate update-metadata-only.json
  assert_unchanged
}

@test "UPDATE of the scale subresource is accepted unchanged" {
  evaluate scale-subresource.json
  assert_unchanged
}

@test "DELETE is accepted unchanged" {
  evaluate delete.json
  assert_unchanged
}

@test "Other kinds (a Deployment) are accepted unchanged" {
  evaluate deployment.json
  assert_unchanged
}

@test "A malformed StatefulSet is rejected with a message naming the field" {
  evaluate malformed-replicas.json
  [ "$status" -eq 0 ]
  [ "$(jq -r '.allowed' <<<"$output")" = "false" ]
  [[ "$(jq -r '.status.message' <<<"$output")" == *"spec.replicas"* ]]
}

@test "Settings: annotationPrefix selects the annotations (MOCO's prefix ignores safe-rollout.dev ones)" {
  evaluate create-forced.json --settings-path test_data/settings-moco.yaml
  assert_patch '[{"op":"add","path":"/metadata/annotations/moco.cybozu.com~1guarded","value":"true"},
                 {"op":"replace","path":"'$PARTITION'","value":3}]'
}

@test "Settings: an invalid annotationPrefix is refused" {
  run bash -c "$KWCTL run --request-path test_data/create.json --settings-path test_data/settings-invalid.yaml $POLICY"
  echo "output = ${output}"
  [ "$status" -eq 1 ]
  [[ "$output" == *"Provided settings are not valid"* ]]
  [[ "$output" == *"annotationPrefix"* ]]
}

@test "Settings: unknown fields are refused" {
  run bash -c "$KWCTL run --request-path test_data/create.json --settings-json '{\"prefix\": \"a.b\"}' $POLICY"
  echo "output = ${output}"
  [ "$status" -eq 1 ]
  [[ "$output" == *"unknown field"* ]]
}
