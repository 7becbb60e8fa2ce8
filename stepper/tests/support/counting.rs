//! A listener on 127.0.0.1 that counts the connections it is offered and drops them: proof that a URL
//! was (or was not) called. It stops with the value (the accept loop is aborted on drop).
#![allow(dead_code)] // each test crate uses a subset

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The listener: `url` is `http://127.0.0.1:PORT` followed by the path it was started with.
pub struct Counting {
    /// Where it listens.
    pub url: String,
    hits: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Counting {
    /// Listens on a free port of 127.0.0.1; `path` is appended to [`Counting::url`] (`""`, `"/approve"`).
    pub async fn start(path: &str) -> Counting {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}{path}", listener.local_addr().expect("addr"));
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                drop(socket);
            }
        });
        Counting { url, hits, task }
    }

    /// Connections offered so far.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        self.task.abort();
    }
}
