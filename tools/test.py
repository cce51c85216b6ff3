#!/usr/bin/env python3
"""Run every test of the repository: the Rust workspace, then the Python
package's tests (pytest, the notebook included).

Usage: python3 tools/test.py [PYTEST ARGS...]

Needs a Rust toolchain and Python >= 3.9 with network access to crates.io
and PyPI on the first run. Python tools live in `.venv` at the repository
root (created here, gitignored): maturin builds the extension into it.
MLX's CPU wheel is installed when PyPI has one for this machine; without
it the MLX tests are skipped and say why. PyTorch (about 3 GB with its CUDA
libraries, a few minutes the first time) is installed for the PyTorch tests
unless METAL_PUZZLES_SKIP_TORCH=1 is set, which skips them.
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
NEEDED = ["maturin>=1.5,<2", "pytest", "pytest-xdist", "numpy", "nbclient", "nbformat", "ipykernel"]
OPTIONAL = ["mlx[cpu]"]
SKIP_TORCH = os.environ.get("METAL_PUZZLES_SKIP_TORCH") == "1"


def run(*cmd, env=None):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, env=env).returncode


def must(*cmd, env=None):
    code = run(*cmd, env=env)
    if code != 0:
        sys.exit(code)


def bootstrap_pip():
    """Install pip into a venv made without it (Debian's python3 lacks
    ensurepip unless python3-venv is installed): fetch pip's wheel from
    PyPI and let it install itself."""
    index = "https://pypi.org/pypi/pip/json"
    with urllib.request.urlopen(index) as r:
        info = json.load(r)
    wheel = next(u for u in info["urls"] if u["filename"].endswith(".whl"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / wheel["filename"]
        # (some mirrors answer with URLs relative to the index)
        urllib.request.urlretrieve(urllib.parse.urljoin(index, wheel["url"]), path)
        must(PY, str(path / "pip"), "install", "--quiet", "--no-index", str(path))


def make_venv():
    if PY.exists():
        return
    print(f"creating {VENV}", flush=True)
    try:
        venv.EnvBuilder(with_pip=True).create(VENV)
    except (Exception, SystemExit) as e:  # noqa: BLE001 - no ensurepip (Debian without python3-venv)
        print(f"(venv without pip: {e}; fetching pip from PyPI)", flush=True)
        venv.EnvBuilder(with_pip=False, clear=True).create(VENV)
        bootstrap_pip()


def main():
    must("cargo", "test", "--workspace")
    make_venv()
    pip = [PY, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    must(*pip, *NEEDED)
    for extra in OPTIONAL:
        if run(*pip, extra) != 0:
            print(f"note: `{extra}` does not install here; the MLX tests will be skipped", flush=True)
    if SKIP_TORCH:
        print("note: METAL_PUZZLES_SKIP_TORCH=1: torch is not installed and the PyTorch tests are skipped", flush=True)
    elif run(*pip, "torch") != 0:
        print("note: `torch` does not install here; the PyTorch tests will be skipped", flush=True)
    env = dict(os.environ, VIRTUAL_ENV=str(VENV), PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("CONDA_PREFIX", None)
    must(BIN / "maturin", "develop", "--quiet", env=env)
    # The notebook tests start a Jupyter kernel: register the venv's.
    must(PY, "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3", env=env)
    code = run(PY, "-m", "pytest", "-p", "no:cacheprovider", "-q", "crates/python/tests", *sys.argv[1:], env=env)
    if code == 5:
        print("error: pytest collected no tests", file=sys.stderr)
        code = 1
    sys.exit(code)


if __name__ == "__main__":
    main()
