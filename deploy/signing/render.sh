#!/usr/bin/env bash
# Renders the signing manifests of deploy/signing/ for a fork that signs with a cosign key instead of the
# project's keyless release identity:
#
#   deploy/signing/render.sh cosign.pub REGISTRY/sts-stepper OUTDIR
#   (or: make signing-manifests COSIGN_PUB=cosign.pub REGISTRY=…)
#
# writes OUTDIR/verification-config.yml (Kubewarden's format: a signature by that key required, for the
# policy-server's --verification-path and `kwctl verify` / `runner verify --verification-config-path`),
# OUTDIR/kyverno-verify-images.yaml (a Kyverno ClusterPolicy: images under REGISTRY/sts-stepper need a
# signature by that key) and OUTDIR/cluster-image-policy.yaml (the same as a Sigstore policy-controller
# ClusterImagePolicy). The key is embedded as PEM; nothing secret is read (only the public key).
# Key-signed signatures have no Rekor entry: both image policies say so (ignoreTlog / no ctlog).
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 COSIGN_PUB REGISTRY/sts-stepper OUTDIR" >&2
    exit 2
fi
pub=$1 repository=$2 out=$3
if ! grep -q -- '-----BEGIN PUBLIC KEY-----' "$pub" 2>/dev/null; then
    echo "render.sh: COSIGN_PUB '$pub' is not a PEM public key (expected cosign.pub: -----BEGIN PUBLIC KEY-----)" >&2
    exit 2
fi
case "$repository" in
    */* ) ;;
    *) echo "render.sh: image repository '$repository' is not HOST/REPOSITORY (no tag)" >&2; exit 2 ;;
esac
case "${repository##*/}" in
    *:* | *@*) echo "render.sh: image repository '$repository' must have no tag or digest" >&2; exit 2 ;;
esac
mkdir -p "$out"
# The key's lines, indented by $1 spaces.
key() { sed "s/^/$(printf '%*s' "$1" '')/" "$pub"; }

{
    echo "# Kubewarden's verification config: a signature by the fork's cosign key (rendered by deploy/signing/render.sh)."
    echo "apiVersion: v1"
    echo "allOf:"
    echo "  - kind: pubKey"
    echo "    key: |"
    key 6
} >"$out/verification-config.yml"

{
    echo "# Kyverno: $repository images need a signature by the fork's cosign key (rendered by deploy/signing/render.sh)."
    echo "apiVersion: kyverno.io/v1"
    echo "kind: ClusterPolicy"
    echo "metadata:"
    echo "  name: sts-stepper-signed"
    echo "spec:"
    echo "  webhookTimeoutSeconds: 30"
    echo "  background: false"
    echo "  rules:"
    echo "    - name: sts-stepper-signed-by-key"
    echo "      match:"
    echo "        any:"
    echo "          - resources:"
    echo "              kinds:"
    echo "                - Pod"
    echo "      verifyImages:"
    echo "        - type: Cosign"
    echo "          imageReferences:"
    echo "            - \"$repository*\""
    echo "          failureAction: Enforce"
    echo "          mutateDigest: true"
    echo "          verifyDigest: true"
    echo "          required: true"
    echo "          attestors:"
    echo "            - count: 1"
    echo "              entries:"
    echo "                - keys:"
    echo "                    rekor:"
    echo "                      ignoreTlog: true"
    echo "                    ctlog:"
    echo "                      ignoreSCT: true"
    echo "                    publicKeys: |-"
    key 22
} >"$out/kyverno-verify-images.yaml"

{
    echo "# Sigstore policy-controller: $repository images need a signature by the fork's cosign key (rendered by deploy/signing/render.sh)."
    echo "apiVersion: policy.sigstore.dev/v1beta1"
    echo "kind: ClusterImagePolicy"
    echo "metadata:"
    echo "  name: sts-stepper-signed"
    echo "spec:"
    echo "  images:"
    echo "    - glob: \"$repository**\""
    echo "  authorities:"
    echo "    - name: fork-key"
    echo "      key:"
    echo "        hashAlgorithm: sha256"
    echo "        data: |"
    key 10
} >"$out/cluster-image-policy.yaml"
echo "rendered $out/verification-config.yml, $out/kyverno-verify-images.yaml, $out/cluster-image-policy.yaml for $pub and $repository"
