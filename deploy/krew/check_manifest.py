"""Checks a rendered krew plugin manifest (deploy/krew/render.sh's output) before it is published.

    python deploy/krew/check_manifest.py MANIFEST [SHA256SUMS]

Two sets of rules. What krew itself refuses when it reads a manifest (krew's index/validation package,
restated here: krew publishes no JSON schema): apiVersion krew.googlecontainertools.github.com/v1alpha2,
kind Plugin, a safe name equal to the file's name, a one-line shortDescription, a v-prefixed semantic
version, at least one platform, each with a uri, a sha256 of 64 lowercase hex digits, a bin, `files` absent
or non-empty with `from` and `to` set, and a selector on `os` and `arch` only. Stricter than krew: no key
krew does not know (a misspelled `shortdescription` would be dropped silently by krew).
And this project's: exactly linux and darwin on amd64 and arm64, each once; each uri the release's
kubectl-safe_rollout_<os>_<arch>.tar.gz under .../<version>/ over https; bin kubectl-safe_rollout, copied by
`files`; and, given SHA256SUMS, each sha256 the one the sums file holds for that tarball.
Prints one line per problem and exits 1 when there is any, 0 otherwise; 2 on bad arguments.
"""

import os
import re
import sys

import yaml

API_VERSION = "krew.googlecontainertools.github.com/v1alpha2"
SAFE_NAME = re.compile(r"^[\w-]+$")
WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL"} | {f"{p}{n}" for p in ("COM", "LPT") for n in range(1, 10)}
SHA256 = re.compile(r"^[a-f0-9]{64}$")
SEMVER = re.compile(
    r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
)
# The fields of krew's types (pkg/index): Plugin, PluginSpec, Platform, FileOperation.
TOP_KEYS = {"apiVersion", "kind", "metadata", "spec"}
SPEC_KEYS = {"version", "shortDescription", "description", "caveats", "homepage", "platforms"}
PLATFORM_KEYS = {"uri", "sha256", "selector", "files", "license", "bin"}
FILE_KEYS = {"from", "to"}
SELECTOR_KEYS = {"matchLabels", "matchExpressions"}

PLUGIN = "safe-rollout"
BIN = "kubectl-safe_rollout"
PLATFORMS = {(os_, arch) for os_ in ("linux", "darwin") for arch in ("amd64", "arm64")}


def tarball(os_, arch):
    return f"{BIN}_{os_}_{arch}.tar.gz"


def read_sums(path):
    """FILE name (without directories) -> sha256, from sha256sum's lines."""
    sums = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                sums[os.path.basename(parts[1].lstrip("*"))] = parts[0]
    return sums


def unknown(where, obj, known):
    return [f"{where}: unknown key {k!r} (krew knows {', '.join(sorted(known))})" for k in obj if k not in known]


def check_selector(where, sel):
    if not isinstance(sel, dict):
        return [f"{where}.selector: missing (krew refuses a nil selector)"]
    problems = unknown(f"{where}.selector", sel, SELECTOR_KEYS)
    labels, exprs = sel.get("matchLabels"), sel.get("matchExpressions")
    if not labels and not exprs:
        problems.append(f"{where}.selector: empty (krew refuses an empty selector)")
    keys = list(labels or {}) + [e.get("key") for e in exprs or [] if isinstance(e, dict)]
    problems += [f"{where}.selector: key {k!r} is not supported (only os and arch)" for k in keys if k not in ("os", "arch")]
    return problems


def check_krew(doc, file_name):
    """What krew's validation refuses."""
    problems = unknown("manifest", doc, TOP_KEYS)
    if doc.get("apiVersion") != API_VERSION:
        problems.append(f"apiVersion is {doc.get('apiVersion')!r}, krew supports only {API_VERSION!r}")
    if doc.get("kind") != "Plugin":
        problems.append(f"kind is {doc.get('kind')!r}, krew supports only 'Plugin'")
    name = (doc.get("metadata") or {}).get("name", "")
    if not SAFE_NAME.match(name or "") or name.upper() in WINDOWS_RESERVED:
        problems.append(f"metadata.name {name!r} is not a safe plugin name (must match {SAFE_NAME.pattern})")
    stem = os.path.splitext(file_name)[0]
    if name != stem:
        problems.append(f"metadata.name {name!r} differs from the file's name {stem!r} (krew reads plugins/NAME.yaml)")
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return problems + ["spec: missing"]
    problems += unknown("spec", spec, SPEC_KEYS)
    short = spec.get("shortDescription") or ""
    if not short:
        problems.append("spec.shortDescription: missing")
    elif "\n" in short or "\r" in short:
        problems.append("spec.shortDescription: has a line break")
    version = str(spec.get("version") or "")
    if not SEMVER.match(version):
        problems.append(f"spec.version {version!r} is not a v-prefixed semantic version")
    platforms = spec.get("platforms") or []
    if not platforms:
        problems.append("spec.platforms: none")
    for i, p in enumerate(platforms):
        where = f"spec.platforms[{i}]"
        if not isinstance(p, dict):
            problems.append(f"{where}: not a mapping")
            continue
        problems += unknown(where, p, PLATFORM_KEYS)
        for key in ("uri", "bin"):
            if not p.get(key):
                problems.append(f"{where}.{key}: missing")
        if not SHA256.match(str(p.get("sha256") or "")):
            problems.append(f"{where}.sha256 {p.get('sha256')!r} is not 64 lowercase hex digits")
        files = p.get("files")
        if files is not None:
            if not files:
                problems.append(f"{where}.files: empty (krew wants it absent or non-empty)")
            for j, f in enumerate(files or []):
                problems += unknown(f"{where}.files[{j}]", f, FILE_KEYS)
                problems += [f"{where}.files[{j}].{k}: missing" for k in ("from", "to") if not f.get(k)]
        problems += check_selector(where, p.get("selector"))
    return problems


def check_project(doc, sums):
    """This project's platforms, assets and sums."""
    problems = []
    spec = doc.get("spec") or {}
    version = str(spec.get("version") or "")
    if not str(spec.get("homepage") or "").startswith("https://"):
        problems.append(f"spec.homepage {spec.get('homepage')!r} is not an https:// URL")
    for key in ("description", "caveats"):
        if not spec.get(key):
            problems.append(f"spec.{key}: missing")
    seen = []
    for i, p in enumerate(spec.get("platforms") or []):
        where = f"spec.platforms[{i}]"
        labels = (p.get("selector") or {}).get("matchLabels") or {}
        platform = (labels.get("os"), labels.get("arch"))
        if platform not in PLATFORMS:
            problems.append(f"{where}: platform {platform} is not one of {sorted(PLATFORMS)}")
            continue
        if platform in seen:
            problems.append(f"{where}: platform {platform} listed twice")
        seen.append(platform)
        want = tarball(*platform)
        uri = str(p.get("uri") or "")
        if not uri.startswith("https://") or not uri.endswith(f"/{version}/{want}"):
            problems.append(f"{where}.uri {uri!r} is not https://…/{version}/{want}")
        if p.get("bin") != BIN:
            problems.append(f"{where}.bin {p.get('bin')!r} is not {BIN!r}")
        if BIN not in [f.get("from") for f in p.get("files") or []]:
            problems.append(f"{where}.files: does not copy {BIN}")
        if sums is not None:
            if want not in sums:
                problems.append(f"{where}: the sums file has no line for {want}")
            elif p.get("sha256") != sums[want]:
                problems.append(f"{where}.sha256 {p.get('sha256')} is not {want}'s sha256 {sums[want]}")
    for missing in sorted(PLATFORMS - set(seen)):
        problems.append(f"spec.platforms: no platform for {missing[0]}/{missing[1]}")
    return problems


def template_problems(doc):
    """deploy/krew/safe-rollout.yaml itself (deploy/validate.sh): every rule, its placeholders filled as render.sh
    fills them, with stand-in values."""
    text = yaml.safe_dump(doc)
    for key, value in (("@VERSION@", "v0.0.0"), ("@DOWNLOAD@", "https://example.invalid/v0.0.0")):
        text = text.replace(key, value)
    text = re.sub(r"@SHA256_[a-z]+_[a-z0-9]+@", "0" * 64, text)
    left = re.findall(r"@[A-Za-z0-9_]+@", text)
    filled = yaml.safe_load(text)
    return [f"placeholder {p} is not one render.sh fills" for p in left] + check_krew(filled, "safe-rollout.yaml") + check_project(filled, None)


def main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        print("usage: check_manifest.py MANIFEST [SHA256SUMS]", file=sys.stderr)
        return 0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2
    path = argv[1]
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    if len(docs) != 1 or not isinstance(docs[0], dict):
        print(f"{path}: not one YAML mapping ({len(docs)} documents)")
        return 1
    sums = read_sums(argv[2]) if len(argv) == 3 else None
    problems = check_krew(docs[0], os.path.basename(path)) + check_project(docs[0], sums)
    for p in problems:
        print(f"{path}: {p}")
    if problems:
        return 1
    print(f"{path}: a valid krew manifest of {PLUGIN}, {len(PLATFORMS)} platforms" + (", sums match" if sums else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
