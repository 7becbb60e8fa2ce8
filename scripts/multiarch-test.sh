#!/usr/bin/env bash
# The release's multi-arch image and the plugin's linux binaries, through a real registry (Debian's
# docker-registry) on 127.0.0.1, as scripts/registry-test.sh does for the amd64 image:
#
#   1. `make image-multiarch push-manifest`: one image per arch (FROM scratch + COPY: no emulation needed to
#      build an arm64 image here), each from its cross build, in one manifest list pushed with `--all`;
#   2. `skopeo inspect --raw`: an index of exactly linux/amd64 and linux/arm64, its digest the pushed one;
#   3. each platform pulled back (skopeo --override-arch): its config's architecture, user, entrypoint; its
#      root filesystem the binary alone, byte for byte the cross build of that arch;
#   4. each binary run: amd64 natively (chrooted into its root filesystem when root), arm64 under
#      qemu-user (qemu-aarch64-static or qemu-aarch64, Debian's qemu-user-static) when installed, else its ELF
#      header alone is checked and a notice says so: `--help`, and a scenario simulated with the same
#      timeline as amd64's;
#   5. the linux tarballs (scripts/plugin-package.sh): each holds its arch's binary, which run as
#      kubectl-safe_rollout speaks as `kubectl safe-rollout`.
#
#   make multiarch-tests        (builds the two linux targets with scripts/cross-build.sh first; not in make test:
#                                the cross builds take many minutes)
#
# Needs: docker-registry, buildah, skopeo, jq, curl; the cross builds of STEPPER_PROFILE (default image).
# Prints "N passed, N failed" last; exits 1 if any check failed.
set -euo pipefail

case "${1:-}" in -h | --help) echo "usage: $0   (env STEPPER_PROFILE=image; run by make multiarch-tests)"; exit 0 ;; esac
cd "$(dirname "${BASH_SOURCE[0]}")/.."
STEPPER_PROFILE=${STEPPER_PROFILE:-image}
target_dir=${CARGO_TARGET_DIR:-target}
TAG=v0.0.0-multiarch-test
scenario=scenarios/canary-pause-points.yaml

for tool in docker-registry buildah skopeo jq curl; do
    command -v "$tool" >/dev/null || { echo "multiarch-test.sh: $tool is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
done
declare -A binary=([amd64]=$target_dir/x86_64-unknown-linux-musl/$STEPPER_PROFILE/sts-stepper
    [arm64]=$target_dir/aarch64-unknown-linux-musl/$STEPPER_PROFILE/sts-stepper)
for arch in amd64 arm64; do
    [ -f "${binary[$arch]}" ] || { echo "multiarch-test.sh: ${binary[$arch]} is missing (make multiarch-tests builds it)" >&2; exit 1; }
done
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)

tmp=$(mktemp -d)
registry_pid=
buildah_cmd="buildah --root $tmp/storage --runroot $tmp/run --storage-driver vfs"
cleanup() {
    if [ -n "$registry_pid" ]; then
        kill "$registry_pid" 2>/dev/null || true
        wait "$registry_pid" 2>/dev/null || true
    fi
    $buildah_cmd rmi --all --force >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'echo "multiarch-test.sh: a command failed at line $LINENO" >&2' ERR

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi; }
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }

# --- the registry -----------------------------------------------------------------------------------
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
registry=127.0.0.1:$port
mkdir -p "$tmp/storage-registry"
printf 'version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n' \
    "$tmp/storage-registry" "$registry" >"$tmp/registry.yml"
docker-registry serve "$tmp/registry.yml" >"$tmp/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "http://$registry/v2/" && break
    kill -0 "$registry_pid" 2>/dev/null || { cat "$tmp/registry.log"; echo "docker-registry exited"; exit 1; }
    sleep 0.1
done
curl -fsS -o /dev/null "http://$registry/v2/" || { cat "$tmp/registry.log"; echo "docker-registry did not answer /v2/ within 10 s"; exit 1; }
REGISTRY=$registry/sts-safe-rollout
image=$REGISTRY/sts-stepper:$TAG

# --- 1. build and push the manifest list --------------------------------------------------------------
echo "== multi-arch image: $image"
started=$(date +%s)
make --no-print-directory image-multiarch push-manifest REGISTRY="$REGISTRY" TAG="$TAG" TLS_VERIFY=false \
    BUILDAH="$buildah_cmd" DIST="$tmp/dist" STEPPER_PROFILE="$STEPPER_PROFILE"
echo "image-multiarch and push-manifest: $(elapsed "$started")"

# --- 2. the index ----------------------------------------------------------------------------------
skopeo=(skopeo --tmpdir "$tmp")
"${skopeo[@]}" inspect --tls-verify=false --raw "docker://$image" >"$tmp/index.json"
jq . "$tmp/index.json"
check "pushed digest = the index's" "$(cat "$tmp/dist/sts-stepper.digest")" "sha256:$(sha256sum "$tmp/index.json" | cut -d' ' -f1)"
case $(jq -r .mediaType "$tmp/index.json") in
    application/vnd.oci.image.index.v1+json | application/vnd.docker.distribution.manifest.list.v2+json)
        pass "an index (manifest list): $(jq -r .mediaType "$tmp/index.json")" ;;
    *) fail "not an index: $(jq -r .mediaType "$tmp/index.json")" ;;
esac
check "platforms" "linux/amd64 linux/arm64" \
    "$(jq -r '[.manifests[].platform | .os + "/" + .architecture] | sort | join(" ")' "$tmp/index.json")"

# --- 3, 4. each platform pulled back and run ---------------------------------------------------------
for arch in amd64 arm64; do
    echo "== linux/$arch"
    "${skopeo[@]}" --override-os linux --override-arch "$arch" inspect --tls-verify=false --config "docker://$image" >"$tmp/config-$arch.json"
    check "$arch: config architecture" "linux/$arch" "$(jq -r '.os + "/" + .architecture' "$tmp/config-$arch.json")"
    check "$arch: user" 65532:65532 "$(jq -r .config.User "$tmp/config-$arch.json")"
    check "$arch: entrypoint and cmd" '["/sts-stepper"] ["once"]' \
        "$(jq -c .config.Entrypoint "$tmp/config-$arch.json") $(jq -c .config.Cmd "$tmp/config-$arch.json")"
    "${skopeo[@]}" --override-os linux --override-arch "$arch" copy --quiet --src-tls-verify=false \
        "docker://$image" "oci:$tmp/oci-$arch:s" >/dev/null
    manifest="$tmp/oci-$arch/blobs/sha256/$(jq -r '.manifests[0].digest' "$tmp/oci-$arch/index.json" | cut -d: -f2)"
    check "$arch: the manifest pulled is the index's $arch entry" \
        "$(jq -r --arg a "$arch" '.manifests[] | select(.platform.architecture == $a) | .digest' "$tmp/index.json")" \
        "$(jq -r '.manifests[0].digest' "$tmp/oci-$arch/index.json")"
    rootfs=$tmp/rootfs-$arch
    mkdir -p "$rootfs"
    for layer in $(jq -r '.layers[].digest' "$manifest" | cut -d: -f2); do
        tar -xf "$tmp/oci-$arch/blobs/sha256/$layer" -C "$rootfs"
    done
    check "$arch: the root filesystem is the binary alone" ./sts-stepper "$(cd "$rootfs" && find . -mindepth 1 | sort | tr '\n' ' ' | sed 's/ $//')"
    if cmp -s "$rootfs/sts-stepper" "${binary[$arch]}"; then
        pass "$arch: the image's binary is ${binary[$arch]}"
    else
        fail "$arch: the image's binary differs from ${binary[$arch]}"
    fi
done
machine() { od -An -tx1 -j18 -N2 "$1" | tr -d ' \n'; }
check "amd64: ELF machine x86-64" 3e00 "$(machine "$tmp/rootfs-amd64/sts-stepper")"
check "arm64: ELF machine AArch64" b700 "$(machine "$tmp/rootfs-arm64/sts-stepper")"

# run ARCH ARGS...: the arch's binary from its root filesystem (arm64 under qemu-user).
run() {
    local arch=$1
    shift
    if [ "$arch" = arm64 ]; then
        "$qemu" "$tmp/rootfs-arm64/sts-stepper" "$@"
    elif [ "$(id -u)" = 0 ]; then
        chroot --userspec=65532:65532 "$tmp/rootfs-amd64" /sts-stepper "$@"
    else
        env -i "$tmp/rootfs-amd64/sts-stepper" "$@"
    fi
}
arches=(amd64)
if [ -n "$qemu" ]; then
    arches+=(arm64)
else
    echo "NOTICE: no qemu-aarch64(-static) here (Debian: qemu-user-static): the arm64 binary's ELF header is checked, it is not run"
fi
for arch in "${arches[@]}"; do
    if run "$arch" --help >"$tmp/help-$arch.out" 2>&1 && grep -q '^Usage: sts-stepper' "$tmp/help-$arch.out"; then
        pass "$arch: sts-stepper --help runs: $(grep -m1 '^Usage' "$tmp/help-$arch.out")"
    else
        fail "$arch: sts-stepper --help: $(head -n 5 "$tmp/help-$arch.out")"
    fi
    # The scenario is read from this checkout: the binaries run outside their root filesystems here.
    if [ "$arch" = arm64 ]; then
        "$qemu" "$tmp/rootfs-arm64/sts-stepper" simulate --scenario "$scenario" >"$tmp/sim-$arch.out" 2>&1 || true
    else
        "$tmp/rootfs-amd64/sts-stepper" simulate --scenario "$scenario" >"$tmp/sim-$arch.out" 2>&1 || true
    fi
done
if grep -q 'steps taken' "$tmp/sim-amd64.out"; then
    pass "amd64: simulate $scenario: $(grep -c . "$tmp/sim-amd64.out") lines"
else
    fail "amd64: simulate $scenario: $(tail -n 5 "$tmp/sim-amd64.out")"
fi
if [ -n "$qemu" ]; then
    if diff "$tmp/sim-amd64.out" "$tmp/sim-arm64.out" >"$tmp/sim.diff"; then
        pass "arm64 (qemu): simulate $scenario: the same timeline as amd64, line for line"
    else
        fail "arm64 (qemu): simulate $scenario differs from amd64: $(head -n 20 "$tmp/sim.diff")"
    fi
fi

# --- 5. the plugin's linux tarballs ------------------------------------------------------------------
echo "== plugin tarballs"
scripts/plugin-package.sh "$tmp/plugin" linux_amd64="${binary[amd64]}" linux_arm64="${binary[arm64]}"
for arch in "${arches[@]}"; do
    mkdir -p "$tmp/plugin-$arch"
    tar -xzf "$tmp/plugin/kubectl-safe_rollout_linux_$arch.tar.gz" -C "$tmp/plugin-$arch"
    if cmp -s "$tmp/plugin-$arch/kubectl-safe_rollout" "$tmp/rootfs-$arch/sts-stepper"; then
        pass "$arch: the tarball's kubectl-safe_rollout is the image's binary"
    else
        fail "$arch: the tarball's kubectl-safe_rollout differs from the image's binary"
    fi
    if [ "$arch" = arm64 ]; then plugin=("$qemu" "$tmp/plugin-$arch/kubectl-safe_rollout"); else plugin=("$tmp/plugin-$arch/kubectl-safe_rollout"); fi
    check "$arch: run as kubectl-safe_rollout, it is the kubectl plugin" "Usage: kubectl safe-rollout [OPTIONS] <COMMAND>" \
        "$("${plugin[@]}" --help | grep -m1 '^Usage')"
done

echo
echo "multiarch: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
