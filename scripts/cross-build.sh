#!/usr/bin/env bash
# The stepper for other platforms than this machine's: the kubectl plugin's release binaries and the arm64
# image's. Each target is built with `cargo zigbuild` (crates.io's cargo-zigbuild; zig, from PyPI's
# ziglang in scripts/python-env.sh's venv, is the C compiler of ring's C code and the linker), so one Linux
# machine builds linux/darwin × amd64/arm64 with no cross toolchain per target:
#
#   scripts/cross-build.sh PROFILE TARGET...
#   e.g. scripts/cross-build.sh image aarch64-unknown-linux-musl    (make stepper-cross CROSS_TARGETS=…)
#
# writes $CARGO_TARGET_DIR (default target)/TARGET/PROFILE/sts-stepper and prints each target's build time
# and size. Installs what it needs first (scripts/setup.sh release: cargo-zigbuild, the rustup targets).
# Darwin links against the macOS SDK's Security and CoreFoundation frameworks (kube's rustls-tls pulls
# rustls-platform-verifier and rustls-native-certs, hence security-framework, on macOS, whatever the
# features), which zig does not ship: on Linux a darwin target needs SDKROOT pointing at a MacOSX SDK, and
# without it this stops before compiling anything; on a macOS host, darwin targets are built with plain
# `cargo build` and Apple's own toolchain (docs/publish.md, "The kubectl plugin's binaries").
# Works with macOS's bash 3.2. Exit status: 0 when every target was built, 1 otherwise, 2 on bad arguments.
set -euo pipefail

usage="usage: $0 PROFILE TARGET...   (TARGET: x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin aarch64-apple-darwin)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
if [ $# -lt 2 ]; then
    echo "$usage" >&2
    exit 2
fi
profile=$1
shift
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
target_dir=${CARGO_TARGET_DIR:-target}
# zig from PyPI, pinned: the linker of every release binary.
ziglang=${ZIGLANG:-ziglang==0.17.1}
host_os=$(uname -s)

zig_targets=0
for target in "$@"; do
    case $target in
        x86_64-unknown-linux-musl | aarch64-unknown-linux-musl) zig_targets=1 ;;
        x86_64-apple-darwin | aarch64-apple-darwin)
            if [ "$host_os" = Darwin ]; then continue; fi
            zig_targets=1
            if [ -z "${SDKROOT:-}" ] || [ ! -d "${SDKROOT:-}/System/Library/Frameworks/Security.framework" ]; then
                echo "cross-build.sh: $target cannot be linked here: the stepper links the macOS frameworks Security and" >&2
                echo "  CoreFoundation (security-framework, through kube's rustls-tls: rustls-platform-verifier and" >&2
                echo "  rustls-native-certs), and zig ships no macOS SDK. Set SDKROOT to a MacOSX SDK holding" >&2
                echo "  System/Library/Frameworks/Security.framework${SDKROOT:+ (SDKROOT=$SDKROOT has none)}, or build the darwin targets on macOS." >&2
                exit 1
            fi
            ;;
        *) echo "cross-build.sh: target '$target' is not one of the plugin's four (see --help)" >&2; exit 2 ;;
    esac
done

if [ "$zig_targets" = 1 ]; then
    scripts/setup.sh release
    CARGO_ZIGBUILD_PYTHON_PATH=$(scripts/python-env.sh "$ziglang")
    export CARGO_ZIGBUILD_PYTHON_PATH
fi
for target in "$@"; do
    rustup target list --installed | grep -qx "$target" || rustup target add "$target"
    started=$(date +%s)
    case "$host_os $target" in
        "Darwin "*-apple-darwin) build=(cargo build) ;;
        *) build=(cargo zigbuild) ;;
    esac
    echo "cross-build.sh: ${build[*]} --locked --profile $profile --target $target -p sts-stepper"
    "${build[@]}" --locked --profile "$profile" --target "$target" -p sts-stepper
    binary=$target_dir/$target/$profile/sts-stepper
    echo "cross-build.sh: $binary: $(wc -c <"$binary" | tr -d ' ') bytes, built in $(( $(date +%s) - started )) s"
done
