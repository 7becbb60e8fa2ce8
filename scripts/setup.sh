#!/usr/bin/env bash
# Everything `make test` (and, a part of it, `make demo`) needs beyond Rust itself, in one list: checks it,
# and installs what is missing.
#
#   scripts/setup.sh        everything (run first by `make test` and by .ci/run, before anything is compiled)
#   scripts/setup.sh demo   only what `make demo` needs (run first by `make demo`)
#   scripts/setup.sh release  only the cross builds' tools (scripts/cross-build.sh: make stepper-cross,
#                           plugin-binaries, image-multiarch), never needed by make test
#
# A tool is present when its command is on PATH (so any distribution's package, or a local build, counts), or,
# for a `python3:MODULE` row, when python3 imports that module, or, for a row naming a path (a `/` in it),
# when that file is executable (PostgreSQL's server programs are not on PATH: Debian keeps them in
# /usr/lib/postgresql/15/bin; `PG_BIN_DIR=DIR` names another directory, as for the tests that run them).
# Missing system packages are installed with apt-get (one `apt-get update`, then one `apt-get install`)
# when this runs as root or `sudo -n` works (sudo without a password); missing rustup targets and
# components with `rustup`. Otherwise it stops at once, before anything is compiled, naming every missing
# tool and the exact commands that install them; without apt-get (not Debian/Ubuntu) it names the
# packages to install with the machine's own package manager.
# Exit status: 0 when everything is present (installing nothing when it already was), 1 otherwise.
set -euo pipefail

# The list. Each row: `demo` when make demo needs it too, `test` when only make test does (make test needs
# both), `release` for the release's cross builds alone (not make test's), the command looked
# up on PATH (or `python3:MODULE`, a module python3 must import; or a path), the Debian/Ubuntu package
# providing it (or packages, comma-separated, installed together), and what needs it.
PG_BIN_DIR=${PG_BIN_DIR:-/usr/lib/postgresql/15/bin}
TOOLS=(
    "demo jq              jq               scripts/demo-policy.sh, e2e.bats, scripts/registry-test.sh"
    "test bats            bats             e2e.bats, scripts/setup.bats"
    "test curl            curl             scripts/registry-test.sh"
    "test docker-registry docker-registry  scripts/registry-test.sh: a real OCI registry on 127.0.0.1"
    "test buildah         buildah          make image: the stepper image"
    "test skopeo          skopeo           scripts/registry-test.sh: reads the pushed image back"
    "test musl-gcc        musl-tools       make stepper-static: ring's C code for x86_64-unknown-linux-musl"
    "test prometheus      prometheus       stepper/tests/prometheus_real_*.rs: the PrometheusCheck gate"
    "test promtool        prometheus       checking Prometheus rule files"
    "test python3         python3          deploy/validate.sh, stepper/tests/decisions/example_webhook.rs"
    "test kubectl         kubernetes-client stepper/tests/decisions/example_approve_pods.rs: docs/examples/approve-pods.sh"
    "test python3:venv    python3-venv     deploy/validate.sh, scripts/monitoring-test.sh: a venv for their PyPI packages"
    "release python3:venv python3-venv     scripts/cross-build.sh: a venv for PyPI's ziglang (zig, the cross linker)"
    # The real systems the built-in answerers are tested against (stepper/tests/systems/, its harness in
    # stepper/tests/support/systems/): a Patroni cluster with etcd as its store, Redis with Sentinel, etcd.
    # make demo rolls the Patroni cluster out with the built-in answerer: its rows are `demo`.
    # patroni with python3-etcd: its etcd3: store imports python-etcd (patroni/dcs/etcd3.py@v3.0.2 l.3), one of
    # the package's alternative Depends (python3-etcd | python3-consul | …), named so apt never picks another.
    "demo patroni         patroni,python3-etcd stepper/tests/systems/: a 3-member Patroni cluster (PostgreSQL's HA manager)"
    "demo $PG_BIN_DIR/pg_ctl postgresql-15 stepper/tests/systems/: the PostgreSQL 15 server Patroni runs"
    "demo setpriv         util-linux       stepper/tests/systems/: PostgreSQL refuses root: members run as user postgres"
    "demo etcd            etcd-server      stepper/tests/systems/: Patroni's store and a 3-member etcd cluster"
    "test etcdctl         etcd-client      stepper/tests/systems/: a second witness of etcd's leader"
    "test redis-server    redis-server     stepper/tests/systems/: a Redis master and two replicas"
    "test redis-sentinel  redis-sentinel   stepper/tests/systems/: three Sentinels watching them"
    "test redis-cli       redis-tools      stepper/tests/systems/: a second witness of Sentinel's master"
)
# Tools no Debian package provides, installed with `cargo install --locked --debug CRATE --version V` (into
# cargo's bin directory, ~/.cargo/bin, no root needed; --debug: unoptimized, built in about half the time of a
# release build, and these tools run a few times per test run, where speed does not matter). Each row: the scope, the command, CRATE@VERSION, what needs it.
CARGO_TOOLS=(
    "test cargo-cyclonedx  cargo-cyclonedx@0.5.9  make sbom: the CycloneDX SBOMs of the policy and the stepper image"
    "release cargo-zigbuild cargo-zigbuild@0.24.1 scripts/cross-build.sh: cargo build with zig as C compiler and linker"
)
# rustup targets (policy.wasm; the static stepper in the image) and components (make fmt, make lint).
RUST_TARGETS=("demo wasm32-wasip1" "test x86_64-unknown-linux-musl"
    "release x86_64-unknown-linux-musl" "release aarch64-unknown-linux-musl" "release x86_64-apple-darwin" "release aarch64-apple-darwin")
RUST_COMPONENTS=("test clippy" "test rustfmt")

scope=${1:-test}
case "$scope" in
    demo | test | release) ;;
    -h | --help) echo "usage: scripts/setup.sh [demo|test|release]   (test, the default: what make test needs)"; exit 0 ;;
    *) echo "usage: scripts/setup.sh [demo|test|release]   (test, the default: what make test needs; '$scope' is none of them)" >&2; exit 2 ;;
esac
# Keeps the rows of the scope, without the scope word: make test needs the demo and test rows, make demo
# its own, the release's cross builds theirs.
in_scope() { # $1: array name
    local -n rows=$1
    local kept=() row word
    for row in "${rows[@]}"; do
        word=${row%% *}
        case "$scope:$word" in
            demo:demo | test:demo | test:test | release:release) kept+=("${row#* }") ;;
        esac
    done
    rows=("${kept[@]}")
}
in_scope TOOLS
in_scope CARGO_TOOLS
in_scope RUST_TARGETS
in_scope RUST_COMPONENTS

say() { echo "setup: $*"; }

# True when a row's tool is there: a command on PATH, for `python3:MODULE` a module python3 imports, for a
# path an executable file.
present() {
    case $1 in
        python3:*) command -v python3 >/dev/null 2>&1 && python3 -c "import ${1#python3:}" >/dev/null 2>&1 ;;
        */*) [ -x "$1" ] ;;
        *) command -v "$1" >/dev/null 2>&1 ;;
    esac
}

# The missing tools ("tool (package: why)") and their packages, each package once.
missing_tools=()
missing_packages=()
check_tools() {
    missing_tools=()
    missing_packages=()
    local row tool package why p seen one
    for row in "${TOOLS[@]}"; do
        read -r tool package why <<<"$row"
        present "$tool" && continue
        missing_tools+=("$tool (package ${package//,/ and }: $why)")
        for one in ${package//,/ }; do
            seen=
            for p in "${missing_packages[@]}"; do [ "$p" = "$one" ] && seen=1; done
            [ -n "$seen" ] || missing_packages+=("$one")
        done
    done
}

# The cargo-installed tools missing ("tool (crate C@V: why)") and their crates (C@V).
missing_cargo_tools=()
missing_crates=()
check_cargo_tools() {
    missing_cargo_tools=()
    missing_crates=()
    local row tool crate why
    for row in "${CARGO_TOOLS[@]}"; do
        read -r tool crate why <<<"$row"
        present "$tool" && continue
        missing_cargo_tools+=("$tool (crate $crate: $why)")
        missing_crates+=("$crate")
    done
}

cargo_commands() {
    local crate
    for crate in "${missing_crates[@]}"; do
        echo "  cargo install --locked --debug ${crate%@*} --version ${crate#*@}"
    done
}

# The rustup targets and components not installed for the active toolchain.
missing_targets=()
missing_components=()
check_rust() {
    missing_targets=()
    missing_components=()
    command -v rustup >/dev/null 2>&1 || return 0
    local installed want line found
    installed=$(rustup target list --installed)
    for want in "${RUST_TARGETS[@]}"; do
        found=
        while read -r line; do [ "$line" = "$want" ] && found=1; done <<<"$installed"
        [ -n "$found" ] || missing_targets+=("$want")
    done
    installed=$(rustup component list --installed)
    for want in "${RUST_COMPONENTS[@]}"; do
        found=
        # Installed components are listed with the host triple: clippy-x86_64-unknown-linux-gnu.
        while read -r line; do [[ "$line" == "$want" || "$line" == "$want"-* ]] && found=1; done <<<"$installed"
        [ -n "$found" ] || missing_components+=("$want")
    done
}

rust_commands() {
    [ ${#missing_targets[@]} -eq 0 ] || echo "  rustup target add ${missing_targets[*]}"
    [ ${#missing_components[@]} -eq 0 ] || echo "  rustup component add ${missing_components[*]}"
    cargo_commands
}

list_missing() {
    local t
    say "missing:"
    for t in "${missing_tools[@]}" "${missing_cargo_tools[@]}"; do echo "  $t"; done
    [ ${#missing_targets[@]} -eq 0 ] || echo "  rustup targets: ${missing_targets[*]}"
    [ ${#missing_components[@]} -eq 0 ] || echo "  rustup components: ${missing_components[*]}"
}

check_tools
check_cargo_tools
check_rust
if ! command -v rustup >/dev/null 2>&1; then
    say "rustup is not on PATH: make needs it to add the ${RUST_TARGETS[*]} targets and the ${RUST_COMPONENTS[*]} components."
    say "Install Rust with rustup (https://rustup.rs), then run make $scope again."
    exit 1
fi
if [ ${#missing_tools[@]} -eq 0 ] && [ ${#missing_cargo_tools[@]} -eq 0 ] && [ ${#missing_targets[@]} -eq 0 ] \
    && [ ${#missing_components[@]} -eq 0 ]; then
    say "all ${#TOOLS[@]} tools, ${#RUST_TARGETS[@]} rustup targets and ${#RUST_COMPONENTS[@]} components present (and ${#CARGO_TOOLS[@]} cargo-installed)"
    exit 0
fi
list_missing

if [ ${#missing_packages[@]} -gt 0 ]; then
    if ! command -v apt-get >/dev/null 2>&1; then
        say "no apt-get here (not Debian/Ubuntu): install these with the machine's package manager, then run make $scope again."
        say "Debian/Ubuntu package names: ${missing_packages[*]}"
        [ -z "$(rust_commands)" ] || { say "and the Rust parts:"; rust_commands; }
        exit 1
    fi
    as_root=()
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            as_root=(sudo -n --preserve-env=DEBIAN_FRONTEND)
        else
            say "cannot install them: not root, and sudo is absent or asks for a password. Install them with:"
            echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing_packages[*]}"
            rust_commands
            say "then run make $scope again."
            exit 1
        fi
    fi
    say "installing ${missing_packages[*]} with ${as_root[*]:+sudo }apt-get"
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing_packages[@]}" >/dev/null
fi
if [ ${#missing_targets[@]} -gt 0 ]; then
    say "adding rustup targets ${missing_targets[*]}"
    rustup target add "${missing_targets[@]}"
fi
if [ ${#missing_components[@]} -gt 0 ]; then
    say "adding rustup components ${missing_components[*]}"
    rustup component add "${missing_components[@]}"
fi

if [ ${#missing_crates[@]} -gt 0 ]; then
    for crate in "${missing_crates[@]}"; do
        say "installing ${crate%@*} ${crate#*@} with cargo install --locked --debug (it is compiled: 2 minutes)"
        cargo install --locked --debug --quiet "${crate%@*}" --version "${crate#*@}"
    done
fi

check_tools
check_cargo_tools
check_rust
if [ ${#missing_tools[@]} -gt 0 ] || [ ${#missing_cargo_tools[@]} -gt 0 ] || [ ${#missing_targets[@]} -gt 0 ] \
    || [ ${#missing_components[@]} -gt 0 ]; then
    say "still missing after installing:"
    list_missing
    exit 1
fi
say "installed; all ${#TOOLS[@]} tools, ${#RUST_TARGETS[@]} rustup targets and ${#RUST_COMPONENTS[@]} components present (and ${#CARGO_TOOLS[@]} cargo-installed)"
