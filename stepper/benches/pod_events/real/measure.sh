#!/bin/bash
# measure.sh BINARY RATE SECONDS: the CPU `sts-stepper watch -n db` (BINARY) spends per pod watch event while
# churn.py patches RATE Patroni status annotations per second for SECONDS, idle CPU subtracted: BENCHMARKS.md,
# "CPU per pod watch event". Needs KUBECONFIG and K8S_CA, K8S_CLIENT_CERT, K8S_CLIENT_KEY (an admin's) of a
# real API server on which fleet.py made the fleet; measured from /proc/<pid>/task/*/schedstat.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$1; RATE=$2; SECS=$3
cpu() { cat /proc/$1/task/*/schedstat | awk '{s+=$1} END {print s}'; }
LOG=$(mktemp)
"$BIN" watch -n db --metrics-addr 127.0.0.1:18080 --log-format json > "$LOG" 2>&1 &
PID=$!
sleep 15
c0=$(cpu $PID); sleep $SECS; c1=$(cpu $PID)
EV=$(python3 "$HERE/churn.py" $RATE $SECS)
c2=$(cpu $PID)
sleep 3; c3=$(cpu $PID)
kill $PID; wait $PID 2>/dev/null || true
python3 -c "
idle=($c1-$c0)/$SECS; churn=$c2-$c1; ev=$EV
print(f'idle {idle/1e6:.2f} ms CPU/s; churn: {ev} events in ~$SECS s, {churn/1e6:.1f} ms CPU, per event {(churn-idle*$SECS)/ev/1e3:.1f} us (gross {churn/ev/1e3:.1f} us); tail 3s {($c3-$c2)/1e6:.1f} ms')"
