//! A fake API server on 127.0.0.1 for tests that run the real binary: it answers the LISTs of a
//! `status` with the real fixture bodies of one moment (namespace `demo`), an empty list for any
//! other namespace, and records every request's path and query. Stops when dropped.
#![allow(dead_code)] // each test crate uses a subset

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use tokio::task::JoinHandle;

/// The fake API server; its address and the requests it saw.
pub struct FakeApiServer {
    /// Where it listens (`http://` + this).
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
    task: JoinHandle<()>,
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone)]
struct Served {
    moment: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl FakeApiServer {
    /// Serves the fixtures of `moment` (e.g. `3-web1-notready`) on a free port of 127.0.0.1.
    pub async fn start(moment: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("address");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let state = Served {
            moment: moment.into(),
            seen: seen.clone(),
        };
        let app = Router::new().fallback(answer).with_state(state);
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("serve");
        });
        FakeApiServer { addr, seen, task }
    }

    /// Every request so far, as `path?query`.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A kubeconfig pointing at this server, whose current context has `namespace` (none when
    /// `None`), written to `dir/config`.
    pub fn kubeconfig(&self, dir: &Path, namespace: Option<&str>) -> std::path::PathBuf {
        let ns = namespace.map_or(String::new(), |n| format!(", namespace: {n}"));
        let text = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: test\nclusters:\n  - name: fake\n    \
             cluster: {{server: \"http://{}\"}}\ncontexts:\n  - name: test\n    context: {{cluster: \
             fake, user: u{ns}}}\nusers:\n  - name: u\n    user: {{token: t}}\n",
            self.addr
        );
        let path = dir.join("config");
        std::fs::write(&path, text).expect("write kubeconfig");
        path
    }
}

async fn answer(State(s): State<Served>, req: Request) -> Response {
    let uri = req.uri();
    let target = match uri.query() {
        Some(q) => format!("{}?{q}", uri.path()),
        None => uri.path().to_string(),
    };
    s.seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(target);
    let path = uri.path();
    let in_demo = path.contains("/namespaces/demo/");
    let all = !path.contains("/namespaces/");
    let kind = ["statefulsets", "pods", "poddisruptionbudgets"]
        .into_iter()
        .find(|k| path.ends_with(&format!("/{k}")));
    let Some(kind) = kind else {
        let body = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not served by the fake API server"}"#;
        return (
            StatusCode::NOT_FOUND,
            [(CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
    };
    let file = match kind {
        "poddisruptionbudgets" => "pdbs",
        other => other,
    };
    let body = if in_demo || all {
        // The recorded sets marked as the policy marks the sets it stages (support::api_errors::fixture).
        super::api_errors::fixture(&format!("{}-{file}.json", s.moment))
    } else {
        br#"{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}"#
            .to_vec()
    };
    (StatusCode::OK, [(CONTENT_TYPE, "application/json")], body).into_response()
}
