//! Talking to Redis and Sentinel: one connection per call (redis-rs 1.8, multiplexed over tokio), each
//! connection and each command bounded by the entry's timeout, the password read from its file at every
//! connection (a rotated Secret is picked up), and replies as one-line texts.

use std::path::PathBuf;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Cmd, FromRedisValue, IntoConnectionInfo, RedisConnectionInfo};

use super::view::Fields;
use crate::cluster::prometheus::read_secret;

/// Which kind of server a connection goes to (whose password it sends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    /// A Redis data node (`requirepass` / the default user's password: `passwordFile`).
    Node,
    /// A Sentinel (its own `requirepass`: `sentinelPasswordFile`).
    Sentinel,
}

/// How to connect: the bound of each connection and command, and the password files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connector {
    /// The bound of one connection, and of one command.
    pub timeout: Duration,
    /// The data nodes' password file (none: no AUTH).
    pub password_file: Option<PathBuf>,
    /// The Sentinels' password file (none: no AUTH).
    pub sentinel_password_file: Option<PathBuf>,
}

/// A command's failure: the server's error (a reply, e.g. `NOGOODSLAVE …`) or no reply at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The server answered with an error: its code (`INPROG`, `NOGOODSLAVE`, `NOQUORUM`, `ERR`) and
    /// the whole line.
    Refused(String, String),
    /// No reply (unreachable, a timeout, authentication, a reply of another type): the cause.
    Unanswered(String),
}

impl Failure {
    /// The failure in words.
    pub fn words(&self) -> &str {
        match self {
            Failure::Refused(_, line) | Failure::Unanswered(line) => line,
        }
    }
}

impl From<redis::RedisError> for Failure {
    fn from(e: redis::RedisError) -> Failure {
        match e.code() {
            Some(code) if !e.is_io_error() && !e.is_timeout() => {
                let line = format!("{code} {}", e.detail().unwrap_or_default());
                Failure::Refused(code.to_string(), line.trim().to_string())
            }
            _ => Failure::Unanswered(one_line(&e.to_string())),
        }
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Connector {
    /// A connection to `address` (`host:port`) of a `server`, authenticated when its password file is
    /// set.
    ///
    /// # Errors
    /// The address is not `host:port`, the password file cannot be read, or no connection within the
    /// timeout (refused, unresolved, authentication failed).
    pub async fn connect(
        &self,
        address: &str,
        server: Server,
    ) -> Result<MultiplexedConnection, Failure> {
        let Some((host, port)) = address.rsplit_once(':') else {
            return Err(Failure::Unanswered(format!("{address:?} is not host:port")));
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port: u16 = port
            .parse()
            .map_err(|_| Failure::Unanswered(format!("{address:?}: not a port")))?;
        let mut settings = RedisConnectionInfo::default().set_skip_set_lib_name();
        let file = match server {
            Server::Node => &self.password_file,
            Server::Sentinel => &self.sentinel_password_file,
        };
        if let Some(file) = file {
            let what = match server {
                Server::Node => "the Redis password",
                Server::Sentinel => "the Sentinel password",
            };
            settings = settings.set_password(read_secret(file, what).map_err(Failure::Unanswered)?);
        }
        let info = (host.to_string(), port)
            .into_connection_info()?
            .set_redis_settings(settings);
        let client = redis::Client::open(info)?;
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout));
        let connecting = client.get_multiplexed_async_connection_with_config(&config);
        match tokio::time::timeout(self.timeout, connecting).await {
            Ok(c) => Ok(c?),
            Err(_) => Err(Failure::Unanswered(format!(
                "no connection within {} s",
                self.timeout.as_secs()
            ))),
        }
    }

    /// Runs `cmd` on `con`, within the timeout.
    ///
    /// # Errors
    /// The server's error reply, or no reply of type `T` within the timeout.
    pub async fn query<T: FromRedisValue>(
        &self,
        con: &mut MultiplexedConnection,
        cmd: &Cmd,
    ) -> Result<T, Failure> {
        match tokio::time::timeout(self.timeout, cmd.query_async::<T>(con)).await {
            Ok(r) => Ok(r?),
            Err(_) => Err(Failure::Unanswered(format!(
                "no reply within {} s",
                self.timeout.as_secs()
            ))),
        }
    }

    /// `work` (several commands), within one timeout.
    ///
    /// # Errors
    /// `work`'s, or no end within the timeout.
    pub async fn within<T>(
        &self,
        work: impl Future<Output = Result<T, Failure>>,
    ) -> Result<T, Failure> {
        tokio::time::timeout(self.timeout, work)
            .await
            .unwrap_or_else(|_| {
                Err(Failure::Unanswered(format!(
                    "no answer within {} s",
                    self.timeout.as_secs()
                )))
            })
    }

    /// `INFO replication` of the Redis at `address`, as fields.
    ///
    /// # Errors
    /// As [`Connector::connect`] and [`Connector::query`].
    pub async fn info(&self, address: &str) -> Result<Fields, Failure> {
        let mut con = self.connect(address, Server::Node).await?;
        let text: String = self
            .query(&mut con, redis::cmd("INFO").arg("replication"))
            .await?;
        Ok(info_fields(&text))
    }
}

/// The `key:value` lines of an INFO reply (src/server.c `genRedisInfoString`: `# Section` headers,
/// CRLF line ends).
pub fn info_fields(text: &str) -> Fields {
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_is_read_as_fields() {
        let text = "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\nmaster_port:7000\r\n\
                    master_link_status:up\r\nslave_repl_offset:4123\r\n";
        let f = info_fields(text);
        assert_eq!(f.get("role").map(String::as_str), Some("slave"));
        assert_eq!(f.get("slave_repl_offset").map(String::as_str), Some("4123"));
        assert!(!f.contains_key("# Replication"));
    }
}
