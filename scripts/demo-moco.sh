#!/usr/bin/env bash
# The MOCO incident (docs/design.md, "Why"), native rolling update vs sts-safe-rollout, side by side.
#
# Plays scenarios/moco-incident.yaml (or the scenario given as $1) twice on the simulated StatefulSet
# controller (`sts-stepper simulate`): once --native (no policy, no stepper), once guarded (the real
# policy decision and the real stepper pass). No cluster needed. Width: $DEMO_WIDTH columns per side.
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-scenarios/moco-incident.yaml}
width=${DEMO_WIDTH:-88}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# $STEPPER: a built sts-stepper (make demo builds it with the runner); else it is built here.
bin=${STEPPER:-}
if [ -z "$bin" ]; then
    cargo build -q -p sts-stepper
    bin=${CARGO_TARGET_DIR:-target}/debug/sts-stepper
fi
"$bin" simulate --scenario "$scenario" --native >"$tmp/native"
"$bin" simulate --scenario "$scenario" >"$tmp/guarded"

# Timeline above the "summary:" line, summary below; each printed in two columns.
side_by_side() { # $1: left file, $2: right file
    LC_ALL=C awk -v w="$width" '
        # Display width and truncation counting UTF-8 characters, not bytes (─, →, … are multibyte).
        function cont(c) { return c >= "\200" && c < "\300" }
        function cut(s,   i, n, out, c) {
            n = 0; out = ""
            for (i = 1; i <= length(s); i++) {
                c = substr(s, i, 1)
                if (!cont(c)) { if (n == w) break; n++ }
                out = out c
            }
            return out
        }
        function width(s,   i, n) {
            n = 0
            for (i = 1; i <= length(s); i++) if (!cont(substr(s, i, 1))) n++
            return n
        }
        NR == FNR { left[FNR] = $0; nl = FNR; next }
        { right[FNR] = $0; nr = FNR }
        END {
            n = nl > nr ? nl : nr
            for (i = 1; i <= n; i++) {
                l = cut(left[i])
                pad = w - width(l)
                printf "%s%" (pad > 0 ? pad : 0) "s │ %s\n", l, "", cut(right[i])
            }
        }' "$1" "$2"
}
for side in native guarded; do
    sed '/^summary:/,$d' "$tmp/$side" >"$tmp/$side.timeline"
    sed -n '/^summary:/,$p' "$tmp/$side" >"$tmp/$side.summary"
done
rule=$(printf '%*s' "$width" '' | tr ' ' '-')
printf '%-*s │ %s\n' "$width" "NATIVE rolling update" "GUARDED by sts-safe-rollout"
printf '%s-┼-%s\n' "$rule" "$rule"
side_by_side "$tmp/native.timeline" "$tmp/guarded.timeline"
printf '%s-┼-%s\n' "$rule" "$rule"
side_by_side "$tmp/native.summary" "$tmp/guarded.summary"
