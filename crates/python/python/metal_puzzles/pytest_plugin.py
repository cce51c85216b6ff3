"""The pytest plugin: ``pytest --metal-sim`` (or ``metal_sim = true`` in the
ini file) runs a project's existing MLX and PyTorch tests on the simulator.

For the session, ``mx.fast.metal_kernel`` and ``torch.mps.compile_shader``
route to the simulated GPU, and MLX's availability checks say there is a
GPU (``metal_puzzles.mlx.install(available=True)``; turn that off with
``--metal-sim-available=no``), so tests skipped "without Metal" run.

Every kernel runs under the sanitizer (``--metal-sim-check
none|memory|all``, default ``all``). An error finding fails the test that
triggered it, with the kernel, the finding's file:line, the thread and the
Python line that called the kernel — also when the test or a library
catches the exception. ``--metal-sim-warn-only`` turns findings into
warnings. The terminal summary lists calls and findings per kernel, also
under pytest-xdist (the workers' results travel in the test reports).

Options (command line / ini):

* ``--metal-sim`` / ``metal_sim = true``
* ``--metal-sim-check=LEVEL`` / ``metal_sim_check = LEVEL``
* ``--metal-sim-warn-only`` / ``metal_sim_warn_only = true``
* ``--metal-sim-available=yes|no`` / ``metal_sim_available = false``
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Dict, List

import pytest

_KEY = "metal_sim"


def pytest_addoption(parser):
    group = parser.getgroup("metal-sim", "Metal kernels on the metal-puzzles simulator")
    group.addoption("--metal-sim", action="store_true", default=None,
                    help="run mx.fast.metal_kernel and torch.mps.compile_shader kernels on the simulated GPU")
    group.addoption("--metal-sim-check", choices=("none", "memory", "all"), default=None,
                    help="sanitizer level for every kernel (default: all)")
    group.addoption("--metal-sim-warn-only", action="store_true", default=None,
                    help="report sanitizer findings as warnings instead of failing the test")
    group.addoption("--metal-sim-available", choices=("yes", "no"), default=None,
                    help="make mx.metal.is_available() and the GPU device checks true (default: yes)")
    parser.addini("metal_sim", "run Metal kernels on the simulator (like --metal-sim)", type="bool", default=False)
    parser.addini("metal_sim_check", "sanitizer level: none, memory or all", default="all")
    parser.addini("metal_sim_warn_only", "sanitizer findings only warn", type="bool", default=False)
    parser.addini("metal_sim_available", "make MLX's availability checks true", type="bool", default=True)


def _option(config, name, ini):
    value = config.getoption(name)
    return config.getini(ini) if value is None else value


class MetalSim:
    """The plugin's state for one pytest process."""

    def __init__(self, config):
        self.config = config
        self.check = _option(config, "metal_sim_check", "metal_sim_check")
        if self.check not in ("none", "memory", "all"):
            raise pytest.UsageError(f"metal_sim_check must be none, memory or all, not {self.check!r}")
        self.warn_only = bool(_option(config, "metal_sim_warn_only", "metal_sim_warn_only"))
        avail = config.getoption("metal_sim_available")
        self.available = config.getini("metal_sim_available") if avail is None else avail == "yes"
        self.current: List[dict] = []
        # kernel -> {"calls": n, "findings": {key: record}}
        self.kernels: Dict[str, dict] = defaultdict(lambda: {"calls": 0, "findings": {}})
        self.routed: List[str] = []
        self.unrouted: List[str] = []

    def start(self):
        from . import _errors

        _errors.set_default_check(self.check, errors="warn" if self.warn_only else "raise")
        _errors._listeners.append(self.record)
        try:
            import mlx.core  # noqa: F401
        except ImportError:
            pass
        else:
            from . import mlx as mp_mlx

            if mp_mlx.install(force=True, available=self.available):
                self.routed.append("mx.fast.metal_kernel" + (" (availability checks on)" if self.available else ""))
        try:
            import torch  # noqa: F401
        except ImportError:
            pass
        except OSError as e:
            # torch is there but its shared libraries are not: say so in the header.
            self.unrouted.append(f"torch.mps.compile_shader (torch does not load: {e})")
        else:
            from . import torch as mp_torch

            mp_torch.install()
            self.routed.append("torch.mps.compile_shader")

    def stop(self):
        from . import _errors

        if self.record in _errors._listeners:
            _errors._listeners.remove(self.record)

    def record(self, kernel, findings, site):
        self.current.append({
            "kernel": kernel,
            "site": site,
            "findings": [
                {"kind": f.kind, "severity": f.severity, "message": f.message, "file": f.file, "line": f.line,
                 "column": f.column, "thread": list(f.thread), "threadgroup": list(f.threadgroup), "count": f.count,
                 "rendered": f.rendered}
                for f in findings
            ],
        })

    def absorb(self, calls: List[dict]):
        for c in calls:
            k = self.kernels[c["kernel"]]
            k["calls"] += 1
            for f in c["findings"]:
                key = (f["kind"], f["file"], f["line"], f["message"])
                if key in k["findings"]:
                    k["findings"][key]["count"] += f["count"]
                else:
                    k["findings"][key] = dict(f)


def _where(f: dict) -> str:
    place = f"{f['file']}:{f['line']}" if f.get("file") else "(the dispatch)"
    if f.get("column"):
        place += f":{f['column']}"
    t = f["thread"]
    return f"{place}: {f['kind']} ({f['severity']}), thread ({t[0]}, {t[1]}, {t[2]}): {f['message']}"


def pytest_configure(config):
    enabled = config.getoption("metal_sim") or config.getini("metal_sim")
    if not enabled:
        return
    sim = MetalSim(config)
    config.stash[_stash_key] = sim
    sim.start()
    config.addinivalue_line("markers", "metal_sim: runs on the metal-puzzles simulator")


_stash_key = pytest.StashKey[MetalSim]()


def pytest_unconfigure(config):
    sim = config.stash.get(_stash_key, None)
    if sim is not None:
        sim.stop()


def pytest_report_header(config):
    sim = config.stash.get(_stash_key, None)
    if sim is None:
        return None
    routed = ", ".join(sim.routed) or "nothing (neither MLX nor torch is installed)"
    mode = "findings warn" if sim.warn_only else "error findings fail the test"
    line = f"metal-sim: kernels on the simulated GPU: {routed}; check={sim.check}, {mode}"
    return line + "".join(f"; not routed: {u}" for u in sim.unrouted)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    sim = item.config.stash.get(_stash_key, None)
    if sim is None:
        return (yield)
    sim.current = []
    try:
        result = yield
    finally:
        calls, sim.current = sim.current, []
        item.user_properties.append((_KEY, json.dumps(calls)))
    errors = [(c, f) for c in calls for f in c["findings"] if f["severity"] == "error"]
    if errors and not sim.warn_only:
        lines = [f"metal-sim: the sanitizer found {len(errors)} error{'s' if len(errors) != 1 else ''} in kernels this test ran:"]
        for c, f in errors:
            called = f" (called at {c['site']})" if c["site"] else ""
            lines.append(f"  kernel `{c['kernel']}`{called}")
            lines.append(f"    {_where(f)}")
        lines.append("")
        lines.extend(f["rendered"] for _, f in errors[:3] if f.get("rendered"))
        pytest.fail("\n".join(lines), pytrace=False)
    return result


def pytest_runtest_logreport(report):
    # Runs in the controller for xdist workers too: the calls travel in user_properties.
    if report.when != "call":
        return
    for key, value in getattr(report, "user_properties", ()):
        if key == _KEY:
            _pending.append(json.loads(value))


_pending: List[List[dict]] = []


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    enabled = config.getoption("metal_sim") or config.getini("metal_sim")
    if not enabled:
        return
    sim = config.stash.get(_stash_key, None) or MetalSim(config)
    for calls in _pending:
        sim.absorb(calls)
    _pending.clear()
    tr = terminalreporter
    tr.section("metal-sim: kernels on the simulated GPU")
    if not sim.kernels:
        tr.write_line("no kernel ran on the simulator")
        return
    for name in sorted(sim.kernels):
        k = sim.kernels[name]
        fs = list(k["findings"].values())
        errors = sum(1 for f in fs if f["severity"] == "error")
        warns = len(fs) - errors
        verdict = "clean" if not fs else f"{errors} error finding{'s' if errors != 1 else ''}, {warns} warning{'s' if warns != 1 else ''}"
        tr.write_line(f"{name}: {k['calls']} call{'s' if k['calls'] != 1 else ''}, {verdict}")
        for f in fs:
            tr.write_line(f"    {_where(f)} [x{f['count']}]")
