#!/usr/bin/env bash
# Builds policy.wasm under each step of the release profile and prints its size, so BENCHMARKS.md can say
# what each setting buys. Uses a separate target dir; each row is a full release build of the policy.
set -euo pipefail
target_dir=${TARGET_DIR:-target/size-matrix}
rustup target add wasm32-wasip1 >/dev/null 2>&1
build() { # label, then CARGO_PROFILE_RELEASE_* overrides
  local label=$1; shift
  env "$@" cargo build --quiet --locked --target wasm32-wasip1 --release -p sts-safe-rollout --target-dir "$target_dir"
  printf '| %-48s | %9d |\n' "$label" "$(stat -c %s "$target_dir/wasm32-wasip1/release/sts_safe_rollout.wasm")"
}
echo "| profile | bytes |"
echo "|---|---:|"
base=(CARGO_PROFILE_RELEASE_OPT_LEVEL=3 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16)
build "cargo default release (opt-level 3)" "${base[@]}"
build "+ strip = true" "${base[@]}" CARGO_PROFILE_RELEASE_STRIP=true
build "+ opt-level = \"s\"" "${base[@]}" CARGO_PROFILE_RELEASE_STRIP=true CARGO_PROFILE_RELEASE_OPT_LEVEL=s
build "+ lto = true" "${base[@]}" CARGO_PROFILE_RELEASE_STRIP=true CARGO_PROFILE_RELEASE_OPT_LEVEL=s CARGO_PROFILE_RELEASE_LTO=true
build "+ codegen-units = 1 (the profile in Cargo.toml)" "${base[@]}" CARGO_PROFILE_RELEASE_STRIP=true CARGO_PROFILE_RELEASE_OPT_LEVEL=s CARGO_PROFILE_RELEASE_LTO=true CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
build "opt-level = \"z\" instead of \"s\"" "${base[@]}" CARGO_PROFILE_RELEASE_STRIP=true CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_LTO=true CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
