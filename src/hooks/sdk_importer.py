"""Makes the SDK embedded in the aigenora binary importable as the `aigenora` package.

The Rust side calls `install(files, magic)` once with {relative path: (source, code)}, where
code is the module compiled at build time (marshal data) by an interpreter with bytecode
magic number `magic`. Modules are served from memory by a finder placed first on
sys.meta_path, so an `aigenora` installed in the interpreter's site-packages (for instance
the reference client) never shadows ours. The prebuilt code is used only when this
interpreter's magic number matches; otherwise the source is compiled, as before.
"""
import importlib.abc
import importlib.util
import linecache
import marshal
import sys

_ORIGIN = "<aigenora-sdk>/"


class _EmbeddedSdk(importlib.abc.MetaPathFinder, importlib.abc.Loader):
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
        spec = importlib.util.spec_from_loader(fullname, self, origin=_ORIGIN + filename, is_package=is_package)
        spec.has_location = True
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        filename, source, code, is_package = self._modules[module.__name__]
        origin = _ORIGIN + filename
        module.__file__ = origin
        if is_package:
            module.__path__ = []
        linecache.cache[origin] = (len(source), None, source.splitlines(True), origin)
        code = marshal.loads(code) if code else compile(source, origin, "exec")
        exec(code, module.__dict__)


def install(files, magic):
    for name in [n for n in sys.modules if n == "aigenora" or n.startswith("aigenora.")]:
        del sys.modules[name]
    sys.meta_path.insert(0, _EmbeddedSdk(files, magic == importlib.util.MAGIC_NUMBER))
