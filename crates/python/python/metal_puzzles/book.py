"""The Metal Puzzles book, as its notebook has it: :class:`MetalKernel`,
:class:`MetalProblem` and the puzzles (:data:`puzzles`), from the
same data as ``metal-puzzles check``."""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from . import _arrays, _native
from ._errors import _findings
from .fast import MetalKernelFunction, _capture_arg, _capture_note

__all__ = ["MetalKernel", "MetalProblem", "Puzzle", "puzzles", "puzzle", "Diagram"]

# Randomized tests per problem and their value range (exact in float32).
RANDOM_TESTS = 3
RANDOM_LO, RANDOM_HI = -9, 10


class MetalKernel(MetalKernelFunction):
    """The book's kernel: ``mx.fast.metal_kernel`` with the book's arguments.

    ``MetalKernel(name, input_names, output_names, source, header="")``;
    call it like MLX's kernel, or hand it to :class:`MetalProblem`.
    """

    def __init__(self, name: str, input_names: Sequence[str], output_names: Sequence[str], source: str, header: str = "",
                 ensure_row_contiguous: bool = True, atomic_outputs: bool = False):
        super().__init__(name, list(input_names), list(output_names), source, header, ensure_row_contiguous, atomic_outputs)


@dataclass(frozen=True)
class Puzzle:
    """One puzzle of the book (the data ``metal-puzzles hint`` prints)."""

    number: int
    slug: str
    title: str
    kernel_name: str
    explanation: str
    input_names: Tuple[str, ...]
    output_name: str
    header: str
    starter: str
    tests: Tuple[dict, ...]
    #: Limits per score column (global reads, global writes, shared reads,
    #: shared writes, device atomics, threadgroup atomics, barriers, SIMD ops).
    targets: Tuple[Optional[int], ...]
    hints: Tuple[str, ...]
    chapter: str = ""
    output_dtype: str = "float32"
    atomic_outputs: bool = False

    def inputs(self, test: int = 0, random: Optional[int] = None) -> List[np.ndarray]:
        """The inputs of test `test` (or of its randomized variant `random`)."""
        return [_arrays.numpy_result(n, s, b) for n, s, b in _native.book_inputs(self.number, test, random)]

    def kernel(self, source: Optional[str] = None) -> MetalKernel:
        """A :class:`MetalKernel` with this puzzle's names and header (the starter body by default)."""
        return MetalKernel(self.kernel_name, self.input_names, [self.output_name],
                           self.starter if source is None else source, header=self.header,
                           atomic_outputs=self.atomic_outputs)

    def problem(self, source: Optional[str] = None, spec: Optional[Callable] = None, test: int = 0) -> "MetalProblem":
        """A :class:`MetalProblem` for test `test` of this puzzle with `source` as the body."""
        t = self.tests[test]
        return MetalProblem(self.title, lambda *_: self.kernel(source), self.inputs(test), tuple(t["output_shape"]),
                            grid=tuple(t["grid"]), threadgroup=tuple(t["threadgroup"]), spec=spec,
                            output_dtype=self.output_dtype)


def _load() -> List[Puzzle]:
    out = []
    for p in json.loads(_native.book_puzzles()):
        out.append(Puzzle(
            number=p["number"], slug=p["slug"], title=p["title"], kernel_name=p["kernel_name"],
            explanation=p["explanation"], input_names=tuple(p["input_names"]), output_name=p["output_name"],
            header=p["header"], starter=p["starter"], tests=tuple(p["tests"]), targets=tuple(p["targets"]),
            hints=tuple(p["hints"]), chapter=p["chapter"], output_dtype=p["output_dtype"],
            atomic_outputs=p["atomic_outputs"],
        ))
    return out


#: The book's puzzles, in order (the same list as ``metal-puzzles list``).
puzzles: List[Puzzle] = _load()


def puzzle(key) -> Puzzle:
    """A puzzle by number (``7``) or slug/kernel name (``"map_2d"``)."""
    for p in puzzles:
        if key == p.number or (isinstance(key, str) and key.lower() in (p.slug, p.kernel_name.lower(), p.title.lower())):
            return p
    raise KeyError(f"the book has no puzzle {key!r}; puzzles are 1-{len(puzzles)} or their names ({', '.join(p.slug for p in puzzles)})")


class Diagram:
    """Which thread read and wrote which cell: SVG in Jupyter, text in a terminal."""

    def __init__(self, text: str, svg: str):
        self.text = text
        self.svg = svg

    def _repr_svg_(self) -> str:
        return self.svg

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except Exception:  # noqa: BLE001
        return False
    return ip is not None and hasattr(ip, "kernel")


def _native_array(x, what):
    a, name = _arrays.to_numpy(x, what)
    return _arrays.to_native(a, name)


def _same_kind(template, values: np.ndarray):
    """`values` as the kind of array `template` is (MLX stays MLX)."""
    kind = _arrays.kind_of(template)
    if kind == "mlx":
        import mlx.core as mx

        return mx.array(values)
    if kind == "torch":
        import torch

        return torch.from_numpy(values)
    return values


class Verdict:
    """What :meth:`MetalProblem.check` returns: true when the tests passed.

    It behaves as a bool (``if problem.check():``, ``assert
    problem.check()``, ``== True``) but shows nothing as the last line of a
    notebook cell, where ``check()`` has already printed its report.
    """

    __slots__ = ("passed",)

    def __init__(self, passed: bool):
        self.passed = bool(passed)

    def __bool__(self) -> bool:
        return self.passed

    def __eq__(self, other) -> bool:
        return bool(self) == bool(other) if isinstance(other, (bool, Verdict)) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.passed)

    def __repr__(self) -> str:
        return repr(self.passed)

    def _ipython_display_(self) -> None:
        # (the report is printed already; no `True` under the cell)
        pass


def _verdict(passed: bool):
    """In a notebook, a :class:`Verdict` (no extra line under the cell);
    elsewhere the plain bool."""
    return Verdict(passed) if _in_notebook() else bool(passed)


class MetalProblem:
    """A puzzle: a kernel factory, inputs, an output shape, a dispatch and a spec.

    A problem whose kernel, inputs, output and dispatch match one of the
    book's puzzles is checked as ``metal-puzzles check`` checks it, unless
    it has a ``spec=`` of its own: the teacher's spec (and title) always win.

    ``MetalProblem(name, fn, inputs, output_shape, grid=(1,1,1), threadgroup=(1,1,1), spec=None)``
    — ``fn(*inputs)`` returns the :class:`MetalKernel` to test; ``spec(*inputs)``
    computes the expected output (the output is float32, filled with 0,
    unless ``output_dtype=`` says otherwise). :meth:`check` runs the tests;
    :meth:`show` prints the score table and draws the diagram.
    """

    def __init__(self, name: str, fn: Callable[..., MetalKernelFunction], inputs: Sequence[Any], output_shape,
                 grid=(1, 1, 1), threadgroup=(1, 1, 1), spec: Optional[Callable] = None, output_dtype: Any = "float32"):
        self.name = name
        self.fn = fn
        self.inputs = list(inputs)
        self.output_shape = tuple(int(d) for d in (output_shape if isinstance(output_shape, (tuple, list)) else (output_shape,)))
        self.grid = tuple(int(g) for g in grid)
        self.threadgroup = tuple(int(t) for t in threadgroup)
        self.spec = spec
        self.output_dtype = _arrays.dtype_name(output_dtype, "output_dtype")

    def _kernel(self) -> MetalKernelFunction:
        k = self.fn(*self.inputs)
        if not isinstance(k, MetalKernelFunction):
            raise TypeError(f"{self.name}: the problem's function must return a MetalKernel, not {type(k).__name__}")
        return k

    def book_puzzle(self, kernel: Optional[MetalKernelFunction] = None) -> Optional[Puzzle]:
        """The book's puzzle this problem is (same names, inputs, output shape and dispatch), if any."""
        k = kernel or self._kernel()
        shapes = []
        for i, x in enumerate(self.inputs):
            a, name = _arrays.to_numpy(x, f"inputs[{i}]")
            shapes.append((name, list(a.shape)))
        for p in puzzles:
            if p.kernel_name.lower() != k.name.lower() or list(p.input_names) != k.input_names or [p.output_name] != k.output_names:
                continue
            t = p.tests[0]
            if ([(i["dtype"], list(i["shape"])) for i in t["inputs"]] == shapes and list(t["output_shape"]) == list(self.output_shape)
                    and p.output_dtype == self.output_dtype
                    and list(t["grid"]) == list(self.grid) and list(t["threadgroup"]) == list(self.threadgroup)):
                return p
        return None

    # ----- check ---------------------------------------------------------

    def check(self, capture: Any = None) -> bool:
        """Run the tests and print the verdict: ``Passed Tests!`` or
        ``Failed Tests.`` with ``Yours:``/``Spec :``, the score table and
        any sanitizer findings. The book's puzzles are checked exactly as
        ``metal-puzzles check`` checks them (their tests, randomized
        variants and targets); other problems with their own inputs, three
        randomized variants of them, and ``spec``. Returns whether it passed
        (a bool; in a notebook a :class:`Verdict`, which acts as one but
        adds no ``True`` line under the cell).
        ``capture="p.mpcapture"`` (or ``True``, or ``MTL_CAPTURE_ENABLED=1``)
        saves the first failing test's run (or the first test's) of a book
        puzzle as a capture file for ``metal-puzzles debug``/``replay``.
        """
        k = self._kernel()
        p = self._as_book_puzzle(k)
        if p is not None:
            passed, _solved, report, findings_json, _score, note = _native.book_check(
                p.number, k.header, k.source, _capture_arg(capture)
            )
            print(report, end="")
            _capture_note(note)
            self.findings = _findings(findings_json)
            return _verdict(passed)
        return _verdict(self._check_own(k))

    def _as_book_puzzle(self, k: MetalKernelFunction) -> Optional[Puzzle]:
        """The book puzzle to check this problem as, if it is one: same
        kernel, inputs, output and dispatch, the same title, and a spec (if
        any) that gives the book's answer. Otherwise the teacher's own
        spec and title are used: they always win."""
        p = self.book_puzzle(k)
        if p is None or self.name != p.title:
            return None
        if self.spec is not None:
            try:
                mine = np.asarray(self.spec(*self.inputs))
            except Exception:  # noqa: BLE001 - the own check reports a failing spec
                return None
            natives = [_native_array(x, f"inputs[{i}]") for i, x in enumerate(self.inputs)]
            book = _arrays.numpy_result(*_native.book_spec(p.number, natives))
            if mine.shape != book.shape or not np.allclose(mine.astype(np.float64), book.astype(np.float64), rtol=1e-5, atol=1e-8):
                return None
        return p

    def _runs(self):
        yield self.name, self.inputs
        rng = np.random.default_rng(0x4D50)
        for r in range(1, RANDOM_TESTS + 1):
            variant = []
            for i, x in enumerate(self.inputs):
                a, _ = _arrays.to_numpy(x, f"inputs[{i}]")
                values = rng.integers(RANDOM_LO, RANDOM_HI, size=a.shape).astype(a.dtype if a.dtype != np.bool_ else np.int8)
                variant.append(_same_kind(x, values.astype(a.dtype)))
            yield f"{self.name}, random #{r}", variant

    def _run(self, k: MetalKernelFunction, inputs, count=True):
        natives = [_native_array(x, f"inputs[{i}]") for i, x in enumerate(inputs)]
        outs, findings_json, _, _, counts, _ = k._native.call(
            natives, [list(self.output_shape)], [self.output_dtype], list(self.grid), list(self.threadgroup), [], 0.0, False, "all", count
        )
        name, shape, data = outs[0]
        return _arrays.numpy_result(name, shape, data), _findings(findings_json), counts

    def _check_own(self, k: MetalKernelFunction) -> bool:
        if self.spec is None:
            raise ValueError(f"{self.name}: check() needs spec=, the function computing the expected output")
        failure, findings, score = None, [], [0] * 9
        for name, inputs in self._runs():
            yours, found, counts = self._run(k, inputs)
            score = [max(a, b) for a, b in zip(score, counts or [0] * 9)]
            for f in found:
                if not any((g.kind, g.line, g.message) == (f.kind, f.line, f.message) for g in findings):
                    findings.append(f)
            expected = np.asarray(self.spec(*inputs))
            ok = expected.shape == yours.shape and np.allclose(yours, expected, rtol=1e-5, atol=1e-8)
            if not ok and failure is None:
                failure = (name, inputs, yours, expected)
        errors = [f for f in findings if f.is_error]
        passed = failure is None and not errors
        if passed:
            print("Passed Tests!")
        elif failure is not None:
            name, inputs, yours, expected = failure
            print("Failed Tests." if name == self.name else f"Failed Tests. ({name})")
            if name != self.name:
                names = k.input_names
                for n, x in zip(names, inputs):
                    print(f"{n} = {_native.book_repr(_native_array(x, n))}")
            print(f"Yours: {_native.book_repr(_native_array(yours, 'yours'))}")
            print(f"Spec : {_native.book_repr(_native_array(_spec_array(expected), 'spec'))}")
        else:
            print("Failed Tests. (every output matches, but the sanitizer reported errors below)")
        print()
        print(_native.score_table(self.name, score, [None] * 9, passed), end="")
        for f in sorted(findings, key=lambda f: not f.is_error):
            print()
            print(str(f), end="")
        self.findings = findings
        return passed

    # ----- show ----------------------------------------------------------

    def score(self) -> List[int]:
        """Per-thread maxima on the problem's own inputs: global reads,
        global writes, shared reads, shared writes, device atomics,
        threadgroup atomics, barriers, SIMD-group operations."""
        _, _, counts = self._run(self._kernel(), self.inputs)
        return list(counts or [0] * 9)

    def diagram(self, width: Optional[int] = None) -> Diagram:
        """The diagram of one run on the problem's inputs (also for wrong kernels)."""
        k = self._kernel()
        natives = [_native_array(x, f"inputs[{i}]") for i, x in enumerate(self.inputs)]
        width = width or shutil.get_terminal_size((100, 24)).columns
        text, svg = _native.draw_call(k._native, self.name, natives, list(self.output_shape), self.output_dtype, list(self.grid),
                                      list(self.threadgroup), width, False)
        return Diagram(text, svg)

    def show(self) -> None:
        """Print the score table; then display the diagram (SVG in Jupyter,
        text in a terminal). A kernel that does not compile prints why."""
        from ._errors import CompileError

        k = self._kernel()
        p = self._as_book_puzzle(k)
        targets = list(p.targets) if p is not None else [None] * 9
        try:
            score = self.score()
        except CompileError as e:
            print(f"# {self.name}\n{e}")
            return
        print(_native.score_table(self.name, score, targets, False), end="")
        d = self.diagram()
        if _in_notebook():
            from IPython.display import display

            display(d)
        else:
            print()
            print(d.text)


def _spec_array(a: np.ndarray) -> np.ndarray:
    """The spec as the book shows it (float64 results printed as float32)."""
    if a.dtype == np.float64:
        return a.astype(np.float32)
    if a.dtype.name not in _arrays._NUMPY_NAMES:
        return a.astype(np.float32)
    return a
