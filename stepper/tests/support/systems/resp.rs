//! Just enough RESP2 (the Redis serialization protocol, redis.io/docs/reference/protocol-spec) for the
//! harness to speak to Redis and Sentinel: commands as arrays of bulk strings, answers of the five RESP2
//! types (`+` simple string, `-` error, `:` integer, `$` bulk string, `*` array; `$-1`/`*-1` null). No new
//! crate for it (no `redis` in Cargo.lock).

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One RESP2 answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `+OK`
    Simple(String),
    /// `-ERR …`, `-READONLY …`, `-INPROG …`: the whole line after `-`.
    Error(String),
    /// `:42`
    Int(i64),
    /// `$n` bytes (as text), or `None` for `$-1`.
    Bulk(Option<String>),
    /// `*n` answers, or `None` for `*-1`.
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// The text of a simple or bulk string.
    pub fn text(&self) -> Option<&str> {
        match self {
            Reply::Simple(s) | Reply::Bulk(Some(s)) => Some(s),
            _ => None,
        }
    }

    /// An array of texts taken as `key value key value …` (how `SENTINEL MASTER` answers,
    /// src/sentinel.c@7.0.15 `addReplySentinelRedisInstance`).
    pub fn map(&self) -> BTreeMap<String, String> {
        let Reply::Array(Some(items)) = self else {
            return BTreeMap::new();
        };
        items
            .chunks(2)
            .filter_map(|kv| {
                Some((
                    kv.first()?.text()?.to_string(),
                    kv.get(1)?.text()?.to_string(),
                ))
            })
            .collect()
    }

    /// The elements of an array (none for anything else).
    pub fn items(&self) -> &[Reply] {
        match self {
            Reply::Array(Some(items)) => items,
            _ => &[],
        }
    }
}

/// One connection to a Redis server or Sentinel.
pub struct RespConn {
    stream: TcpStream,
    buffer: Vec<u8>,
    limit: Duration,
}

impl RespConn {
    /// Connects to `127.0.0.1:port`; each later command must be answered within `limit`.
    ///
    /// # Errors
    /// No connection within `limit`.
    pub async fn connect(port: u16, limit: Duration) -> Result<RespConn, String> {
        let stream = tokio::time::timeout(limit, TcpStream::connect(("127.0.0.1", port)))
            .await
            .map_err(|_| format!("127.0.0.1:{port}: no connection within {limit:?}"))?
            .map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
        let _ = stream.set_nodelay(true);
        Ok(RespConn {
            stream,
            buffer: Vec::new(),
            limit,
        })
    }

    /// Sends one command and reads its answer (an error answer is an `Ok(Reply::Error)`).
    ///
    /// # Errors
    /// I/O, a malformed answer, or none within the connection's limit.
    pub async fn command(&mut self, args: &[&str]) -> Result<Reply, String> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        let limit = self.limit;
        tokio::time::timeout(limit, async {
            self.stream
                .write_all(&out)
                .await
                .map_err(|e| format!("{}: sending: {e}", args.join(" ")))?;
            loop {
                if let Some((reply, used)) = parse(&self.buffer)? {
                    self.buffer.drain(..used);
                    return Ok(reply);
                }
                let mut chunk = [0u8; 4096];
                let n = self
                    .stream
                    .read(&mut chunk)
                    .await
                    .map_err(|e| format!("{}: reading: {e}", args.join(" ")))?;
                if n == 0 {
                    return Err(format!("{}: connection closed", args.join(" ")));
                }
                self.buffer.extend_from_slice(&chunk[..n]);
            }
        })
        .await
        .map_err(|_| format!("{}: no answer within {limit:?}", args.join(" ")))?
    }
}

/// One answer from the front of `buf` and the bytes it used, `None` while incomplete.
fn parse(buf: &[u8]) -> Result<Option<(Reply, usize)>, String> {
    let Some(end) = buf.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    let line = String::from_utf8_lossy(&buf[1..end]).into_owned();
    let after = end + 2;
    let number = || {
        line.parse::<i64>()
            .map_err(|_| format!("not a number in a RESP answer: {line:?}"))
    };
    let Some(kind) = buf.first() else {
        return Ok(None);
    };
    Ok(Some(match kind {
        b'+' => (Reply::Simple(line), after),
        b'-' => (Reply::Error(line), after),
        b':' => (Reply::Int(number()?), after),
        b'$' => {
            let Ok(len) = usize::try_from(number()?) else {
                return Ok(Some((Reply::Bulk(None), after)));
            };
            if buf.len() < after + len + 2 {
                return Ok(None);
            }
            let text = String::from_utf8_lossy(&buf[after..after + len]).into_owned();
            (Reply::Bulk(Some(text)), after + len + 2)
        }
        b'*' => {
            let Ok(count) = usize::try_from(number()?) else {
                return Ok(Some((Reply::Array(None), after)));
            };
            let mut items = Vec::with_capacity(count);
            let mut at = after;
            for _ in 0..count {
                let Some((item, used)) = parse(&buf[at..])? else {
                    return Ok(None);
                };
                items.push(item);
                at += used;
            }
            (Reply::Array(Some(items)), at)
        }
        other => return Err(format!("unknown RESP type byte {other:#x}")),
    }))
}

/// `INFO replication`'s `key:value` lines as a map (src/server.c@7.0.15 `genRedisInfoString`).
pub fn info_fields(info: &str) -> BTreeMap<String, String> {
    info.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}
