#!/usr/bin/env bash
# The last lines of `make test`: how many tests passed, failed and were skipped, over every step's output.
#
#   scripts/test-summary.sh REPORT_DIR SKIP_LOG
#
# REPORT_DIR holds each step's output, saved by the Makefile (tee), read by its name:
#   *.cargo.log    cargo test output: the "test result: ok. N passed; N failed; N ignored" lines are summed
#   *.tap          bats --tap output: "ok" / "not ok" lines; "ok … # skip" is a skip
#   *.checks.log   a script printing "[NAME: ]N passed, N failed" last (scripts/registry-test.sh)
# SKIP_LOG holds one line per test skipped under ALLOW_SKIP=1 (the test returned early, so cargo counted
# it as passed: it is moved from passed to skipped); a line starting "registry-test.sh:" is a whole
# script that skipped before printing counts.
# Prints one line per step, the skipped tests by name, then "N passed, N failed, N skipped" last.
# Exit status: 1 when a count could not be read (a step's output is missing its summary), else 0.
set -euo pipefail
report=${1:?usage: test-summary.sh REPORT_DIR SKIP_LOG}
skip_log=${2:?usage: test-summary.sh REPORT_DIR SKIP_LOG}

passed=0 failed=0 skipped=0
shopt -s nullglob

for f in "$report"/*.cargo.log; do
    read -r p fl ig < <(sed -n 's/^test result: [a-zA-Z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/\1 \2 \3/p' "$f" |
        awk '{p += $1; f += $2; i += $3; n++} END {if (n) print p, f, i; else print "x x x"}')
    [ "$p" != x ] || { echo "test-summary: no 'test result:' line in $f" >&2; exit 1; }
    echo "$(basename "$f" .cargo.log): $p passed, $fl failed, $ig ignored"
    passed=$((passed + p)) failed=$((failed + fl)) skipped=$((skipped + ig))
done

for f in "$report"/*.tap; do
    ok=$(grep -c '^ok ' "$f" || true)
    skip=$(grep -c '^ok .* # skip' "$f" || true)
    notok=$(grep -c '^not ok ' "$f" || true)
    echo "$(basename "$f" .tap): $((ok - skip)) passed, $notok failed, $skip skipped"
    passed=$((passed + ok - skip)) failed=$((failed + notok)) skipped=$((skipped + skip))
done

for f in "$report"/*.checks.log; do
    line=$(grep -E '^([a-z0-9-]+: )?[0-9]+ passed, [0-9]+ failed$' "$f" | tail -n 1 || true)
    line=${line#*: }
    if [ -z "$line" ] && grep -q "^$(basename "$f" .checks.log)" "$skip_log" 2>/dev/null; then
        echo "$(basename "$f" .checks.log): skipped"
        continue
    fi
    [ -n "$line" ] || { echo "test-summary: no 'N passed, N failed' line in $f" >&2; exit 1; }
    read -r p _ fl _ <<<"${line//,/}"
    echo "$(basename "$f" .checks.log): $line"
    passed=$((passed + p)) failed=$((failed + fl))
done

if [ -s "$skip_log" ]; then
    echo "skipped under ALLOW_SKIP=1 (a real component was missing):"
    sed 's/^/  /' "$skip_log"
    logged=$(wc -l <"$skip_log")
    # Rust tests that skipped returned early and were counted as passed; scripts never counted theirs.
    scripts=$(grep -c '^[a-z-]*\.sh:' "$skip_log" || true)
    passed=$((passed - (logged - scripts)))
    skipped=$((skipped + logged))
fi
echo "$passed passed, $failed failed, $skipped skipped"
