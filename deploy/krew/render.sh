#!/usr/bin/env bash
# Renders the krew plugin manifest (deploy/krew/safe-rollout.yaml, a template) for one release, from the
# real sha256 sums of its plugin tarballs:
#
#   deploy/krew/render.sh vX.Y.Z SHA256SUMS OUTDIR      → OUTDIR/safe-rollout.yaml (krew: the file is named after the plugin)
#   (make krew-manifest [TAG=vX.Y.Z]: the sums `make plugin-binaries` wrote, OUTDIR dist/plugin)
#
# SHA256SUMS is `sha256sum`'s output for the four tarballs kubectl-safe_rollout_{linux,darwin}_{amd64,arm64}.tar.gz
# ("HASH  FILE" or "HASH *FILE" lines; other files in it are ignored). Each platform's uri is
# KREW_DOWNLOAD_URL/vX.Y.Z/<tarball>, KREW_DOWNLOAD_URL defaulting to the project's GitHub releases
# (a fork's release workflow sets its own). Checks what krew checks of a manifest (krew's validation: a
# version krew parses as semver, v-prefixed; 64 lowercase hex digits per sha256), then checks the result with
# deploy/krew/check_manifest.py (krew's rules and this project's, the sums among them; PyYAML from scripts/python-env.sh).
# Exit status: 0 when the manifest was written and passed the check, 1 when it failed it (nothing is left),
# 2 on bad arguments or a sums file that lacks a tarball.
set -euo pipefail

usage="usage: $0 vX.Y.Z SHA256SUMS OUTDIR   (env KREW_DOWNLOAD_URL=https://github.com/OWNER/REPO/releases/download)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
if [ $# -ne 3 ]; then
    echo "$usage" >&2
    exit 2
fi
version=$1 sums=$2 outdir=$3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
download=${KREW_DOWNLOAD_URL:-https://github.com/sts-safe-rollout/sts-safe-rollout/releases/download}

# krew parses spec.version as semver with a leading v (its installation/semver package).
semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
if ! [[ $version =~ $semver ]]; then
    echo "render.sh: version '$version' is not a v-prefixed semantic version (vX.Y.Z, as krew requires)" >&2
    exit 2
fi
case "$download" in
    https://*) download=${download%/} ;;
    *) echo "render.sh: KREW_DOWNLOAD_URL '$download' is not an https:// URL" >&2; exit 2 ;;
esac
[ -r "$sums" ] || { echo "render.sh: sums file '$sums' cannot be read" >&2; exit 2; }

args=(-e "s|@VERSION@|$version|g" -e "s|@DOWNLOAD@|$download/$version|g")
for platform in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do
    file=kubectl-safe_rollout_$platform.tar.gz
    # sha256sum's lines: HASH, two spaces (or a space and * in binary mode), FILE (perhaps with a directory).
    hashes=$(awk -v f="$file" '{ n = $2; sub(/^\*/, "", n); sub(/.*\//, "", n); if (n == f) print $1 }' "$sums")
    case $(grep -c . <<<"$hashes" || true) in
        1) ;;
        0) echo "render.sh: $sums has no sha256 for $file" >&2; exit 2 ;;
        *) echo "render.sh: $sums has more than one sha256 for $file" >&2; exit 2 ;;
    esac
    if ! [[ $hashes =~ ^[a-f0-9]{64}$ ]]; then
        echo "render.sh: the sha256 of $file in $sums is '$hashes', not 64 lowercase hex digits" >&2
        exit 2
    fi
    args+=(-e "s|@SHA256_${platform}@|$hashes|g")
done

mkdir -p "$outdir"
out=$outdir/safe-rollout.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "${args[@]}" "$here/safe-rollout.yaml" >"$work/safe-rollout.yaml"
if grep -n '@[A-Za-z0-9_]*@' "$work/safe-rollout.yaml" >&2; then
    echo "render.sh: placeholders left unfilled in the template (above)" >&2
    exit 1
fi
python=$("$here/../../scripts/python-env.sh" pyyaml)
if ! "$python" "$here/check_manifest.py" "$work/safe-rollout.yaml" "$sums" >&2; then
    echo "render.sh: the rendered manifest fails the check above; $out not written" >&2
    exit 1
fi
mv "$work/safe-rollout.yaml" "$out"
echo "$out: krew manifest of safe-rollout $version, 4 platforms, the sha256 sums of $sums"
