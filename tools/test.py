#!/usr/bin/env python3
"""Run every test of the repository: the Rust workspace, the browser book
(built with tools/playground.py, tested in Chromium with playwright-core),
then the Python package's tests (pytest, the notebook included).

Usage: python3 tools/test.py [PYTEST ARGS...]

Needs a Rust toolchain and Python >= 3.9 with network access to crates.io
and PyPI on the first run. Python tools live in `.venv` at the repository
root (created here, gitignored): maturin builds the extension into it.
MLX's CPU wheel is installed when PyPI has one for this machine; without
it the MLX tests are skipped and say why. PyTorch (about 5.5 GB with its CUDA
libraries, a few minutes the first time; skipped with a note when the
disk has less than 7 GB free) is installed for the PyTorch tests
unless METAL_PUZZLES_SKIP_TORCH=1 is set, which skips them. The browser
tests need node with npm, Chromium at /usr/bin/chromium (Debian's
`chromium`; CHROMIUM= points elsewhere) and the `wasm32-unknown-unknown`
Rust target; screenshots go to target/playground/artifacts.
"""
import json
import os
import shutil
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


def target_dir():
    out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=ROOT, capture_output=True, text=True, check=True)
    return Path(json.loads(out.stdout)["target_directory"])


def browser_tests():
    """Build the static site, then test it in Chromium and its wasm module
    against the command line (tools/playground/test_site.mjs)."""
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).exists():
        print(f"error: no Chromium at {chromium}: `apt-get install chromium` (or set CHROMIUM=...)", file=sys.stderr)
        sys.exit(1)
    work = target_dir() / "playground"
    site = work / "site"
    must(sys.executable, "tools/playground.py", "build", site)
    work.mkdir(parents=True, exist_ok=True)
    with open(work / "reference.json", "w") as out:
        print("+ cargo run -p web --example reference_outputs", flush=True)
        if subprocess.run(["cargo", "run", "-q", "--locked", "-p", "web", "--example", "reference_outputs"], cwd=ROOT, stdout=out).returncode != 0:
            sys.exit(1)
    page = ROOT / "tools" / "playground"
    if not (page / "node_modules" / "playwright-core").exists():
        must("npm", "ci", "--prefix", page, "--no-audit", "--no-fund")
    env = dict(
        os.environ,
        CHROMIUM=chromium,
        PLAYGROUND_SITE=str(site),
        PLAYGROUND_REFERENCE=str(work / "reference.json"),
        PLAYGROUND_ARTIFACTS=str(work / "artifacts"),
        METAL_PUZZLES_BIN=str(target_dir() / "debug" / "metal-puzzles"),
    )
    must("node", "--test", "--test-concurrency=1", page / "test_site.mjs", env=env)


# PyPI's Linux torch pulls in its CUDA libraries: about 5.5 GB installed.
TORCH_NEEDS_BYTES = 7 * 1024**3


def torch_imports():
    probe = "import torch; torch.ones(2).sum().item()"
    return subprocess.run([str(PY), "-c", probe], cwd=ROOT, capture_output=True).returncode == 0


def install_torch(pip):
    """Install torch for the PyTorch tests, or say plainly why they are
    skipped. A half-installed torch (a full disk, a cut download) is
    removed rather than left to fail at import in every test."""
    if SKIP_TORCH:
        print("note: METAL_PUZZLES_SKIP_TORCH=1: torch is not installed and the PyTorch tests are skipped", flush=True)
        return
    if torch_imports():
        return
    free = shutil.disk_usage(VENV).free
    if free < TORCH_NEEDS_BYTES:
        print(f"note: only {free / 1024**3:.1f} GB free beside {VENV}; torch needs about "
              f"{TORCH_NEEDS_BYTES / 1024**3:.0f} GB, so it is not installed and the PyTorch tests are skipped", flush=True)
        return
    # A torch that is there but does not import is reinstalled, not trusted.
    run(PY, "-m", "pip", "uninstall", "--yes", "--quiet", "torch")
    # --no-cache-dir: the wheels would otherwise take the same space again.
    installed = run(*pip, "--no-cache-dir", "torch") == 0
    if installed and torch_imports():
        return
    print("note: `torch` did not install or does not import here; removing it, the PyTorch tests will be skipped", flush=True)
    run(PY, "-m", "pip", "uninstall", "--yes", "--quiet", "torch")


def main():
    must("cargo", "test", "--workspace")
    browser_tests()
    make_venv()
    pip = [PY, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    must(*pip, *NEEDED)
    for extra in OPTIONAL:
        if run(*pip, extra) != 0:
            print(f"note: `{extra}` does not install here; the MLX tests will be skipped", flush=True)
    install_torch(pip)
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
