#!/usr/bin/env bash
# Packages the kubectl plugin for a release: one tarball per platform holding the stepper binary under the
# name kubectl looks for, and the sha256 sums krew and a person check the download against.
#
#   scripts/plugin-package.sh OUTDIR OS_ARCH=BINARY...
#   e.g. scripts/plugin-package.sh dist/plugin linux_amd64=target/x86_64-unknown-linux-musl/image/sts-stepper …
#   (make plugin-binaries runs it on the four cross builds)
#
# writes OUTDIR/kubectl-safe_rollout_<os>_<arch>.tar.gz for each OS_ARCH (linux_amd64, linux_arm64,
# darwin_amd64, darwin_arm64): `kubectl-safe_rollout` (mode 0755: the binary, renamed; run by that name it
# speaks as `kubectl safe-rollout`) and LICENSE when the repository has one; and OUTDIR/kubectl-safe_rollout_SHA256SUMS, the
# `sha256sum` lines of every tarball written. Each BINARY must be the executable format of its OS_ARCH (ELF
# x86-64 or AArch64, Mach-O x86_64 or arm64), read from its header: a binary in the wrong tarball is refused.
# The tarballs are reproducible: sorted names, owner 0, the mtime of SOURCE_DATE_EPOCH (default: the last
# commit's time), gzip without a name or time.
# Exit status: 0 when every tarball and the sums were written, 2 on bad arguments or a binary of another platform.
set -euo pipefail

usage="usage: $0 OUTDIR OS_ARCH=BINARY...   (OS_ARCH: linux_amd64 linux_arm64 darwin_amd64 darwin_arm64)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
if [ $# -lt 2 ]; then
    echo "$usage" >&2
    exit 2
fi
out=$1
shift
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 0)}

# format FILE: the platform its header says it is for (linux_amd64, …), or what it is instead.
format() {
    local head
    # The first 20 bytes as hex: ELF's magic, class and e_machine (bytes 18-19, little-endian); Mach-O's
    # 64-bit magic (cf fa ed fe) and cputype (bytes 4-7).
    head=$(od -An -tx1 -N20 -v "$1" | tr -d ' \n')
    case $head in
        7f454c4602*) case ${head:36:4} in 3e00) echo linux_amd64 ;; b700) echo linux_arm64 ;; *) echo "ELF machine 0x${head:38:2}${head:36:2}" ;; esac ;;
        cffaedfe*) case ${head:8:8} in 07000001) echo darwin_amd64 ;; 0c000001) echo darwin_arm64 ;; *) echo "Mach-O cputype ${head:8:8}" ;; esac ;;
        *) echo "not an ELF-64 or Mach-O-64 executable (starts ${head:0:8})" ;;
    esac
}

declare -A binary
for arg in "$@"; do
    platform=${arg%%=*} file=${arg#*=}
    case $platform in
        linux_amd64 | linux_arm64 | darwin_amd64 | darwin_arm64) ;;
        *) echo "plugin-package.sh: '$arg': OS_ARCH '$platform' is not linux_amd64, linux_arm64, darwin_amd64 or darwin_arm64" >&2; exit 2 ;;
    esac
    [[ $arg == *=?* ]] || { echo "plugin-package.sh: '$arg' names no binary (OS_ARCH=BINARY)" >&2; exit 2; }
    [ -f "$file" ] || { echo "plugin-package.sh: $platform's binary $file does not exist" >&2; exit 2; }
    [ -z "${binary[$platform]:-}" ] || { echo "plugin-package.sh: $platform given twice" >&2; exit 2; }
    actual=$(format "$file")
    if [ "$actual" != "$platform" ]; then
        echo "plugin-package.sh: $file is $actual, not $platform: it does not belong in kubectl-safe_rollout_$platform.tar.gz" >&2
        exit 2
    fi
    binary[$platform]=$file
done

mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tarballs=()
for platform in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do
    [ -n "${binary[$platform]:-}" ] || continue
    name=kubectl-safe_rollout_$platform.tar.gz
    rm -rf "$work/root" && mkdir "$work/root"
    install -m 0755 "${binary[$platform]}" "$work/root/kubectl-safe_rollout"
    files=(kubectl-safe_rollout)
    if [ -f "$repo/LICENSE" ]; then
        install -m 0644 "$repo/LICENSE" "$work/root/LICENSE"
        files+=(LICENSE)
    fi
    tar -C "$work/root" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -cf - "${files[@]}" \
        | gzip -9 -n >"$out/$name"
    tarballs+=("$name")
    echo "$out/$name: ${files[*]} ($(stat -c %s "${binary[$platform]}") bytes unpacked, $(stat -c %s "$out/$name") packed)"
done
(cd "$out" && sha256sum "${tarballs[@]}") >"$out/kubectl-safe_rollout_SHA256SUMS"
echo "$out/kubectl-safe_rollout_SHA256SUMS: ${#tarballs[@]} tarballs"
