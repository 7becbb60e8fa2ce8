//! An endpoint's `tls` and `auth` fields (`config::endpoint_auth`, shared by the HTTP checks' and the
//! webhooks' files): the YAML as written becomes typed settings, and every way to get it wrong is an
//! error naming the field and the expected form.

use serde::Deserialize;
use sts_stepper::config::endpoint_auth::{
    AuthFields, ClientCert, Credentials, EndpointAuth, Tls, TlsFields, Username, endpoint_auth,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(default)]
    tls: Option<TlsFields>,
    #[serde(default)]
    auth: Option<AuthFields>,
}

/// The settings of an entry holding `yaml`, for `url`.
fn read(url: &str, yaml: &str) -> Result<EndpointAuth, String> {
    let entry: Entry = serde_saphyr::from_str(yaml).map_err(|e| e.to_string())?;
    endpoint_auth(url, entry.tls, entry.auth).map_err(|e| e.to_string())
}

const ES: &str = "https://logs-es-http.search.svc:9200/_cluster/health";

#[test]
fn the_elasticsearch_entry_is_a_ca_and_basic_auth() {
    let got = read(
        ES,
        "tls:\n  caFile: /var/run/secrets/es-http-ca/ca.crt\nauth:\n  basic:\n    username: elastic\n    passwordFile: /var/run/secrets/es-user/elastic\n",
    );
    assert_eq!(
        got,
        Ok(EndpointAuth {
            tls: Some(Tls {
                ca_file: Some("/var/run/secrets/es-http-ca/ca.crt".into()),
                client: None,
                server_name: None,
            }),
            credentials: Some(Credentials::Basic {
                username: Username::Value("elastic".into()),
                password_file: "/var/run/secrets/es-user/elastic".into(),
            }),
        })
    );
}

#[test]
fn a_client_certificate_a_server_name_and_a_token_file() {
    let got = read(
        ES,
        "tls:\n  certFile: /c/tls.crt\n  keyFile: /c/tls.key\n  serverName: 10.0.0.7\nauth:\n  bearerTokenFile: /t/token\n",
    )
    .expect("valid");
    assert_eq!(
        got.tls,
        Some(Tls {
            ca_file: None,
            client: Some(ClientCert {
                cert_file: "/c/tls.crt".into(),
                key_file: "/c/tls.key".into(),
            }),
            server_name: Some("10.0.0.7".into()),
        })
    );
    assert_eq!(
        got.credentials,
        Some(Credentials::Bearer {
            token_file: "/t/token".into()
        })
    );
    let file = read(
        "http://es:9200",
        "auth:\n  basic:\n    usernameFile: /u/username\n    passwordFile: /u/password\n",
    )
    .expect("basic auth from a kubernetes.io/basic-auth Secret");
    assert_eq!(
        file.credentials,
        Some(Credentials::Basic {
            username: Username::File("/u/username".into()),
            password_file: "/u/password".into(),
        })
    );
    assert_eq!(read(ES, "{}"), Ok(EndpointAuth::default()));
}

#[test]
fn each_mistake_names_the_field_and_the_expected_form() {
    let cases = [
        (
            ES,
            "tls:\n  certFile: /c/tls.crt\n",
            "tls.keyFile: missing; certFile and keyFile go together",
        ),
        (
            ES,
            "tls:\n  keyFile: /c/tls.key\n",
            "tls.certFile: missing; certFile and keyFile go together",
        ),
        (
            ES,
            "tls:\n  caFile: \"\"\n",
            "tls.caFile: empty; expected the path of a file holding PEM CA certificates",
        ),
        (
            ES,
            "tls:\n  serverName: \"es http\"\n",
            "tls.serverName: \"es http\" is not a DNS name or an IP address",
        ),
        (
            ES,
            "tls:\n  serverName: -es.svc\n",
            "tls.serverName: \"-es.svc\"",
        ),
        (
            "http://es:9200",
            "tls:\n  caFile: /ca.crt\n",
            "tls: given for \"http://es:9200\"; expected an https:// URL",
        ),
        (
            ES,
            "auth: {}\n",
            "auth: empty; expected one of basic: {username or usernameFile, passwordFile} and bearerTokenFile",
        ),
        (
            ES,
            "auth:\n  bearerTokenFile: /t\n  basic:\n    username: u\n    passwordFile: /p\n",
            "auth: both basic and bearerTokenFile",
        ),
        (
            ES,
            "auth:\n  basic:\n    passwordFile: /p\n",
            "auth.basic.username: missing; expected username",
        ),
        (
            ES,
            "auth:\n  basic:\n    username: u\n    usernameFile: /u\n    passwordFile: /p\n",
            "auth.basic: both username and usernameFile",
        ),
        (
            ES,
            "auth:\n  basic:\n    username: \"a:b\"\n    passwordFile: /p\n",
            "auth.basic.username: \"a:b\": expected a non-empty user name without ':'",
        ),
        (
            ES,
            "auth:\n  basic:\n    username: elastic\n",
            "auth.basic.passwordFile: missing; expected the path of a file holding the password",
        ),
        (
            ES,
            "auth:\n  bearerTokenFile: \"\"\n",
            "auth.bearerTokenFile: empty",
        ),
        (
            ES,
            "auth:\n  basic:\n    usernameFile: \"\"\n    passwordFile: /p\n",
            "auth.basic.usernameFile: empty",
        ),
        (
            ES,
            "tls:\n  insecureSkipVerify: true\n",
            "unknown field `insecureSkipVerify`",
        ),
        (
            ES,
            "auth:\n  basic:\n    user: elastic\n",
            "unknown field `user`",
        ),
    ];
    for (url, yaml, wanted) in cases {
        let e = read(url, yaml).expect_err(yaml);
        assert!(e.contains(wanted), "{wanted:?} not in {e:?}");
    }
}
