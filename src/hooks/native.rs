//! `aigenora._native`: the SDK's hottest JSON, file and clock primitives in Rust, for the
//! embedded interpreter. `aigenora/proto/files.py` uses them when present and its own pure-Python
//! versions otherwise (the SDK also runs on a plain interpreter, e.g. in its unit tests);
//! both produce the same text. Each function leaves anything it cannot write exactly as
//! Python's `json` would (returning None) to the Python version.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyModule, PyString, PyTuple};

use crate::canonical::{python_float_repr, write_string};
use crate::records::write_behind::{self, Appender, Line};

/// Deeper nesting than this (or a cycle) is left to `json`, which reports cycles exactly
/// (the same limit as `files._clone_plain`).
const MAX_DEPTH: usize = 64;

/// Creates the module and makes it importable as `aigenora._native`.
pub fn install(py: Python<'_>) -> PyResult<()> {
    let module = PyModule::new(py, "aigenora._native")?;
    module.add_function(wrap_pyfunction!(compact, &module)?)?;
    module.add_function(wrap_pyfunction!(pretty_json, &module)?)?;
    module.add_function(wrap_pyfunction!(utc_now, &module)?)?;
    module.add_function(wrap_pyfunction!(read_if_present, &module)?)?;
    module.add_function(wrap_pyfunction!(any_exists, &module)?)?;
    module.add_function(wrap_pyfunction!(clone_plain, &module)?)?;
    module.add_function(wrap_pyfunction!(append_line, &module)?)?;
    module.add_function(wrap_pyfunction!(flush_appends, &module)?)?;
    module.add(
        "NOT_PLAIN",
        py.import("builtins")?.getattr("object")?.call0()?,
    )?;
    py.import("sys")?
        .getattr("modules")?
        .set_item("aigenora._native", module)
}

/// `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` for values made only of
/// dicts with str keys, lists, tuples, str, int, finite float, bool and None (exact types);
/// None for anything else.
#[pyfunction]
fn compact(value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let mut text = String::with_capacity(128);
    Ok(write_plain(value, &mut text, 0)?.then_some(text))
}

/// Whether `value` was written (false: not a plain value; `text` is then abandoned).
fn write_plain(value: &Bound<'_, PyAny>, text: &mut String, depth: usize) -> PyResult<bool> {
    if value.is_none() {
        text.push_str("null");
    } else if value.is_exact_instance_of::<PyBool>() {
        text.push_str(if value.is_truthy()? { "true" } else { "false" });
    } else if value.is_exact_instance_of::<PyString>() {
        // Fails for lone surrogates, which json writes as they are.
        let Ok(string) = value.cast::<PyString>()?.to_str() else {
            return Ok(false);
        };
        write_string(text, string);
    } else if value.is_exact_instance_of::<PyInt>() {
        match value.extract::<i64>() {
            Ok(small) => text.push_str(&small.to_string()),
            Err(_) => text.push_str(value.repr()?.to_str()?),
        }
    } else if value.is_exact_instance_of::<PyFloat>() {
        let number = value.cast::<PyFloat>()?.value();
        if !number.is_finite() {
            return Ok(false);
        }
        text.push_str(&python_float_repr(number)); // json writes float.__repr__
    } else if depth >= MAX_DEPTH {
        return Ok(false);
    } else if value.is_exact_instance_of::<PyDict>() {
        text.push('{');
        for (index, (key, item)) in value.cast::<PyDict>()?.iter().enumerate() {
            if !key.is_exact_instance_of::<PyString>() {
                return Ok(false);
            }
            if index > 0 {
                text.push(',');
            }
            if !write_plain(&key, text, depth + 1)? {
                return Ok(false);
            }
            text.push(':');
            if !write_plain(&item, text, depth + 1)? {
                return Ok(false);
            }
        }
        text.push('}');
    } else if value.is_exact_instance_of::<PyList>() || value.is_exact_instance_of::<PyTuple>() {
        text.push('[');
        for (index, item) in value.try_iter()?.enumerate() {
            if index > 0 {
                text.push(',');
            }
            if !write_plain(&item?, text, depth + 1)? {
                return Ok(false);
            }
        }
        text.push(']');
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// A deep copy of a plain JSON value (dicts with str keys, lists, and exact str, int, float,
/// bool, None, which are shared: they are immutable), as `files._clone_plain` makes it; the
/// module's `NOT_PLAIN` for anything else (tuples, other keys, subclasses, deep nesting),
/// which only a JSON round trip copies faithfully.
#[pyfunction(pass_module)]
fn clone_plain<'py>(
    module: &Bound<'py, PyModule>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    match copy_plain(value, 0)? {
        Some(copy) => Ok(copy),
        None => module.getattr("NOT_PLAIN"),
    }
}

fn copy_plain<'py>(value: &Bound<'py, PyAny>, depth: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = value.py();
    if value.is_none()
        || value.is_exact_instance_of::<PyString>()
        || value.is_exact_instance_of::<PyBool>()
        || value.is_exact_instance_of::<PyInt>()
        || value.is_exact_instance_of::<PyFloat>()
    {
        return Ok(Some(value.clone()));
    }
    if depth > MAX_DEPTH {
        return Ok(None);
    }
    if value.is_exact_instance_of::<PyDict>() {
        let copy = PyDict::new(py);
        for (key, item) in value.cast::<PyDict>()?.iter() {
            if !key.is_exact_instance_of::<PyString>() {
                return Ok(None);
            }
            let Some(item) = copy_plain(&item, depth + 1)? else {
                return Ok(None);
            };
            copy.set_item(key, item)?;
        }
        return Ok(Some(copy.into_any()));
    }
    if value.is_exact_instance_of::<PyList>() {
        let copy = PyList::empty(py);
        for item in value.cast::<PyList>()?.iter() {
            let Some(item) = copy_plain(&item, depth + 1)? else {
                return Ok(None);
            };
            copy.append(item)?;
        }
        return Ok(Some(copy.into_any()));
    }
    Ok(None)
}

/// `json.dumps(json.loads(text), ensure_ascii=False, indent=2)` for strict JSON text (as
/// `compact` writes it); None for text only Python's json reads (NaN, Infinity).
#[pyfunction]
fn pretty_json(text: &str) -> Option<String> {
    // Numbers keep their exact text and objects their key order (serde_json features).
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    serde_json::to_string_pretty(&value).ok()
}

/// A file's bytes, or None when it does not exist (other failures raise the OSError `open`
/// would). Decision windows look for several files that usually do not exist, every round;
/// this spares Python an exception per missing file.
#[pyfunction]
fn read_if_present(
    py: Python<'_>,
    path: std::path::PathBuf,
) -> PyResult<Option<Bound<'_, PyBytes>>> {
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(PyBytes::new(py, &bytes))),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// Whether any of the paths exists (`os.path.exists` of each: symlinks followed, an
/// unreadable path counts as missing), with no Python exception per missing file.
#[pyfunction]
fn any_exists(paths: Vec<std::path::PathBuf>) -> bool {
    paths.iter().any(|path| path.exists())
}

/// The files `append_line` appends to, opened once each (the SDK keeps its descriptors open
/// for the process's life too).
static APPENDERS: Mutex<BTreeMap<PathBuf, Arc<Appender>>> = Mutex::new(BTreeMap::new());

/// Appends `line` and a newline to the file at `path` (an absolute path; the file and its
/// directory are created, private, if needed) through the session's write-behind (see
/// [`crate::records::write_behind`]): while a session runs, the line reaches the file once
/// the step's frames have left. An error opening the file raises OSError; a later write
/// error is reported on stderr.
#[pyfunction]
fn append_line(path: PathBuf, line: &[u8]) -> PyResult<()> {
    let appender = {
        let mut appenders = APPENDERS.lock().unwrap_or_else(|p| p.into_inner());
        match appenders.get(&path) {
            Some(appender) => Arc::clone(appender),
            None => {
                let appender = Appender::open(&path)?;
                appenders.insert(path, Arc::clone(&appender));
                appender
            }
        }
    };
    write_behind::append(&appender, Line::Bytes(line.to_vec()));
    Ok(())
}

/// Writes every line held back so far (a reader in this process is about to read a file).
#[pyfunction]
fn flush_appends() {
    write_behind::flush();
}

/// The time now as `datetime.now(timezone.utc).isoformat()` writes it.
#[pyfunction]
fn utc_now() -> String {
    crate::records::iso_now()
}

#[cfg(test)]
mod tests {
    use std::ffi::CString;

    use pyo3::prelude::*;

    /// Runs Python `code` (with `_native` and `json` imported) and returns its `result`.
    fn python(code: &str) -> String {
        crate::hooks::interpreter::start().unwrap();
        Python::attach(|py| {
            let code = format!("from aigenora import _native\nimport json, math\n{code}");
            let globals = pyo3::types::PyDict::new(py);
            py.run(&CString::new(code).unwrap(), Some(&globals), None)
                .unwrap();
            globals.get_item("result").unwrap().unwrap().to_string()
        })
    }

    #[test]
    fn compact_writes_what_json_writes_for_plain_values() {
        let result = python(
            r#"
values = [
    {"a": 1, "b": [True, False, None], "c": {"d": {"e": [], "f": {}}}},
    ["ü €", "quote \" back \\ slash", "\n\r\t\b\f\x00\x1f\x7f", "\u2028 emoji \U0001F600"],
    [0, -1, 2**63 - 1, -2**63, 2**64, -10**40, 1.5, -0.0, 1e-05, 1e16, 123456789.125, 5e-324],
    (1, (2, [3])), "top", 7, 2.5, None, True,
]
result = [v for v in values if _native.compact(v) != json.dumps(v, ensure_ascii=False, separators=(",", ":"))]
"#,
        );
        assert_eq!(result, "[]");
    }

    #[test]
    fn compact_leaves_to_json_what_it_cannot_write_alike() {
        let result = python(
            r#"
import enum
class Level(enum.IntEnum):
    HIGH = 3
class Name(str):
    pass
class Table(dict):
    pass
deep = current = []
for _ in range(100):
    current.append([]); current = current[0]
circular = []
circular.append(circular)
values = [{1: "int key"}, [float("nan")], [float("inf")], [Level.HIGH], [Name("x")], Table(a=1),
          "\ud800", {"s": {1, 2}}, deep, circular, object()]
result = [repr(v)[:20] for v in values if _native.compact(v) is not None]
"#,
        );
        assert_eq!(result, "[]");
    }

    #[test]
    fn pretty_json_indents_as_json_does() {
        let result = python(
            r#"
values = [
    {"a": 1, "b": [True, None, {"c": []}], "d": {}, "e": "ü\n\"", "f": [1e-05, 1e16, -0.0, 10**30]},
    [], {}, "text", 12, [[[]]], {"x": {"y": {"z": [1, 2]}}}, {"1": "first", "k": 2},
]
result = []
for v in values:
    text = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    if _native.pretty_json(text) != json.dumps(v, ensure_ascii=False, indent=2):
        result.append(text)
result.extend(t for t in ["[NaN]", "{\"a\": Infinity}", "not json", ""] if _native.pretty_json(t) is not None)
"#,
        );
        assert_eq!(result, "[]");
    }

    #[test]
    fn clone_plain_copies_as_the_python_fast_path_does() {
        let result = python(
            r#"
import enum
from aigenora.proto import files
class Level(enum.IntEnum):
    HIGH = 3
deep = current = {}
for _ in range(100):
    current["next"] = current = {}
shared = {"k": [1, 2.5, None, True, "s"]}
values = [
    {"a": 1, "b": [True, None, 2.5, "ü"], "c": {"d": {"e": []}}}, [shared, shared], "x", 7, None,
    {"t": (1, 2)}, {1: "int key"}, [Level.HIGH], deep, {"s": {1}},
]
result = []
for value in values:
    try:
        expected = files._clone_plain(value)
    except files._NotPlain:
        expected = _native.NOT_PLAIN
    copy = _native.clone_plain(value)
    if copy != expected or (isinstance(copy, (dict, list)) and copy is value):
        result.append(repr(value)[:30])
copy = _native.clone_plain([shared, shared])
result.append(copy[0] is not shared and copy[0] is not copy[1] and copy[0]["k"] is not shared["k"])
"#,
        );
        assert_eq!(result, "[True]");
    }

    #[test]
    fn any_exists_is_os_path_exists_of_any() {
        let result = python(
            r#"
import os, pathlib, tempfile
root = pathlib.Path(tempfile.mkdtemp())
(root / "here").write_text("")
os.symlink(root / "nowhere", root / "dangling")
cases = [(), (root / "none",), (root / "none", str(root / "here")), (root / "dangling",), (root,)]
result = [_native.any_exists(paths) == any(os.path.exists(p) for p in paths) for paths in cases]
result.append([_native.any_exists(paths) for paths in cases])
"#,
        );
        assert_eq!(
            result,
            "[True, True, True, True, True, [False, False, True, False, True]]"
        );
    }

    #[test]
    fn read_if_present_reads_bytes_and_answers_none_only_for_a_missing_file() {
        let result = python(
            r#"
import pathlib, tempfile
root = pathlib.Path(tempfile.mkdtemp())
(root / "here.jsonl").write_bytes(b'{"a": "\xc3\xbc"}\n')
outcomes = [_native.read_if_present(root / "here.jsonl"), _native.read_if_present(str(root / "none"))]
try:
    _native.read_if_present(root)
except IsADirectoryError:
    outcomes.append("IsADirectoryError")
result = outcomes
"#,
        );
        assert_eq!(
            result,
            r#"[b'{"a": "\xc3\xbc"}\n', None, 'IsADirectoryError']"#
        );
    }

    #[test]
    fn what_the_sdk_appends_while_a_session_holds_lines_is_read_back_in_order() {
        use std::sync::Arc;
        use std::sync::atomic::AtomicBool;
        let hold = crate::records::write_behind::Hold::new(Arc::new(AtomicBool::new(false)));
        let result = python(
            r#"
import pathlib, tempfile
from aigenora.proto.files import append_jsonl, read_jsonl
path = pathlib.Path(tempfile.mkdtemp()) / "sub" / "details.jsonl"
for n in range(3):
    append_jsonl(path, {"n": n, "text": "ü"})
result = (read_jsonl(path), path.read_bytes())
"#,
        );
        drop(hold);
        assert_eq!(
            result,
            r#"([{'n': 0, 'text': 'ü'}, {'n': 1, 'text': 'ü'}, {'n': 2, 'text': 'ü'}], b'{"n":0,"text":"\xc3\xbc"}\n{"n":1,"text":"\xc3\xbc"}\n{"n":2,"text":"\xc3\xbc"}\n')"#
        );
    }

    #[test]
    fn utc_now_is_an_isoformat_utc_timestamp_of_now() {
        let result = python(
            r#"
from datetime import datetime, timezone
stamp = _native.utc_now()
parsed = datetime.fromisoformat(stamp)
result = (parsed.isoformat() == stamp, parsed.utcoffset().total_seconds(),
          abs((datetime.now(timezone.utc) - parsed).total_seconds()) < 5)
"#,
        );
        assert_eq!(result, "(True, 0.0, True)");
    }
}
