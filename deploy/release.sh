#!/usr/bin/env bash
# The release bundle: one install file per mode, from deploy/install/<mode>/ built with `kubectl kustomize`,
# the stepper image and the Kubewarden policy module pinned by digest, then validated (deploy/validate.sh):
#
#   deploy/release.sh REGISTRY/sts-stepper@sha256:DIGEST registry://REGISTRY/policies/sts-safe-rollout@sha256:DIGEST OUTDIR
#   (or: make release [REGISTRY=…] [DIGEST=sha256:…] [POLICY_DIGEST=sha256:…])
#
# writes OUTDIR/install-kubewarden-cronjob.yaml, OUTDIR/install-kubewarden-ha.yaml and
# OUTDIR/install-native-ha.yaml (docs/install.md, "From a release"). Digests, not tags: what was tested is
# what runs, whatever a tag later points at. A ClusterAdmissionPolicy's `module` takes
# registry://HOST/REPOSITORY@sha256:DIGEST as kwctl pull does (Kubewarden's policy-fetcher resolves both);
# the digest is the policy artifact's manifest digest, what `make publish` (kwctl push -o json) and
# `runner push --digestfile` record. Without a pushed image or policy, `make release` passes a placeholder
# digest (sha256:000…0) and says so; the files are then for review, not for a cluster.
# Exit status: 0 when every file was written and is valid, 1 otherwise, 2 on bad arguments.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 REGISTRY/sts-stepper@sha256:DIGEST registry://…/sts-safe-rollout@sha256:DIGEST OUTDIR" >&2
    exit 2
fi
image=$1 module=$2 out=$3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

digest=${image##*@}
name=${image%@*}
if [[ $image != *@* ]] || ! [[ $digest =~ ^sha256:[0-9a-f]{64}$ ]]; then
    echo "release.sh: image '$image' is not REPOSITORY@sha256:<64 hex digits> (the stepper image pinned by digest)" >&2
    exit 2
fi
if ! [[ $module =~ ^registry://[^/@]+/[^@]+@sha256:[0-9a-f]{64}$ ]]; then
    echo "release.sh: policy module '$module' is not registry://HOST/REPOSITORY@sha256:<64 hex digits> (the policy pinned by digest: make publish records it in dist/policy.digest)" >&2
    exit 2
fi
command -v kubectl >/dev/null || { echo "release.sh: needs kubectl (its kustomize builds deploy/install/)" >&2; exit 1; }

# The image deploy/ ships with: the one kustomize's images transformer replaces.
shipped_image=$(sed -n 's/^ *image: *//p' "$here/stepper/cronjob.yaml")
shipped_name=${shipped_image%:*}

# container_images FILE: the `image:` lines of FILE's objects, but a Kubewarden PolicyServer's.
container_images() {
    awk '/^---/ {kind = ""} /^kind: / {kind = $2} kind != "PolicyServer" && /^ *image: /' "$1"
}

mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for mode in kubewarden-cronjob kubewarden-ha native-ha; do
    mkdir -p "$work/$mode"
    {
        echo "resources:"
        echo "  - $(realpath --relative-to="$work/$mode" "$here/install/$mode")"
        echo "images:"
        echo "  - name: $shipped_name"
        echo "    newName: $name"
        echo "    digest: $digest"
        echo "patches:"
        echo "  - target: {group: policies.kubewarden.io, kind: ClusterAdmissionPolicy, name: sts-safe-rollout}"
        echo "    patch: |"
        echo "      - op: replace"
        echo "        path: /spec/module"
        echo "        value: $module"
    } >"$work/$mode/kustomization.yaml"
    file="$out/install-$mode.yaml"
    {
        echo "# sts-safe-rollout install, mode $mode: kubectl apply -f install-$mode.yaml (docs/install.md)."
        echo "# Built from deploy/install/$mode/ by deploy/release.sh for"
        echo "#   image  $image"
        [[ $mode == native-* ]] || echo "#   policy $module"
        kubectl kustomize "$work/$mode"
    } >"$file.tmp"
    # Every stepper container runs the pinned image, and no other (the PolicyServer's `spec.image` is
    # Kubewarden's policy-server, not a container of ours).
    if container_images "$file.tmp" | grep -vqF "image: $image"; then
        echo "release.sh: $file names an image other than $image:" >&2
        container_images "$file.tmp" >&2
        rm -f "$file.tmp"; exit 1
    fi
    grep -qF "image: $image" "$file.tmp" || { echo "release.sh: $file runs no stepper" >&2; rm -f "$file.tmp"; exit 1; }
    mv "$file.tmp" "$file"
    echo "$file: $(grep -c '^kind:' "$file") objects, image pinned $(grep -cF "image: $image" "$file")x"
done
"$here/validate.sh" "$out"
