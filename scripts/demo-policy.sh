#!/usr/bin/env bash
# Runs policy.wasm (through the runner, as `kwctl run` would) on real AdmissionReviews captured from a
# Kubernetes v1.28.7 API server, and prints each decision in a line a person reads.
set -euo pipefail

RUNNER=${RUNNER:-target/debug/runner}
POLICY=${POLICY:-policy.wasm}
dir=fixtures/admission

describe() { # a one-line summary of an AdmissionReview
  jq -r '.request as $r
    | ($r.object // $r.oldObject) as $o
    | [ $r.operation + (if $r.subResource then "/" + $r.subResource else "" end),
        $r.kind.kind,
        ( if $r.kind.kind == "StatefulSet" and $r.object then
            "replicas=\($r.object.spec.replicas) partition: \($r.oldObject.spec.updateStrategy.rollingUpdate.partition // "-")→\($r.object.spec.updateStrategy.rollingUpdate.partition // "none")"
            + (if $r.oldObject and ($r.object.spec.template != $r.oldObject.spec.template) then " template changed" else "" end)
          else "" end) ] | join("  ")' "$1"
}

answer() { # a one-line summary of the runner's AdmissionResponse
  jq -r 'if .allowed | not then "REJECTED: " + .status.message
         elif .patch then "MUTATED:  " + (.patch | @base64d | fromjson
              | map(.op + " " + (.path | sub("/spec/updateStrategy/rollingUpdate/"; "") | sub("/metadata/annotations/"; "annotation ") | gsub("~1"; "/"))
                    + (if has("value") then " = " + (.value | tostring) else "" end)) | join(", "))
         else "accepted unchanged" end'
}

echo "sts-safe-rollout policy: $POLICY, run by $RUNNER (the kwctl run stand-in)"
echo "requests: $dir"
echo
for f in "$dir"/*.json; do
  name=$(basename "$f")
  case "$name" in sts-*|expected-*) continue ;; esac
  jq -e '.kind == "AdmissionReview"' "$f" >/dev/null 2>&1 || continue
  printf '%-42s %s\n' "$name" "$(describe "$f")"
  printf '%-42s → %s\n\n' "" "$("$RUNNER" run --request-path "$f" "$POLICY" 2>/dev/null | answer)"
done
