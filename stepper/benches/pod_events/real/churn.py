# Patroni's loop, for a fleet: PATCH each pod's `status` annotation (field manager Patroni), RATE per second
# round-robin over the pods, for SECONDS; prints the patches made.
import os, sys, time, threading
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api import conn, call, status_annotation
RATE, SECONDS, PODS = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 1000
THREADS = 4
done = [0] * THREADS
def run(t):
    c = conn(); start = time.monotonic(); k = t
    while True:
        due = start + (k // THREADS) * THREADS / RATE
        now = time.monotonic()
        if now - start > SECONDS: break
        if due > now: time.sleep(due - now)
        n = k % PODS; s, o = divmod(n, 5)
        ip = f"10.244.{n // 250}.{n % 250 + 2}"
        call(c, "PATCH", f"/api/v1/namespaces/db/pods/patroni-{s}-{o}?fieldManager=Patroni",
             {"metadata": {"annotations": {"status": status_annotation(ip, 50331648 + k * 4096)}}},
             "application/merge-patch+json")
        done[t] += 1; k += THREADS
ts = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sum(done))
