"""Errors and findings of metal_puzzles, and the global check level."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

__all__ = [
    "CompileError",
    "KernelError",
    "KernelWarning",
    "Finding",
    "Diagnostic",
    "set_default_check",
    "get_default_check",
]

_CHECKS = ("none", "memory", "all", "nan")
_default_check = "all"
_error_action = "raise"


def set_default_check(check: Optional[str] = None, *, errors: Optional[str] = None) -> None:
    """Set the sanitizer level used when a call passes no ``check=``.

    ``"all"`` (the default): out-of-bounds accesses, uninitialized reads,
    barrier divergence, runaway loops and data races raise
    :class:`KernelError`. ``"memory"``: the same without race detection.
    ``"none"``: no checks (only what keeps the simulator safe).
    ``"nan"``: ``"all"``, and for each NaN or infinity in the outputs a
    :class:`KernelWarning` names the operation that first made a
    non-finite value from finite operands (line, thread, operands).

    ``errors="raise"`` (the default) raises :class:`KernelError` for error
    findings; ``errors="warn"`` issues a :class:`KernelWarning` instead and
    returns the outputs.
    """
    global _default_check, _error_action
    if check is not None:
        _default_check = _check_name(check)
    if errors is not None:
        if errors not in ("raise", "warn"):
            raise ValueError(f'errors must be "raise" or "warn", not {errors!r}')
        _error_action = errors


def get_default_check() -> str:
    """The sanitizer level calls use when they pass no ``check=``."""
    return _default_check


def _check_name(check: Optional[str]) -> str:
    if check is None:
        return _default_check
    if check not in _CHECKS:
        raise ValueError(f'check must be "none", "memory", "all" or "nan", not {check!r}')
    return check


@dataclass(frozen=True)
class Diagnostic:
    """One compile message: where it points and what it says."""

    severity: str
    message: str
    file: str
    line: int
    column: int
    source_line: str
    notes: Tuple[str, ...] = ()
    help: Tuple[str, ...] = ()


class CompileError(Exception):
    """The Metal source does not compile.

    ``str(err)`` is the full report (file:line:column, the source line with
    a caret, notes and help), as the command line prints it;
    ``err.diagnostics`` holds the same as :class:`Diagnostic` objects.
    """

    def __init__(self, message: str, diagnostics_json: str = "[]"):
        super().__init__(message)
        self.diagnostics: List[Diagnostic] = [
            Diagnostic(
                severity=d.get("severity", "error"),
                message=d.get("message", ""),
                file=d.get("file", ""),
                line=d.get("line", 0),
                column=d.get("column", 0),
                source_line=d.get("source_line", ""),
                notes=tuple(d.get("notes", ())),
                help=tuple(d.get("help", ())),
            )
            for d in json.loads(diagnostics_json)
        ]
        self.generated_source: Optional[str] = None

    def __str__(self) -> str:
        text = self.args[0] if self.args else ""
        if self.generated_source:
            text = f"{text}\n{self.generated_source}"
        return text


@dataclass(frozen=True)
class Finding:
    """One sanitizer finding of a kernel run (one bug, however often it hit).

    ``kind`` is one of ``out-of-bounds``, ``data-race``,
    ``barrier-divergence``, ``uninitialized-read``, ``runaway-kernel``,
    ``division-by-zero``, ``misaligned-access``, ``invalid-dispatch``.
    ``thread`` and ``threadgroup`` are the (x, y, z) positions of the first
    thread that hit it; ``count`` how many times it happened.
    """

    kind: str
    severity: str
    message: str
    file: Optional[str]
    line: int
    column: Optional[int]
    thread: Tuple[int, int, int]
    threadgroup: Tuple[int, int, int]
    count: int
    source_line: Optional[str] = None
    notes: Tuple[str, ...] = ()
    rendered: str = field(default="", repr=False)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def __str__(self) -> str:
        return self.rendered or f"{self.severity}: {self.message}"


def _findings(findings_json: str) -> List[Finding]:
    return [
        Finding(
            kind=f["kind"],
            severity=f["severity"],
            message=f["message"],
            file=f.get("file"),
            line=f.get("line", 0),
            column=f.get("column"),
            thread=tuple(f["thread"]),
            threadgroup=tuple(f["threadgroup"]),
            count=f["count"],
            source_line=f.get("source_line"),
            notes=tuple(f.get("notes", ())),
            rendered=f.get("rendered", ""),
        )
        for f in json.loads(findings_json)
    ]


class KernelError(Exception):
    """The sanitizer found errors while the kernel ran.

    ``err.findings`` lists them as :class:`Finding` objects; ``err.outputs``
    holds what the kernel produced anyway (useful when debugging).
    """

    def __init__(self, message: str, findings: List[Finding], outputs=None):
        super().__init__(message)
        self.findings = findings
        self.outputs = outputs


class KernelWarning(UserWarning):
    """A finding that is not an error (for example a benign race), or a compile warning."""


#: Functions called with (kernel name, findings, Python call site) after
#: every kernel run (the pytest plugin listens).
_listeners: List = []


def _call_site() -> str:
    """`file.py:LINE` of the first frame outside this package and MLX/torch."""
    import sys

    f = sys._getframe(1)
    here = __name__.rsplit(".", 1)[0]
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if not (mod == here or mod.startswith(here + ".") or mod.startswith(("mlx", "torch"))):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return ""


def _raise_or_warn(kernel: str, findings: List[Finding], outputs=None) -> None:
    """Raise KernelError for error findings; warn for the others."""
    if _listeners:
        site = _call_site()
        for listen in list(_listeners):
            listen(kernel, findings, site)
    errors = [f for f in findings if f.is_error]
    for f in findings:
        if not f.is_error or _error_action == "warn":
            warnings.warn(str(f), KernelWarning, stacklevel=3)
    if errors and _error_action == "raise":
        n = len(errors)
        head = f"kernel `{kernel}`: the sanitizer found {n} error{'s' if n != 1 else ''}"
        body = "".join(str(f) for f in errors)
        raise KernelError(f"{head}\n{body}", errors, outputs)
