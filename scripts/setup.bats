#!/usr/bin/env bats
# scripts/setup.sh on fake machines: PATH holds only stubs (every tool of its list, fake apt-get, sudo,
# id, rustup, cargo) that record their calls, so each test chooses what is installed, whether apt-get
# exists, and whether the user is root or may sudo without a password. Nothing is installed for real.
#
#   bats scripts/setup.bats     (make setup-tests; part of make test)

setup() {
  repo=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  sandbox=$(mktemp -d)
  bin=$sandbox/bin
  calls=$sandbox/calls
  mkdir "$bin"
  : >"$calls"
  # Every tool of the list, present.
  for tool in bats jq curl docker-registry buildah skopeo musl-gcc prometheus promtool python3 kubectl cargo-cyclonedx \
    patroni setpriv etcd etcdctl redis-server redis-sentinel redis-cli; do
    stub "$tool"
  done
  # PostgreSQL's server programs, off PATH as Debian installs them (setup.sh looks in PG_BIN_DIR).
  export PG_BIN_DIR=$sandbox/pg
  mkdir "$PG_BIN_DIR"
  printf '#!/bin/bash\n' >"$PG_BIN_DIR/pg_ctl"
  chmod +x "$PG_BIN_DIR/pg_ctl"
  # rustup lists what $sandbox/targets and $sandbox/components hold, and records `add`.
  printf '%s\n' wasm32-wasip1 x86_64-unknown-linux-gnu x86_64-unknown-linux-musl >"$sandbox/targets"
  printf '%s\n' cargo-x86_64-unknown-linux-gnu clippy-x86_64-unknown-linux-gnu rustfmt-x86_64-unknown-linux-gnu \
    >"$sandbox/components"
  cat >"$bin/rustup" <<EOF
#!/bin/bash
echo "rustup \$*" >>"$calls"
case "\$1 \$2 \$3" in
  "target list --installed") while read -r l; do echo "\$l"; done <"$sandbox/targets" ;;
  "component list --installed") while read -r l; do echo "\$l"; done <"$sandbox/components" ;;
esac
EOF
  chmod +x "$bin/rustup"
  # A user who is not root, by default.
  printf '#!/bin/bash\necho 1000\n' >"$bin/id"
  chmod +x "$bin/id"
  stub cargo
}

teardown() {
  rm -rf "$sandbox"
}

# stub NAME: an executable on the fake PATH that records "NAME ARGS" and succeeds.
stub() {
  printf '#!/bin/bash\necho "%s $*" >>"%s"\n' "$1" "$calls" >"$bin/$1"
  chmod +x "$bin/$1"
}

# fake_apt_get: apt-get that records its calls; `install` puts a stub of each package's tool on PATH.
fake_apt_get() {
  cat >"$bin/apt-get" <<EOF
#!/bin/bash
echo "apt-get \$* (DEBIAN_FRONTEND=\${DEBIAN_FRONTEND:-})" >>"$calls"
if [ "\$1" = install ]; then
  for arg in "\$@"; do
    case "\$arg" in
      prometheus) for t in prometheus promtool; do printf '#!/bin/bash\n' >"$bin/\$t"; /bin/chmod +x "$bin/\$t"; done ;;
      musl-tools) printf '#!/bin/bash\n' >"$bin/musl-gcc"; /bin/chmod +x "$bin/musl-gcc" ;;
      postgresql-15) printf '#!/bin/bash\n' >"$PG_BIN_DIR/pg_ctl"; /bin/chmod +x "$PG_BIN_DIR/pg_ctl" ;;
      etcd-server) printf '#!/bin/bash\n' >"$bin/etcd"; /bin/chmod +x "$bin/etcd" ;;
      etcd-client) printf '#!/bin/bash\n' >"$bin/etcdctl"; /bin/chmod +x "$bin/etcdctl" ;;
      redis-tools) printf '#!/bin/bash\n' >"$bin/redis-cli"; /bin/chmod +x "$bin/redis-cli" ;;
      util-linux) printf '#!/bin/bash\n' >"$bin/setpriv"; /bin/chmod +x "$bin/setpriv" ;;
      python3-etcd) ;;
      -*|install) ;;
      *) printf '#!/bin/bash\n' >"$bin/\$arg"; /bin/chmod +x "$bin/\$arg" ;;
    esac
  done
fi
EOF
  chmod +x "$bin/apt-get"
}

# run_setup [SCOPE]: scripts/setup.sh with only the fake PATH, bounded to 20 s.
run_setup() {
  run timeout 20 env PATH="$bin" /bin/bash "$repo/scripts/setup.sh" "$@"
  echo "status = $status"
  echo "output = $output"
  echo "calls:"
  cat "$calls"
}

@test "everything present: passes and installs nothing" {
  fake_apt_get
  run_setup
  [ "$status" -eq 0 ]
  [[ "$output" == *"all 20 tools, 2 rustup targets and 2 components present"* ]]
  ! grep -q '^apt-get' "$calls"
  ! grep -q '^rustup .*add' "$calls"
}

@test "prometheus missing, apt-get present, no root, no sudo: fails naming it and the command" {
  fake_apt_get
  rm "$bin/prometheus" "$bin/promtool"
  run_setup
  [ "$status" -eq 1 ]
  [[ "$output" == *"prometheus (package prometheus: "* ]]
  [[ "$output" == *"promtool (package prometheus: "* ]]
  [[ "$output" == *"sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus"* ]]
  ! grep -q '^apt-get' "$calls"
  ! grep -q '^cargo' "$calls"
}

@test "sudo asking for a password counts as no sudo" {
  fake_apt_get
  printf '#!/bin/bash\necho "sudo $*" >>"%s"\necho "sudo: a password is required" >&2\nexit 1\n' "$calls" >"$bin/sudo"
  chmod +x "$bin/sudo"
  rm "$bin/prometheus" "$bin/jq"
  run_setup
  [ "$status" -eq 1 ]
  [[ "$output" == *"--no-install-recommends jq prometheus"* ]]
  [ "$(grep -c '^sudo' "$calls")" -eq 1 ] # only the probe: sudo -n true
  grep -qx 'sudo -n true' "$calls"
  ! grep -q '^apt-get' "$calls"
}

@test "no apt-get (not Debian/Ubuntu): fails naming the tools and the package names" {
  rm "$bin/prometheus" "$bin/musl-gcc"
  run_setup
  [ "$status" -eq 1 ]
  [[ "$output" == *"prometheus (package prometheus: "* ]]
  [[ "$output" == *"no apt-get here"* ]]
  [[ "$output" == *"Debian/Ubuntu package names: musl-tools prometheus"* ]]
  ! grep -q '^cargo' "$calls"
}

@test "missing rust targets are named with the rustup command when nothing can be installed" {
  rm "$bin/prometheus"
  printf '%s\n' x86_64-unknown-linux-gnu >"$sandbox/targets"
  run_setup
  [ "$status" -eq 1 ]
  [[ "$output" == *"rustup target add wasm32-wasip1 x86_64-unknown-linux-musl"* ]]
  ! grep -q '^rustup target add' "$calls"
}

@test "as root: one apt-get update, one install of every missing package, then it passes" {
  fake_apt_get
  printf '#!/bin/bash\necho 0\n' >"$bin/id"
  rm "$bin/prometheus" "$bin/promtool" "$bin/jq" "$bin/musl-gcc"
  run_setup
  [ "$status" -eq 0 ]
  [ "$(grep -c '^apt-get update' "$calls")" -eq 1 ]
  [ "$(grep -c '^apt-get install' "$calls")" -eq 1 ]
  grep -q '^apt-get install -y -qq --no-install-recommends jq musl-tools prometheus (DEBIAN_FRONTEND=noninteractive)$' "$calls"
  [[ "$output" == *"installed; all 20 tools"* ]]
}

@test "not root but sudo -n works: installs through sudo" {
  fake_apt_get
  # sudo -n --preserve-env=VAR CMD...: runs CMD (`true` is bash's).
  printf '#!/bin/bash\necho "sudo $*" >>"%s"\nwhile [[ "$1" == -* ]]; do shift; done\n"$@"\n' "$calls" >"$bin/sudo"
  chmod +x "$bin/sudo"
  rm "$bin/skopeo"
  run_setup
  [ "$status" -eq 0 ]
  grep -qx 'sudo -n --preserve-env=DEBIAN_FRONTEND apt-get update -qq' "$calls"
  grep -q '^apt-get install -y -qq --no-install-recommends skopeo (DEBIAN_FRONTEND=noninteractive)$' "$calls"
}

@test "missing rustup targets and components are added with rustup" {
  printf '%s\n' x86_64-unknown-linux-gnu >"$sandbox/targets"
  printf '%s\n' cargo-x86_64-unknown-linux-gnu >"$sandbox/components"
  # rustup add records the call and installs.
  cat >>"$bin/rustup" <<EOF
[ "\$2" = add ] && [ "\$1" = target ] && printf '%s\n' "\${@:3}" >>"$sandbox/targets"
[ "\$2" = add ] && [ "\$1" = component ] && printf '%s\n' "\${@:3}" >>"$sandbox/components"
exit 0
EOF
  run_setup
  [ "$status" -eq 0 ]
  grep -qx 'rustup target add wasm32-wasip1 x86_64-unknown-linux-musl' "$calls"
  grep -qx 'rustup component add clippy rustfmt' "$calls"
}

@test "a cargo-installed tool missing: cargo install --locked at its pinned version, no apt-get" {
  fake_apt_get
  rm "$bin/cargo-cyclonedx"
  # cargo install records the call and installs the command.
  printf '#!/bin/bash\necho "cargo $*" >>"%s"\n[ "$1" = install ] && printf "#!/bin/bash\\n" >"%s" && /bin/chmod +x "%s"\nexit 0\n' \
    "$calls" "$bin/cargo-cyclonedx" "$bin/cargo-cyclonedx" >"$bin/cargo"
  chmod +x "$bin/cargo"
  run_setup
  [ "$status" -eq 0 ]
  [[ "$output" == *"cargo-cyclonedx (crate cargo-cyclonedx@0.5.9: "* ]]
  grep -qx 'cargo install --locked --debug --quiet cargo-cyclonedx --version 0.5.9' "$calls"
  ! grep -q '^apt-get' "$calls"
  [[ "$output" == *"installed; all 20 tools"* ]]
}

@test "a cargo-installed tool that cannot be installed fails, naming the cargo command" {
  rm "$bin/cargo-cyclonedx" "$bin/prometheus"
  run_setup
  [ "$status" -eq 1 ]
  [[ "$output" == *"cargo install --locked --debug cargo-cyclonedx --version 0.5.9"* ]]
  ! grep -q '^cargo install' "$calls"
}

@test "demo scope: make demo needs jq, the Patroni cluster's programs and wasm32-wasip1 only" {
  fake_apt_get
  rm "$bin/prometheus" "$bin/skopeo"
  printf '%s\n' wasm32-wasip1 >"$sandbox/targets"
  : >"$sandbox/components"
  run_setup demo
  [ "$status" -eq 0 ]
  [[ "$output" == *"all 5 tools, 1 rustup targets and 0 components present"* ]]
  rm "$bin/jq"
  run_setup demo
  [ "$status" -eq 1 ]
  [[ "$output" == *"jq (package jq: "* ]]
  [[ "$output" != *prometheus* ]]
  [[ "$output" == *"sudo apt-get install -y --no-install-recommends jq"* ]]
  [[ "$output" == *"then run make demo again"* ]]
}

@test "make test stops at setup, naming prometheus, before cargo compiles anything" {
  rm "$bin/prometheus" "$bin/promtool"
  for tool in make sed head; do ln -s "$(command -v "$tool")" "$bin/$tool"; done
  ln -s /bin/bash "$bin/bash"
  run timeout 20 env PATH="$bin" make -C "$repo" test
  echo "output = $output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"prometheus (package prometheus: "* ]]
  ! grep -q '^cargo' "$calls"
  ! grep -q '^rustup target add' "$calls"
}

@test "python3 that cannot import venv: names python3-venv (Debian's python3 alone cannot make a venv)" {
  fake_apt_get
  printf '#!/bin/bash\n[ "$1" = -c ] && exit 1\nexit 0\n' >"$bin/python3"
  chmod +x "$bin/python3"
  run_setup
  [ "$status" -eq 1 ]
  [[ "$output" == *"python3:venv (package python3-venv: "* ]]
  [[ "$output" == *"--no-install-recommends python3-venv"* ]]
}

@test "release scope: the cross builds' tools only (cargo-zigbuild, the four targets), none of make test's" {
  fake_apt_get
  rm "$bin/prometheus" "$bin/skopeo"
  printf '%s\n' x86_64-unknown-linux-gnu x86_64-unknown-linux-musl >"$sandbox/targets"
  : >"$sandbox/components"
  # cargo install records the call and installs the command.
  printf '#!/bin/bash\necho "cargo $*" >>"%s"\n[ "$1" = install ] && printf "#!/bin/bash\\n" >"%s" && /bin/chmod +x "%s"\nexit 0\n' \
    "$calls" "$bin/cargo-zigbuild" "$bin/cargo-zigbuild" >"$bin/cargo"
  chmod +x "$bin/cargo"
  cat >>"$bin/rustup" <<EOS
[ "\$2" = add ] && [ "\$1" = target ] && printf '%s\n' "\${@:3}" >>"$sandbox/targets"
exit 0
EOS
  # make test's scope does not ask for the release's tools.
  run_setup test
  [ "$status" -eq 1 ]
  [[ "$output" == *"prometheus (package prometheus: "* ]]
  [[ "$output" != *zigbuild* ]]
  [[ "$output" != *darwin* ]]
  run_setup release
  [ "$status" -eq 0 ]
  grep -qx 'rustup target add aarch64-unknown-linux-musl x86_64-apple-darwin aarch64-apple-darwin' "$calls"
  grep -qx 'cargo install --locked --debug --quiet cargo-zigbuild --version 0.24.1' "$calls"
  # make test's tools are not this scope's: prometheus and skopeo stay missing, no apt-get.
  [ "$(grep -c '^apt-get' "$calls")" -eq 0 ]
  [[ "$output" == *"installed; all 1 tools, 4 rustup targets and 0 components present (and 1 cargo-installed)"* ]]
}

@test "the real systems missing, as root: patroni with python3-etcd, postgresql-15 into PG_BIN_DIR, etcd, redis" {
  fake_apt_get
  printf '#!/bin/bash\necho 0\n' >"$bin/id"
  rm "$bin/patroni" "$bin/etcd" "$bin/etcdctl" "$bin/redis-server" "$bin/redis-sentinel" "$bin/redis-cli" "$PG_BIN_DIR/pg_ctl"
  # pg_ctl on PATH does not count: the tests run the server programs of PG_BIN_DIR.
  stub pg_ctl
  run_setup
  [ "$status" -eq 0 ]
  [[ "$output" == *"patroni (package patroni and python3-etcd: "* ]]
  [[ "$output" == *"$PG_BIN_DIR/pg_ctl (package postgresql-15: "* ]]
  grep -q '^apt-get install -y -qq --no-install-recommends patroni python3-etcd postgresql-15 etcd-server etcd-client redis-server redis-sentinel redis-tools (DEBIAN_FRONTEND=noninteractive)$' "$calls"
  [ -x "$PG_BIN_DIR/pg_ctl" ]
  [[ "$output" == *"installed; all 20 tools"* ]]
}

@test "PG_BIN_DIR without pg_ctl, no root: names postgresql-15 and the path it looked at" {
  fake_apt_get
  rm "$PG_BIN_DIR/pg_ctl"
  run_setup
  [ "$status" -eq 1 ]
  [[ "$output" == *"$PG_BIN_DIR/pg_ctl (package postgresql-15: "* ]]
  [[ "$output" == *"sudo apt-get install -y --no-install-recommends postgresql-15"* ]]
}
