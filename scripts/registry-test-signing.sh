# Sourced by scripts/registry-test.sh after the policy and the stepper image are in the registry: the
# signing round trips (issue 28). Uses its variables (RUNNER, REGISTRY, TAG, policy, image, pushed, tmp,
# skopeo) and functions (check, pass, fail, refused).
#
#   1. `runner generate-key-pair` writes cosign's key format (an encrypted private key, a PEM public key);
#   2. `make sign` signs the policy and the image by digest: skopeo reads each `sha256-<digest>.sig` tag
#      back as cosign writes it (one simple-signing layer, the signature annotation, the payload naming the
#      digest and the repository);
#   3. `make verify` (runner verify --key, as kwctl verify / cosign verify) passes for both, and so does
#      `runner verify --verification-config-path` with the config `make signing-manifests` renders for the
#      key, whose three manifests also pass deploy/validate.sh;
#   4. refused, each with a message naming the digest: a wrong key, an unsigned tag, a tampered artifact
#      (the tag re-pushed with another module), and that module under a copy of the old signature;
#   5. `make sbom` (cargo-cyclonedx): each SBOM lists every crate `cargo tree` says is linked into its
#      artifact for its target, each a package of Cargo.lock with its checksum; `make attach-sbom` puts
#      each at the artifact's sha256-<digest>.sbom tag, byte for byte.

echo "== signatures"
started=$(date +%s)
keys="$tmp/keys"
mkdir -p "$keys"
COSIGN_PASSWORD=registry-test "$RUNNER" generate-key-pair --output-key-prefix "$keys/cosign" >/dev/null
COSIGN_PASSWORD= "$RUNNER" generate-key-pair --output-key-prefix "$keys/other" >/dev/null
check "generate-key-pair: cosign's encrypted private key" "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----" "$(head -n 1 "$keys/cosign.key")"
check "generate-key-pair: the private key is the owner's alone" 600 "$(stat -c %a "$keys/cosign.key")"
check "generate-key-pair: a PEM public key" "-----BEGIN PUBLIC KEY-----" "$(head -n 1 "$keys/cosign.pub")"

image_digest=$(cat "$tmp/dist/sts-stepper.digest")
COSIGN_PASSWORD=registry-test make --no-print-directory sign REGISTRY="$REGISTRY" TAG="$TAG" \
    COSIGN_KEY="$keys/cosign.key" RUNNER="$RUNNER" REUSE_TEST_RUNNER=1 | tee "$tmp/sign.out"
check "make sign: the policy is signed by its pushed digest" "$pushed" "$(sed -n 's/^digest: //p' "$tmp/sign.out" | head -n 1)"
check "make sign: the image is signed by its pushed digest" "$image_digest" "$(sed -n 's/^digest: //p' "$tmp/sign.out" | tail -n 1)"

# The signature tag as cosign writes it, read by an independent client.
for what in policy image; do
    if [ $what = policy ]; then repo=$REGISTRY/policies/sts-safe-rollout digest=$pushed; else repo=$REGISTRY/sts-stepper digest=$image_digest; fi
    sig="$repo:sha256-${digest#sha256:}.sig"
    "${skopeo[@]}" inspect --tls-verify=false --raw "docker://$sig" >"$tmp/sig-$what.json"
    check "$what: the .sig tag has one layer" 1 "$(jq '.layers | length' "$tmp/sig-$what.json")"
    check "$what: simple-signing layer" application/vnd.dev.cosign.simplesigning.v1+json "$(jq -r '.layers[0].mediaType' "$tmp/sig-$what.json")"
    annotation=$(jq -r '.layers[0].annotations["dev.cosignproject.cosign/signature"] // ""' "$tmp/sig-$what.json")
    if [ -n "$annotation" ] && base64 -d <<<"$annotation" >/dev/null 2>&1; then pass "$what: the signature annotation is base64"; else fail "$what: no base64 signature annotation"; fi
    "${skopeo[@]}" copy --quiet --src-tls-verify=false "docker://$sig" "oci:$tmp/sig-$what-oci:s" >/dev/null
    payload="$tmp/sig-$what-oci/blobs/sha256/$(jq -r '.layers[0].digest' "$tmp/sig-$what.json" | cut -d: -f2)"
    check "$what: payload type" "cosign container image signature" "$(jq -r '.critical.type' "$payload")"
    check "$what: payload names the digest" "$digest" "$(jq -r '.critical.image["docker-manifest-digest"]' "$payload")"
    check "$what: payload names the repository" "$repo" "$(jq -r '.critical.identity["docker-reference"]' "$payload")"
done

if make --no-print-directory verify REGISTRY="$REGISTRY" TAG="$TAG" COSIGN_PUB="$keys/cosign.pub" \
    RUNNER="$RUNNER" REUSE_TEST_RUNNER=1 >"$tmp/verify.out" 2>&1; then
    check "make verify: policy and image verified by key" 2 "$(grep -c '^satisfied: allOf\[0\]: pubKey$' "$tmp/verify.out")"
else
    fail "make verify: $(cat "$tmp/verify.out")"
fi
"$RUNNER" verify --key "$keys/cosign.pub" "registry://$REGISTRY/policies/sts-safe-rollout@$pushed" >"$tmp/verify-digest.out" 2>&1 \
    && pass "runner verify by digest reference" || fail "runner verify by digest: $(cat "$tmp/verify-digest.out")"

# The manifests a fork renders for its key: Kubewarden's verification config verifies the policy for real.
make --no-print-directory signing-manifests REGISTRY="$REGISTRY" COSIGN_PUB="$keys/cosign.pub" DIST="$tmp/dist" >/dev/null
if "$RUNNER" verify --verification-config-path "$tmp/dist/signing/verification-config.yml" "$policy" >"$tmp/verify-config.out" 2>&1; then
    pass "runner verify --verification-config-path (rendered pubKey config): $(grep -c '^satisfied' "$tmp/verify-config.out") requirement met"
else
    fail "runner verify --verification-config-path: $(cat "$tmp/verify-config.out")"
fi
if deploy/validate.sh "$tmp/dist/signing" >"$tmp/validate-signing.out" 2>&1; then
    pass "the rendered signing manifests validate: $(tail -n 1 "$tmp/validate-signing.out")"
else
    cat "$tmp/validate-signing.out"; fail "the rendered signing manifests do not validate"
fi

refused "a wrong key is refused" "($pushed) failed verification: 1 signature(s) of this digest, none meets allOf[0]: pubKey" \
    "$RUNNER" verify --key "$keys/other.pub" "$policy"
refused "a wrong key is refused for the image too" "($image_digest) failed verification" \
    "$RUNNER" verify --key "$keys/other.pub" "$image"

# An unsigned tag: another module (a minimal wasm module, another digest) pushed beside the signed one.
printf '\0asm\1\0\0\0' >"$tmp/other.wasm"
"$RUNNER" push "$tmp/other.wasm" "registry://$REGISTRY/policies/sts-safe-rollout:unsigned" >"$tmp/push-other.out"
other=$(sed -n 's/^manifest: //p' "$tmp/push-other.out")
refused "an unsigned tag is refused" "($other) is not signed: the registry has no signature tag $REGISTRY/policies/sts-safe-rollout:sha256-${other#sha256:}.sig" \
    "$RUNNER" verify --key "$keys/cosign.pub" "registry://$REGISTRY/policies/sts-safe-rollout:unsigned"

# Tampering: the signed tag re-pushed with another module. Its signature was for the old digest.
"$RUNNER" push "$tmp/other.wasm" "$policy" >/dev/null
refused "a re-pushed (tampered) tag is refused" "($other) is not signed" \
    "$RUNNER" verify --key "$keys/cosign.pub" "$policy"
# …even with the old signature copied to the new digest's tag: its payload names the old digest.
"${skopeo[@]}" copy --quiet --src-tls-verify=false --dest-tls-verify=false \
    "docker://$REGISTRY/policies/sts-safe-rollout:sha256-${pushed#sha256:}.sig" \
    "docker://$REGISTRY/policies/sts-safe-rollout:sha256-${other#sha256:}.sig" >/dev/null
refused "a signature copied from another digest is refused" "holds 1 signature layer(s), none of them for this digest" \
    "$RUNNER" verify --key "$keys/cosign.pub" "$policy"
echo "signatures: $(elapsed "$started")"

# --- SBOMs: every crate of Cargo.lock compiled into each artifact, published beside it ------------------
echo "== SBOMs"
started=$(date +%s)
make --no-print-directory sbom DIST="$tmp/dist" >"$tmp/sbom.out"
for what in sts-safe-rollout:wasm32-wasip1 sts-stepper:x86_64-unknown-linux-musl; do
    package=${what%%:*} target=${what#*:}
    sbom="$tmp/dist/sbom/$package.cdx.json"
    check "$package SBOM: CycloneDX 1.5" "CycloneDX 1.5" "$(jq -r '.bomFormat + " " + .specVersion' "$sbom")"
    check "$package SBOM: describes $package" "$package" "$(jq -r '.metadata.component.name' "$sbom")"
    # The crates linked into it for that target (an independent listing: cargo tree, without the proc-macros,
    # which run in the compiler and are not in the artifact), as name@version.
    cargo tree --locked --quiet -p "$package" --target "$target" -e normal,no-proc-macro --prefix none \
        | sed 's/ (\*)$//; s/ (proc-macro)$//; s/ (.*)$//; s/ v/@/' | grep -v "^$package@" | sort -u >"$tmp/$package.tree"
    jq -r '.components[] | .name + "@" + .version' "$sbom" | sort -u >"$tmp/$package.sbom"
    # cargo-cyclonedx reads `cargo metadata`, whose features are unified over the whole workspace, and lists
    # proc-macros too: the SBOM may name more crates than this one artifact links, never fewer.
    missing=$(comm -23 "$tmp/$package.tree" "$tmp/$package.sbom" | tr '\n' ' ')
    if [ -z "$missing" ] && [ -s "$tmp/$package.tree" ]; then
        pass "$package SBOM: all $(wc -l <"$tmp/$package.tree") crates linked for $target, at their versions ($(comm -13 "$tmp/$package.tree" "$tmp/$package.sbom" | wc -l) more: proc-macros, the workspace's features)"
    else
        fail "$package SBOM lacks crates linked for $target: $missing"
    fi
    # Every component is a package of Cargo.lock, with its checksum.
    unlocked=0 wrong_hash=0
    while IFS=' ' read -r name version hash; do
        locked=$(awk -v n="$name" -v v="$version" '$0 == "name = \"" n "\"" {getline; if ($0 == "version = \"" v "\"") {found=1}} found && /^checksum = / {gsub(/checksum = |"/, ""); print; exit} found && /^$/ {print "none"; exit}' Cargo.lock)
        if [ -z "$locked" ]; then unlocked=$((unlocked + 1));
        elif [ "$hash" != - ] && [ "$locked" != "$hash" ]; then wrong_hash=$((wrong_hash + 1)); fi
    done < <(jq -r '.components[] | .name + " " + .version + " " + ((.hashes // [])[0].content // "-")' "$sbom")
    check "$package SBOM: every component is in Cargo.lock" 0 "$unlocked"
    check "$package SBOM: every hash is Cargo.lock's checksum" 0 "$wrong_hash"
done
check "the policy SBOM lists the Kubewarden SDK" 1 "$(jq '[.components[] | select(.name == "kubewarden-policy-sdk")] | length' "$tmp/dist/sbom/sts-safe-rollout.cdx.json")"
check "the stepper SBOM lists kube" 1 "$(jq '[.components[] | select(.name == "kube")] | length' "$tmp/dist/sbom/sts-stepper.cdx.json")"
check "make sbom leaves no SBOM in the work tree" "" "$(find . \( -path ./target -o -path ./.git \) -prune -o -name '*.cdx.json' -print)"

# Published beside each artifact, where cosign download sbom finds it.
"$RUNNER" push policy.wasm "$policy" >/dev/null   # the signed tag back to policy.wasm after the tampering above
make --no-print-directory attach-sbom REGISTRY="$REGISTRY" TAG="$TAG" DIST="$tmp/dist" RUNNER="$RUNNER" REUSE_TEST_RUNNER=1 >"$tmp/attach.out"
for what in policy image; do
    if [ $what = policy ]; then repo=$REGISTRY/policies/sts-safe-rollout digest=$pushed file=sts-safe-rollout; else repo=$REGISTRY/sts-stepper digest=$image_digest file=sts-stepper; fi
    tag="$repo:sha256-${digest#sha256:}.sbom"
    "${skopeo[@]}" inspect --tls-verify=false --raw "docker://$tag" >"$tmp/sbom-$what.json"
    check "$what: the .sbom tag's layer is CycloneDX JSON" application/vnd.cyclonedx+json "$(jq -r '.layers[0].mediaType' "$tmp/sbom-$what.json")"
    check "$what: the .sbom tag's layer is the SBOM" "sha256:$(sha256sum "$tmp/dist/sbom/$file.cdx.json" | cut -d' ' -f1)" "$(jq -r '.layers[0].digest' "$tmp/sbom-$what.json")"
done
echo "SBOMs: $(elapsed "$started")"
