//! Just enough of PostgreSQL's frontend/backend protocol 3.0 for the harness: a startup without a
//! password (the harness's members trust 127.0.0.1, `pg_hba` in [`super::patroni`]) and the simple query
//! protocol, answers as text. Message formats: PostgreSQL 15 documentation, "Frontend/Backend Protocol"
//! (protocol-message-formats.html): StartupMessage, Query `Q`, AuthenticationOk `R` 0, RowDescription `T`,
//! DataRow `D`, CommandComplete `C`, ErrorResponse `E`, ReadyForQuery `Z`. No new crate for it
//! (no `tokio-postgres` in Cargo.lock).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Protocol version 3.0 (the StartupMessage's version field).
const PROTOCOL_3_0: i32 = 196_608;
/// The largest message the harness accepts, in bytes.
const MAX_MESSAGE: usize = 1 << 24;

/// Rows of a query's answer: each column as text, `None` for SQL NULL.
pub type Rows = Vec<Vec<Option<String>>>;

/// One session with a PostgreSQL server.
pub struct PgConn {
    stream: TcpStream,
}

impl PgConn {
    /// Connects to `127.0.0.1:port` as user `postgres`, database `postgres`, within `limit`.
    ///
    /// # Errors
    /// No connection, a refusal (the server's ErrorResponse, e.g. "the database system is starting up"),
    /// or a password asked for.
    pub async fn connect(port: u16, limit: Duration) -> Result<PgConn, String> {
        tokio::time::timeout(limit, Self::connect_now(port))
            .await
            .map_err(|_| format!("127.0.0.1:{port}: no session within {limit:?}"))?
    }

    async fn connect_now(port: u16) -> Result<PgConn, String> {
        let stream = TcpStream::connect(("127.0.0.1", port))
            .await
            .map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
        let _ = stream.set_nodelay(true);
        let mut conn = PgConn { stream };
        let mut body = PROTOCOL_3_0.to_be_bytes().to_vec();
        for s in [
            "user",
            "postgres",
            "database",
            "postgres",
            "application_name",
            "harness",
        ] {
            body.extend_from_slice(s.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut message = i32::try_from(body.len() + 4)
            .expect("small")
            .to_be_bytes()
            .to_vec();
        message.extend_from_slice(&body);
        conn.stream
            .write_all(&message)
            .await
            .map_err(|e| format!("127.0.0.1:{port}: startup: {e}"))?;
        let mut error = None;
        loop {
            let (kind, body) = conn.read_message().await?;
            match kind {
                b'R' if body.get(..4) == Some(&[0, 0, 0, 0]) => {}
                b'R' => {
                    return Err(format!(
                        "127.0.0.1:{port} asks for a password (authentication request {:?}); the \
                         harness's pg_hba trusts 127.0.0.1",
                        body.get(..4)
                    ));
                }
                b'E' => error = Some(error_text(&body)),
                b'Z' => break,
                _ => {}
            }
            if let Some(e) = error.take() {
                return Err(format!("127.0.0.1:{port}: {e}"));
            }
        }
        Ok(conn)
    }

    /// Runs `sql` (one or more statements, simple query protocol) and returns the rows of its answer.
    ///
    /// # Errors
    /// I/O, or the server's ErrorResponse (e.g. "cannot execute INSERT in a read-only transaction").
    pub async fn query(&mut self, sql: &str) -> Result<Rows, String> {
        let mut message = vec![b'Q'];
        message.extend_from_slice(
            &i32::try_from(sql.len() + 5)
                .map_err(|_| "query too long".to_string())?
                .to_be_bytes(),
        );
        message.extend_from_slice(sql.as_bytes());
        message.push(0);
        self.stream
            .write_all(&message)
            .await
            .map_err(|e| format!("sending a query: {e}"))?;
        let mut rows = Vec::new();
        let mut error = None;
        loop {
            let (kind, body) = self.read_message().await?;
            match kind {
                b'D' => rows.push(data_row(&body)?),
                b'E' => error = Some(error_text(&body)),
                b'Z' => break,
                _ => {}
            }
        }
        error.map_or(Ok(rows), Err)
    }

    async fn read_message(&mut self) -> Result<(u8, Vec<u8>), String> {
        let mut head = [0u8; 5];
        self.stream
            .read_exact(&mut head)
            .await
            .map_err(|e| format!("reading an answer: {e}"))?;
        let len = usize::try_from(i32::from_be_bytes([head[1], head[2], head[3], head[4]]))
            .map_err(|_| "negative message length".to_string())?;
        if !(4..=MAX_MESSAGE).contains(&len) {
            return Err(format!("message of {len} bytes"));
        }
        let mut body = vec![0u8; len - 4];
        self.stream
            .read_exact(&mut body)
            .await
            .map_err(|e| format!("reading an answer: {e}"))?;
        Ok((head[0], body))
    }
}

/// A DataRow's columns: Int16 count, then each Int32 length (-1: NULL) and bytes.
fn data_row(body: &[u8]) -> Result<Vec<Option<String>>, String> {
    let bad = || "malformed DataRow".to_string();
    let count = u16::from_be_bytes(
        body.get(..2)
            .ok_or_else(bad)?
            .try_into()
            .map_err(|_| bad())?,
    );
    let mut at = 2;
    let mut columns = Vec::with_capacity(usize::from(count));
    for _ in 0..count {
        let len = i32::from_be_bytes(
            body.get(at..at + 4)
                .ok_or_else(bad)?
                .try_into()
                .map_err(|_| bad())?,
        );
        at += 4;
        if len < 0 {
            columns.push(None);
            continue;
        }
        let end = at + usize::try_from(len).map_err(|_| bad())?;
        let text = body.get(at..end).ok_or_else(bad)?;
        columns.push(Some(String::from_utf8_lossy(text).into_owned()));
        at = end;
    }
    Ok(columns)
}

/// An ErrorResponse's severity, SQLSTATE and message (fields `S`, `C`, `M`).
fn error_text(body: &[u8]) -> String {
    let mut severity = "";
    let mut code = "";
    let mut message = "";
    for field in body.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let text = std::str::from_utf8(&field[1..]).unwrap_or("?");
        match field[0] {
            b'S' => severity = text,
            b'C' => code = text,
            b'M' => message = text,
            _ => {}
        }
    }
    format!("{severity} {code}: {message}")
}
