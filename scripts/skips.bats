#!/usr/bin/env bats
# No test passes by skipping: scripts/registry-test.sh without its tools fails unless ALLOW_SKIP=1, and
# scripts/test-summary.sh (make test's last lines) counts what was skipped.
#
#   bats scripts/skips.bats     (make setup-tests; part of make test)

setup() {
  repo=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  sandbox=$(mktemp -d)
  report=$sandbox/report
  mkdir "$report"
}

teardown() {
  rm -rf "$sandbox"
}

# run_registry_test_without_registry [ENV...]: registry-test.sh on a PATH with jq and curl but no
# docker-registry, buildah, skopeo or cargo-cyclonedx.
run_registry_test_without_registry() {
  local bin=$sandbox/bin
  mkdir -p "$bin"
  for tool in dirname mkdir jq curl; do ln -sf "$(command -v "$tool")" "$bin/$tool"; done
  run timeout 20 env PATH="$bin" SKIP_LOG="$sandbox/skips.log" "$@" /bin/bash "$repo/scripts/registry-test.sh"
  echo "status = $status"
  echo "output = $output"
}

@test "registry-test.sh without its tools fails, naming them" {
  run_registry_test_without_registry
  [ "$status" -eq 1 ]
  [[ "$output" == *"docker-registry buildah skopeo cargo-cyclonedx not installed"* ]]
  [[ "$output" == *"ALLOW_SKIP=1"* ]]
  [ ! -e "$sandbox/skips.log" ]
}

@test "registry-test.sh under ALLOW_SKIP=1 skips loudly and logs the skip" {
  run_registry_test_without_registry ALLOW_SKIP=1
  [ "$status" -eq 0 ]
  [[ "$output" == *"SKIPPED (ALLOW_SKIP=1): docker-registry buildah skopeo cargo-cyclonedx not installed"* ]]
  [ "$(cat "$sandbox/skips.log")" = "registry-test.sh: docker-registry buildah skopeo cargo-cyclonedx not installed" ]
}

@test "ALLOW_SKIP other than 1 does not allow skipping" {
  run_registry_test_without_registry ALLOW_SKIP=true
  [ "$status" -eq 1 ]
}

# Sample outputs of each kind of step.
write_reports() {
  cat >"$report/unit-tests.cargo.log" <<'EOF'
     Running tests/a.rs
test result: ok. 10 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.10s
     Running tests/prometheus_real_auth.rs
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.20s
EOF
  printf '1..3\nok 1 first\nok 2 second # skip not today\nok 3 third\n' >"$report/e2e.tap"
  # scripts/registry-test.sh's last line.
  printf 'ok   push\n\nregistry: 37 passed, 0 failed\n' >"$report/registry-test.checks.log"
}

@test "test-summary.sh: nothing skipped" {
  write_reports
  : >"$sandbox/skips.log"
  run "$repo/scripts/test-summary.sh" "$report" "$sandbox/skips.log"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"unit-tests: 13 passed, 0 failed, 1 ignored"* ]]
  [[ "$output" == *"e2e: 2 passed, 0 failed, 1 skipped"* ]]
  [[ "$output" == *"registry-test: 37 passed, 0 failed"* ]]
  [ "${lines[-1]}" = "52 passed, 0 failed, 2 skipped" ]
}

@test "test-summary.sh: tests skipped under ALLOW_SKIP=1 move from passed to skipped, by name" {
  write_reports
  printf '%s\n' "prometheus_real_auth::basic_auth: prometheus not installed" \
    "prometheus_real_auth::tls: prometheus not installed" >"$sandbox/skips.log"
  run "$repo/scripts/test-summary.sh" "$report" "$sandbox/skips.log"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"  prometheus_real_auth::basic_auth: prometheus not installed"* ]]
  [ "${lines[-1]}" = "50 passed, 0 failed, 4 skipped" ]
}

@test "test-summary.sh: a skipped registry-test.sh counts as one skip, no checks" {
  write_reports
  printf 'SKIPPED\n' >"$report/registry-test.checks.log"
  printf '%s\n' "registry-test.sh: docker-registry not installed" >"$sandbox/skips.log"
  run "$repo/scripts/test-summary.sh" "$report" "$sandbox/skips.log"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"registry-test: skipped"* ]]
  [ "${lines[-1]}" = "15 passed, 0 failed, 3 skipped" ]
}

@test "test-summary.sh: a step whose output lacks its counts is an error, not a zero" {
  write_reports
  printf 'compiling...\n' >"$report/unit-tests.cargo.log"
  run "$repo/scripts/test-summary.sh" "$report" "$sandbox/skips.log"
  [ "$status" -eq 1 ]
  [[ "$output" == *"no 'test result:' line"* ]]
}
