//! The etcd answerer against the real etcd (`shared::etcd`) as a person changes it: an alarm raised
//! (Maintenance.Alarm ACTIVATE, then disarmed), and etcd's own authentication turned on (a `root` user)
//! and off again — each undone before its assertions, so the shared cluster is left as it was found.

use std::time::Duration;

use serde_json::{Value, json};
use sts_stepper::gates::approval::webhook::answer::{Decision, WebhookAnswer};

use crate::etcd_answerer::{
    HEALTHY, NAME, answerers_with, decided, of_cluster, ordinal, request, until_approved, urls,
};
use crate::systems::shared;
use crate::until;

/// `POST body` to `url` with `Authorization: <token>` when given → the HTTP status and the body.
async fn post(url: &str, body: &Value, token: Option<&str>) -> Result<(u16, String), String> {
    let mut r = crate::systems::net::client()
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string());
    if let Some(t) = token {
        r = r.header(reqwest::header::AUTHORIZATION, t);
    }
    let r = r.send().await.map_err(|e| format!("POST {url}: {e}"))?;
    let status = r.status().as_u16();
    Ok((status, r.text().await.unwrap_or_default()))
}

/// Turns etcd's authentication on with user `root` (and its role `root`, as `etcdctl auth enable`
/// makes them, etcdctl/ctlv3/command/auth_command.go@v3.4.23), password `password`.
async fn enable_auth(base: &str, password: &str) -> Result<(), String> {
    for (path, body) in [
        (
            "/v3/auth/user/add",
            json!({"name": "root", "password": password}),
        ),
        ("/v3/auth/role/add", json!({"name": "root"})),
        (
            "/v3/auth/user/grant",
            json!({"user": "root", "role": "root"}),
        ),
        ("/v3/auth/enable", json!({})),
    ] {
        match post(&format!("{base}{path}"), &body, None).await? {
            (200, _) => {}
            (status, text) => return Err(format!("POST {path}: HTTP {status}: {text}")),
        }
    }
    Ok(())
}

/// Turns etcd's authentication off again, as root, within a bound.
async fn disable_auth(base: &str, password: &str) {
    until(
        "etcd's authentication to be off",
        Duration::from_secs(10),
        || async {
            let (_, text) = post(
                &format!("{base}/v3/auth/authenticate"),
                &json!({"name": "root", "password": password}),
                None,
            )
            .await?;
            let token: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
            let token = token["token"].as_str().ok_or(format!("no token: {text}"))?;
            match post(&format!("{base}/v3/auth/disable"), &json!({}), Some(token)).await? {
                (200, _) => Ok(()),
                (status, text) => Err(format!("HTTP {status}: {text}")),
            }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_answerer_reads_and_moves_with_an_etcd_users_token() {
    let Some(etcd) = shared::etcd().await else {
        return;
    };
    etcd.wait_healthy(HEALTHY).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (user, good, bad) = (
        dir.path().join("u"),
        dir.path().join("p"),
        dir.path().join("q"),
    );
    std::fs::write(&user, "root\n").unwrap();
    std::fs::write(&good, "s3cret\n").unwrap();
    std::fs::write(&bad, "wrong\n").unwrap();
    let with = |password: &std::path::Path| {
        answerers_with(
            &urls(&etcd),
            &format!(
                "      auth: {{basic: {{usernameFile: {}, passwordFile: {}}}}}\n",
                user.display(),
                password.display()
            ),
        )
    };
    let leader = etcd.leader().await.unwrap();
    let (at, follower) = (
        ordinal(&etcd, &leader),
        (0..3u32)
            .find(|i| etcd.set().member(*i as usize) != Some(leader.as_str()))
            .unwrap(),
    );
    // Credentials before etcd's authentication is on: read without a token.
    let before = with(&good).answer(NAME, &request(follower)).await;
    let base = etcd.client_url(&leader);
    enable_auth(&base, "s3cret").await.unwrap();
    let granted = with(&good).answer(NAME, &request(follower)).await;
    let refused = with(&bad).answer(NAME, &request(follower)).await;
    let moved = with(&good).answer(NAME, &request(at)).await;
    disable_auth(
        &etcd.client_url(etcd.set().member(follower as usize).unwrap()),
        "s3cret",
    )
    .await;
    eprintln!("etcd answerer with auth: {granted:?}; {refused:?}; {moved:?}");
    assert_eq!(decided(before).decision, Decision::Approve);
    assert_eq!(decided(granted).decision, Decision::Approve);
    match refused {
        WebhookAnswer::Error(e) => assert!(
            e.contains("etcdserver: authentication failed, invalid user ID or password"),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
    let moved = decided(moved);
    assert!(
        moved.decision == Decision::Wait && moved.reason.contains("moved; confirming"),
        "{moved:?}"
    );
    etcd.wait_healthy(HEALTHY).await.unwrap();
    assert_ne!(etcd.leader().await.unwrap(), leader);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_answerer_denies_while_an_alarm_is_raised() {
    let Some(etcd) = shared::etcd().await else {
        return;
    };
    etcd.wait_healthy(HEALTHY).await.unwrap();
    let leader = etcd.leader().await.unwrap();
    let follower = (0..3u32)
        .find(|i| etcd.set().member(*i as usize) != Some(leader.as_str()))
        .unwrap();
    let member = etcd.set().member(follower as usize).unwrap().to_string();
    let id = etcd.members().await.unwrap()[&member];
    // NOSPACE raised by hand (Maintenance.Alarm ACTIVATE, as etcd's own tests raise it), then disarmed.
    let alarm =
        |action: &str| json!({"action": action, "memberID": id.to_string(), "alarm": "NOSPACE"});
    let url = format!("{}/v3/maintenance/alarm", etcd.client_url(&leader));
    let raised = post(&url, &alarm("ACTIVATE"), None).await;
    let answer = of_cluster(&etcd).answer(NAME, &request(follower)).await;
    let disarmed = post(&url, &alarm("DEACTIVATE"), None).await;
    eprintln!("etcd answerer with an alarm: {answer:?}");
    assert_eq!(raised.map(|(s, _)| s), Ok(200));
    assert_eq!(disarmed.map(|(s, _)| s), Ok(200));
    let answer = decided(answer);
    assert_eq!(answer.decision, Decision::Deny, "{}", answer.reason);
    assert!(
        answer
            .reason
            .contains(&format!("the alarm NOSPACE on {member}")),
        "{}",
        answer.reason
    );
    etcd.wait_healthy(HEALTHY).await.unwrap();
    until_approved(&of_cluster(&etcd), follower).await;
}
