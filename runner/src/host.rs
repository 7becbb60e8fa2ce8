//! Loads a waPC module with `wasmtime-provider` and calls it as Kubewarden's policy-evaluator does.

use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, anyhow};
use serde_json::Value;
use wapc::WapcHost;
use wasmtime_provider::WasmtimeEngineProviderBuilder;

use crate::admission::{PolicyResponse, SettingsResponse};
use crate::compile_cache::{CacheSetting, CachingEngine, Compilation};

/// One log event a policy sent through the `kubewarden/tracing/log` host call (the SDK's slog drain).
#[derive(Debug, Clone, PartialEq)]
pub struct LogEvent {
    /// `debug`, `info`, `warning` or `error`.
    pub level: String,
    /// The message.
    pub message: String,
    /// All other structured fields the policy attached.
    pub fields: serde_json::Map<String, Value>,
}

type LogSink = Arc<Mutex<Vec<LogEvent>>>;

/// A loaded policy: one wasmtime instance, reused for every call (as `kwctl bench` does).
pub struct Policy {
    host: WapcHost,
    logs: LogSink,
    compilation: Compilation,
}

impl Policy {
    /// Compiles (or, with the cache on and the module seen before, reads back) and instantiates a
    /// waPC module, with WASI and no host capabilities but logging.
    ///
    /// # Errors
    /// When the bytes are not a WebAssembly module, or the module is not a waPC guest (no `__guest_call`,
    /// no `wapc_init`), or it does not answer `protocol_version` as a Kubewarden policy does; when the
    /// cache directory cannot be created.
    pub fn load(module: &[u8], cache: &CacheSetting) -> Result<Policy> {
        if !module.starts_with(b"\0asm") {
            return Err(anyhow!(
                "not a WebAssembly module (a compiled policy.wasm starts with the bytes \\0asm)"
            ));
        }
        let caching = CachingEngine::new(cache)?;
        let engine = WasmtimeEngineProviderBuilder::new()
            .engine(caching.engine.clone())
            .module_bytes(module)
            .build()
            .map_err(|e| anyhow!("cannot load the module as a waPC policy: {}", one_line(&e)))?;
        let logs: LogSink = Arc::default();
        let sink = Arc::clone(&logs);
        let host = WapcHost::new(
            Box::new(engine),
            Some(Box::new(
                move |_id, binding, namespace, operation, payload| {
                    host_callback(&sink, binding, namespace, operation, payload)
                },
            )),
        )
        .map_err(|e| anyhow!("cannot start the module as a waPC policy: {}", one_line(&e)))?;
        let policy = Policy {
            host,
            logs,
            compilation: caching.compilation(),
        };
        let version = policy
            .call("protocol_version", b"")
            .context("the module is not a Kubewarden policy (protocol_version failed)")?;
        let version: Value = serde_json::from_slice(&version)
            .context("the module's protocol_version reply is not JSON")?;
        if version != "v1" {
            return Err(anyhow!(
                "unsupported Kubewarden protocol version {version}, expected \"v1\""
            ));
        }
        Ok(policy)
    }

    /// Calls `validate_settings` with the settings JSON.
    ///
    /// # Errors
    /// When the guest fails or traps, or answers something that is not a settings response.
    pub fn validate_settings(&self, settings: &Value) -> Result<SettingsResponse> {
        let reply = self.call("validate_settings", &serde_json::to_vec(settings)?)?;
        serde_json::from_slice(&reply).context("the policy's validate_settings reply is malformed")
    }

    /// Calls `validate` with a ready-made payload (`{"request": …, "settings": …}`).
    ///
    /// # Errors
    /// When the guest fails or traps, or answers something that is not a validation response.
    pub fn validate(&self, payload: &[u8]) -> Result<PolicyResponse> {
        let reply = self.call("validate", payload)?;
        serde_json::from_slice(&reply).context("the policy's validate reply is malformed")
    }

    /// Whether the module was compiled or read from the compilation cache.
    pub fn compilation(&self) -> Compilation {
        self.compilation
    }

    /// Takes the log events the policy sent since the last call.
    pub fn take_logs(&self) -> Vec<LogEvent> {
        std::mem::take(&mut *self.logs.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn call(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>> {
        trap_log::install();
        trap_log::take();
        self.host.call(operation, payload).map_err(|e| {
            let mut message = one_line(&e);
            if let Some(cause) = trap_log::take() {
                message = format!("{message}: {cause}");
            }
            anyhow!("policy call `{operation}` failed: {message}")
        })
    }
}

/// wasmtime-provider reports a guest trap to waPC with only the error's top line ("error while executing
/// at wasm backtrace:"); the cause ("wasm trap: wasm `unreachable` instruction executed", a Rust panic
/// in the guest) is only in the `log` record it emits. This logger keeps that cause for the error.
mod trap_log {
    use std::sync::{Mutex, Once};

    static LAST_CAUSE: Mutex<Option<String>> = Mutex::new(None);

    struct TrapLogger;

    impl log::Log for TrapLogger {
        fn enabled(&self, metadata: &log::Metadata) -> bool {
            metadata.level() <= log::Level::Error
                && metadata.target().starts_with("wasmtime_provider")
        }

        fn log(&self, record: &log::Record) {
            if !self.enabled(record.metadata()) {
                return;
            }
            let text = record.args().to_string();
            let cause = text
                .lines()
                .skip_while(|l| !l.trim_start().starts_with("Caused by"))
                .skip(1)
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(|l| {
                    l.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':')
                        .trim()
                        .to_string()
                });
            if let Some(cause) = cause {
                *LAST_CAUSE.lock().unwrap_or_else(|e| e.into_inner()) = Some(cause);
            }
        }

        fn flush(&self) {}
    }

    static LOGGER: TrapLogger = TrapLogger;

    /// Installs the logger once; a no-op when another logger was installed first.
    pub(super) fn install() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            if log::set_logger(&LOGGER).is_ok() {
                log::set_max_level(log::LevelFilter::Error);
            }
        });
    }

    /// The cause of the last trap, if one was logged since the last call.
    pub(super) fn take() -> Option<String> {
        LAST_CAUSE.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The host side of the guest's `host_call`s: `kubewarden/tracing/log` is recorded; every other
/// capability (Kubernetes context, OCI, sigstore, DNS) is refused, as for a policy declaring
/// `contextAwareResources: []` and run without network.
fn host_callback(
    sink: &LogSink,
    binding: &str,
    namespace: &str,
    operation: &str,
    payload: &[u8],
) -> Result<Vec<u8>, Box<dyn std::error::Error + Send + Sync>> {
    if (binding, namespace, operation) != ("kubewarden", "tracing", "log") {
        return Err(format!(
            "host capability {binding}/{namespace}/{operation} is not available in this runner"
        )
        .into());
    }
    let mut fields: serde_json::Map<String, Value> = serde_json::from_slice(payload)?;
    let text = |v: Option<Value>| match v {
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let event = LogEvent {
        level: text(fields.remove("level")),
        message: text(fields.remove("message")),
        fields,
    };
    sink.lock().unwrap_or_else(|e| e.into_inner()).push(event);
    Ok(Vec::new())
}

/// The first line of an error: wasmtime's trap messages span several lines with a backtrace.
fn one_line(e: &dyn std::fmt::Display) -> String {
    // wapc keeps only the top line of a wasmtime error ("error while executing at wasm backtrace:")
    // followed by frames; the cause comes from `trap_log`.
    e.to_string()
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("unknown error")
        .trim_end_matches(':')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_not_a_policy() {
        let err = Policy::load(b"not wasm", &CacheSetting::Off)
            .err()
            .expect("must fail");
        let msg = err.to_string();
        assert!(msg.starts_with("not a WebAssembly module"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }

    #[test]
    fn a_wasm_module_without_wapc_exports_is_refused() {
        // The smallest valid module: magic + version, no exports.
        let err = Policy::load(b"\0asm\x01\0\0\0", &CacheSetting::Off)
            .err()
            .expect("must fail");
        assert!(!err.to_string().contains('\n'), "{err}");
    }

    #[test]
    fn log_calls_are_recorded_and_other_capabilities_refused() {
        let sink: LogSink = Arc::default();
        let ok = host_callback(
            &sink,
            "kubewarden",
            "tracing",
            "log",
            br#"{"level":"info","message":"hi","uid":"u1"}"#,
        );
        assert!(ok.is_ok());
        let logs = sink.lock().unwrap().clone();
        assert_eq!(logs.len(), 1);
        assert_eq!(logs[0].level, "info");
        assert_eq!(logs[0].message, "hi");
        assert_eq!(logs[0].fields["uid"], "u1");
        let err = host_callback(
            &sink,
            "kubewarden",
            "kubernetes",
            "list_resources_by_namespace",
            b"{}",
        )
        .unwrap_err();
        assert!(err.to_string().contains("not available"), "{err}");
    }
}
