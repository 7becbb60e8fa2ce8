"""What Argo CD and Flux make of one StatefulSet under a sync recipe's ignore rules: a model of the
normalization, the diff and the sync payload of each tool, run by deploy/gitops.bats on the real objects of
fixtures/rollback/ (their real `managedFields`) and manifests derived from them.

  gitops_diff.py argocd RECIPE LIVE DESIRED   # RECIPE: an argocd-cm ConfigMap or an Application
  gitops_diff.py flux RECIPE LIVE DESIRED     # RECIPE: a Kustomization or a JSON 6902 patch of spec.ignore

prints one JSON object: `rules` (what the recipe says for apps/StatefulSet), `diff` (each difference the tool
shows: Argo CD's OutOfSync, Flux's drift, as a JSON pointer with the live and the desired value) and
`applied` (what a sync sends: Argo CD's target with RespectIgnoreDifferences=true; Flux's apply payload, null
when nothing drifted and Flux applies nothing).

What it runs as the tools do, with their sources:
- Argo CD (argo-cd util/argo/diff/normalize.go, Normalize): first `managedFieldsManagers`
  (util/argo/managedfields/managed_fields.go: the fields a trusted manager owns in the live object's
  managedFields and whose value differs between live and desired are removed from both); then every
  `jsonPointers` entry as its own RFC 6902 `remove` patch and every `jqPathExpressions` entry as
  `del(<expression>)` (util/argo/normalizers/diff_normalizer.go: a patch that fails, a missing key, is
  skipped), on live and desired alike — the jq expressions with the jq binary (jq's path semantics are
  gojq's). The diff is gitops-engine's (pkg/diff/diff.go, ThreeWayDiff; TwoWayDiff when the live object
  has no last-applied-configuration): the desired object applied to the normalized live one as a merge
  patch (lists of named items merged by name, as the strategic merge patch of containers), deleting what
  the last-applied configuration had and the desired one no longer has; each field that changes is a
  difference. RespectIgnoreDifferences (controller/sync.go, normalizeTargetResources): every field the
  normalization removed from the live object goes back into the normalized desired one with its live value.
- Flux (fluxcd/pkg ssa/manager_apply.go): the server-side dry run is the desired object merged into the
  live one; drift compares labels, annotations and everything outside metadata and status, without the
  ignored pointers of each rule whose target matches the dry-run object; the payload strips a drifted
  ignored path another Apply manager owns and otherwise adopts the in-cluster value.

A model, not the tools: no defaulting, no schema beyond lists of named items. It decides what the recipes
decide here — which paths leave the comparison, and whose value a sync sends.
"""
import copy
import json
import re
import subprocess
import sys

import yaml

GROUP, KIND = "apps", "StatefulSet"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
FLUX_MANAGER = "kustomize-controller"


# --- JSON pointers (RFC 6901) -------------------------------------------------------------------------

def tokens(pointer):
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def lookup(obj, pointer):
    """(found, value) at pointer."""
    for t in tokens(pointer):
        if isinstance(obj, dict) and t in obj:
            obj = obj[t]
        elif isinstance(obj, list) and t.isdigit() and int(t) < len(obj):
            obj = obj[int(t)]
        else:
            return False, None
    return True, obj


def remove(obj, pointer):
    """Removes the value at pointer; False (nothing changed) when it is missing, as a failed patch."""
    *parents, last = tokens(pointer)
    found, parent = lookup(obj, "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parents))
    if not found:
        return False
    if isinstance(parent, dict) and last in parent:
        del parent[last]
        return True
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        del parent[int(last)]
        return True
    return False


def put(obj, pointer, value):
    *parents, last = tokens(pointer)
    for t in parents:
        obj = obj[int(t)] if isinstance(obj, list) else obj.setdefault(t, {})
    if isinstance(obj, list):
        obj[int(last)] = value
    else:
        obj[last] = value


def escape(token):
    return str(token).replace("~", "~0").replace("/", "~1")


def leaves(obj, path=""):
    """Every scalar (and empty container) of obj as (pointer, value)."""
    if isinstance(obj, dict) and obj:
        for k, v in obj.items():
            yield from leaves(v, f"{path}/{escape(k)}")
    elif isinstance(obj, list) and obj:
        for i, v in enumerate(obj):
            yield from leaves(v, f"{path}/{i}")
    else:
        yield path, obj


def differences(live, desired):
    """The pointers where two objects differ, with both values (absent: None)."""
    a, b = dict(leaves(live)), dict(leaves(desired))
    return [{"path": p, "live": a.get(p), "desired": b.get(p)}
            for p in sorted(set(a) | set(b)) if a.get(p, KeyError) != b.get(p, KeyError)]


# --- merges -------------------------------------------------------------------------------------------

def named(items):
    return isinstance(items, list) and items and all(isinstance(i, dict) and "name" in i for i in items)


def merge(live, desired):
    """desired applied to live: maps merged, lists of named items merged by name, other values replaced."""
    if isinstance(live, dict) and isinstance(desired, dict):
        out = copy.deepcopy(live)
        for k, v in desired.items():
            out[k] = merge(live[k], v) if k in live else copy.deepcopy(v)
        return out
    if named(live) and named(desired):
        by_name = {i["name"]: i for i in live}
        return [merge(by_name[i["name"]], i) if i["name"] in by_name else copy.deepcopy(i) for i in desired]
    return copy.deepcopy(desired)


def delete_dropped(target, orig, desired):
    """Removes from target the map fields orig (the last applied configuration) has and desired lacks."""
    if not (isinstance(target, dict) and isinstance(orig, dict) and isinstance(desired, dict)):
        return
    for k, v in orig.items():
        if k not in desired:
            target.pop(k, None)
        elif k in target:
            delete_dropped(target[k], v, desired[k])


# --- Argo CD ------------------------------------------------------------------------------------------

def argocd_rules(recipe):
    """jsonPointers, jqPathExpressions and managedFieldsManagers for apps/StatefulSet."""
    rules = {"jsonPointers": [], "jqPathExpressions": [], "managedFieldsManagers": []}
    entries = []
    if recipe.get("kind") == "ConfigMap":
        for key in ("resource.customizations.ignoreDifferences.all",
                    f"resource.customizations.ignoreDifferences.{GROUP}_{KIND}"):
            if key in (recipe.get("data") or {}):
                entries.append(yaml.safe_load(recipe["data"][key]))
    else:
        for entry in (recipe.get("spec") or {}).get("ignoreDifferences") or []:
            if entry.get("group", "") in (GROUP, "*") and entry.get("kind") in (KIND, "*"):
                entries.append(entry)
    for entry in entries:
        for field in rules:
            rules[field] += entry.get(field) or []
    return rules


def fields_v1_leaves(fields, prefix=()):
    """The owned paths of a managedFields entry's fieldsV1, each a tuple of its f:/k:/v:/i: keys."""
    for key, sub in fields.items():
        if key == ".":
            continue
        if sub:
            yield from fields_v1_leaves(sub, prefix + (key,))
        else:
            yield prefix + (key,)


def resolve(obj, fields_path):
    """The JSON pointer of a fieldsV1 path in obj, or None when obj lacks it."""
    pointer = ""
    for key in fields_path:
        kind, _, name = key.partition(":")
        if kind == "f" and isinstance(obj, dict) and name in obj:
            obj, pointer = obj[name], f"{pointer}/{escape(name)}"
        elif kind in ("k", "v", "i") and isinstance(obj, list):
            want = json.loads(name)
            for i, item in enumerate(obj):
                if (kind == "k" and isinstance(item, dict) and all(item.get(a) == b for a, b in want.items())) \
                        or (kind == "v" and item == want) or (kind == "i" and i == want):
                    obj, pointer = item, f"{pointer}/{i}"
                    break
            else:
                return None
        else:
            return None
    return pointer


def managed_fields_normalize(live, desired, managers):
    """argo-cd managedfields.Normalize: a trusted manager's fields whose values differ leave both sides."""
    for entry in (live.get("metadata") or {}).get("managedFields") or []:
        if entry.get("manager") not in managers:
            continue
        for fields_path in fields_v1_leaves(entry.get("fieldsV1") or {}):
            lp, dp = resolve(live, fields_path), resolve(desired, fields_path)
            if lp is None or dp is None or lookup(live, lp)[1] == lookup(desired, dp)[1]:
                continue
            remove(live, lp)
            remove(desired, dp)


def jq_delete(obj, expression):
    """del(<expression>) with jq; None when jq fails or yields other than one object (Argo CD skips it)."""
    run = subprocess.run(["jq", "-c", f"del({expression})"], input=json.dumps(obj),
                         capture_output=True, text=True, check=False)
    out = run.stdout.split("\n")
    if run.returncode != 0 or len([o for o in out if o]) != 1:
        return None
    return json.loads(out[0])


def ignore_normalize(obj, rules):
    for pointer in rules["jsonPointers"]:
        remove(obj, pointer)
    for expression in rules["jqPathExpressions"]:
        obj = jq_delete(obj, expression) or obj
    return obj


def argocd(recipe, live, desired):
    rules = argocd_rules(recipe)
    live_n, desired_n = copy.deepcopy(live), copy.deepcopy(desired)
    if rules["managedFieldsManagers"]:
        managed_fields_normalize(live_n, desired_n, rules["managedFieldsManagers"])
    live_n, desired_n = ignore_normalize(live_n, rules), ignore_normalize(desired_n, rules)
    # gitops-engine's Diff: the live object without its managedFields; the last applied configuration
    # (normalized as the desired object) says which fields a sync deletes.
    for side in (live_n, desired_n):
        (side.get("metadata") or {}).pop("managedFields", None)
    text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    predicted = merge(live_n, desired_n)
    if text:
        delete_dropped(predicted, ignore_normalize(json.loads(text), rules), desired_n)
    diff = differences(live_n, predicted)
    # RespectIgnoreDifferences: what normalization took from the live object goes back into the target.
    applied = copy.deepcopy(desired_n)
    for pointer, value in leaves({k: v for k, v in live.items() if k != "status"}):
        if not lookup(live_n, pointer)[0] and pointer.split("/")[2:3] != ["managedFields"]:
            put(applied, pointer, value)
    return {"rules": rules, "diff": diff, "applied": applied}


# --- Flux ---------------------------------------------------------------------------------------------

def flux_rules(recipe):
    if isinstance(recipe, list):  # a JSON 6902 patch
        return next((op["value"] for op in recipe if op.get("path") == "/spec/ignore"), [])
    return (recipe.get("spec") or {}).get("ignore") or []


def selector_matches(selector, labels):
    """A Kubernetes label selector of equality terms (k=v, k==v, k!=v, k, !k), comma-separated."""
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            k, v = term.split("!=", 1)
            ok = labels.get(k) != v
        elif "=" in term:
            k, v = re.split("==?", term, maxsplit=1)
            ok = labels.get(k) == v
        elif term.startswith("!"):
            ok = term[1:] not in labels
        else:
            ok = term in labels
        if not ok:
            return False
    return True


def target_matches(target, obj):
    """jsondiff.Selector: group, version, kind, name, namespace as anchored regexes; the selectors."""
    api = obj.get("apiVersion", "")
    group, version = api.split("/") if "/" in api else ("", api)
    meta = obj.get("metadata") or {}
    for field, value in (("group", group), ("version", version), ("kind", obj.get("kind", "")),
                         ("name", meta.get("name", "")), ("namespace", meta.get("namespace", ""))):
        if target.get(field) and not re.fullmatch(target[field], value):
            return False
    return (selector_matches(target.get("labelSelector", ""), meta.get("labels") or {})
            and selector_matches(target.get("annotationSelector", ""), meta.get("annotations") or {}))


def drift_view(obj):
    """What hasDrifted compares: labels, annotations, and the object without metadata and status."""
    meta = copy.deepcopy(obj.get("metadata") or {})
    view = {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("metadata", "status")}
    view["metadata"] = {"labels": meta.get("labels") or {}, "annotations": meta.get("annotations") or {}}
    return view


def owned_by_other_apply_manager(live, pointer):
    for entry in (live.get("metadata") or {}).get("managedFields") or []:
        if entry.get("operation") != "Apply" or entry.get("manager") == FLUX_MANAGER or entry.get("subresource"):
            continue
        for fields_path in fields_v1_leaves(entry.get("fieldsV1") or {}):
            if resolve(live, fields_path) == pointer:
                return True
    return False


def flux(recipe, live, desired):
    rules = flux_rules(recipe)
    dry_run = merge(live, desired)
    paths = [p for rule in rules if target_matches(rule.get("target") or {}, dry_run) for p in rule["paths"]]
    live_v, dry_v = drift_view(live), drift_view(dry_run)
    for pointer in paths:
        remove(live_v, pointer)
        remove(dry_v, pointer)
    diff = differences(live_v, dry_v)
    if not diff:  # not drifted: nothing is applied (UnchangedAction)
        return {"rules": rules, "diff": diff, "applied": None}
    applied = copy.deepcopy(desired)
    for pointer in paths:
        (found_l, value_l), (found_d, value_d) = lookup(live, pointer), lookup(dry_run, pointer)
        if found_l == found_d and value_l == value_d:
            continue
        if owned_by_other_apply_manager(live, pointer):
            remove(applied, pointer)
        elif lookup(applied, pointer)[0] or found_l:
            put(applied, pointer, value_l)
    return {"rules": rules, "diff": diff, "applied": applied}


def main(argv):
    if len(argv) != 5 or argv[1] not in ("argocd", "flux"):
        sys.exit(__doc__.split("\n\n")[1])
    with open(argv[2]) as f:
        recipe = next(d for d in yaml.safe_load_all(f) if d is not None)
    with open(argv[3]) as f:
        live = json.load(f)
    with open(argv[4]) as f:
        desired = json.load(f)
    print(json.dumps((argocd if argv[1] == "argocd" else flux)(recipe, live, desired)))


if __name__ == "__main__":
    main(sys.argv)
