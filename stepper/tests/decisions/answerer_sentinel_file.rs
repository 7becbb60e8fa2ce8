//! A `redisSentinel` entry of `--answerer-config` (`cluster::answerer::file::parse`): what a valid one
//! gives, and each bad field named with the form expected.

use std::time::Duration;

use sts_stepper::cluster::answerer::file::parse;
use sts_stepper::cluster::answerer::kinds::sentinel;

const HEAD: &str = "apiVersion: safe-rollout.dev/v1alpha1\nkind: AnswererConfig\nanswerers:\n";

/// The file with one entry named `cache` whose `redisSentinel` object is `body` (flow YAML fields).
fn file(body: &str) -> String {
    format!(
        "{HEAD}  - name: cache\n    serves: [\"db/*\"]\n    timeoutSeconds: 2\n    redisSentinel: {{{body}}}\n"
    )
}

const GOOD: &str = "masterName: mymaster, sentinels: [\"{pod}.{service}.{namespace}.svc:26379\"], \
                    address: \"{pod}.{service}.{namespace}.svc:6379\"";

#[test]
fn an_entry_gives_the_master_set_the_sentinels_and_the_nodes() {
    let got = parse(&file(GOOD)).expect("valid");
    let (name, builtin) = (&got[0].name, &got[0].builtin);
    assert_eq!(name, "cache");
    assert_eq!(builtin.kind(), sentinel::KIND);
    assert_eq!(builtin.kind(), "redisSentinel");
    // A read (three timeouts), the failover within its pause (the default 22 s), its last commands.
    assert_eq!(builtin.longest_call(), Duration::from_secs(4 * 2 + 22));
    // Members alone, sentinels as plain addresses, every optional field.
    let body = "masterName: harness, sentinels: [\"127.0.0.1:26379\", \"[::1]:26380\"], \
                members: {cache-0: \"127.0.0.1:7000\"}, maxLagBytes: 0, pauseWritesSeconds: 5, \
                passwordFile: /etc/redis/password, sentinelPasswordFile: /etc/redis/sentinel";
    assert!(parse(&file(body)).is_ok(), "{:?}", parse(&file(body)).err());
}

#[test]
fn bad_fields_are_named_with_the_form_expected() {
    let s = "sentinels: [\"{pod}.{service}.{namespace}.svc:26379\"]";
    let a = "address: \"{pod}.{service}.{namespace}.svc:6379\"";
    for (body, words) in [
        (
            format!("{s}, {a}"),
            "answerers[0].redisSentinel.masterName: missing; expected the master set's name",
        ),
        (
            format!("masterName: \"my master\", {s}, {a}"),
            "answerers[0].redisSentinel.masterName: \"my master\": expected the master set's name as `sentinel monitor` gives it",
        ),
        (
            format!("masterName: m, {a}"),
            "answerers[0].redisSentinel.sentinels: missing or empty; expected a list of host:port",
        ),
        (
            format!("masterName: m, sentinels: [], {a}"),
            "answerers[0].redisSentinel.sentinels: missing or empty",
        ),
        (
            format!(
                "masterName: m, sentinels: [\"127.0.0.1:26379\", \"{{pod}}.{{service}}\"], {a}"
            ),
            "answerers[0].redisSentinel.sentinels[1]: \"{pod}.{service}\": expected host:port such as",
        ),
        (
            format!("masterName: m, sentinels: [\"{{host}}:26379\"], {a}"),
            "answerers[0].redisSentinel.sentinels[0]: \"{host}:26379\": {host} is not a placeholder",
        ),
        (
            format!("masterName: m, {s}"),
            "answerers[0].redisSentinel: neither `address` nor `members` given; expected an address template such as {pod}.{service}.{namespace}.svc:6379",
        ),
        (
            format!("masterName: m, {s}, address: \"redis://{{pod}}:6379/\""),
            "answerers[0].redisSentinel.address: \"redis://{pod}:6379/\": expected host:port",
        ),
        (
            format!("masterName: m, {s}, members: {{cache-0: \"10.0.0.5\"}}"),
            "answerers[0].redisSentinel.members.cache-0: \"10.0.0.5\": expected host:port",
        ),
        (
            format!("masterName: m, {s}, {a}, pauseWritesSeconds: 0"),
            "answerers[0].redisSentinel.pauseWritesSeconds: 0: expected whole seconds from 1 to 300",
        ),
        (
            format!("masterName: m, {s}, {a}, password: secret"),
            "unknown field `password`",
        ),
    ] {
        let e = parse(&file(&body))
            .err()
            .unwrap_or_else(|| panic!("accepted: {body}"));
        assert!(e.contains(words), "{body}\n→ {e}");
    }
    let two = format!(
        "{HEAD}  - name: cache\n    serves: [\"db/*\"]\n    patroni: {{address: \"http://{{pod}}:8008\"}}\n    redisSentinel: {{{GOOD}}}\n"
    );
    let e = parse(&two).expect_err("two kinds");
    assert!(
        e.contains("answerers[0]: two kinds; expected one of: patroni, redisSentinel, etcd"),
        "{e}"
    );
}
