//! The one embedded CPython per process: started on first use with the home of the
//! interpreter the binary was built against, and our SDK installed as the `aigenora` package
//! (with its code compiled at build time, used when the interpreter's bytecode matches) plus
//! its Rust primitives as `aigenora._native`.

use std::ffi::CString;
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

mod sdk {
    include!(concat!(env!("OUT_DIR"), "/sdk_files.rs"));
}

/// The stdlib home recorded at build time (`sys.base_prefix` of the build interpreter).
const BUILD_PREFIX: &str = env!("AIGENORA_PYTHON_PREFIX");
/// The build interpreter, used as `sys.executable` for hooks that start Python subprocesses.
const BUILD_EXECUTABLE: &str = env!("AIGENORA_PYTHON_EXECUTABLE");

/// Set (to anything but `0`) to process site-packages, .pth files and sitecustomize when
/// the interpreter starts instead of on the first import that needs them.
pub const EAGER_SITE_ENV: &str = "AIGENORA_EAGER_SITE";

static STARTED: OnceLock<Result<(), String>> = OnceLock::new();

/// Starts the interpreter (once) and installs the SDK. Safe to call from any thread.
pub fn start() -> Result<(), String> {
    STARTED
        .get_or_init(|| {
            // SAFETY: runs once, guarded by the OnceLock, before any other Python API use.
            unsafe { initialize() }?;
            Python::attach(|py| {
                install_sdk(py)
                    .map_err(|error| format!("cannot install the aigenora Python SDK: {error}"))
            })
        })
        .clone()
}

/// Runs `work` (which calls hooks many times) with this thread's Python thread state kept
/// for its whole length. Without it every hook call would create and destroy a thread
/// state (and its frame stack) on a thread CPython does not know.
pub fn with_thread_state<T>(work: impl FnOnce() -> T + Send) -> T
where
    T: Send,
{
    match start() {
        Ok(()) => Python::attach(|py| py.detach(work)),
        Err(_) => work(),
    }
}

/// Sets one PyConfig string field from UTF-8 text.
macro_rules! set_config_string {
    ($config:expr, $field:ident, $value:expr) => {{
        match CString::new($value) {
            Err(_) => Err(format!("invalid path {:?}", $value)),
            Ok(text) => {
                let config: *mut ffi::PyConfig = $config;
                let status =
                    ffi::PyConfig_SetBytesString(config, &raw mut (*config).$field, text.as_ptr());
                if ffi::PyStatus_Exception(status) != 0 {
                    Err(status_message(&status))
                } else {
                    Ok(())
                }
            }
        }
    }};
}

/// Initializes CPython from a PyConfig: PYTHONHOME from the build prefix unless the user set
/// one, unbuffered stdio (so hook prints interleave with ours), no Python signal handlers.
unsafe fn initialize() -> Result<(), String> {
    unsafe {
        if ffi::Py_IsInitialized() != 0 {
            return Ok(());
        }
        let mut config = std::mem::MaybeUninit::<ffi::PyConfig>::uninit();
        ffi::PyConfig_InitPythonConfig(config.as_mut_ptr());
        let mut config = config.assume_init();
        config.install_signal_handlers = 0;
        config.buffered_stdio = 0;
        config.parse_argv = 0;
        // site-packages are attached on demand (see sdk_importer.py).
        config.site_import = 0;
        let mut result = Ok(());
        if std::env::var_os("PYTHONHOME").is_none() && !BUILD_PREFIX.is_empty() {
            result = set_config_string!(&mut config, home, BUILD_PREFIX);
        }
        if result.is_ok() && !BUILD_EXECUTABLE.is_empty() {
            result = set_config_string!(&mut config, executable, BUILD_EXECUTABLE);
        }
        if result.is_ok() {
            let status = ffi::Py_InitializeFromConfig(&config);
            if ffi::PyStatus_Exception(status) != 0 {
                result = Err(status_message(&status));
            }
        }
        ffi::PyConfig_Clear(&mut config);
        result?;
        // Release the GIL taken by initialization; every use re-attaches.
        ffi::PyEval_SaveThread();
        Ok(())
    }
}

fn status_message(status: &ffi::PyStatus) -> String {
    let text = |ptr: *const std::ffi::c_char| {
        if ptr.is_null() {
            String::new()
        } else {
            // SAFETY: CPython status strings are NUL-terminated static C strings.
            unsafe { std::ffi::CStr::from_ptr(ptr) }
                .to_string_lossy()
                .into_owned()
        }
    };
    format!(
        "cannot start the embedded Python: {} {}",
        text(status.func),
        text(status.err_msg)
    )
}

fn install_sdk(py: Python<'_>) -> PyResult<()> {
    let magic: Vec<u8> = py
        .import("_frozen_importlib_external")?
        .getattr("MAGIC_NUMBER")?
        .extract()?;
    // The build-time code runs only on an interpreter with the same bytecode.
    let prebuilt = magic == sdk::SDK_MAGIC;
    let importer = importer_module(py, prebuilt)?;
    let files = PyDict::new(py);
    for (path, source, code) in sdk::SDK_FILES {
        files.set_item(path, (source, PyBytes::new(py, code)))?;
    }
    let eager_site = std::env::var_os(EAGER_SITE_ENV).is_some_and(|v| !v.is_empty() && v != "0");
    importer
        .getattr("install")?
        .call1((files, prebuilt, eager_site))?;
    super::native::install(py)?;
    super::output::escape_hook_output(py)
}

/// The SDK importer module: its build-time code when `prebuilt` (and built), else compiled
/// from source.
fn importer_module(py: Python<'_>, prebuilt: bool) -> PyResult<Bound<'_, PyModule>> {
    const NAME: &std::ffi::CStr = c"aigenora_sdk_importer";
    const FILE: &std::ffi::CStr = c"<aigenora-sdk>/sdk_importer.py";
    if !prebuilt || sdk::IMPORTER_CODE.is_empty() {
        let source = CString::new(include_str!("sdk_importer.py")).expect("importer has no NUL");
        return PyModule::from_code(py, &source, FILE, NAME);
    }
    let code = py
        .import("marshal")?
        .call_method1("loads", (PyBytes::new(py, sdk::IMPORTER_CODE),))?;
    // SAFETY: the GIL is held; `code` is a code object and both names are C strings.
    let module = unsafe {
        let module = ffi::PyImport_ExecCodeModuleEx(NAME.as_ptr(), code.as_ptr(), FILE.as_ptr());
        Bound::from_owned_ptr_or_err(py, module)?
    };
    Ok(module.cast_into::<PyModule>()?)
}

/// What runs hooks in this process: the embedded interpreter's version and stdlib home,
/// once it has started with the SDK installed (`bootstrap` and `doctor` report it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InterpreterInfo {
    pub version: String,
    pub home: String,
}

/// Starts the interpreter and says which one it is, or why it cannot start.
pub fn describe() -> Result<InterpreterInfo, String> {
    start()?;
    Python::attach(|py| {
        let sys = py.import("sys")?;
        let version: String = sys.getattr("version")?.extract()?;
        py.import("aigenora.proto.hooks")?;
        Ok(InterpreterInfo {
            version: version.split_whitespace().next().unwrap_or("").to_string(),
            home: sys.getattr("base_prefix")?.extract()?,
        })
    })
    .map_err(|error: PyErr| format!("the embedded Python cannot load the SDK: {error}"))
}

/// Sends everything hooks `print` to stderr, keeping stdout for machine-readable output.
pub fn route_prints_to_stderr() -> Result<(), String> {
    start()?;
    Python::attach(|py| {
        let sys = py.import("sys")?;
        sys.setattr("stdout", sys.getattr("stderr")?)
    })
    .map_err(|error| format!("cannot redirect hook output: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdk_ships_compiled_for_this_interpreter() {
        start().unwrap();
        let magic: Vec<u8> = Python::attach(|py| {
            py.import("importlib.util")?
                .getattr("MAGIC_NUMBER")?
                .extract()
        })
        .unwrap();
        assert_eq!(magic, sdk::SDK_MAGIC, "built by another interpreter");
        assert!(sdk::SDK_FILES.iter().all(|(_, _, code)| !code.is_empty()));
        assert!(!sdk::IMPORTER_CODE.is_empty());
    }

    #[test]
    fn hooks_import_the_embedded_sdk_not_an_installed_one() {
        super::start().unwrap();
        let origin: String = Python::attach(|py| {
            py.import("aigenora.proto.hooks")
                .unwrap()
                .getattr("__file__")
                .unwrap()
                .extract()
                .unwrap()
        });
        assert_eq!(origin, "<aigenora-sdk>/aigenora/proto/hooks.py");
    }
}
