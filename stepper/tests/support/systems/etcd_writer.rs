//! The etcd cluster's writer loop (`POST /v3/kv/put` through one member, the next after a failure) and
//! what the cluster holds of it (`POST /v3/kv/range`): keys `harness/<run>/<id, 12 digits>`, base64 as
//! the gateway carries proto `bytes` (etcdserver/etcdserverpb/gw/rpc.pb.gw.go@v3.4.23).

use std::collections::BTreeSet;

use serde_json::json;

use super::etcd::Etcd;
use super::net::post_json;
use super::next_run;
use super::writer::{Sink, Writer};

/// The key prefix of the writer's items.
const PREFIX: &str = "harness/";

impl Etcd {
    /// A writer of `per_second` PUTs a second (`POST /v3/kv/put`) under a fresh run; `(run, writer)`.
    pub fn writer(&self, per_second: u32) -> (u32, Writer) {
        let run = next_run();
        let sink = EtcdSink {
            endpoints: self.endpoints(),
            at: 0,
            run,
            client: super::net::client(),
        };
        (run, Writer::start(sink, per_second))
    }

    /// The ids of run `run` the cluster holds (a linearizable range read through any member).
    ///
    /// # Errors
    /// No member answers.
    pub async fn present(&self, run: u32) -> Result<BTreeSet<u64>, String> {
        let prefix = format!("{PREFIX}{run}/");
        let mut end = prefix.clone().into_bytes();
        *end.last_mut().expect("non-empty") += 1;
        let body =
            json!({"key": b64(prefix.as_bytes()), "range_end": b64(&end), "keys_only": true});
        let mut last = String::new();
        for e in self.endpoints() {
            match post_json(&format!("http://{e}/v3/kv/range"), &body).await {
                Ok(v) => {
                    return Ok(v["kvs"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|kv| unb64(kv["key"].as_str()?))
                        .filter_map(|k| {
                            String::from_utf8(k)
                                .ok()?
                                .strip_prefix(&prefix)?
                                .parse()
                                .ok()
                        })
                        .collect());
                }
                Err(err) => last = err,
            }
        }
        Err(format!("no etcd member answers a range read; last: {last}"))
    }
}

/// The writer's client: PUTs through one member, the next one after a failure.
struct EtcdSink {
    endpoints: Vec<String>,
    at: usize,
    run: u32,
    client: reqwest::Client,
}

impl Sink for EtcdSink {
    fn write(&mut self, id: u64) -> impl Future<Output = Result<(), String>> + Send {
        let url = format!("http://{}/v3/kv/put", self.endpoints[self.at]);
        let key = format!("{PREFIX}{}/{id:012}", self.run);
        let request = self
            .client
            .post(url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(json!({"key": b64(key.as_bytes()), "value": b64(b"1")}).to_string());
        let next = (self.at + 1) % self.endpoints.len();
        let at = &mut self.at;
        async move {
            let outcome = match request.send().await {
                Ok(r) if r.status().is_success() => Ok(()),
                Ok(r) => Err(format!("{url}: HTTP {}", r.status())),
                Err(e) => Err(format!("{url}: {e}")),
            };
            if outcome.is_err() {
                *at = next;
            }
            outcome
        }
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (RFC 4648 §4), how the gateway carries proto `bytes`.
fn b64(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(B64[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The inverse of [`b64`]; `None` for a character outside the alphabet.
fn unb64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut n, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|c| *c != b'=') {
        n = n << 6 | u32::try_from(B64.iter().position(|b| *b == c)?).ok()?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from(n >> bits & 0xff).ok()?);
        }
    }
    Some(out)
}
