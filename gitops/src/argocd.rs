//! A health script run as Argo CD runs one from argocd-cm: Lua 5.1, the object as the global `obj`,
//! and only the libraries Argo CD opens.
//!
//! Argo CD runs health scripts in gopher-lua, a Lua 5.1 VM (argo-cd `util/lua/lua.go`,
//! `runLuaWithResourceActionParameters`, which `ExecuteHealthLua` calls through `runLua`). For a script
//! from argocd-cm without `resource.customizations.useOpenLibs.<group>_<kind>` the state is made with
//! `SkipOpenLibs` and then opens `package`, the base library and `table` (`OpenPackage`, `OpenBase`,
//! `OpenTable`): no `string` (so no string metatable either: `("x"):len()` fails), `math`, `io`,
//! `debug` or `coroutine`. Its safe `os` (`OpenSafeOs`, argo-cd `util/lua/oslib_safe.go`) registers
//! under gopher-lua's `TabLibName`, which `OpenTable` already registered, so it adds nothing
//! (gopher-lua `RegisterModule` returns a loaded module as it is): the global `os` is absent, and only
//! `require("os")` (`PreloadModule(OsLibName, SafeOsLoader)`) gives `os.time` and `os.date`. With
//! `useOpenLibs` (and for the scripts bundled with Argo CD, `GetHealthScript`) gopher-lua's
//! `OpenLibs` opens every library first. The object is converted by `decodeValue`: objects and arrays
//! become tables, every number a float, `null` nil. The script gets one second (`context.WithTimeout`);
//! a runtime error, a non-table result or an unknown status makes the resource Unknown. Here PUC-Rio
//! Lua 5.1 (mlua, vendored) stands in for gopher-lua, with the same libraries (with open libraries:
//! `string` and `math` besides, not `io`, `debug` or the full `os`), conversion and result contract,
//! and an instruction budget for the time limit.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{HookTriggers, Lua, LuaOptions, StdLib, Value, VmState};

/// What a health script returned (`HealthStatus{Status, Message}` in gitops-engine).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LuaHealth {
    /// `Healthy`, `Progressing`, `Suspended`, `Degraded`, `Missing` or `Unknown`; empty when the
    /// script returned nil or an empty table.
    pub status: String,
    /// The message, empty when none.
    pub message: String,
}

/// The health codes Argo CD accepts from a script (gitops-engine `pkg/health`; argo-cd
/// `isValidHealthStatusCode`).
pub const VALID_CODES: [&str; 6] = [
    "Unknown",
    "Progressing",
    "Suspended",
    "Healthy",
    "Degraded",
    "Missing",
];

/// Argo CD's message for a status outside [`VALID_CODES`].
pub const INVALID_STATUS: &str = "Lua returned an invalid health status";

/// VM instructions a script may run: a stand-in for Argo CD's one-second limit, far above what a
/// health check needs (the shipped one runs a few thousand).
pub const INSTRUCTION_BUDGET: u64 = 10_000_000;

/// A health script and how Argo CD would run it.
#[derive(Clone, Debug)]
pub struct HealthScript {
    source: String,
    open_libs: bool,
}

impl HealthScript {
    /// A script from argocd-cm without `useOpenLibs`: base, `package`, `table`, and the safe `os`
    /// through `require("os")` only.
    pub fn argocd_cm(source: impl Into<String>) -> Self {
        HealthScript {
            source: source.into(),
            open_libs: false,
        }
    }

    /// A bundled script (`resource_customizations/`), or one with `useOpenLibs: "true"`: `string` and
    /// `math` too (gopher-lua opens every library; `io`, `debug` and the full `os` are left out here).
    pub fn open_libs(source: impl Into<String>) -> Self {
        HealthScript {
            source: source.into(),
            open_libs: true,
        }
    }

    /// Runs the script on `object` (JSON, as the API server returns it).
    ///
    /// # Errors
    /// What Argo CD turns into `Unknown`: a Lua error (the message names the line), the budget spent,
    /// or a result that is neither a table nor nil.
    pub fn health(&self, object: &serde_json::Value) -> Result<LuaHealth, String> {
        let lua = self.state().map_err(|e| format!("Lua state: {e}"))?;
        let obj = to_lua(&lua, object).map_err(|e| format!("obj: {e}"))?;
        lua.globals()
            .set("obj", obj)
            .map_err(|e| format!("obj: {e}"))?;
        let spent = Rc::new(Cell::new(0u64));
        let counter = Rc::clone(&spent);
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(1000),
            move |_, _| {
                counter.set(counter.get() + 1000);
                if counter.get() > INSTRUCTION_BUDGET {
                    Err(mlua::Error::runtime("time limit: the script ran too long"))
                } else {
                    Ok(VmState::Continue)
                }
            },
        )
        .map_err(|e| format!("hook: {e}"))?;
        let returned: Value = lua
            .load(&self.source)
            .set_name("health.lua")
            .eval()
            .map_err(|e| e.to_string())?;
        result(returned)
    }

    /// A fresh state with the libraries Argo CD opens.
    fn state(&self) -> mlua::Result<Lua> {
        let libs = if self.open_libs {
            StdLib::TABLE | StdLib::PACKAGE | StdLib::OS | StdLib::STRING | StdLib::MATH
        } else {
            StdLib::TABLE | StdLib::PACKAGE | StdLib::OS
        };
        let lua = Lua::new_with(libs, LuaOptions::new())?;
        // Argo CD's safe `os` (only `time` and `date`) for `require("os")`; no global `os` without open
        // libraries (argo-cd `util/lua/oslib_safe.go`, `SafeOsLoader`; see the module's comment).
        lua.load(
            "local t, d = os.time, os.date
             package.loaded.os = nil
             package.preload.os = function() return { time = t, date = d } end
             os = nil",
        )
        .exec()?;
        if self.open_libs {
            lua.load("os = require('os')").exec()?;
        } else {
            // PUC-Rio Lua 5.1's base library carries `coroutine`; gopher-lua's does not.
            lua.load("coroutine = nil; package.loaded.coroutine = nil")
                .exec()?;
        }
        Ok(lua)
    }
}

/// The object as Argo CD's `decodeValue` gives it to Lua: maps and arrays as tables (arrays from 1),
/// numbers as floats, `null` as nil.
///
/// # Errors
/// Only when Lua cannot allocate.
pub fn to_lua(lua: &Lua, value: &serde_json::Value) -> mlua::Result<Value> {
    Ok(match value {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Boolean(*b),
        serde_json::Value::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::String(s) => Value::String(lua.create_string(s)?),
        serde_json::Value::Array(items) => {
            let table = lua.create_table()?;
            for (i, item) in items.iter().enumerate() {
                table.raw_set(i + 1, to_lua(lua, item)?)?;
            }
            Value::Table(table)
        }
        serde_json::Value::Object(fields) => {
            let table = lua.create_table()?;
            for (k, v) in fields {
                table.raw_set(k.as_str(), to_lua(lua, v)?)?;
            }
            Value::Table(table)
        }
    })
}

/// Argo CD's reading of the returned value (`ExecuteHealthLua`): a table's `status` and `message`
/// (a status outside [`VALID_CODES`], or none, becomes `Unknown` with [`INVALID_STATUS`]; an empty
/// table, which its JSON encoder writes as `[]`, an empty health), nil an empty health, anything
/// else an error.
fn result(returned: Value) -> Result<LuaHealth, String> {
    let table = match returned {
        Value::Nil => {
            return Ok(LuaHealth {
                status: String::new(),
                message: String::new(),
            });
        }
        Value::Table(t) => t,
        other => {
            return Err(format!(
                "expect table output from Lua script, not {}",
                lua_type(&other)
            ));
        }
    };
    let text = |key: &str| -> Result<String, String> {
        match table.raw_get::<Value>(key).map_err(|e| e.to_string())? {
            Value::Nil => Ok(String::new()),
            Value::String(s) => Ok(s.to_str().map_err(|e| e.to_string())?.to_string()),
            other => Err(format!(
                "{key}: cannot unmarshal {} into a string",
                lua_type(&other)
            )),
        }
    };
    if table.clone().pairs::<Value, Value>().next().is_none() {
        return Ok(LuaHealth {
            status: String::new(),
            message: String::new(),
        });
    }
    let status = text("status")?;
    let message = text("message")?;
    if !VALID_CODES.contains(&status.as_str()) {
        return Ok(LuaHealth {
            status: "Unknown".into(),
            message: INVALID_STATUS.into(),
        });
    }
    Ok(LuaHealth { status, message })
}

/// The Lua type name of `value` as a Lua 5.1 VM says it (mlua reports an integral number as
/// `integer`; Lua 5.1 and gopher-lua know only `number`).
fn lua_type(value: &Value) -> &'static str {
    match value {
        Value::Integer(_) | Value::Number(_) => "number",
        other => other.type_name(),
    }
}
