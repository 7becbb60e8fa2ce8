//! The watch events of a fleet of Patroni members: the line a v1.36.2 API server sent when Patroni's loop
//! patched one member's `status` annotation (`fixtures/api/scale/pod-patroni-modified.jsonl`, byte for
//! byte: 9,440 bytes, 4,084 of them `managedFields`), made the line of member `n` by replacing its names,
//! uids, resourceVersion and WAL position in the text (so the order and escaping of every field stay the
//! API server's).

/// The captured line's own values, replaced per member.
const POD: &str = "patroni-7-2";
const SET: &str = "patroni-7";
const POD_UID: &str = "5d0d0a27-f59c-4d9a-a4f1-09e991a94447";
const SET_UID: &str = "bcbc0e4f-a626-437a-a90c-15981fdc8106";
const VERSION: &str = "\"resourceVersion\":\"3419\"";
const LSN: &str = "50335744";
const READY: &str = "{\"type\":\"Ready\",\"status\":\"True\"";

/// The captured line (with its newline).
pub fn captured() -> String {
    let path = format!(
        "{}/../fixtures/api/scale/pod-patroni-modified.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let line = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    for value in [POD, SET_UID, POD_UID, VERSION, LSN, READY] {
        assert!(line.contains(value), "{path} has no {value}");
    }
    line
}

/// The MODIFIED line of member `n` (pod `patroni-<n / 5>-<n % 5>`): Patroni's `status` annotation at WAL
/// position `lsn` (8 digits), resourceVersion `rv`; with `unready`, its `Ready` condition `False`.
pub fn modified(captured: &str, n: usize, lsn: u64, rv: u64, unready: bool) -> String {
    let set = format!("patroni-{}", n / 5);
    let line = captured
        .replace(POD, "\u{1}")
        .replace(SET, &set)
        .replace('\u{1}', &format!("{set}-{}", n % 5))
        .replace(POD_UID, &format!("5d0d0a27-0000-4000-8000-{n:012}"))
        .replace(SET_UID, &format!("bcbc0e4f-0000-4000-8000-{:012}", n / 5))
        .replace(VERSION, &format!("\"resourceVersion\":\"{rv}\""))
        .replace(LSN, &format!("{lsn:08}"));
    if unready {
        line.replace(READY, "{\"type\":\"Ready\",\"status\":\"False\"")
    } else {
        line
    }
}

/// The pod of member `n`'s line, as a LIST returns it.
pub fn object(captured: &str, n: usize) -> serde_json::Value {
    let line = modified(captured, n, 50_331_648, 1, false);
    let mut event: serde_json::Value = serde_json::from_str(&line).expect("the captured line");
    event["object"].take()
}
