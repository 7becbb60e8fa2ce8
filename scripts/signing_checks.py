"""Checks deploy/validate.sh runs on the signing manifests (deploy/signing/, or what
deploy/signing/render.sh rendered): Kyverno's ClusterPolicy and Sigstore policy-controller's
ClusterImagePolicy against their real CRD schemas (fixtures/crds/, see its README), strictly (a field the
schema does not name is an error, as `kubectl apply`'s default strict field validation makes it), and
Kubewarden's verification config (verification-config.yml, which is no API object) against its format
(docs.kubewarden.io/reference/verification-config; `runner verify --verification-config-path` parses it
for real in scripts/registry-test.sh)."""
import copy
import os

import jsonschema
import yaml

# (group/version, kind) -> the CRD file under fixtures/crds/ holding its schema.
CRD_FILES = {
    ("kyverno.io/v1", "ClusterPolicy"): "kyverno.io_clusterpolicies.yaml",
    ("policy.sigstore.dev/v1beta1", "ClusterImagePolicy"): "policy.sigstore.dev_clusterimagepolicies.yaml",
    ("policy.sigstore.dev/v1alpha1", "ClusterImagePolicy"): "policy.sigstore.dev_clusterimagepolicies.yaml",
}


def strict(schema):
    """The schema with additionalProperties: false wherever it lists properties and allows no others."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if ("properties" in node and "additionalProperties" not in node
                    and not node.get("x-kubernetes-preserve-unknown-fields")):
                # metadata is the API server's ObjectMeta, which CRD schemas leave open.
                node["additionalProperties"] = False
            for key, value in node.items():
                if key != "metadata":
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    # Every object has these, whether or not the CRD's schema lists them.
    for field, form in (("apiVersion", {"type": "string"}), ("kind", {"type": "string"}), ("metadata", {"type": "object"})):
        schema.setdefault("properties", {}).setdefault(field, form)
    return schema


class SigningSchemas:
    """Strict CRD schemas by (group/version, kind), from the files `files` names under `crd_dir` (default:
    the signing manifests' CRD_FILES; scripts/gitops_checks.py passes Argo CD's and Flux's)."""

    def __init__(self, crd_dir, files=None):
        self.crd_dir = crd_dir
        self.files = CRD_FILES if files is None else files
        self.cache = {}

    def handles(self, api, kind):
        return (api, kind) in self.files

    def schema(self, api, kind):
        path = os.path.join(self.crd_dir, self.files[(api, kind)])
        if path not in self.cache:
            schemas = {}
            with open(path) as f:
                for doc in yaml.safe_load_all(f):
                    spec = (doc or {}).get("spec") or {}
                    for v in spec.get("versions", []):
                        s = (v.get("schema") or {}).get("openAPIV3Schema")
                        if s:
                            schemas[(f"{spec['group']}/{v['name']}", spec["names"]["kind"])] = strict(s)
            self.cache[path] = schemas
        return self.cache[path].get((api, kind)), path

    def problems(self, doc):
        schema, path = self.schema(doc["apiVersion"], doc["kind"])
        if schema is None:
            return [f"no schema for {doc['apiVersion']} {doc['kind']} in {path}"], path
        validator = jsonschema.Draft7Validator(schema)
        return [f"{e.message} at {'/'.join(map(str, e.absolute_path)) or '(top level)'}"
                for e in validator.iter_errors(doc)], path


def is_verification_config(doc):
    return isinstance(doc, dict) and "kind" not in doc and ("allOf" in doc or "anyOf" in doc)


REQUIREMENT_FIELDS = {
    "pubKey": ({"key"}, {"owner", "annotations"}),
    "githubAction": ({"owner"}, {"repo", "annotations"}),
    "genericIssuer": ({"issuer", "subject"}, {"annotations"}),
}


def verification_config_problems(doc):
    """Problems of a Kubewarden verification config (apiVersion v1, allOf, anyOf)."""
    problems = []
    if doc.get("apiVersion") != "v1":
        problems.append(f"apiVersion must be v1, not {doc.get('apiVersion')!r}")
    unknown = set(doc) - {"apiVersion", "allOf", "anyOf"}
    if unknown:
        problems.append(f"unknown keys {sorted(unknown)} (expected apiVersion, allOf, anyOf)")
    requirements = [(f"allOf[{i}]", r) for i, r in enumerate(doc.get("allOf") or [])]
    any_of = doc.get("anyOf")
    if any_of is not None:
        signatures = any_of.get("signatures") or []
        requirements += [(f"anyOf.signatures[{i}]", r) for i, r in enumerate(signatures)]
        minimum = any_of.get("minimumMatches", 1)
        if not isinstance(minimum, int) or not 1 <= minimum <= len(signatures):
            problems.append(f"anyOf.minimumMatches must be 1 to {len(signatures)}, not {minimum!r}")
    if not requirements:
        problems.append("no requirement in allOf or anyOf.signatures")
    for where, r in requirements:
        fields = REQUIREMENT_FIELDS.get((r or {}).get("kind"))
        if fields is None:
            problems.append(f"{where}.kind must be one of {sorted(REQUIREMENT_FIELDS)}")
            continue
        required, optional = fields
        present = set(r) - {"kind"}
        if required - present or present - required - optional:
            problems.append(f"{where} ({r['kind']}): missing {sorted(required - present)}, "
                            f"unknown {sorted(present - required - optional)}")
        if r["kind"] == "pubKey" and "-----BEGIN PUBLIC KEY-----" not in str(r.get("key", "")):
            problems.append(f"{where}.key is not a PEM public key")
        if r["kind"] == "genericIssuer" and set(r.get("subject") or {}) not in ({"equal"}, {"urlPrefix"}):
            problems.append(f"{where}.subject must have exactly one of equal, urlPrefix")
    return problems
