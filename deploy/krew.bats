#!/usr/bin/env bats
# The kubectl plugin's release assets without a cross build: scripts/plugin-package.sh on stand-in
# binaries (a few bytes each with the real ELF or Mach-O header of its platform), then the krew manifest
# rendered from the sums it wrote (deploy/krew/render.sh) and checked (deploy/krew/check_manifest.py: what krew
# refuses, and this project's platforms, assets and sums); and each check refusing the manifest it must.
#
#   bats deploy/krew.bats     (make validate-manifests; part of make test)

setup() {
  repo=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  work=$(mktemp -d)
  python=$("$repo/scripts/python-env.sh" pyyaml)
  # Stand-ins: the header of each platform's executable format, then a line naming the platform.
  header linux_amd64 '\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00'
  header linux_arm64 '\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
  header darwin_amd64 '\xcf\xfa\xed\xfe\x07\x00\x00\x01\x03\x00\x00\x00\x02\x00\x00\x00'
  header darwin_arm64 '\xcf\xfa\xed\xfe\x0c\x00\x00\x01\x00\x00\x00\x00\x02\x00\x00\x00'
}

teardown() {
  rm -rf "$work"
}

# header PLATFORM BYTES: $work/bin/PLATFORM, a stand-in binary of that platform.
header() {
  mkdir -p "$work/bin"
  { printf '%b' "$2"; echo " stand-in for $1"; } >"$work/bin/$1"
}

package() {
  "$repo/scripts/plugin-package.sh" "$work/plugin" linux_amd64="$work/bin/linux_amd64" \
    linux_arm64="$work/bin/linux_arm64" darwin_amd64="$work/bin/darwin_amd64" darwin_arm64="$work/bin/darwin_arm64"
}

# manifest_json: the rendered manifest as JSON.
manifest_json() {
  "$python" -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' "$work/plugin/safe-rollout.yaml"
}

# mutate PYTHON: applies a Python statement on `m` (the rendered manifest) into $work/bad/safe-rollout.yaml.
mutate() {
  mkdir -p "$work/bad"
  "$python" -c "import sys, yaml; m = yaml.safe_load(open(sys.argv[1])); $1; yaml.safe_dump(m, open(sys.argv[2], 'w'))" \
    "$work/plugin/safe-rollout.yaml" "$work/bad/safe-rollout.yaml"
}

# refused NEEDLE: check_manifest.py refuses $work/bad/safe-rollout.yaml (against the real sums) naming NEEDLE.
refused() {
  run "$python" "$repo/deploy/krew/check_manifest.py" "$work/bad/safe-rollout.yaml" "$work/plugin/kubectl-safe_rollout_SHA256SUMS"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"$1"* ]]
}

@test "package: one tarball per platform holding kubectl-safe_rollout (0755) and LICENSE, and their sums" {
  package
  cd "$work/plugin"
  sha256sum -c kubectl-safe_rollout_SHA256SUMS
  [ "$(awk '{print $2}' kubectl-safe_rollout_SHA256SUMS | tr '\n' ' ')" = "kubectl-safe_rollout_linux_amd64.tar.gz kubectl-safe_rollout_linux_arm64.tar.gz kubectl-safe_rollout_darwin_amd64.tar.gz kubectl-safe_rollout_darwin_arm64.tar.gz " ]
  for platform in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do
    tar -tvzf "kubectl-safe_rollout_$platform.tar.gz"
    [ "$(tar -tzf "kubectl-safe_rollout_$platform.tar.gz" | sort | tr '\n' ' ')" = "LICENSE kubectl-safe_rollout " ]
    tar -tvzf "kubectl-safe_rollout_$platform.tar.gz" kubectl-safe_rollout | grep -q '^-rwxr-xr-x 0/0 '
    # The platform's own binary, not another's.
    [ "$(tar -xzOf "kubectl-safe_rollout_$platform.tar.gz" kubectl-safe_rollout | tail -c +17 | grep -ao 'stand-in for [a-z0-9_]*')" = "stand-in for $platform" ]
  done
  # Reproducible: the entries dated SOURCE_DATE_EPOCH, not the packing time; packed again, the same bytes.
  cp kubectl-safe_rollout_SHA256SUMS "$work/first"
  SOURCE_DATE_EPOCH=1700000000 package
  TZ=UTC tar --full-time -tvzf kubectl-safe_rollout_linux_arm64.tar.gz | grep -q ' 2023-11-14 22:13:20 kubectl-safe_rollout$'
  run diff -q "$work/first" kubectl-safe_rollout_SHA256SUMS
  [ "$status" -ne 0 ]
  SOURCE_DATE_EPOCH=1700000000 package
  cp kubectl-safe_rollout_SHA256SUMS "$work/second"
  SOURCE_DATE_EPOCH=1700000000 package
  diff "$work/second" kubectl-safe_rollout_SHA256SUMS
}

@test "package refuses a binary in another platform's tarball, naming both" {
  run "$repo/scripts/plugin-package.sh" "$work/plugin" linux_arm64="$work/bin/linux_amd64"
  echo "$output"
  [ "$status" -eq 2 ]
  [[ "$output" == *"is linux_amd64, not linux_arm64"* ]]
  run "$repo/scripts/plugin-package.sh" "$work/plugin" darwin_amd64="$work/bin/darwin_arm64"
  [ "$status" -eq 2 ]
  [[ "$output" == *"is darwin_arm64, not darwin_amd64"* ]]
  run "$repo/scripts/plugin-package.sh" "$work/plugin" windows_amd64="$work/bin/linux_amd64"
  [ "$status" -eq 2 ]
  [[ "$output" == *"OS_ARCH 'windows_amd64' is not"* ]]
  [ ! -e "$work/plugin/kubectl-safe_rollout_SHA256SUMS" ]
}

@test "render: the manifest from the real sums, four platforms, each its tarball's uri and sha256, checked" {
  package
  run "$repo/deploy/krew/render.sh" v1.2.3 "$work/plugin/kubectl-safe_rollout_SHA256SUMS" "$work/plugin"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"a valid krew manifest of safe-rollout, 4 platforms, sums match"* ]]
  local m
  m=$(manifest_json)
  [ "$(jq -r '.apiVersion + " " + .kind + " " + .metadata.name + " " + .spec.version' <<<"$m")" = \
    "krew.googlecontainertools.github.com/v1alpha2 Plugin safe-rollout v1.2.3" ]
  [ "$(jq '.spec.platforms | length' <<<"$m")" -eq 4 ]
  for platform in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do
    local os=${platform%_*} arch=${platform#*_} p
    p=$(jq -c --arg os "$os" --arg arch "$arch" '.spec.platforms[] | select(.selector.matchLabels == {os: $os, arch: $arch})' <<<"$m")
    [ "$(jq -r .uri <<<"$p")" = "https://github.com/sts-safe-rollout/sts-safe-rollout/releases/download/v1.2.3/kubectl-safe_rollout_$platform.tar.gz" ]
    [ "$(jq -r .sha256 <<<"$p")" = "$(sha256sum "$work/plugin/kubectl-safe_rollout_$platform.tar.gz" | cut -d' ' -f1)" ]
    [ "$(jq -r .bin <<<"$p")" = kubectl-safe_rollout ]
    [ "$(jq -c .files <<<"$p")" = '[{"from":"kubectl-safe_rollout","to":"."},{"from":"LICENSE","to":"."}]' ]
  done
  # A fork's release page.
  KREW_DOWNLOAD_URL=https://github.com/my-org/fork/releases/download/ "$repo/deploy/krew/render.sh" v2.0.0-rc.1 \
    "$work/plugin/kubectl-safe_rollout_SHA256SUMS" "$work/plugin"
  manifest_json | jq -e '.spec.platforms[0].uri == "https://github.com/my-org/fork/releases/download/v2.0.0-rc.1/kubectl-safe_rollout_linux_amd64.tar.gz"'
}

@test "render refuses a version krew cannot parse and a sums file without every tarball, writing nothing" {
  package
  run "$repo/deploy/krew/render.sh" 1.2.3 "$work/plugin/kubectl-safe_rollout_SHA256SUMS" "$work/out"
  [ "$status" -eq 2 ]
  [[ "$output" == *"version '1.2.3' is not a v-prefixed semantic version"* ]]
  grep -v darwin_arm64 "$work/plugin/kubectl-safe_rollout_SHA256SUMS" >"$work/partial"
  run "$repo/deploy/krew/render.sh" v1.2.3 "$work/partial" "$work/out"
  [ "$status" -eq 2 ]
  [[ "$output" == *"has no sha256 for kubectl-safe_rollout_darwin_arm64.tar.gz"* ]]
  sed 's/^[0-9a-f]*/ABC/' "$work/plugin/kubectl-safe_rollout_SHA256SUMS" >"$work/bad-hash"
  run "$repo/deploy/krew/render.sh" v1.2.3 "$work/bad-hash" "$work/out"
  [ "$status" -eq 2 ]
  [[ "$output" == *"is 'ABC', not 64 lowercase hex digits"* ]]
  cat "$work/plugin/kubectl-safe_rollout_SHA256SUMS" "$work/plugin/kubectl-safe_rollout_SHA256SUMS" >"$work/twice"
  run "$repo/deploy/krew/render.sh" v1.2.3 "$work/twice" "$work/out"
  [ "$status" -eq 2 ]
  [[ "$output" == *"more than one sha256"* ]]
  [ ! -e "$work/out/safe-rollout.yaml" ]
}

@test "check refuses what krew refuses" {
  package
  "$repo/deploy/krew/render.sh" v1.2.3 "$work/plugin/kubectl-safe_rollout_SHA256SUMS" "$work/plugin"
  mutate "m['apiVersion'] = 'krew.googlecontainertools.github.com/v1alpha1'"
  refused "krew supports only 'krew.googlecontainertools.github.com/v1alpha2'"
  mutate "m['metadata']['name'] = 'safe rollout'"
  refused "is not a safe plugin name"
  mutate "m['spec']['shortDescription'] = 'two\nlines'"
  refused "spec.shortDescription: has a line break"
  mutate "m['spec']['version'] = '1.2.3'"
  refused "spec.version '1.2.3' is not a v-prefixed semantic version"
  mutate "m['spec']['platforms'][1]['sha256'] = m['spec']['platforms'][1]['sha256'].upper()"
  refused "spec.platforms[1].sha256"
  mutate "del m['spec']['platforms'][2]['bin']"
  refused "spec.platforms[2].bin: missing"
  mutate "m['spec']['platforms'][0]['files'] = []"
  refused "spec.platforms[0].files: empty"
  mutate "m['spec']['platforms'][3]['selector']['matchLabels']['distro'] = 'debian'"
  refused "key 'distro' is not supported"
  mutate "m['spec']['platforms'][3]['selector'] = {}"
  refused "spec.platforms[3].selector: empty"
  # Stricter than krew, which would drop it silently.
  mutate "m['spec']['shortdescription'] = m['spec'].pop('shortDescription')"
  refused "spec: unknown key 'shortdescription'"
}

@test "check refuses what would install the wrong file: platforms, uris, sums" {
  package
  "$repo/deploy/krew/render.sh" v1.2.3 "$work/plugin/kubectl-safe_rollout_SHA256SUMS" "$work/plugin"
  mutate "m['spec']['platforms'].pop()"
  refused "no platform for darwin/arm64"
  mutate "m['spec']['platforms'][1]['selector']['matchLabels']['arch'] = 'amd64'"
  refused "platform ('linux', 'amd64') listed twice"
  mutate "m['spec']['platforms'][1]['uri'] = m['spec']['platforms'][0]['uri']"
  refused "spec.platforms[1].uri"
  mutate "m['spec']['platforms'][0]['uri'] = m['spec']['platforms'][0]['uri'].replace('v1.2.3', 'v1.2.2')"
  refused "/v1.2.3/kubectl-safe_rollout_linux_amd64.tar.gz"
  mutate "m['spec']['platforms'][2]['bin'] = 'sts-stepper'"
  refused "spec.platforms[2].bin 'sts-stepper' is not 'kubectl-safe_rollout'"
  # The sums of another build: every platform's sha256 differs.
  mutate "m['spec']['platforms'][0]['sha256'], m['spec']['platforms'][1]['sha256'] = m['spec']['platforms'][1]['sha256'], m['spec']['platforms'][0]['sha256']"
  refused "is not kubectl-safe_rollout_linux_amd64.tar.gz's sha256"
  # The unmutated manifest passes the same check.
  run "$python" "$repo/deploy/krew/check_manifest.py" "$work/plugin/safe-rollout.yaml" "$work/plugin/kubectl-safe_rollout_SHA256SUMS"
  [ "$status" -eq 0 ]
}
