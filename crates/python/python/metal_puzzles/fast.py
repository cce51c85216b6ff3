"""``mx.fast`` on the simulator: :func:`metal_kernel` with MLX's API."""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any, List, Optional, Sequence, Tuple

from . import _arrays, _native
from ._errors import KernelWarning, _check_name, _findings, _raise_or_warn

__all__ = ["metal_kernel", "MetalKernelFunction"]


def _dims(value: Any, what: str) -> List[int]:
    try:
        dims = [int(v) for v in value]
    except TypeError:
        raise TypeError(f"[metal_kernel] {what} must be a tuple of 3 ints, e.g. {what}=(32, 1, 1); got {value!r}") from None
    if len(dims) != 3:
        raise ValueError(f"[metal_kernel] {what} must have exactly 3 entries (x, y, z); got {value!r}")
    if any(d < 0 or d > 0xFFFFFFFF for d in dims):
        raise ValueError(f"[metal_kernel] {what}: every entry must be between 0 and 2**32-1; got {value!r}")
    return dims


def _shape(value: Any, what: str) -> List[int]:
    try:
        shape = [int(v) for v in value]
    except TypeError:
        raise TypeError(f"[metal_kernel] {what} must be a sequence of ints; got {value!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"[metal_kernel] {what}: dimensions cannot be negative; got {value!r}")
    return shape


def _template_value(name: str, value: Any):
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    try:
        return _arrays.dtype_name(value, f"template `{name}`")
    except TypeError:
        raise ValueError(
            "[metal_kernel] Invalid template argument. Must be `mlx.core.Dtype`, `int` or `bool`. "
            f"(template parameter `{name}` got {value!r})"
        ) from None


def _sizes_match(what: str, names: List[str], got: int) -> None:
    """MLX's check (and text) that there is one entry per name."""
    if got != len(names):
        raise ValueError(
            f"[metal_kernel] Expected `{what}` to have size {len(names)} but got size {got}. "
            f"(the kernel's names are [{', '.join(names)}]; pass one entry per name, in order)"
        )


class MetalKernelFunction:
    """The callable :func:`metal_kernel` returns; call it like MLX's kernel."""

    def __init__(self, name, input_names, output_names, source, header, ensure_row_contiguous, atomic_outputs,
                 math_mode: str = "safe"):
        self.name = name
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        self.source = source
        self.header = header
        # The kind of array results come back as (None: the kind that came in).
        self.output_kind: Optional[str] = None
        self.math_mode = math_mode
        # Metal's compiler defines __FAST_MATH__ only in fast mode.
        defines = [("__FAST_MATH__", "1")] if math_mode == "fast" else []
        self._native = _native.MlxKernel(
            name, self.input_names, self.output_names, source, header, ensure_row_contiguous, atomic_outputs, defines
        )

    def __repr__(self) -> str:
        return f"<metal_kernel {self.name!r} inputs={self.input_names} outputs={self.output_names}>"

    def generated_source(self, inputs, output_dtypes, template=None) -> str:
        """The source MLX would generate for these inputs (no run)."""
        specs = []
        for i, x in enumerate(inputs):
            if _arrays.kind_of(x) == "scalar":
                specs.append((_scalar_dtype(x), []))
            else:
                a, dname = _arrays.to_numpy(x, f"inputs[{i}]")
                specs.append((dname, list(a.shape)))
        dts = [_arrays.dtype_name(d, f"output_dtypes[{i}]") for i, d in enumerate(output_dtypes)]
        tmpl = [(str(n), _template_value(n, v)) for n, v in (template or [])]
        return self._native.generate(specs, dts, tmpl)

    def __call__(
        self,
        *,
        inputs: Sequence[Any],
        output_shapes: Sequence[Sequence[int]],
        output_dtypes: Sequence[Any],
        grid: Tuple[int, int, int],
        threadgroup: Tuple[int, int, int],
        template: Optional[Sequence[Tuple[str, Any]]] = None,
        init_value: Optional[float] = None,
        verbose: bool = False,
        stream: Any = None,
        check: Optional[str] = None,
        capture: Any = None,
    ) -> list:
        """Run the kernel on the simulated GPU, as calling MLX's kernel runs it.

        ``inputs``: one array or Python scalar per input name, in order
        (NumPy, ``mlx.core.array`` or CPU torch tensors; a Python int
        becomes int32, a float float32, a bool bool). ``output_shapes`` and
        ``output_dtypes``: one per output name. ``grid`` counts *threads*
        per dimension (``dispatchThreads``), ``threadgroup`` threads per
        threadgroup (at most 1024 in all). ``template``: ``(name, value)``
        pairs, a dtype, an int or a bool each. ``init_value``: fill the
        outputs first (otherwise they start uninitialized, and reading them
        is a finding). ``verbose=True`` (or ``VERBOSE=1``) prints the
        generated source. ``stream`` is accepted and ignored.

        Simulator options: ``check="none"|"memory"|"all"|"nan"`` (default
        :func:`metal_puzzles.set_default_check`) and ``capture=``.
        Returns the list of outputs; error findings raise
        :class:`metal_puzzles.KernelError` (file, line, thread). A loop that
        never ends is stopped after 10,000,000 instructions per threadgroup
        (about 3 s) as a ``runaway-kernel`` finding.
        """
        check = _check_name(check)
        if isinstance(inputs, dict) or not isinstance(inputs, (list, tuple)):
            raise TypeError("[metal_kernel] inputs must be a list of arrays or scalars, in the order of input_names")
        _sizes_match("inputs", self.input_names, len(inputs))
        kinds = {_arrays.kind_of(x) for x in inputs}
        out_kind = self.output_kind or ("mlx" if "mlx" in kinds else "torch" if "torch" in kinds else "numpy")
        native_inputs = []
        for i, x in enumerate(inputs):
            if _arrays.kind_of(x) == "scalar":
                native_inputs.append(x)
            else:
                a, dname = _input_numpy(self.name, x, i)
                native_inputs.append(_arrays.to_native(a, dname))
        if not isinstance(output_shapes, (list, tuple)) or not isinstance(output_dtypes, (list, tuple)):
            raise TypeError("[metal_kernel] output_shapes and output_dtypes must be lists, one entry per output name")
        _sizes_match("output_shapes", self.output_names, len(output_shapes))
        _sizes_match("output_dtypes", self.output_names, len(output_dtypes))
        shapes = [_shape(s, f"output_shapes[{i}]") for i, s in enumerate(output_shapes)]
        dts = [_arrays.dtype_name(d, f"[metal_kernel] output_dtypes[{i}]") for i, d in enumerate(output_dtypes)]
        tmpl = []
        for entry in template or []:
            try:
                n, v = entry
            except (TypeError, ValueError):
                raise TypeError(f"[metal_kernel] template entries must be (name, value) pairs; got {entry!r}") from None
            tmpl.append((str(n), _template_value(n, v)))
        verbose = bool(verbose) or _native.verbose_env()
        outs, findings_json, text, warns, _, note = self._native.call(
            native_inputs,
            shapes,
            dts,
            _dims(grid, "grid"),
            _dims(threadgroup, "threadgroup"),
            tmpl,
            None if init_value is None else float(init_value),
            verbose,
            check,
            False,
            _capture_arg(capture),
        )
        _capture_note(note)
        if text:
            sys.stdout.write(text)
        if warns:
            warnings.warn(warns, KernelWarning, stacklevel=2)
        results = [_arrays.result_as(out_kind, n, s, b) for n, s, b in outs]
        _raise_or_warn(self.name, _findings(findings_json), results)
        return results


MetalKernelFunction.__call__.__qualname__ = "metal_kernel.__call__"


def _input_numpy(name: str, x: Any, i: int):
    """Input `i` as NumPy; an MLX array that cannot be read here is inside a
    function transformation (``mx.vmap``, a compiled graph) and says so."""
    try:
        return _arrays.to_numpy(x, f"[metal_kernel] inputs[{i}]")
    except TypeError:
        raise
    except Exception as e:  # noqa: BLE001 - MLX refuses to evaluate while transforming
        if _arrays.kind_of(x) != "mlx":
            raise
        raise ValueError(
            f"[metal_kernel] kernel `{name}` cannot run inside mx.vmap (or another function transformation that "
            "traces its inputs): the simulator needs the values of its inputs, and a traced array has none. "
            "Workaround: call the kernel outside the transformation, e.g. loop over the batch and mx.stack the "
            "results, or give the kernel a batch dimension in its grid. (mx.compile works: while "
            f"metal_puzzles.mlx is installed it runs functions uncompiled.) [MLX said: {e}]"
        ) from None


def _math_mode(compile_options: Optional[dict], math_mode: Optional[str]) -> str:
    """MLX's ``compile_options={"math_mode": ...}`` (or ``math_mode=``): "safe", "relaxed" or "fast"."""
    mode = math_mode
    if compile_options is not None:
        if not isinstance(compile_options, dict):
            raise ValueError("[metal_kernel] Expected `compile_options` to be a dict.")
        for key, value in compile_options.items():
            if key != "math_mode":
                raise ValueError(f"[metal_kernel] Unknown compile option {key!r} (the only one is 'math_mode').")
            if mode is not None and mode != value:
                raise ValueError("[metal_kernel] math_mode is given twice, with different values.")
            mode = value
    mode = "safe" if mode is None else mode
    if mode not in ("safe", "relaxed", "fast"):
        raise ValueError(f"[metal_kernel] Expected math_mode to be 'safe', 'relaxed', or 'fast' (got {mode!r}).")
    return mode


def _capture_arg(capture: Any) -> Optional[str]:
    """``capture=`` as the native call takes it: a path, ``""`` for the
    default place (``capture=True``), or ``None`` (then
    ``MTL_CAPTURE_ENABLED=1`` decides)."""
    if capture is None or capture is False:
        return None
    if capture is True:
        return ""
    return os.fspath(capture)


def _capture_note(note: Optional[str]) -> None:
    if note:
        print(note, file=sys.stderr)


def _scalar_dtype(x) -> str:
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int32" if -(2**31) <= x < 2**31 else "int64"
    return "float32"


def metal_kernel(
    name: str,
    input_names: Sequence[str],
    output_names: Sequence[str],
    source: str,
    header: str = "",
    ensure_row_contiguous: bool = True,
    atomic_outputs: bool = False,
    compile_options: Optional[dict] = None,
    *,
    math_mode: Optional[str] = None,
) -> MetalKernelFunction:
    """A custom Metal kernel, as ``mx.fast.metal_kernel`` makes it, run on the simulator.

    ``source`` is the kernel *body*; the signature is generated exactly as
    MLX generates it (inputs, ``NAME_shape``/``NAME_strides``/``NAME_ndim``
    when the body mentions them, outputs, the thread attributes the body
    uses). Call the result with MLX's keywords::

        k = metal_kernel("myexp", ["inp"], ["out"], "uint i = thread_position_in_grid.x; out[i] = exp(inp[i]);")
        (out,) = k(inputs=[a], grid=(a.size, 1, 1), threadgroup=(256, 1, 1),
                   output_shapes=[a.shape], output_dtypes=[a.dtype])

    Inputs may be NumPy arrays, Python scalars, ``mlx.core.array`` or CPU
    torch tensors; outputs come back as the same kind (MLX if any input is
    MLX). ``verbose=True`` (or ``VERBOSE=1``) prints the generated source.
    ``check="none"|"memory"|"all"|"nan"`` (default: :func:`set_default_check`)
    picks the sanitizer level (``"nan"`` also warns where each NaN or
    infinity of the outputs was born); error findings raise :class:`KernelError`.
    ``capture="run.mpcapture"`` (or ``capture=True``, or the environment
    variable ``MTL_CAPTURE_ENABLED=1``: ``metal-puzzles-captures/NAME-N.mpcapture``)
    saves the call as a capture file that ``metal-puzzles debug FILE`` opens
    and ``metal-puzzles replay FILE`` re-runs; where it went is printed on stderr.
    ``compile_options={"math_mode": "safe"|"relaxed"|"fast"}`` (or
    ``math_mode=``) is checked as MLX checks it; ``"fast"`` defines
    ``__FAST_MATH__`` as Metal's compiler does. The simulator computes with
    IEEE semantics in every mode (what fast math may round differently, it
    rounds exactly).
    """
    if isinstance(input_names, str) or isinstance(output_names, str):
        raise TypeError("[metal_kernel] input_names and output_names must be lists of names, e.g. ['a'], not a string")
    mode = _math_mode(compile_options, math_mode)
    return MetalKernelFunction(
        name, list(input_names), list(output_names), source, header, ensure_row_contiguous, atomic_outputs, mode
    )
