#!/usr/bin/env bash
# The publishing round trips, against a real OCI registry (Debian's docker-registry: the CNCF
# Distribution registry) started on 127.0.0.1 with a temporary storage directory, and stopped at the end:
#
#   1. the policy: `runner push` uploads policy.wasm as Kubewarden does (config application/vnd.wasm.config.v1+json,
#      one layer application/vnd.wasm.content.layer.v1+wasm); skopeo, an independent client, reads the
#      manifest back; `runner pull` and `runner run registry://…` pull it with oci-client and give the same
#      digest, the same bytes and the same answers as the local file;
#   2. the manifests: `make deploy-manifests` renders deploy/ for this registry; the rendered module and image
#      are the ones pushed here, and the rendered YAML passes deploy/validate.sh;
#   3. the stepper image: `make image push-image` (buildah, vfs storage, chroot isolation) builds it on scratch
#      and pushes it; skopeo checks user, entrypoint, labels and a single linux/amd64 manifest, copies it
#      back, and the binary from the unpacked root filesystem runs `--help` chrooted there (no libc, no
#      loader, no shell: truly static);
#   4. the signatures (scripts/registry-test-signing.sh): `make sign` signs both by digest with a key the
#      test generates, `make verify` and Kubewarden's verification config verify them; a wrong key, an
#      unsigned tag, a re-pushed (tampered) tag and a copied signature are refused; `make sbom` writes the
#      CycloneDX SBOMs (cargo-cyclonedx), each listing every crate linked into its artifact, and
#      `make attach-sbom` publishes them at the artifacts' sha256-<digest>.sbom tags.
#
# Needs: docker-registry, buildah, skopeo, jq, curl, cargo-cyclonedx (scripts/setup.sh installs them); RUNNER and STEPPER_STATIC
# (make registry-tests builds both). Without docker-registry/buildah/skopeo/jq/curl it fails (scripts/setup.sh,
# run by make test, installs them), unless the run accepts skipping (ALLOW_SKIP=1): then it says so loudly,
# appends its name to the skip log ($SKIP_LOG, which make test counts) and exits 0.
# Prints "N passed, N failed" last; exits 1 if any check failed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNNER=${RUNNER:-target/debug/runner}
# The Cargo profile STEPPER_STATIC was built in (make image builds it again if it is not fresh): make
# registry-tests uses static-test, unoptimized (the round trip measures nothing).
STEPPER_PROFILE=${STEPPER_PROFILE:-image}
STEPPER_STATIC=${STEPPER_STATIC:-target/x86_64-unknown-linux-musl/$STEPPER_PROFILE/sts-stepper}
TAG=v0.0.0-registry-test

missing=()
for tool in docker-registry buildah skopeo jq curl cargo-cyclonedx; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "${ALLOW_SKIP:-}" != 1 ]; then
        echo "registry-test.sh: ${missing[*]} not installed: the round trips through a real registry cannot run." >&2
        echo "Install them with scripts/setup.sh (apt-get; cargo install for cargo-cyclonedx), or set ALLOW_SKIP=1 to skip." >&2
        exit 1
    fi
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    echo "!!! registry-test.sh SKIPPED (ALLOW_SKIP=1): ${missing[*]} not installed."
    echo "!!! The policy and stepper image round trips through a real registry did NOT run."
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    if [ -n "${SKIP_LOG:-}" ]; then
        mkdir -p "$(dirname "$SKIP_LOG")"
        echo "registry-test.sh: ${missing[*]} not installed" >>"$SKIP_LOG"
    fi
    exit 0
fi
for f in "$RUNNER" "$STEPPER_STATIC" policy.wasm; do
    [ -f "$f" ] || { echo "registry-test.sh: $f is missing (run it through 'make registry-tests')" >&2; exit 1; }
done

tmp=$(mktemp -d)
registry_pid=
# buildah keeps its images in the temporary directory too: nothing is left in the machine's storage.
buildah_cmd="buildah --root $tmp/storage --runroot $tmp/run --storage-driver vfs"
cleanup() {
    if [ -n "$registry_pid" ]; then
        kill "$registry_pid" 2>/dev/null || true
        wait "$registry_pid" 2>/dev/null || true
    fi
    # vfs layers may be read-only or still listed by buildah: let it delete them first.
    $buildah_cmd rmi --all --force >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'echo "registry-test.sh: a command failed at line $LINENO" >&2' ERR

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
# check DESCRIPTION EXPECTED ACTUAL
check() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi
}
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }
# refused DESCRIPTION NEEDLE COMMAND…: COMMAND must fail with NEEDLE in its stderr.
refused() {
    local what=$1 needle=$2
    shift 2
    if "$@" 2>"$tmp/err" >/dev/null; then
        fail "$what: succeeded"
    elif grep -qF -- "$needle" "$tmp/err"; then
        pass "$what: $(cut -c1-400 "$tmp/err")"
    else
        fail "$what: '$needle' not in: $(cat "$tmp/err")"
    fi
}

# --- the registry -----------------------------------------------------------------------------------
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
registry=127.0.0.1:$port
mkdir -p "$tmp/storage-registry"
cat >"$tmp/registry.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $tmp/storage-registry
http:
  addr: $registry
EOF
docker-registry serve "$tmp/registry.yml" >"$tmp/registry.log" 2>&1 &
registry_pid=$!
started=$(date +%s)
for _ in $(seq 1 100); do
    if curl -fsS -o /dev/null "http://$registry/v2/"; then break; fi
    kill -0 "$registry_pid" 2>/dev/null || { cat "$tmp/registry.log"; echo "docker-registry exited"; exit 1; }
    sleep 0.1
done
curl -fsS -o /dev/null "http://$registry/v2/" || { cat "$tmp/registry.log"; echo "docker-registry did not answer /v2/ within 10 s"; exit 1; }
echo "docker-registry $(docker-registry --version | awk '{print $NF}') serving http://$registry/v2/ (storage $tmp/storage-registry), up in $(elapsed "$started")"

# Everything below goes to this registry, under one repository prefix, as a fork's REGISTRY would.
REGISTRY=$registry/sts-safe-rollout
policy=registry://$REGISTRY/policies/sts-safe-rollout:$TAG
image=$REGISTRY/sts-stepper:$TAG
skopeo=(skopeo --tmpdir "$tmp" --override-os linux --override-arch amd64)

# --- 1. the policy ----------------------------------------------------------------------------------
echo "== policy: $policy"
started=$(date +%s)
"$RUNNER" push policy.wasm "$policy" --digestfile "$tmp/policy.digest" | tee "$tmp/push.out"
pushed=$(sed -n 's/^manifest: //p' "$tmp/push.out")
pushed_layer=$(sed -n 's/^layer: //p' "$tmp/push.out")
# What `make release` pins the policy module by (dist/policy.digest): the digest the registry holds.
check "runner push --digestfile: the pushed manifest digest" "$pushed" "$(cat "$tmp/policy.digest")"
check "the pushed layer is policy.wasm" "sha256:$(sha256sum policy.wasm | cut -d' ' -f1)" "$pushed_layer"

# An independent client reads back what the registry holds.
"${skopeo[@]}" inspect --tls-verify=false --raw "docker://${policy#registry://}" >"$tmp/manifest.json"
check "skopeo: the manifest digest is the pushed one" "$pushed" "sha256:$(sha256sum "$tmp/manifest.json" | cut -d' ' -f1)"
check "skopeo: config media type" application/vnd.wasm.config.v1+json "$(jq -r .config.mediaType "$tmp/manifest.json")"
check "skopeo: one layer" 1 "$(jq '.layers | length' "$tmp/manifest.json")"
check "skopeo: layer media type" application/vnd.wasm.content.layer.v1+wasm "$(jq -r '.layers[0].mediaType' "$tmp/manifest.json")"
check "skopeo: layer digest" "$pushed_layer" "$(jq -r '.layers[0].digest' "$tmp/manifest.json")"
"${skopeo[@]}" copy --quiet --src-tls-verify=false "docker://${policy#registry://}" "oci:$tmp/policy-oci:p" >/dev/null
blob="$tmp/policy-oci/blobs/sha256/${pushed_layer#sha256:}"
if cmp -s "$blob" policy.wasm; then pass "skopeo copy: the layer blob is policy.wasm byte for byte"; else fail "skopeo copy: the layer blob differs from policy.wasm"; fi

"$RUNNER" pull "$policy" -o "$tmp/pulled.wasm" | tee "$tmp/pull.out"
check "runner pull: manifest digest" "$pushed" "$(sed -n 's/^manifest: //p' "$tmp/pull.out")"
if cmp -s "$tmp/pulled.wasm" policy.wasm; then pass "runner pull: the module is policy.wasm"; else fail "runner pull: the module differs from policy.wasm"; fi
digest_ref=registry://$REGISTRY/policies/sts-safe-rollout@$pushed
"$RUNNER" pull "$digest_ref" >"$tmp/pull-digest.out"
check "runner pull by digest" "$pushed" "$(sed -n 's/^manifest: //p' "$tmp/pull-digest.out")"

for request in test_data/create.json test_data/update-template.json test_data/update-partition-reapplied.json; do
    [ -f "$request" ] || { fail "$request is missing"; continue; }
    local_answer=$("$RUNNER" run -r "$request" policy.wasm 2>/dev/null)
    remote_answer=$("$RUNNER" run -r "$request" "$policy" 2>"$tmp/run.err")
    check "runner run $(basename "$request"): registry:// answers as the local file" "$local_answer" "$remote_answer"
    check "runner run $(basename "$request"): the pulled digest is the pushed one" \
        "pulled $policy manifest $pushed layer $pushed_layer" "$(grep '^pulled ' "$tmp/run.err")"
done

refused "a missing tag is an error naming the reference" \
    "cannot pull policy registry://$REGISTRY/policies/sts-safe-rollout:no-such-tag" \
    "$RUNNER" run -r test_data/create.json "registry://$REGISTRY/policies/sts-safe-rollout:no-such-tag"
echo "policy round trip: $(elapsed "$started")"

# --- 2. the manifests -------------------------------------------------------------------------------
echo "== deploy manifests for REGISTRY=$REGISTRY TAG=$TAG"
make --no-print-directory deploy-manifests REGISTRY="$REGISTRY" TAG="$TAG" DIST="$tmp/dist"
rendered_module=$(sed -n 's/^  module: //p' "$tmp/dist/sts-safe-rollout.yaml")
check "rendered ClusterAdmissionPolicy module" "$policy" "$rendered_module"
# A container's image (indented under its pod); the PolicyServer's `spec.image` (two spaces) is Kubewarden's.
check "rendered CronJob image" "$image" "$(sed -n 's/^ \{3,\}image: //p' "$tmp/dist/sts-safe-rollout.yaml")"
check "rendered watch Deployment image" "$image" "$(sed -n 's/^ *image: //p' "$tmp/dist/sts-stepper-watch.yaml")"
"$RUNNER" run -r test_data/create.json "$rendered_module" >"$tmp/rendered.out" 2>/dev/null \
    && pass "the rendered module runs from the registry" || fail "the rendered module does not run"
if deploy/validate.sh "$tmp/dist" >"$tmp/validate.out" 2>&1; then
    pass "the rendered manifests validate: $(tail -n 1 "$tmp/validate.out")"
else
    cat "$tmp/validate.out"; fail "the rendered manifests do not validate"
fi

# --- 3. the stepper image ---------------------------------------------------------------------------
echo "== stepper image: $image"
started=$(date +%s)
make --no-print-directory image push-image REGISTRY="$REGISTRY" TAG="$TAG" TLS_VERIFY=false \
    BUILDAH="$buildah_cmd" DIST="$tmp/dist" STEPPER_STATIC="$STEPPER_STATIC" STEPPER_PROFILE="$STEPPER_PROFILE"
echo "image build and push: $(elapsed "$started")"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)

"${skopeo[@]}" inspect --tls-verify=false "docker://$image" >"$tmp/inspect.json"
"${skopeo[@]}" inspect --tls-verify=false --config "docker://$image" >"$tmp/config.json"
"${skopeo[@]}" inspect --tls-verify=false --raw "docker://$image" >"$tmp/image-manifest.json"
check "image digest: pushed = pulled" "$(cat "$tmp/dist/sts-stepper.digest")" "$(jq -r .Digest "$tmp/inspect.json")"
check "single arch: a manifest, not an index" application/vnd.oci.image.manifest.v1+json "$(jq -r .mediaType "$tmp/image-manifest.json")"
check "os/arch" linux/amd64 "$(jq -r '.os + "/" + .architecture' "$tmp/config.json")"
check "user" 65532:65532 "$(jq -r .config.User "$tmp/config.json")"
check "entrypoint" '["/sts-stepper"]' "$(jq -c .config.Entrypoint "$tmp/config.json")"
check "cmd" '["once"]' "$(jq -c .config.Cmd "$tmp/config.json")"
check "label version" "$version" "$(jq -r '.Labels["org.opencontainers.image.version"]' "$tmp/inspect.json")"
check "label source" https://github.com/sts-safe-rollout/sts-safe-rollout "$(jq -r '.Labels["org.opencontainers.image.source"]' "$tmp/inspect.json")"
check "label licenses" Apache-2.0 "$(jq -r '.Labels["org.opencontainers.image.licenses"]' "$tmp/inspect.json")"
check "one layer" 1 "$(jq '.layers | length' "$tmp/image-manifest.json")"

# Pull it back and unpack the root filesystem.
"${skopeo[@]}" copy --quiet --src-tls-verify=false "docker://$image" "oci:$tmp/image-oci:s" >/dev/null
manifest_blob="$tmp/image-oci/blobs/sha256/$(jq -r '.manifests[0].digest' "$tmp/image-oci/index.json" | cut -d: -f2)"
mkdir -p "$tmp/rootfs"
for layer in $(jq -r '.layers[].digest' "$manifest_blob" | cut -d: -f2); do
    tar -xf "$tmp/image-oci/blobs/sha256/$layer" -C "$tmp/rootfs"
done
check "the root filesystem is the binary alone (no shell)" "./sts-stepper" "$(cd "$tmp/rootfs" && find . -mindepth 1 | sort | tr '\n' ' ' | sed 's/ $//')"
if cmp -s "$tmp/rootfs/sts-stepper" "$STEPPER_STATIC"; then pass "the image's binary is the musl build"; else fail "the image's binary differs from $STEPPER_STATIC"; fi
if command -v readelf >/dev/null; then
    if readelf -l "$tmp/rootfs/sts-stepper" | grep -q INTERP; then
        fail "sts-stepper has a program interpreter (dynamically linked)"
    else
        pass "sts-stepper has no program interpreter and $(readelf -d "$tmp/rootfs/sts-stepper" | grep -c NEEDED || true) NEEDED libraries"
    fi
fi
# chroot into the unpacked image: nothing but the binary is there, so only a static binary can run.
if [ "$(id -u)" = 0 ]; then
    run=(chroot --userspec=65532:65532 "$tmp/rootfs" /sts-stepper --help)
else
    run=(env -i "$tmp/rootfs/sts-stepper" --help)
fi
if "${run[@]}" >"$tmp/help.out" 2>&1 && grep -q '^Usage: sts-stepper' "$tmp/help.out"; then
    pass "${run[*]#"$tmp/"}: $(head -n 1 "$tmp/help.out")"
else
    fail "${run[*]}: $(cat "$tmp/help.out")"
fi

# The runner refuses what is not a policy: the stepper image's layer is a tar, not wasm.
refused "runner refuses a container image as a policy" \
    "expected a Kubewarden policy (one layer of media type application/vnd.wasm.content.layer.v1+wasm): Incompatible layer media type: application/vnd.oci.image.layer.v1.tar" \
    "$RUNNER" run -r test_data/create.json "registry://$image"

# --- 4. the signatures ------------------------------------------------------------------------------
source scripts/registry-test-signing.sh

echo
echo "registry: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
