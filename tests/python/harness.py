"""Test plumbing shared by the suites: our SDK first on sys.path, where the reference package
and its interpreter live (fixtures and differential runs only), and a subprocess driver run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent.parent
OUR_SDK = REPO_ROOT / "src" / "hooks" / "python"
OUR_PROTOCOLS = REPO_ROOT / "src" / "protocols"

if str(OUR_SDK) not in sys.path[:1]:
    sys.path.insert(0, str(OUR_SDK))

import aigenora  # noqa: E402  (must resolve to our SDK, never the reference)

if Path(aigenora.__file__).resolve().parent != OUR_SDK / "aigenora":
    raise ImportError(f"aigenora resolved to {aigenora.__file__}, expected our SDK under {OUR_SDK}")

REFERENCE_PACKAGE = Path(os.environ.get(
    "AIGENORA_REFERENCE_PACKAGE", "/tmp/refvenv/lib/python3.11/site-packages/aigenora"))
REFERENCE_PYTHON = os.environ.get("AIGENORA_REFERENCE_PYTHON", "/tmp/refvenv/bin/python")
# Our SDK's modules beyond the reference API; differential runs graft them onto the reference.
SDK_EXTENSIONS = ("chat", "choices", "options", "rounds")

# The reference's 1v1 built-ins whose hooks.py must run unchanged on our SDK.
REFERENCE_GAMES = {
    "rps": "43a80648",
    "coin-flip": "9e5df77c",
    "guess-number": "166570ef",
    "weak-wins-all": "83ae1cd7",
    "gomoku": "6fdb1053",
    "connect4": "5cd50a30",
    "reversi": "5358130e",
    "human-chat": "59da01bc",
    "hero-duel": "df2d0709",
}


def reference_protocol(name: str) -> Path:
    """The directory of a reference built-in (spec.json + hooks.py), failing loudly if absent."""
    prefix = REFERENCE_GAMES[name]
    matches = sorted((REFERENCE_PACKAGE / "protocols").glob(f"{prefix}*/*/hooks.py"))
    if len(matches) != 1:
        raise FileNotFoundError(
            f"reference protocol {name} ({prefix}...) not found under {REFERENCE_PACKAGE}; "
            "set AIGENORA_REFERENCE_PACKAGE to the installed reference `aigenora` package")
    return matches[0].parent


def scratch_dir(test) -> Path:
    """A temporary directory removed when the test finishes, once the SDK has put on disk
    what it still owes there (its flusher rewrites documents in the background)."""
    from aigenora.proto import files

    holder = tempfile.TemporaryDirectory(prefix="aigenora-pysdk-")
    path = Path(holder.name)
    test.addCleanup(holder.cleanup)
    test.addCleanup(files.flush_all, path)  # cleanups run last-in first-out: this one first
    return path


def run_reference_driver(job: dict, workdir: Path) -> dict:
    """Run driver.py under the reference interpreter with the reference SDK first on sys.path
    and our SDK_EXTENSIONS grafted onto it."""
    extensions = [str(OUR_SDK / "aigenora" / "proto" / f"{name}.py") for name in SDK_EXTENSIONS]
    job = dict(job, sdk_path=str(REFERENCE_PACKAGE.parent), sdk_extensions=extensions,
               base=str(workdir / "state"), out=str(workdir / "summary.json"))
    job_file = workdir / "job.json"
    job_file.write_text(json.dumps(job), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([REFERENCE_PYTHON, str(TESTS_DIR / "driver.py"), str(job_file)],
                          capture_output=True, text=True, env=env, cwd=str(TESTS_DIR))
    if done.returncode != 0:
        raise AssertionError(f"reference driver failed ({REFERENCE_PYTHON}):\n{done.stderr}")
    summary = json.loads((workdir / "summary.json").read_text(encoding="utf-8"))
    sdk_file = Path(summary.pop("sdk_file")).resolve()
    if sdk_file.parent != REFERENCE_PACKAGE.resolve():
        raise AssertionError(f"reference run imported {sdk_file}, not {REFERENCE_PACKAGE}")
    return summary


def reference_proto(name: str):
    """One module of the reference's `aigenora.proto` (stdlib-only ones), loaded from its file
    under a private package name so it never shadows ours."""
    import importlib
    import types

    package = types.ModuleType("reference_proto")
    package.__path__ = [str(REFERENCE_PACKAGE / "proto")]
    sys.modules.setdefault("reference_proto", package)
    return importlib.import_module(f"reference_proto.{name}")
