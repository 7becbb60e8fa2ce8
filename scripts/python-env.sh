#!/usr/bin/env bash
# Prints the path of a Python interpreter that has the PyPI packages named as arguments: a virtual
# environment under the user's cache directory, made once and reused, with the missing ones installed.
# A venv, because Debian's and Ubuntu's own python3 refuse `pip install` outside one (PEP 668,
# "externally-managed-environment"); it needs the `venv` module (Debian: python3-venv, which
# scripts/setup.sh installs).
#
#   python="$(scripts/python-env.sh kubernetes-validate pyyaml)"
#   python="$(scripts/python-env.sh ziglang==0.17.1)"     (NAME==VERSION: that version, installed over another)
#
# STS_PYTHON_VENV moves the venv; PYTHON picks the interpreter it is made from (default python3).
# Exit status 1, with the reason on stderr, when the venv cannot be made or a package not installed.
set -euo pipefail
venv=${STS_PYTHON_VENV:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/sts-safe-rollout/python-venv}
base=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
    echo "python-env.sh: making a Python venv in $venv" >&2
    if ! "$base" -m venv "$venv" >&2; then
        rm -rf "$venv"
        echo "python-env.sh: '$base -m venv' failed; on Debian/Ubuntu: apt-get install python3-venv" >&2
        exit 1
    fi
fi
missing=$("$venv/bin/python" - "$@" <<'PY'
import importlib.metadata
import sys

for spec in sys.argv[1:]:
    name, _, version = spec.partition("==")
    try:
        installed = importlib.metadata.distribution(name).version
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed is None or (version and installed != version):
        print(spec)
PY
)
if [ -n "$missing" ]; then
    # shellcheck disable=SC2086 # one package name per line
    echo "python-env.sh: installing" $missing "from PyPI into $venv" >&2
    # shellcheck disable=SC2086
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $missing >&2
fi
echo "$venv/bin/python"
