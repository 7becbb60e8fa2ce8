#!/bin/sh
# A worked answerer for sts-stepper's approval handshake (docs/approvals.md). Every 10 s, for each pod of
# one StatefulSet asked to approve the set's updateRevision: a pod asked to switch over that still holds
# role=primary first hands the label to another Ready pod (one already on updateRevision if any); then
# the pod is approved. A request naming another revision (left over from a rollback) is not answered.
# Usage: approve-pods.sh NAMESPACE STATEFULSET [PREFIX]   (kubectl and jq; runs until stopped; every
# $INTERVAL seconds, default 10)
set -u
ns=$1 sts=$2 p=${3:-safe-rollout.dev}
while sleep "${INTERVAL:-10}"; do
  rev=$(kubectl -n "$ns" get sts "$sts" -o jsonpath='{.status.updateRevision}') && [ -n "$rev" ] || continue
  pods=$(kubectl -n "$ns" get pods -o json | jq --arg sts "$sts" \
    '[.items[] | select(any(.metadata.ownerReferences[]?; .kind == "StatefulSet" and .name == $sts))]') || continue
  printf '%s\n' "$pods" | jq -r --arg p "$p" --arg rev "$rev" '.[] | .metadata as $m
    | select($m.annotations["\($p)/update-requested"] == $rev)
    | select($m.annotations["\($p)/update-approved"] != $rev or $m.labels.role == "primary")
    | "\($m.name) \($m.annotations["\($p)/update-request-phase"]) \($m.labels.role == "primary")"' |
  while read -r pod phase primary; do
    if [ "$phase" = Switchover ] && [ "$primary" = true ]; then
      to=$(printf '%s\n' "$pods" | jq -r --arg pod "$pod" --arg p "$p" --arg rev "$rev" '[.[]
        | select(.metadata.name != $pod and .metadata.deletionTimestamp == null
            and .metadata.annotations["\($p)/update-requested"] != $rev
            and any(.status.conditions[]?; .type == "Ready" and .status == "True"))]
        | sort_by([.metadata.labels.role != "primary", .metadata.labels["controller-revision-hash"] != $rev])
        | first | .metadata.name // empty')
      [ -n "$to" ] || { echo "$pod: no other Ready pod to take the primary role" >&2; continue; }
      # Your application's switchover goes here: promote $to once it has caught up. Then the labels, the
      # new primary's first: if the second write fails, $pod still matches, is not approved, and the next
      # round finishes the move (to the same pod: one already labelled primary is preferred).
      kubectl -n "$ns" label --overwrite pod "$to" role=primary &&
        kubectl -n "$ns" label --overwrite pod "$pod" role=replica || continue
    fi
    # Your application's own check of $pod goes here (drained, replicas caught up, …); then approve.
    kubectl -n "$ns" annotate --overwrite pod "$pod" "$p/update-approved=$rev"
  done
done
