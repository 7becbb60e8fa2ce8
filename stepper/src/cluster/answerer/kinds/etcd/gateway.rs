//! etcd's gRPC-gateway JSON, the shapes the answerer reads (etcd v3.4.23
//! etcdserver/etcdserverpb/rpc.proto, served as JSON on every client URL by
//! etcdserver/etcdserverpb/gw/rpc.pb.gw.go; the same paths and names at etcd 3.5 and 3.6).
//!
//! The gateway writes proto3 JSON: field names as the `.proto` spells them (`raftAppliedIndex`,
//! `isLearner`, but the header's `member_id`), **64-bit integers as decimal strings**, and fields at
//! their default value left out (`isLearner` only when true, `alarms` only when some are raised,
//! `errors` only when there are some). So every field here has a default, and every 64-bit number is
//! read from a string (or, leniently, a number).
//!
//! An error is a JSON body whatever the HTTP status: `{"error", "message", "code"}` from 3.4 and 3.5
//! (grpc-gateway v1, FailedPrecondition as HTTP 412), `{"code", "message", "details"}` from 3.6
//! (grpc-gateway v2, FailedPrecondition as HTTP 400): the answerer decides on the gRPC `code` and
//! `message` ([`GatewayError`]), never on the HTTP status.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

/// `POST /v3/cluster/member/list` (Cluster.MemberList).
pub const MEMBER_LIST: &str = "/v3/cluster/member/list";
/// `POST /v3/maintenance/status` (Maintenance.Status): answered by the member reached, about itself.
pub const STATUS: &str = "/v3/maintenance/status";
/// `POST /v3/maintenance/alarm` (Maintenance.Alarm), body `{"action": "GET"}`.
pub const ALARM: &str = "/v3/maintenance/alarm";
/// `POST /v3/maintenance/transfer-leadership` (Maintenance.MoveLeader), body `{"targetID": "<id>"}`.
pub const MOVE_LEADER: &str = "/v3/maintenance/transfer-leadership";
/// `POST /v3/auth/authenticate` (Auth.Authenticate), body `{"name", "password"}` → `{"token"}`.
pub const AUTHENTICATE: &str = "/v3/auth/authenticate";

/// gRPC status code FailedPrecondition (grpc/codes): "not leader", "bad leader transferee",
/// "authentication is not enabled".
pub const FAILED_PRECONDITION: u32 = 9;
/// gRPC status code Unauthenticated: "invalid auth token".
pub const UNAUTHENTICATED: u32 = 16;
/// gRPC status code PermissionDenied: "permission denied".
pub const PERMISSION_DENIED: u32 = 7;

/// etcd's words when MoveLeader reaches a member that is not the leader (rpctypes.ErrGRPCNotLeader,
/// v3rpc/maintenance.go@v3.4.23 `MoveLeader`).
pub const NOT_LEADER: &str = "etcdserver: not leader";
/// etcd's words when the MoveLeader target is no member or a learner (rpctypes.ErrGRPCBadLeaderTransferee,
/// etcdserver/server.go@v3.4.23 `MoveLeader`).
pub const BAD_TRANSFEREE: &str = "etcdserver: bad leader transferee";
/// etcd's words when credentials are sent to a cluster without authentication
/// (rpctypes.ErrGRPCAuthNotEnabled).
pub const AUTH_NOT_ENABLED: &str = "etcdserver: authentication is not enabled";

/// `MemberListResponse`, the field read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct MemberList {
    /// Every member, voters and learners.
    #[serde(default)]
    pub members: Vec<Member>,
}

/// One `Member` (rpc.proto@v3.4.23 `Member`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Member {
    /// The member's ID.
    #[serde(rename = "ID", default, deserialize_with = "u64_text")]
    pub id: u64,
    /// Its `--name`; empty while a member added is not started yet.
    #[serde(default)]
    pub name: String,
    /// Its peer URLs (`--initial-advertise-peer-urls`).
    #[serde(rename = "peerURLs", default)]
    pub peer_urls: Vec<String>,
    /// Its client URLs (`--advertise-client-urls`); none while not started.
    #[serde(rename = "clientURLs", default)]
    pub client_urls: Vec<String>,
    /// A learner: a non-voting member (etcd ≥ 3.4).
    #[serde(rename = "isLearner", default)]
    pub is_learner: bool,
}

/// `ResponseHeader`, the fields read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Header {
    /// The ID of the member that answered.
    #[serde(default, deserialize_with = "u64_text")]
    pub member_id: u64,
}

/// `StatusResponse` (rpc.proto@v3.4.23 l.975-995), what one member says of itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Who answered.
    #[serde(default)]
    pub header: Header,
    /// The server's version, e.g. `3.4.23`.
    #[serde(default)]
    pub version: String,
    /// The ID of the member it follows as leader; 0 (left out) when it knows none.
    #[serde(default, deserialize_with = "u64_text")]
    pub leader: u64,
    /// Its raft commit index (v3rpc/maintenance.go@v3.4.23: `CommittedIndex()`).
    #[serde(default, deserialize_with = "u64_text")]
    pub raft_index: u64,
    /// Its raft term.
    #[serde(default, deserialize_with = "u64_text")]
    pub raft_term: u64,
    /// The index it has applied to its store.
    #[serde(default, deserialize_with = "u64_text")]
    pub raft_applied_index: u64,
    /// `etcdserver: no leader`, and one line per raised alarm.
    #[serde(default)]
    pub errors: Vec<String>,
    /// True on a learner.
    #[serde(default)]
    pub is_learner: bool,
}

/// `AlarmResponse`, the field read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Alarms {
    /// The raised alarms; left out when none.
    #[serde(default)]
    pub alarms: Vec<Alarm>,
}

/// One `AlarmMember`: an alarm raised by one member.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Alarm {
    /// The member that raised it.
    #[serde(rename = "memberID", default, deserialize_with = "u64_text")]
    pub member_id: u64,
    /// `NOSPACE` (the backend quota is exceeded: the cluster takes no writes) or `CORRUPT` (a member's
    /// data differs from the others'); `AlarmType` as its name (or its number, read as the name).
    #[serde(default, deserialize_with = "alarm_type")]
    pub alarm: String,
}

/// `AuthenticateResponse`, the field read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Token {
    /// The token, sent as the `Authorization` header (auth/store.go@v3.4.23 `AuthInfoFromCtx` reads
    /// the gateway's `authorization` metadata).
    #[serde(default)]
    pub token: String,
}

/// The gateway's error body: the gRPC `code` and `message` (`error` in 3.4/3.5 repeats the message).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct GatewayError {
    /// The gRPC status code (9 FailedPrecondition, 16 Unauthenticated, …).
    #[serde(default)]
    pub code: u32,
    /// etcd's words (`etcdserver: not leader`).
    #[serde(default)]
    pub message: String,
    /// The same words, from grpc-gateway v1.
    #[serde(default)]
    pub error: String,
}

impl GatewayError {
    /// etcd's words: `message`, else `error`.
    pub fn words(&self) -> &str {
        if self.message.is_empty() {
            &self.error
        } else {
            &self.message
        }
    }
}

/// A 64-bit unsigned integer as proto3 JSON writes it: a decimal string (or a number).
fn u64_text<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Text {
        Number(u64),
        Text(String),
    }
    match Text::deserialize(d)? {
        Text::Number(n) => Ok(n),
        Text::Text(s) => s.parse().map_err(|_| {
            D::Error::custom(format!(
                "{s:?}: expected a 64-bit unsigned integer as a decimal string"
            ))
        }),
    }
}

/// `AlarmType` by name, its number read as the name (rpc.proto@v3.4.23: NONE 0, NOSPACE 1, CORRUPT 2).
fn alarm_type<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Kind {
        Number(u64),
        Name(String),
    }
    Ok(match Kind::deserialize(d)? {
        Kind::Name(name) => name,
        Kind::Number(0) => "NONE".into(),
        Kind::Number(1) => "NOSPACE".into(),
        Kind::Number(2) => "CORRUPT".into(),
        Kind::Number(n) => format!("alarm type {n}"),
    })
}

/// Why a call to the gateway got no body of the shape asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError {
    /// etcd answered with its error body: the HTTP status, and the gRPC code and words.
    Etcd(u16, GatewayError),
    /// No answer of etcd's: unreachable, a timeout, a status without etcd's error body (404 when the
    /// gateway is off, `--enable-grpc-gateway=false`), a body not of the shape.
    NoAnswer(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Etcd(status, e) => {
                write!(f, "HTTP {status}: gRPC code {}: {}", e.code, e.words())
            }
            CallError::NoAnswer(e) => f.write_str(e),
        }
    }
}
