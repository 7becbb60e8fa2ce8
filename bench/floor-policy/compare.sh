#!/usr/bin/env bash
# Interleaved `runner bench` of wasm policies on the same requests: ROUNDS rounds, and in each round every
# request through every module in turn, so a load change on the (shared) machine hits all alike. Prints
# each run's median and then, per request and module, the median of the rounds' medians in µs.
#
#   bench/floor-policy/compare.sh policy=policy.wasm floor=$TARGET/wasm32-wasip1/release/floor_policy.wasm
#
# RUNNER (default $CARGO_TARGET_DIR/release/runner), ROUNDS (5), ITERATIONS (2000) and WARM_UP (200)
# may be set. A module given as NAME=PATH@SETTINGS_JSON runs with those settings.
set -euo pipefail
TARGET_DIR=${CARGO_TARGET_DIR:-target}
RUNNER=${RUNNER:-$TARGET_DIR/release/runner}
ROUNDS=${ROUNDS:-5}
ITERATIONS=${ITERATIONS:-2000}
WARM_UP=${WARM_UP:-200}
REQUESTS=(
  "fixtures/admission/update-image.json"
  "test_data/update-partition-stepped.json"
  "fixtures/admission/create-default.json"
  "fixtures/admission/partition-lower-to-2.json"
)
[ $# -gt 0 ] || { echo "usage: $0 NAME=POLICY.wasm[@SETTINGS_JSON]..." >&2; exit 2; }
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for round in $(seq "$ROUNDS"); do
  for request in "${REQUESTS[@]}"; do
    for module in "$@"; do
      name=${module%%=*}
      spec=${module#*=}
      path=${spec%%@*}
      settings='{}'
      [[ $spec == *@* ]] && settings=${spec#*@}
      median=$("$RUNNER" bench -r "$request" --settings-json "$settings" --iterations "$ITERATIONS" \
        --warm-up "$WARM_UP" "$path" 2>/dev/null | sed -n 's/.*median \([0-9.]*\) µs.*/\1/p')
      echo "round $round  $(basename "$request")  $name  $median µs"
      echo "$(basename "$request") $name $median" >>"$results"
    done
  done
done
echo
echo "median of $ROUNDS medians (µs):"
sort -k1,1 -k2,2 -k3,3n "$results" | awk '
  { key = $1 " " $2; v[key, ++n[key]] = $3; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
  END { for (i = 1; i <= k; i++) { key = order[i]; c = n[key]; m = (c % 2) ? v[key, (c + 1) / 2] : (v[key, c / 2] + v[key, c / 2 + 1]) / 2; printf "  %-36s %8.1f\n", key, m } }'
