"""State-dir file primitives: JSON documents the SDK owns (kept in memory, written behind),
immediate atomic JSON writes for files shared with other writers, JSON-lines appends through
open descriptors, deep merge, UTC stamps; `flush_all()` puts everything pending on disk."""
from __future__ import annotations

import _thread
import atexit
import os
import time
from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any, Callable

# A document's rewrites reach the disk at most once per this many seconds (the flusher's).
WRITE_BEHIND_SECONDS = 0.05


# In the aigenora binary, Rust versions of these (aigenora._native) do the work; they leave
# to the Python versions only what they cannot write exactly alike (NaN, subclasses, ...).
# `json` is imported where those need it: with the Rust versions a process that reads no
# existing JSON file never does (~1 ms).
try:
    from aigenora import _native
except ImportError:  # a plain interpreter (the SDK's own tests)
    _native = None


def _python_utc_now() -> str:
    seconds, micros = divmod(time.time_ns() // 1000, 1_000_000)
    stamp = "%04d-%02d-%02dT%02d:%02d:%02d" % time.gmtime(seconds)[:6]
    return f"{stamp}.{micros:06d}+00:00" if micros else f"{stamp}+00:00"


def _python_compact(obj: Any) -> str:
    import json

    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _python_pretty(text: str) -> str:
    import json

    return json.dumps(json.loads(text), ensure_ascii=False, indent=2)


def utc_now() -> str:
    """Current time as `datetime.now(timezone.utc).isoformat()` writes it: ISO-8601 UTC with
    microseconds (left out when zero) and a `+00:00` offset. (Without datetime: importing it
    costs every process ~1 ms.)"""
    return _python_utc_now() if _native is None else _native.utc_now()


def compact(obj: Any) -> str:
    """One-line JSON as written to every `.jsonl` file (UTF-8 kept, no spaces)."""
    text = None if _native is None else _native.compact(obj)
    return _python_compact(obj) if text is None else text


def pretty(text: str) -> str:
    """Compact JSON text indented, as every SDK-owned `.json` file is stored."""
    indented = None if _native is None else _native.pretty_json(text)
    return _python_pretty(text) if indented is None else indented


def read_text(path: str | Path) -> str | None:
    """A UTF-8 file's text; None when it does not exist (other OS errors raise). Plain `open`,
    not Path.read_text, and no exception for a missing file in the binary: decision windows
    look for files that are usually absent, every round."""
    if _native is not None:
        data = _native.read_if_present(path)
        return None if data is None else data.decode("utf-8")
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except FileNotFoundError:
        return None


_state_files: dict[tuple[str, str], Path] = {}


def state_file(state_dir: str | Path, name: str) -> Path:
    """`Path(state_dir) / name`, built once per process (stores are created every round)."""
    key = (os.fspath(state_dir), name)
    path = _state_files.get(key)
    if path is None:
        path = _state_files[key] = Path(state_dir) / name
    return path


_absolute_keys: dict[str | Path, str] = {}


def _key(path: str | Path) -> str:
    """The absolute path naming a file in the caches below (remembered for absolute paths,
    which no chdir changes)."""
    key = _absolute_keys.get(path)
    if key is None:
        name = os.fspath(path)
        if not os.path.isabs(name):
            return os.path.abspath(name)
        key = _absolute_keys[path] = name
    return key


def _replace(source: Path, target: Path) -> None:
    # Windows refuses to replace a file another process is reading; back off briefly.
    delay = 0.05
    for attempt in range(6):
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if attempt == 5:
                raise
            time.sleep(delay)
            delay *= 2


# Files and directories the SDK creates are for their owner only (a state dir holds hidden
# hands); O_NOFOLLOW keeps a symlink planted in a state dir from redirecting a write.
_PRIVATE_FILE, _PRIVATE_DIR = 0o600, 0o700
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _create_staging(path: Path) -> tuple[int, Path]:
    """A new file of a unique name beside `path`, created exclusively (never an existing file
    or a symlink someone left there)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
    while True:
        staging = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(staging, flags, _PRIVATE_FILE), staging
        except FileExistsError:
            continue


def _write_replacing(path: Path, text: str, create_dirs: bool) -> None:
    try:
        fd, staging = _create_staging(path)
    except FileNotFoundError:
        if not create_dirs:
            raise
        path.parent.mkdir(mode=_PRIVATE_DIR, parents=True, exist_ok=True)
        fd, staging = _create_staging(path)
    try:
        data = text.encode("utf-8")
        while data:
            data = data[os.write(fd, data):]
    except BaseException:
        os.close(fd)
        os.unlink(staging)
        raise
    os.close(fd)
    _replace(staging, path)


def write_json_atomic(path: Path, obj: Any, tmp: Path | None = None) -> None:
    """Write `obj` now as indented JSON through a temporary sibling, then rename it into place
    (for files other processes write too, such as strategy.json). `tmp` is accepted for
    compatibility and ignored: the temporary file always gets a fresh, unique name."""
    import json  # not a per-round path

    _write_replacing(path, json.dumps(obj, ensure_ascii=False, indent=2), True)


# -- documents the SDK owns: in memory, written behind ---------------------------------------

def clone_json(value: Any) -> Any:
    """A deep copy exactly as the value would read back from a JSON file (what
    `json.loads(compact(value))` returns, errors included, only faster for plain values)."""
    if _native is not None:
        copy = _native.clone_plain(value)
        if copy is not _native.NOT_PLAIN:
            return copy
    else:
        try:
            return _clone_plain(value)
        except _NotPlain:
            pass
    import json

    return json.loads(compact(value))


class _NotPlain(Exception):
    """Raised by _clone_plain for what only a JSON round trip copies faithfully."""


# Values that read back as themselves (floats too: repr round-trips, NaN and infinities
# included). Exact types only: subclasses (bool aside, IntEnum...) read back as their base.
_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def _clone_plain(value: Any, depth: int = 0) -> Any:
    """Copies dicts with str keys, lists and exact scalars; anything else (tuples, other
    keys, subclasses, very deep or possibly circular nesting) raises _NotPlain."""
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    if depth > 64:
        raise _NotPlain
    if kind is dict:
        copy = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            copy[key] = item if type(item) in _IMMUTABLE else _clone_plain(item, depth + 1)
        return copy
    if kind is list:
        return [item if type(item) in _IMMUTABLE else _clone_plain(item, depth + 1) for item in value]
    raise _NotPlain


class _Document:
    """One owned JSON file: its latest value (private: never handed out, copied in and out),
    whether that value is not on disk yet, and when it last was written."""

    __slots__ = ("path", "value", "dirty", "written_at", "io_lock")

    def __init__(self, path: Path, value: Any):
        self.path, self.value = path, value
        self.dirty = False
        self.written_at = float("-inf")
        self.io_lock = _thread.allocate_lock()


# (_thread, not threading: importing threading costs every process ~1 ms.)
_lock = _thread.allocate_lock()
# Held while the flusher has nothing new to look at; released to wake it.
_wakeup = _thread.allocate_lock()
_wakeup.acquire()
_documents: dict[str, _Document] = {}
_pending: set[_Document] = set()
_flusher_started = False


def update_json(path: Path, change: Callable[[Any], Any], tmp: Path | None = None) -> None:
    """Replace the value of an SDK-owned JSON file by `change(current)` (current: the value in
    memory, else the file's, else None). `change` may modify `current` in place but must keep
    no reference to it, and must copy anything the caller still holds.

    The file's first write in this process happens at once (creating its directory); every
    later one is the flusher's, on its own thread, at once if the file was not written in the
    last WRITE_BEHIND_SECONDS, else when that time is up: a rename can take a millisecond on
    a busy disk, and the hook calling this is usually on the session's critical path. Reads
    in this process see the new value at once. `tmp` is accepted for compatibility and
    ignored (see write_json_atomic)."""
    key = _key(path)
    with _lock:
        document = _documents.get(key)
        if document is None:
            document = _documents[key] = _Document(path, _read_file(path, None))
        document.value = change(document.value)
        if document.dirty:
            return  # a pending or starting write will take the new value
        document.dirty = True
        if document.written_at != float("-inf"):
            _pending.add(document)
            _start_flusher()
            _wake_flusher()
            return
    _write(document, create_dirs=True)


def store_json(path: Path, obj: Any, tmp: Path | None = None) -> None:
    """Make (a copy of) `obj` the value of an SDK-owned JSON file; see update_json."""
    value = clone_json(obj)
    update_json(path, lambda _: value, tmp)


def _read_file(path: Path, default: Any) -> Any:
    try:
        text = read_text(path)
        if text is None:
            return default
        import json

        return json.loads(text)
    except (OSError, ValueError):
        return default


def read_json(path: Path, default: Any = None) -> Any:
    """Parse a JSON file (a copy of an SDK-owned one's value in memory); `default` when it is
    missing, unreadable or malformed."""
    with _lock:
        document = _documents.get(_key(path))
        if document is not None:
            return clone_json(document.value)
    return _read_file(path, default)


def any_present(paths: tuple[str | Path, ...]) -> bool:
    """Whether any of these files exists, on disk or as an SDK-owned document in memory."""
    with _lock:
        if any(_key(path) in _documents for path in paths):
            return True
    if _native is not None:
        return _native.any_exists(paths)
    return any(os.path.exists(path) for path in paths)


def _write(document: _Document, create_dirs: bool) -> None:
    """Put a dirty document's latest value on disk (a no-op if another thread already did)."""
    with document.io_lock:
        with _lock:
            if not document.dirty:
                return
            text, document.dirty = compact(document.value), False
            document.written_at = time.monotonic()
            _pending.discard(document)
        indented = pretty(text)
        _write_replacing(document.path, indented, create_dirs)


def write_now(path: str | Path) -> None:
    """Put an SDK-owned document on disk now if it has unwritten changes (a decision window
    opening: whoever decides must see the current state, not the one 50 ms ago)."""
    with _lock:
        document = _documents.get(_key(path))
    if document is not None:
        _write(document, create_dirs=True)


def _start_flusher() -> None:
    """Starts the background writer once (called with _lock held)."""
    global _flusher_started
    if not _flusher_started:
        _flusher_started = True
        _thread.start_new_thread(_flush_forever, ())


def _wake_flusher() -> None:
    try:
        _wakeup.release()
    except RuntimeError:
        pass  # released already: the flusher will look anyway


def _due_documents() -> list[_Document]:
    """Waits until some pending document's write-behind time is up, and returns those."""
    while True:
        with _lock:
            now = time.monotonic()
            ready = [d for d in _pending if now - d.written_at >= WRITE_BEHIND_SECONDS]
            if ready:
                return ready
            wait = min((d.written_at + WRITE_BEHIND_SECONDS - now for d in _pending), default=-1)
        _wakeup.acquire(timeout=wait)  # True when woken (and armed again), False on timeout


def _flush_forever() -> None:
    while True:
        ready = _due_documents()
        for document in ready:
            try:
                # A state dir removed meanwhile is not re-created from the background.
                _write(document, create_dirs=False)
            except OSError:
                pass


# -- JSON lines ------------------------------------------------------------------------------

_append_lock = _thread.allocate_lock()
_appenders: dict[str, int] = {}


def _open_append(path: Path) -> int:
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | _NOFOLLOW
    try:
        fd = os.open(path, flags, _PRIVATE_FILE)
    except FileNotFoundError:
        path.parent.mkdir(mode=_PRIVATE_DIR, parents=True, exist_ok=True)
        fd = os.open(path, flags, _PRIVATE_FILE)
    # A line an earlier writer left torn (it died mid-write) stays a line of its own.
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        os.write(fd, b"\n")
    return fd


def append_jsonl(path: Path, record: Any) -> None:
    """Append one compact JSON record as a line, in one write on a kept-open descriptor
    (creating the file and its directory if needed). In the binary the line goes through
    the session's write-behind: it reaches the file once the step's frames have left (and
    before any reader in this process looks: read_jsonl flushes first)."""
    if _native is not None:
        _native.append_line(_key(path), compact(record).encode("utf-8"))
        return
    data = (compact(record) + "\n").encode("utf-8")
    key = _key(path)
    with _append_lock:
        fd = _appenders.get(key)
        if fd is None:
            fd = _appenders[key] = _open_append(Path(path))
        while data:
            data = data[os.write(fd, data):]


def read_jsonl(path: Path) -> list[Any]:
    """Every parseable record of a JSON-lines file, skipping blank lines and lines that are
    not UTF-8 or not JSON (one bad line never hides the ones after it)."""
    try:
        if _native is not None:
            _native.flush_appends()
            data = _native.read_if_present(path)
        else:
            with open(path, "rb") as file:
                data = file.read()
    except FileNotFoundError:
        return []
    except OSError:
        return []
    if not data:
        return []
    import json

    records = []
    for line in data.split(b"\n"):
        line = line.strip()
        if not line:
            continue
        try:
            records.append(json.loads(line.decode("utf-8")))
        except ValueError:  # UnicodeDecodeError and JSONDecodeError both are
            continue
    return records


def write_text_atomic(path: str | Path, text: str) -> None:
    """Replace a small text file atomically (a fresh temporary file, then a rename)."""
    _write_replacing(Path(path), text, True)


def flush_all(release_under: str | Path | None = None) -> None:
    """Write every pending document now, then close the kept-open JSON-lines descriptors and
    drop the in-memory copies (the files are complete; later reads go to disk): all of them,
    or with `release_under` only those inside that directory (a session's state dir: the
    other session of a self-play, in the same process, keeps its own). Called at the end of
    every session and at interpreter exit; safe to call at any time, from any thread."""
    inside = None if release_under is None else os.path.join(os.path.abspath(release_under), "")

    def released(key: str) -> bool:
        return inside is None or os.path.abspath(key).startswith(inside)

    with _lock:
        documents = list(_documents.values())
    failure = None
    for document in documents:  # _write also waits for a write the flusher has under way
        try:
            _write(document, create_dirs=False)
        except FileNotFoundError:
            pass  # its state dir was removed: nothing left to complete
        except OSError as error:
            failure = failure or error
    with _lock:
        for key, document in list(_documents.items()):
            if released(key) and not document.dirty and not document.io_lock.locked():
                del _documents[key]
    with _append_lock:
        for key in [key for key in _appenders if released(key)]:
            os.close(_appenders.pop(key))
    if inside is not None:  # forget the released dir's paths too (a host plays many sessions)
        for path, key in list(_absolute_keys.items()):
            if released(key):
                _absolute_keys.pop(path, None)
        for name, path in list(_state_files.items()):
            if released(path):
                _state_files.pop(name, None)
    if failure is not None:
        raise failure


atexit.register(flush_all)


def deep_merge(base: dict, patch: dict) -> dict:
    """A new dict: `patch` laid over `base`, merging nested dicts key by key."""
    merged = dict(base)
    for key, value in patch.items():
        current = merged.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = value
    return merged
