//! One client per secured endpoint of the stepper's configuration ([`EndpointClient`]): an
//! [`EndpointAuth`] (`config::endpoint_auth`: the `tls` and `auth` of an HTTP check's or a webhook's
//! entry) applied to a reqwest client at start and to every request.
//!
//! Every file is read again at every call ([`EndpointClient::request`]): the token, the user name and
//! password, the CA, the client certificate and its key (`endpoint_tls`), so a rotated Secret is
//! picked up without a restart; an unreadable file is an error of that call naming the field, the
//! endpoint and the path — never a call without the credential. Redirects are the caller's choice on
//! the builder it hands over (the webhooks follow none; [`same_origin_redirects`] for a check that
//! carries credentials). A failed TLS handshake is an error saying `TLS` ([`describe`]).

use std::error::Error;
use std::sync::Arc;

use reqwest::{ClientBuilder, Method, RequestBuilder};

use super::endpoint_tls::TlsFiles;
use super::prometheus::{one_line, read_secret};
use crate::config::endpoint_auth::{Credentials, EndpointAuth, Username};

/// A reqwest client for one endpoint, with its TLS and its credentials.
#[derive(Clone, Debug)]
pub struct EndpointClient {
    what: String,
    http: reqwest::Client,
    credentials: Option<Credentials>,
    tls: Option<Arc<TlsFiles>>,
}

impl EndpointClient {
    /// The client of the endpoint `what` names in messages (`webhook db`, `HTTP check es-health`):
    /// `builder` (timeouts, redirects, user agent: the caller's) with `auth`'s TLS when it has one
    /// (then the roots are the web PKI's and its CA file's; without, reqwest's built-in web PKI
    /// roots).
    ///
    /// # Errors
    /// A TLS file that cannot be read or holds no PEM of its kind, a key that does not match its
    /// certificate, a client reqwest refuses; each naming the field, `what` and the path.
    pub fn new(what: &str, auth: &EndpointAuth, builder: ClientBuilder) -> Result<Self, String> {
        let (builder, tls) = match &auth.tls {
            None => (builder, None),
            Some(tls) => {
                let files = TlsFiles::load(what, tls)?;
                (
                    builder.use_preconfigured_tls(files.client_config()?),
                    Some(files),
                )
            }
        };
        let http = builder
            .build()
            .map_err(|e| format!("building the client of {what}: {}", one_line(&e)))?;
        Ok(EndpointClient {
            what: what.to_string(),
            http,
            credentials: auth.credentials.clone(),
            tls,
        })
    }

    /// A request of `method` to `url` carrying the endpoint's credentials, its TLS files read again.
    ///
    /// # Errors
    /// A file that cannot be read (`reading auth.bearerTokenFile of webhook db /path: …`) or, for the
    /// TLS files, holds no PEM of its kind: the request is not made.
    pub fn request(&self, method: Method, url: &str) -> Result<RequestBuilder, String> {
        if let Some(tls) = &self.tls {
            tls.refresh()?;
        }
        let request = self.http.request(method, url);
        let of = |field: &str| format!("{field} of {}", self.what);
        Ok(match &self.credentials {
            None => request,
            Some(Credentials::Bearer { token_file }) => {
                request.bearer_auth(read_secret(token_file, &of("auth.bearerTokenFile"))?)
            }
            Some(Credentials::Basic {
                username,
                password_file,
            }) => {
                let username = match username {
                    Username::Value(name) => name.clone(),
                    Username::File(path) => read_secret(path, &of("auth.basic.usernameFile"))?,
                };
                let password = read_secret(password_file, &of("auth.basic.passwordFile"))?;
                request.basic_auth(username, Some(password))
            }
        })
    }
}

/// Redirects followed only to the same scheme, host and port as the URL called (at most 10): a 3xx
/// to another address is the answer itself (an error of the call), so neither credentials nor a
/// client certificate ever go elsewhere.
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    })
}

/// A failed call in one line; `TLS: …` first when TLS failed (an unknown issuer, a name the
/// certificate does not carry, a client certificate refused), so the cause is read at a glance.
pub fn describe(e: &reqwest::Error) -> String {
    let text = one_line(e);
    if tls_failed(e) {
        format!("TLS: {text}")
    } else {
        text
    }
}

/// Whether a rustls error is among `e`'s causes, also inside `io::Error`s (tokio-rustls wraps it in one,
/// hyper's connector in another; an `io::Error`'s `source` skips what it wraps).
fn tls_failed(e: &(dyn Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(err) = next {
        if is_rustls(err) {
            return true;
        }
        next = err.source();
    }
    false
}

/// Whether `e` is a rustls error, or an `io::Error` wrapping one (at any depth).
fn is_rustls(e: &(dyn Error + 'static)) -> bool {
    if e.is::<rustls::Error>() {
        return true;
    }
    match e
        .downcast_ref::<std::io::Error>()
        .and_then(std::io::Error::get_ref)
    {
        Some(inner) => is_rustls(inner),
        None => false,
    }
}
