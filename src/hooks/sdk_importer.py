"""Makes the SDK embedded in the aigenora binary importable as the `aigenora` package.

The Rust side calls `install(files, prebuilt, eager_site)` once with {relative path: (source,
code)}, where code is the module compiled at build time (marshal data). Modules are served
from memory by a finder placed first on sys.meta_path, so an `aigenora` installed in the
interpreter's site-packages (for instance the reference client) never shadows ours. The
code is used only when `prebuilt` says it was compiled with this interpreter's bytecode
magic number; otherwise the source is compiled.

The interpreter starts without `site` (most hooks import only the standard library and the
SDK, and `site` with its .pth files can cost more than a whole self-play). `install` puts a
finder last on sys.meta_path that runs `site.main()` (site-packages, .pth files,
sitecustomize) on the first top-level import nothing else can satisfy — other than the
standard library's own platform probes — then answers it; with `eager_site` it runs at once.
"""
import _frozen_importlib as _bootstrap  # what importlib.machinery re-exports, loaded at start
import _frozen_importlib_external as _external
import _thread
import marshal
import os
import sys

_ORIGIN = "<aigenora-sdk>/"


# Plain classes, not importlib.abc/importlib.util (their imports cost every process ~15 ms).
class _EmbeddedSdk:  # a meta path finder and loader
    def __init__(self, files, prebuilt):
        self._modules = {}
        for path, (source, code) in files.items():
            parts = path[: -len(".py")].split("/")
            code = code if prebuilt and code else None
            if parts[-1] == "__init__":
                self._modules[".".join(parts[:-1])] = (path, source, code, True)
            else:
                self._modules[".".join(parts)] = (path, source, code, False)

    def find_spec(self, fullname, path=None, target=None):
        entry = self._modules.get(fullname)
        if entry is None:
            return None
        filename, _, _, is_package = entry
        spec = _bootstrap.ModuleSpec(fullname, self, origin=_ORIGIN + filename, is_package=is_package)
        spec.has_location = True
        return spec

    def create_module(self, spec):
        return None

    def get_source(self, fullname):
        """The module's source, which tracebacks show (linecache asks the loader)."""
        return self._modules[fullname][1]

    def exec_module(self, module):
        filename, source, code, is_package = self._modules[module.__name__]
        origin = _ORIGIN + filename
        module.__file__ = origin
        if is_package:
            module.__path__ = []
        code = marshal.loads(code) if code else compile(source, origin, "exec")
        exec(code, module.__dict__)


_STDLIB = os.path.dirname(os.__file__) + os.sep

# Modules the standard library tries to import and copes without, on platforms that lack
# them (copy tries Jython's org.python.core; ntpath, subprocess and friends try Windows').
_PLATFORM_PROBES = frozenset({
    "_msi", "_overlapped", "_winapi", "_winreg", "_wmi", "java", "msvcrt", "nt", "org",
    "vms_lib", "winreg", "winsound",
})


def _stdlib_probe(fullname):
    """Whether this import is one of the standard library's platform probes: a name in
    _PLATFORM_PROBES, asked for by a standard-library module itself (the same name asked
    for by hooks, or by importlib.import_module on their behalf, is a real import)."""
    if fullname not in _PLATFORM_PROBES:
        return False
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        frame = frame.f_back
    if frame is None:
        return False  # asked for from Rust
    filename = frame.f_code.co_filename
    if filename.startswith("<frozen "):
        return True  # a frozen stdlib module (os, ntpath, ...)
    return filename.startswith(_STDLIB) and "-packages" + os.sep not in filename


class _SitePackagesOnDemand:  # a meta path finder, last on sys.meta_path
    def find_spec(self, fullname, path=None, target=None):
        if path is not None or _stdlib_probe(fullname):
            return None  # a submodule (its package was found already) or a platform probe
        attach_site_packages()
        return _external.PathFinder.find_spec(fullname)


_site_lock = _thread.allocate_lock()


def attach_site_packages():
    """Runs `site.main()` once: site-packages (with their .pth files) join sys.path."""
    with _site_lock:
        finders = [f for f in sys.meta_path if isinstance(f, _SitePackagesOnDemand)]
        if not finders:
            return
        for finder in finders:
            sys.meta_path.remove(finder)
        import importlib
        import site

        site.main()
        importlib.invalidate_caches()


def install(files, prebuilt, eager_site):
    for name in [n for n in sys.modules if n == "aigenora" or n.startswith("aigenora.")]:
        del sys.modules[name]
    sys.meta_path.insert(0, _EmbeddedSdk(files, prebuilt))
    if sys.flags.no_site:  # started without site (always, when the binary started it)
        sys.meta_path.append(_SitePackagesOnDemand())
        if eager_site:
            attach_site_packages()
