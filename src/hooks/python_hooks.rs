//! `hooks.py` in the embedded interpreter: loading the `Hooks` class of a protocol dir, and
//! the [`Hooks`] implementation that calls it. Python exceptions become [`HookError`]s
//! naming the hook and the hooks.py line they came from.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};
use serde_json::{Map, Value};

use super::convert::{from_python, to_python, to_python_dict};
use super::{
    HookError, HookResult, Hooks, HostMetadata, InitContext, MentalPokerHooks, Shown, interpreter,
};

mod mental_poker;
mod room;

use crate::canonical::sha256_hex;
use crate::spec::{InvitationType, Spec};

/// The loaded `Hooks` instance of one protocol dir, plus the per-side round `state` dict.
pub struct PythonHooks {
    instance: Py<PyAny>,
    state: Py<PyDict>,
    hooks_file: PathBuf,
    /// False when the class keeps the SDK's `proto_display` (which shows nothing), so the
    /// engine's many display calls cost nothing.
    displays: bool,
    /// The only actions `proto_display` shows, when the SDK's `displays_only` marks it.
    displayed_actions: Option<BTreeSet<String>>,
    /// The state dir `proto_init` was given: its files are released when the session ends.
    state_dir: Option<PathBuf>,
}

impl PythonHooks {
    /// Executes `<dir>/hooks.py` as a fresh module and instantiates its `Hooks` class.
    pub fn load(protocol_dir: &Path) -> Result<PythonHooks, HookError> {
        let hooks_file = protocol_dir.join("hooks.py");
        if !hooks_file.is_file() {
            return Err(HookError::new(
                "load",
                format!(
                    "hooks.py not found in protocol dir: {}",
                    protocol_dir.display()
                ),
            ));
        }
        interpreter::start().map_err(|e| HookError::new("load", e))?;
        Python::attach(|py| {
            let instance =
                instantiate(py, &hooks_file).map_err(|e| describe(py, "load", &e, &hooks_file))?;
            let displays = overrides(&instance, "proto_display")
                .map_err(|e| describe(py, "load", &e, &hooks_file))?;
            let displayed_actions =
                displayed_actions(&instance).map_err(|e| describe(py, "load", &e, &hooks_file))?;
            Ok(PythonHooks {
                instance: instance.unbind(),
                state: PyDict::new(py).unbind(),
                hooks_file: hooks_file.clone(),
                displays,
                displayed_actions,
                state_dir: None,
            })
        })
    }

    /// [`PythonHooks::load`], refusing hooks that leave a hook the spec's flow mode cannot
    /// run without to the SDK (whose version only raises), so a side stops before it
    /// publishes or dials rather than when the game reaches that hook.
    pub fn load_for(protocol_dir: &Path, spec: &Spec) -> Result<PythonHooks, HookError> {
        let mode = spec
            .model()
            .map_err(|error| HookError::new("load", error.to_string()))?
            .flow
            .mode();
        let hooks = PythonHooks::load(protocol_dir)?;
        let required: Vec<&str> = mode.capabilities().required_hooks().collect();
        let missing = Python::attach(|py| {
            let instance = hooks.instance.bind(py);
            let mut missing = Vec::new();
            for name in &required {
                let defined = overrides(instance, name)
                    .map_err(|error| describe(py, "load", &error, &hooks.hooks_file))?;
                if !defined {
                    missing.push(*name);
                }
            }
            Ok::<_, HookError>(missing)
        })?;
        if missing.is_empty() {
            return Ok(hooks);
        }
        Err(HookError::new(
            "load",
            format!(
                "{} does not implement {} (flow mode {mode} needs {})",
                hooks.hooks_file.display(),
                missing.join(", "),
                required.join(", ")
            ),
        ))
    }

    /// Calls `method(*args)` on the instance, converting a Python exception.
    fn call<T>(
        &self,
        method: &str,
        args: impl for<'py> FnOnce(Python<'py>, &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyTuple>>,
        convert: impl for<'py> FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
    ) -> Result<T, HookError> {
        Python::attach(|py| {
            let run = || -> PyResult<T> {
                let args = args(py, self.state.bind(py))?;
                let returned = self.instance.bind(py).call_method1(method, args)?;
                convert(&returned)
            };
            run().map_err(|error| describe(py, method, &error, &self.hooks_file))
        })
    }

    fn call_result(&self, method: &str, message: &Value) -> Result<HookResult, HookError> {
        self.call(
            method,
            move |py, _| PyTuple::new(py, [to_python(py, message)?]),
            coerce_result,
        )
    }

    /// Calls `hooks.snapshot.<method>` when the hooks have a snapshot (they may not, if
    /// their `proto_init` skipped `super()`).
    fn snapshot_call(
        &self,
        hook: &str,
        method: &str,
        args: Vec<Value>,
        kwargs: Map<String, Value>,
    ) -> Result<(), HookError> {
        Python::attach(|py| {
            let run = || -> PyResult<()> {
                let instance = self.instance.bind(py);
                let Ok(snapshot) = instance.getattr("snapshot") else {
                    return Ok(());
                };
                if snapshot.is_none() {
                    return Ok(());
                }
                let args = PyTuple::new(
                    py,
                    args.iter()
                        .map(|a| to_python(py, a))
                        .collect::<PyResult<Vec<_>>>()?,
                )?;
                snapshot.call_method(method, args, Some(&to_python_dict(py, &kwargs)?))?;
                Ok(())
            };
            run().map_err(|error| describe(py, hook, &error, &self.hooks_file))
        })
    }
}

fn instantiate<'py>(py: Python<'py>, hooks_file: &Path) -> PyResult<Bound<'py, PyAny>> {
    let resolved = hooks_file
        .canonicalize()
        .unwrap_or_else(|_| hooks_file.to_path_buf());
    let module_name = format!(
        "aigenora_user_protocol_{}",
        &sha256_hex(resolved.to_string_lossy().as_bytes())[..16]
    );
    // What importlib.util re-exports, from the import system itself (importlib, the package,
    // costs every process ~0.5 ms and importlib.util ~4 ms).
    let external = py.import("_frozen_importlib_external")?;
    let spec = external.call_method1("spec_from_file_location", (&module_name, hooks_file))?;
    if spec.is_none() {
        return Err(pyo3::exceptions::PyImportError::new_err(format!(
            "cannot load hooks module: {}",
            hooks_file.display()
        )));
    }
    let module = py
        .import("_frozen_importlib")?
        .call_method1("module_from_spec", (&spec,))?;
    // What the loader's exec_module does, with the code compiled once per process.
    let code = hooks_code(
        py,
        &spec.getattr("loader")?,
        &module_name,
        hooks_file,
        &resolved,
    )?;
    py.import("builtins")?
        .call_method1("exec", (code, module.getattr("__dict__")?))?;
    let Ok(class) = module.getattr("Hooks") else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{} must define class Hooks",
            hooks_file.display()
        )));
    };
    let instance = class.call0()?;
    if !instance.is_instance(protocol_hooks_class(py)?)? {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "Hooks must inherit aigenora.proto.hooks.ProtocolHooks",
        ));
    }
    Ok(instance)
}

/// The code of a hooks.py file, compiled (or read from its `.pyc`) by its loader once per
/// process and reused while the file's bytes stay the same: self-play loads the same file
/// for both sides, and compiling it costs about a millisecond.
fn hooks_code<'py>(
    py: Python<'py>,
    loader: &Bound<'py, PyAny>,
    module_name: &str,
    hooks_file: &Path,
    resolved: &Path,
) -> PyResult<Bound<'py, PyAny>> {
    static COMPILED: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    let compiled = COMPILED
        .get_or_init(py, || PyDict::new(py).unbind())
        .bind(py);
    let source = loader.call_method1("get_data", (hooks_file,))?;
    let key = resolved.to_string_lossy();
    if let Some(entry) = compiled.get_item(&key)? {
        let (cached_source, code): (Bound<'py, PyAny>, Bound<'py, PyAny>) = entry.extract()?;
        if cached_source.eq(&source)? {
            return Ok(code);
        }
    }
    let code = loader.call_method1("get_code", (module_name,))?;
    compiled.set_item(&key, (source, &code))?;
    Ok(code)
}

/// The actions a `proto_display` marked with the SDK's `displays_only` shows (it returns
/// None for every other message, so the engine does not call it for them); None when the
/// method has no such mark.
fn displayed_actions(instance: &Bound<'_, PyAny>) -> PyResult<Option<BTreeSet<String>>> {
    let method = instance.get_type().getattr("proto_display")?;
    match method.getattr_opt("displays_only")? {
        Some(actions) => actions.extract().map(Some),
        None => Ok(None),
    }
}

/// Whether the instance's class defines `method` itself rather than inheriting the SDK's.
fn overrides(instance: &Bound<'_, PyAny>, method: &str) -> PyResult<bool> {
    let base = protocol_hooks_class(instance.py())?;
    let own = instance.get_type().getattr(method)?;
    Ok(!own.is(&base.getattr(method)?))
}

/// The SDK's `ProtocolHooks`, looked up once per process (the SDK is installed once).
fn protocol_hooks_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    CLASS.import(py, "aigenora.proto.hooks", "ProtocolHooks")
}

/// The SDK's `HookResult`, looked up once per process.
fn hook_result_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    CLASS.import(py, "aigenora.proto.hooks", "HookResult")
}

/// A hook's return value as the engine understands it: a HookResult, a bare dict (the
/// response), or anything else (nothing).
fn coerce_result(returned: &Bound<'_, PyAny>) -> PyResult<HookResult> {
    let py = returned.py();
    if returned.is_instance(hook_result_class(py)?)? {
        let response = returned.getattr(intern!(py, "response"))?;
        return Ok(HookResult {
            response: if response.is_none() {
                None
            } else {
                Some(from_python(&response)?)
            },
            completed: returned.getattr(intern!(py, "completed"))?.is_truthy()?,
            abort: returned.getattr(intern!(py, "abort"))?.is_truthy()?,
        });
    }
    if returned.cast::<PyDict>().is_ok() {
        return Ok(HookResult {
            response: Some(from_python(returned)?),
            ..HookResult::default()
        });
    }
    Ok(HookResult::default())
}

fn optional_value(returned: &Bound<'_, PyAny>) -> PyResult<Option<Value>> {
    if returned.is_none() {
        Ok(None)
    } else {
        from_python(returned).map(Some)
    }
}

/// `ExceptionType: message` plus the innermost hooks.py line of the traceback.
fn describe(py: Python<'_>, hook: &str, error: &PyErr, hooks_file: &Path) -> HookError {
    let kind = error
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let text = error
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let message = if text.is_empty() {
        kind
    } else {
        format!("{kind}: {text}")
    };
    HookError {
        hook: hook.to_string(),
        message,
        location: hooks_line(py, error, hooks_file),
    }
}

fn hooks_line(py: Python<'_>, error: &PyErr, hooks_file: &Path) -> Option<String> {
    let mut frame = error.traceback(py).map(|tb| tb.into_any());
    let wanted = hooks_file
        .canonicalize()
        .unwrap_or_else(|_| hooks_file.to_path_buf());
    let mut found = None;
    while let Some(tb) = frame.filter(|tb| !tb.is_none()) {
        let filename: Option<String> = tb
            .getattr("tb_frame")
            .and_then(|f| f.getattr("f_code"))
            .and_then(|c| c.getattr("co_filename"))
            .and_then(|n| n.extract())
            .ok();
        let line: Option<u64> = tb.getattr("tb_lineno").and_then(|l| l.extract()).ok();
        if let (Some(filename), Some(line)) = (filename, line) {
            let path = PathBuf::from(&filename);
            if path.canonicalize().unwrap_or(path) == wanted {
                found = Some(format!("{}:{line}", hooks_file.display()));
            }
        }
        frame = tb.getattr("tb_next").ok();
    }
    found
}

impl Hooks for PythonHooks {
    fn init(&mut self, context: &InitContext) -> Result<(), HookError> {
        self.state_dir = Some(context.state_dir.to_path_buf());
        if let Some(desk) = &context.desk {
            let handle = super::native_decision::DeskHandle::new(desk.clone());
            Python::attach(|py| {
                let set = || {
                    let handle = Py::new(py, handle)?;
                    self.instance.bind(py).setattr("_aigenora_desk", handle)
                };
                set().map_err(|e| describe(py, "proto_init", &e, &self.hooks_file))
            })?;
        }
        let options = context.options.clone();
        let (role, args, state_dir) = (
            context.role.as_str(),
            context.args.to_vec(),
            context.state_dir.to_path_buf(),
        );
        let decision = context.decision.clone();
        let with_decision = context.pass_decision;
        self.call(
            "proto_init",
            move |py, _| {
                let path = py.import("pathlib")?.getattr("Path")?.call1((state_dir,))?;
                let mut items = vec![
                    to_python_dict(py, &options)?.into_any(),
                    role.into_pyobject(py)?.into_any(),
                    PyList::new(py, args)?.into_any(),
                    path,
                ];
                if with_decision {
                    items.push(to_python(py, decision.as_ref().unwrap_or(&Value::Null))?);
                }
                PyTuple::new(py, items)
            },
            |_| Ok(()),
        )?;
        let timing = context.timing.clone().unwrap_or(Value::Null);
        Python::attach(|py| {
            let set = || {
                self.instance
                    .bind(py)
                    .setattr("timing", to_python(py, &timing)?)
            };
            set().map_err(|e| describe(py, "proto_init", &e, &self.hooks_file))
        })
    }

    fn host_metadata(&mut self) -> Result<HostMetadata, HookError> {
        self.call(
            "proto_host_metadata",
            |py, _| Ok(PyTuple::empty(py)),
            |returned| {
                let items: Vec<Value> = returned
                    .try_iter()?
                    .map(|item| from_python(&item?))
                    .collect::<PyResult<_>>()?;
                let text = |index: usize| {
                    items
                        .get(index)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                let tags = match items.get(1) {
                    Some(Value::Array(tags)) => tags
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                    _ => text(1)
                        .split(',')
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_string)
                        .collect(),
                };
                // An empty or unknown type offers a supply, as the reference's default.
                let invite_type = InvitationType::parse(&text(2)).unwrap_or_default();
                let default_options = items
                    .get(3)
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                Ok(HostMetadata {
                    name: text(0),
                    tags,
                    invite_type,
                    default_options,
                })
            },
        )
    }

    fn host_handle_join(&mut self, message: &Value) -> Result<HookResult, HookError> {
        self.call_result("proto_host_handle_join", message)
    }

    fn host_handle(&mut self, message: &Value) -> Result<HookResult, HookError> {
        self.call_result("proto_host_handle", message)
    }

    fn guest_join_message(&mut self) -> Result<Option<Value>, HookError> {
        self.call(
            "proto_guest_join_message",
            |py, _| Ok(PyTuple::empty(py)),
            optional_value,
        )
    }

    fn guest_handle_ready(&mut self, message: &Value) -> Result<(), HookError> {
        self.call_result("proto_guest_handle_ready", message)
            .map(|_| ())
    }

    fn guest_first_action(&mut self) -> Result<Option<Value>, HookError> {
        self.call(
            "proto_guest_first_action",
            |py, _| Ok(PyTuple::empty(py)),
            optional_value,
        )
    }

    fn guest_handle(&mut self, message: &Value) -> Result<HookResult, HookError> {
        self.call_result("proto_guest_handle", message)
    }

    fn display(&mut self, message: &Value, shown: Shown) -> Result<Option<String>, HookError> {
        if !self.displays {
            return Ok(None);
        }
        if let Some(actions) = &self.displayed_actions
            && !message
                .get("action")
                .and_then(Value::as_str)
                .is_some_and(|action| actions.contains(action))
        {
            return Ok(None);
        }
        self.call(
            "proto_display",
            move |py, _| {
                PyTuple::new(
                    py,
                    [
                        to_python(py, message)?,
                        shown.as_str().into_pyobject(py)?.into_any(),
                    ],
                )
            },
            |returned| {
                Ok(if returned.is_truthy()? {
                    Some(returned.str()?.to_string())
                } else {
                    None
                })
            },
        )
    }

    fn round_value(&mut self, round: u64) -> Result<Value, HookError> {
        self.call(
            "proto_round_value",
            move |py, state| {
                PyTuple::new(
                    py,
                    [
                        round.into_pyobject(py)?.into_any(),
                        state.clone().into_any(),
                    ],
                )
            },
            from_python,
        )
    }

    fn round_judge(
        &mut self,
        round: u64,
        host: &Value,
        guest: &Value,
    ) -> Result<HookResult, HookError> {
        self.call(
            "proto_round_judge",
            move |py, state| judge_args(py, state, round, host, guest),
            coerce_result,
        )
    }

    fn round_judge_pure(
        &mut self,
        round: u64,
        host: &Value,
        guest: &Value,
    ) -> Result<Option<Value>, HookError> {
        let defined = Python::attach(|py| {
            self.instance
                .bind(py)
                .getattr("proto_round_judge_pure")
                .map(|m| m.is_callable())
                .unwrap_or(false)
        });
        if !defined {
            return Ok(None);
        }
        self.call(
            "proto_round_judge_pure",
            move |py, state| judge_args(py, state, round, host, guest),
            optional_value,
        )
    }

    fn on_message(&mut self, message: &Value) -> Result<(), HookError> {
        self.call_result("proto_on_message", message).map(|_| ())
    }

    fn on_send(&mut self, message: &Value) -> Result<(), HookError> {
        self.call_result("proto_on_send", message).map(|_| ())
    }

    fn on_end(&mut self) -> Result<(), HookError> {
        self.call("proto_on_end", |py, _| Ok(PyTuple::empty(py)), |_| Ok(()))
    }

    fn snapshot_update(&mut self, patch: Map<String, Value>) -> Result<(), HookError> {
        self.snapshot_call(
            "snapshot.update",
            "update",
            vec![Value::Object(patch)],
            Map::new(),
        )
    }

    fn snapshot_phase(
        &mut self,
        phase: &str,
        summary: &str,
        structured: Map<String, Value>,
    ) -> Result<(), HookError> {
        let mut kwargs = structured;
        kwargs.insert("summary".into(), summary.into());
        self.snapshot_call(
            "snapshot.set_phase",
            "set_phase",
            vec![phase.into()],
            kwargs,
        )
    }

    fn mental_poker(&mut self) -> Option<&mut dyn MentalPokerHooks> {
        Some(self)
    }

    fn flush_files(&mut self) -> Result<(), HookError> {
        Python::attach(|py| {
            py.import("aigenora.proto.files")
                .and_then(|files| files.call_method1("flush_all", (&self.state_dir,)))
                .map(|_| ())
                .map_err(|e| describe(py, "aigenora.proto.files.flush_all", &e, &self.hooks_file))
        })
    }
}

fn judge_args<'py>(
    py: Python<'py>,
    state: &Bound<'py, PyDict>,
    round: u64,
    host: &Value,
    guest: &Value,
) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            round.into_pyobject(py)?.into_any(),
            to_python(py, host)?,
            to_python(py, guest)?,
            state.clone().into_any(),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks_py(version: &str) -> String {
        format!(
            "from aigenora.proto.hooks import ProtocolHooks\n\
             LOADS = []\n\
             LOADS.append(1)\n\
             class Hooks(ProtocolHooks):\n\
             \x20   def proto_host_metadata(self):\n\
             \x20       return ('{version} loads=' + str(len(LOADS)), 't', 'supply', {{}})\n"
        )
    }

    fn name(dir: &Path) -> String {
        PythonHooks::load(dir)
            .unwrap()
            .host_metadata()
            .unwrap()
            .name
    }

    /// A `proto_display` marked `displays_only` is called only for its actions; a subclass
    /// that overrides it without the mark is called for every message again.
    #[test]
    fn a_display_marked_displays_only_is_called_only_for_its_actions() {
        let calls = |extra: &str| {
            let dir = tempfile::tempdir().unwrap();
            let code = format!(
                "from aigenora.proto.hooks import ProtocolHooks\n\
                 from aigenora.proto.rounds import RoundResults\n\
                 CALLS = []\n\
                 class Counted(RoundResults, ProtocolHooks):\n\
                 \x20   def describe_round(self, result):\n\
                 \x20       CALLS.append(result['action'])\n\
                 \x20       return str(len(CALLS))\n\
                 {extra}"
            );
            std::fs::write(dir.path().join("hooks.py"), code).unwrap();
            let mut hooks = PythonHooks::load(dir.path()).unwrap();
            let shown = ["commit", "reveal", "round_result", "end"].map(|action| {
                let frame = serde_json::json!({"action": action, "round": 0, "game_over": false});
                hooks.display(&frame, Shown::Sent).unwrap()
            });
            (shown, hooks.displayed_actions.is_some())
        };
        let (shown, marked) = calls("class Hooks(Counted):\n    pass\n");
        assert!(marked);
        assert_eq!(shown, [None, None, Some("1".to_string()), None]);
        let (shown, marked) = calls(
            "class Hooks(Counted):\n\
             \x20   def proto_display(self, msg, direction):\n\
             \x20       return msg['action']\n",
        );
        assert!(!marked, "the override has no mark");
        assert_eq!(
            shown.map(Option::unwrap),
            ["commit", "reveal", "round_result", "end"]
        );
    }

    /// Compiled once, but executed afresh for every load (no module state shared between
    /// the two sides of a self-play), and compiled again once the file changes.
    #[test]
    fn each_load_runs_its_own_module_and_sees_the_file_as_it_is_now() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hooks.py"), hooks_py("first")).unwrap();
        assert_eq!(name(dir.path()), "first loads=1");
        assert_eq!(name(dir.path()), "first loads=1");
        std::fs::write(dir.path().join("hooks.py"), hooks_py("second")).unwrap();
        assert_eq!(name(dir.path()), "second loads=1");
    }
}
