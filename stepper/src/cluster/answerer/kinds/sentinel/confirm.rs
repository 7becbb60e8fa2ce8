//! When a requested failover is done (pure): a quorum of the Sentinels names one new master.
//!
//! `SENTINEL FAILOVER` returns `+OK` at once and the Sentinel that took it promotes a replica on its own
//! time (src/sentinel.c@7.0.15 `sentinelFailoverStateMachine`); it names the promoted replica in
//! `GET-MASTER-ADDR-BY-NAME` once that replica reports `role:master`, and the other Sentinels follow when
//! its hello, with the new configuration epoch, reaches them (`sentinelProcessHelloMessage`, every
//! `sentinel_publish_period`, 2 s). The answerer waits for as many of them as Sentinel itself needs to
//! agree on anything: the master's configured `quorum`, and at least a majority of the Sentinels it
//! asks (a failover's leader is elected by a majority, `sentinelGetLeader`).

/// How many of `sentinels` Sentinels must name the new master: the configured `quorum` (the `quorum`
/// field of `SENTINEL MASTER`; `None` when it was not read), and at least a majority of `sentinels`.
pub fn needed(quorum: Option<usize>, sentinels: usize) -> usize {
    quorum.unwrap_or(0).max(sentinels / 2 + 1)
}

/// The new master's `host:port` once at least `needed` of `named` (each Sentinel's answer: the master
/// it names, `None` for none or no answer) name one address other than `old`; `None` until then.
pub fn new_master(named: &[Option<String>], old: &str, needed: usize) -> Option<String> {
    let others = named.iter().flatten().filter(|a| !same(a, old));
    let mut counts: Vec<(&String, usize)> = Vec::new();
    for a in others {
        match counts.iter_mut().find(|(b, _)| same(b, a)) {
            Some((_, n)) => *n += 1,
            None => counts.push((a, 1)),
        }
    }
    counts
        .into_iter()
        .find(|(_, n)| *n >= needed)
        .map(|(a, _)| a.clone())
}

/// The same `host:port`, the host compared without case (Sentinel may announce hostnames).
fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(list: &[Option<&str>]) -> Vec<Option<String>> {
        list.iter().map(|a| a.map(str::to_string)).collect()
    }

    #[test]
    fn a_quorum_is_the_configured_one_and_at_least_a_majority() {
        assert_eq!(needed(Some(2), 3), 2);
        assert_eq!(needed(None, 3), 2);
        assert_eq!(needed(Some(1), 3), 2);
        assert_eq!(needed(Some(3), 3), 3);
        assert_eq!(needed(Some(2), 5), 3);
        assert_eq!(needed(None, 1), 1);
    }

    #[test]
    fn the_new_master_is_named_once_a_quorum_names_the_same_other_address() {
        let old = "10.0.0.1:6379";
        let one = named(&[Some("10.0.0.2:6379"), Some(old), Some(old)]);
        assert_eq!(new_master(&one, old, 2), None);
        let two = named(&[Some("10.0.0.2:6379"), Some("10.0.0.2:6379"), None]);
        assert_eq!(new_master(&two, old, 2), Some("10.0.0.2:6379".into()));
        // Two Sentinels naming two different new masters agree on none.
        let split = named(&[Some("10.0.0.2:6379"), Some("10.0.0.3:6379"), Some(old)]);
        assert_eq!(new_master(&split, old, 2), None);
        // The old master named by a quorum is no new master.
        assert_eq!(new_master(&named(&[Some(old), Some(old)]), old, 2), None);
        let host = named(&[Some("Cache-1.svc:6379"), Some("cache-1.svc:6379")]);
        assert_eq!(
            new_master(&host, "cache-0.svc:6379", 2),
            Some("Cache-1.svc:6379".into())
        );
    }
}
