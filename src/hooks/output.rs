//! What hooks print goes to a person's terminal, and hooks print what peers sent (a chat
//! line, a move's comment): the embedded interpreter's `sys.stdout` and `sys.stderr` are
//! wrapped so that control characters and bidirectional overrides are escaped on the way out
//! (newlines and tabs pass), as everywhere else the binary shows someone else's text.

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::terminal::escape_display;

/// A text stream that escapes what it is given, then writes it to the stream it wraps.
/// Everything else (`fileno`, `isatty`, `encoding`, `buffer`, ...) is the wrapped stream's.
#[pyclass(module = "aigenora._native")]
pub struct EscapingStream {
    inner: Py<PyAny>,
}

#[pymethods]
impl EscapingStream {
    #[new]
    fn new(inner: Py<PyAny>) -> Self {
        EscapingStream { inner }
    }

    /// Writes `text` escaped; returns the length of `text`, as `TextIOBase.write` does.
    fn write(&self, py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<usize> {
        let length = text.len()?;
        let owned;
        let text = match text.to_str() {
            Ok(text) => text,
            Err(_) => {
                owned = text.to_string_lossy().into_owned(); // lone surrogates
                &owned
            }
        };
        self.inner
            .call_method1(py, "write", (escape_display(text).as_ref(),))?;
        Ok(length)
    }

    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.inner.call_method0(py, "flush").map(drop)
    }

    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        self.inner.getattr(py, name)
    }
}

/// Wraps `sys.stdout` and `sys.stderr` (once; a stream already wrapped stays as it is).
pub fn escape_hook_output(py: Python<'_>) -> PyResult<()> {
    let sys = py.import("sys")?;
    for name in ["stdout", "stderr"] {
        let stream = sys.getattr(name)?;
        if stream.is_none() || stream.is_instance_of::<EscapingStream>() {
            continue;
        }
        let wrapped = Bound::new(py, EscapingStream::new(stream.unbind()))?;
        sys.setattr(name, wrapped)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::interpreter;

    #[test]
    fn escape_sequences_printed_by_hooks_are_shown_not_obeyed() {
        interpreter::start().unwrap();
        Python::attach(|py| {
            let captured = py.import("io")?.getattr("StringIO")?.call0()?;
            let stream = Bound::new(py, EscapingStream::new(captured.clone().unbind()))?;
            let print = py.import("builtins")?.getattr("print")?;
            let kwargs = pyo3::types::PyDict::new(py);
            kwargs.set_item("file", &stream)?;
            print.call(
                ("[guest] \x1b]0;owned\x07hi\tthere\u{202e}x\nnext",),
                Some(&kwargs),
            )?;
            let written: String = captured.call_method0("getvalue")?.extract()?;
            assert_eq!(
                written,
                "[guest] \\x1b]0;owned\\x07hi\tthere\\u{202e}x\nnext\n"
            );
            // The wrapped stream's own attributes stay reachable.
            let _: Bound<'_, PyAny> = stream.getattr("getvalue")?;
            Ok::<_, PyErr>(())
        })
        .unwrap();
    }

    #[test]
    fn the_interpreter_streams_are_wrapped() {
        interpreter::start().unwrap();
        Python::attach(|py| {
            let sys = py.import("sys")?;
            for name in ["stdout", "stderr"] {
                assert!(
                    sys.getattr(name)?.is_instance_of::<EscapingStream>(),
                    "{name}"
                );
            }
            Ok::<_, PyErr>(())
        })
        .unwrap();
    }
}
