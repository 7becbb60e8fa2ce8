//! The members of an answerer entry reached over HTTP (Patroni's REST API, etcd's gRPC gateway): its
//! `address` template and `members` overrides, and the one client that reaches them with the entry's
//! `tls` and `auth` (`config::endpoint_auth`, as the HTTP checks and the webhooks read them).

use std::collections::BTreeMap;

use crate::cluster::answerer::address::{Addresses, Form};
use crate::cluster::endpoint_client::EndpointClient;
use crate::config::endpoint_auth::{AuthFields, TlsFields, endpoint_auth};

/// The entry's fields an HTTP kind shares.
pub struct HttpMembers {
    /// `address`: the members' URL template (`http://{pod}.{service}.{namespace}.svc:8008`).
    pub address: Option<String>,
    /// `members`: pod name → URL, overriding the template.
    pub members: BTreeMap<String, String>,
    /// `tls`: CA, client certificate, server name.
    pub tls: Option<TlsFields>,
    /// `auth` sent on every call (`None`: none, or the kind reads it itself, as etcd's user does).
    pub auth: Option<AuthFields>,
}

impl HttpMembers {
    /// The members' addresses and the client reaching them, built from `builder`; `what` names the
    /// answerer in the client's errors (`the Patroni answerer answerers[0].patroni`), `field` the entry
    /// (`answerers[0].patroni`).
    ///
    /// # Errors
    /// An address that is not an http(s) URL template; `tls` with an `http://` address or member;
    /// `tls` or `auth` refused (`config::endpoint_auth`), or a TLS file that cannot be read: each naming
    /// the field.
    pub fn build(
        self,
        builder: reqwest::ClientBuilder,
        what: &str,
        field: &str,
    ) -> Result<(Addresses, EndpointClient), String> {
        let sample = self
            .address
            .clone()
            .or_else(|| self.members.values().next().cloned())
            .unwrap_or_default();
        if self.tls.is_some() && self.members.values().any(|m| !m.starts_with("https://")) {
            return Err(format!(
                "{field}.tls: given with an http:// member; expected https:// addresses, or no tls"
            ));
        }
        let addresses = Addresses::new(self.address, self.members, Form::Url, field)?;
        let auth =
            endpoint_auth(&sample, self.tls, self.auth).map_err(|e| format!("{field}.{e}"))?;
        let http = EndpointClient::new(&format!("{what} {field}"), &auth, builder)?;
        Ok((addresses, http))
    }
}
