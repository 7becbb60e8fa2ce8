//! wasmtime's compilation cache for the runner, as `kwctl` keeps it: a module compiled once is read back
//! from disk on every later run instead of being compiled again by cranelift.
//!
//! The cache is wasmtime's own (`wasmtime::Cache`): one zstd-compressed file per module under
//! `DIR/modules/wasmtime-<version>/`, keyed by a SHA-256 of the module's bytes and the engine's
//! compiler settings, so a changed policy.wasm or another wasmtime version never reads a stale entry.
//! `DIR` is wasmtime's default, `$XDG_CACHE_HOME/wasmtime` (else `~/.cache/wasmtime`), shared with
//! the `wasmtime` CLI, unless a directory is given.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use wasmtime_provider::wasmtime::{Cache, CacheConfig, Config, Engine};

/// Whether and where compiled modules are cached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheSetting {
    /// Compile every time; nothing is read or written.
    Off,
    /// wasmtime's default directory: `$XDG_CACHE_HOME/wasmtime`, else `$HOME/.cache/wasmtime`; when
    /// neither variable is set or the directory cannot be created, the module is compiled uncached (as
    /// wasmtime-provider does), since nobody asked for that directory.
    Default,
    /// This directory (created when missing; made absolute against the working directory).
    Dir(PathBuf),
}

/// Where a loaded module's machine code came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compilation {
    /// Compiled by cranelift; the cache is off.
    Uncached,
    /// Compiled by cranelift, then written to the cache.
    Stored,
    /// Read from the cache: no compilation.
    Reused,
}

impl Compilation {
    /// A few words for people: `compiled (cache off)`, `compiled and cached`, `from the cache`.
    pub fn describe(self) -> &'static str {
        match self {
            Compilation::Uncached => "compiled (cache off)",
            Compilation::Stored => "compiled and cached",
            Compilation::Reused => "from the cache",
        }
    }
}

/// A wasmtime engine configured as `wasmtime-provider` configures its own (default `Config`, cranelift),
/// plus the cache when one is set.
pub struct CachingEngine {
    /// The engine to compile and run the module with.
    pub engine: Engine,
    cache: Option<Cache>,
}

impl CachingEngine {
    /// Builds the engine; the cache worker thread starts with it.
    ///
    /// # Errors
    /// A `Dir` that cannot be created or made canonical, or wasmtime refuses the configuration.
    pub fn new(setting: &CacheSetting) -> Result<CachingEngine> {
        let cache = match setting {
            CacheSetting::Off => None,
            CacheSetting::Default => Cache::new(CacheConfig::new()).ok(),
            CacheSetting::Dir(dir) => Some(cache_in(dir).with_context(|| {
                format!(
                    "cannot set up the compilation cache in {} (turn it off with --no-cache)",
                    dir.display()
                )
            })?),
        };
        let mut config = Config::default();
        config.cache(cache.clone());
        let engine = Engine::new(&config).map_err(|e| anyhow::anyhow!("{e:#}"))?;
        Ok(CachingEngine { engine, cache })
    }

    /// How the modules compiled with this engine so far were obtained: `Reused` when every one came
    /// from the cache, `Stored` when one was compiled (and cached), `Uncached` with the cache off.
    pub fn compilation(&self) -> Compilation {
        match &self.cache {
            None => Compilation::Uncached,
            Some(cache) if cache.cache_misses() == 0 && cache.cache_hits() > 0 => {
                Compilation::Reused
            }
            Some(_) => Compilation::Stored,
        }
    }
}

/// wasmtime's cache in `dir`, made absolute against the working directory (wasmtime wants it absolute).
fn cache_in(dir: &Path) -> Result<Cache> {
    let mut config = CacheConfig::new();
    config.with_directory(std::path::absolute(dir)?);
    Cache::new(config).map_err(|e| anyhow::anyhow!("{e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime_provider::wasmtime::Module;

    /// A valid module with one function, so there is machine code to cache.
    const MODULE: &str = r#"(module (func (export "f") (result i32) i32.const 7))"#;

    #[test]
    fn a_second_engine_reads_the_module_the_first_one_stored() {
        let dir = std::env::temp_dir().join(format!("runner-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let wasm = wat::parse_str(MODULE).unwrap();
        let setting = CacheSetting::Dir(dir.clone());

        let first = CachingEngine::new(&setting).unwrap();
        Module::new(&first.engine, &wasm).unwrap();
        assert_eq!(first.compilation(), Compilation::Stored);
        assert!(
            dir.join("modules").is_dir(),
            "nothing written under {}",
            dir.display()
        );

        let second = CachingEngine::new(&setting).unwrap();
        Module::new(&second.engine, &wasm).unwrap();
        assert_eq!(second.compilation(), Compilation::Reused);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_directory_that_cannot_be_made_is_an_error_naming_it() {
        let err = CachingEngine::new(&CacheSetting::Dir("/dev/null/cache".into()))
            .err()
            .expect("/dev/null is a file");
        let msg = format!("{err:#}");
        assert!(msg.contains("/dev/null/cache"), "{msg}");
        assert!(msg.contains("--no-cache"), "{msg}");
    }

    #[test]
    fn off_compiles_and_reports_it() {
        let engine = CachingEngine::new(&CacheSetting::Off).unwrap();
        Module::new(&engine.engine, wat::parse_str(MODULE).unwrap()).unwrap();
        assert_eq!(engine.compilation(), Compilation::Uncached);
    }
}
