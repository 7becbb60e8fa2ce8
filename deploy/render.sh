#!/usr/bin/env bash
# Renders deploy/ into plain YAML files for one published policy and one published stepper image:
#
#   deploy/render.sh registry://REGISTRY/policies/sts-safe-rollout:TAG REGISTRY/sts-stepper:TAG OUTDIR
#   (or: make deploy-manifests REGISTRY=… TAG=…)
#
# writes OUTDIR/sts-safe-rollout.yaml (what `kubectl apply -k deploy/` installs: the policy and the stepper
# CronJob), OUTDIR/sts-stepper-watch.yaml (deploy/stepper/watch/: the stepper as a Deployment, instead
# of the CronJob) and OUTDIR/sts-safe-rollout-native.yaml (deploy/native/: the policy as a Kubernetes
# MutatingAdmissionPolicy, for clusters >= 1.36 without Kubewarden, instead of deploy/policy/), and the
# GitOps health checks of deploy/gitops/: OUTDIR/sts-safe-rollout-argocd-cm.yaml (the argocd-cm patch) and
# OUTDIR/sts-safe-rollout-flux-health.yaml (the Flux Kustomization patch).
#
# ANNOTATION_PREFIX (default safe-rollout.dev) sets the native policy's annotation prefix: the one line of
# deploy/native/mutating-admission-policy.yaml holding the CEL variable `prefix` is rewritten (the
# Kubewarden policy takes it from its `annotationPrefix` setting instead); in deploy/gitops/ every
# `safe-rollout.dev` (the Lua's `prefix`, the CEL's annotation keys) is replaced.
#
# kustomize is not needed (nor installed here): deploy/ uses only `resources:` lists, which this script
# follows in order, recursing into directories. The manifests under deploy/ name the project's own
# published artifacts (the ClusterAdmissionPolicy's `module:` and the stepper's `image:`); those exact
# references are replaced, and the script fails if one is missing before or left after the replacement.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 registry://…/sts-safe-rollout:TAG …/sts-stepper:TAG OUTDIR" >&2
    exit 2
fi
module=$1 image=$2 out=$3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

case "$module" in
    registry://*/*:*) ;;
    *) echo "render.sh: policy module '$module' is not registry://HOST/REPOSITORY:TAG" >&2; exit 2 ;;
esac
case "$image" in
    */*:*) ;;
    *) echo "render.sh: image '$image' is not HOST/REPOSITORY:TAG" >&2; exit 2 ;;
esac

# The references deploy/ ships with.
shipped_module=$(sed -n 's/^  module: *//p' "$here/policy/cluster-admission-policy.yaml")
shipped_image=$(sed -n 's/^ *image: *//p' "$here/stepper/cronjob.yaml")
[ -n "$shipped_module" ] && [ -n "$shipped_image" ] || {
    echo "render.sh: cannot find module: / image: in deploy/" >&2
    exit 1
}

# Prints every resource of the kustomization in DIR, in order, as YAML documents.
render() {
    local dir=$1 entry
    [ -f "$dir/kustomization.yaml" ] || { echo "render.sh: no kustomization.yaml in $dir" >&2; return 1; }
    if grep -qE '^(patches|patchesStrategicMerge|images|replacements|components|configMapGenerator|secretGenerator|namePrefix|nameSuffix|namespace|commonLabels|labels):' "$dir/kustomization.yaml"; then
        echo "render.sh: $dir/kustomization.yaml uses kustomize features beyond resources:" >&2
        return 1
    fi
    # The `resources:` list: "  - entry" lines after "resources:", up to the next top-level key.
    while IFS= read -r entry; do
        if [ -d "$dir/$entry" ]; then
            render "$dir/$entry"
        else
            printf -- '---\n# Source: deploy/%s\n' "$(realpath --relative-to="$here" "$dir/$entry")"
            cat "$dir/$entry"
        fi
    done < <(awk '/^resources:/ {in_list = 1; next} /^[^ #-]/ {in_list = 0} in_list && /^ *- / {sub(/^ *- */, ""); print}' "$dir/kustomization.yaml")
}

# emit DIR FILE: renders the kustomization in DIR into OUTDIR/FILE with the references replaced, and checks.
emit() {
    local dir=$1 file=$2 tmp rel
    rel=$(realpath --relative-to="$(dirname "$here")" "$dir")
    tmp=$(mktemp)
    {
        echo "# Rendered from $rel/ by deploy/render.sh for"
        echo "#   policy $module"
        echo "#   image  $image"
        # The shipped references are matched literally (their dots escaped for sed).
        render "$dir" | sed -e "s|${shipped_module//./\\.}|$module|g" \
                            -e "s|image: ${shipped_image//./\\.}\$|image: $image|"
    } >"$tmp"
    if [ "$module" != "$shipped_module" ] && grep -qF "$shipped_module" "$tmp"; then
        echo "render.sh: $file still names $shipped_module" >&2; rm -f "$tmp"; return 1
    fi
    if [ "$image" != "$shipped_image" ] && grep -qF "image: $shipped_image" "$tmp"; then
        echo "render.sh: $file still names $shipped_image" >&2; rm -f "$tmp"; return 1
    fi
    mkdir -p "$out"
    mv "$tmp" "$out/$file"
    echo "$out/$file: $(grep -c '^kind:' "$out/$file") objects," \
        "module $(grep -cF "module: $module" "$out/$file" || true)x, image $(grep -cF "image: $image" "$out/$file" || true)x"
}

# The native policy's annotation prefix: a DNS subdomain (as the Kubewarden setting `annotationPrefix`), so
# it cannot break out of the CEL string literal it is written into.
prefix=${ANNOTATION_PREFIX:-safe-rollout.dev}
label='[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?'
if ! [[ $prefix =~ ^$label(\.$label)*$ ]] || [ ${#prefix} -gt 253 ]; then
    echo "render.sh: ANNOTATION_PREFIX '$prefix' is not a DNS subdomain such as safe-rollout.dev" >&2
    exit 2
fi

# emit_native FILE: renders deploy/native/ into OUTDIR/FILE with the prefix line rewritten (exactly once).
emit_native() {
    local file=$1 tmp
    local line="      expression: \"'safe-rollout.dev'\""
    tmp=$(mktemp)
    {
        echo "# Rendered from deploy/native/ by deploy/render.sh for annotation prefix $prefix"
        render "$here/native"
    } | awk -v old="$line" -v new="${line/safe-rollout.dev/$prefix}" \
        '$0 == old {print new; n++; next} {print} END {if (n != 1) exit 3}' >"$tmp" || {
        echo "render.sh: deploy/native/ must hold the line [$line] exactly once" >&2
        rm -f "$tmp"; return 1
    }
    mkdir -p "$out"
    mv "$tmp" "$out/$file"
    echo "$out/$file: $(grep -c '^kind:' "$out/$file") objects, annotation prefix $prefix"
}

# emit_gitops SOURCE FILE: deploy/SOURCE with every `safe-rollout.dev` replaced by the prefix, into OUTDIR/FILE.
emit_gitops() {
    local source=$1 file=$2 tmp n
    tmp=$(mktemp)
    n=$(grep -o 'safe-rollout\.dev' "$here/$source" | wc -l)
    [ "$n" -gt 0 ] || { echo "render.sh: deploy/$source names no safe-rollout.dev" >&2; rm -f "$tmp"; return 1; }
    {
        echo "# Rendered from deploy/$source by deploy/render.sh for annotation prefix $prefix"
        sed "s|safe-rollout\.dev|$prefix|g" "$here/$source"
    } >"$tmp"
    mkdir -p "$out"
    mv "$tmp" "$out/$file"
    echo "$out/$file: $n names, annotation prefix $prefix"
}

emit "$here" sts-safe-rollout.yaml
emit "$here/stepper/watch" sts-stepper-watch.yaml
emit_native sts-safe-rollout-native.yaml
emit_gitops gitops/argocd/argocd-cm.yaml sts-safe-rollout-argocd-cm.yaml
emit_gitops gitops/flux/statefulset-health.yaml sts-safe-rollout-flux-health.yaml
