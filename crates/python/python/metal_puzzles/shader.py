"""``torch.mps.compile_shader`` on the simulator."""

from __future__ import annotations

import warnings
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from . import _arrays, _native
from ._errors import KernelWarning, _check_name, _findings, _raise_or_warn
from .fast import _capture_arg, _capture_note

__all__ = ["compile_shader", "ShaderLibrary", "ShaderKernel"]

Dims = Union[int, Sequence[int]]


def _dims(value: Optional[Dims], what: str) -> Optional[List[int]]:
    if value is None:
        return None
    if isinstance(value, int):
        dims = [value]
    else:
        try:
            dims = [int(v) for v in value]
        except TypeError:
            raise TypeError(f"{what} must be an int or a list of 1 to 3 ints; got {value!r}") from None
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} must have 1 to 3 entries; got {value!r}")
    if any(d < 1 or d > 0xFFFFFFFF for d in dims):
        raise ValueError(f"{what}: every entry must be at least 1; got {value!r}")
    return dims + [1] * (3 - len(dims))


class ShaderKernel:
    """One kernel of a :class:`ShaderLibrary`; call it with positional arguments."""

    def __init__(self, library: "ShaderLibrary", name: str):
        self._library = library
        self.name = name

    def __repr__(self) -> str:
        return f"<shader kernel {self.name!r}>"

    def __call__(
        self,
        *args: Any,
        threads: Optional[Dims] = None,
        group_size: Optional[Dims] = None,
        check: Optional[str] = None,
        capture: Any = None,
    ):
        """Run with argument k bound to ``[[buffer(k)]]``.

        Arrays/tensors are bound whole and the kernel's writes land in them
        (in place, as on the GPU). Python scalars travel as PyTorch sends
        them: an int as 8 bytes (int64), a float as 4 bytes (float32), a
        bool as 1 byte, a list or tuple of ints/floats as int64/float32
        elements. A ``constant T&`` parameter reads its own type from the
        first bytes, as on a Mac: ``constant uint& n`` given the int 4 reads
        4; when what it reads is not the value passed (an int into a
        ``constant float&``, a value too large for ``uint``), a
        :class:`KernelWarning` says so and the run goes on. Vector and struct
        parameters (``constant uint2&``, ``constant Params&``) take an array,
        tensor or tuple whose bytes are the parameter's size. ``threads`` counts threads
        (``dispatchThreads``; default: the first array's element count),
        ``group_size`` threads per threadgroup (default: ``min(threads, 1024)``).
        ``capture="run.mpcapture"`` (or ``capture=True``, or the environment
        variable ``MTL_CAPTURE_ENABLED=1``: ``metal-puzzles-captures/``)
        saves the call as a capture file for ``metal-puzzles debug``/``replay``.
        """
        check = _check_name(check)
        natives, views = [], []
        for i, x in enumerate(args):
            if _arrays.kind_of(x) == "scalar" or _is_number_list(x):
                natives.append(list(x) if isinstance(x, tuple) else x)
                views.append(None)
                continue
            a, dname = _arrays.to_numpy(x, f"{self.name}: argument {i}")
            natives.append(_arrays.to_native(a, dname))
            views.append(a)
        written, findings_json, warns, note = self._library._native.call(
            self.name, natives, _dims(threads, "threads"), _dims(group_size, "group_size"), check, _capture_arg(capture)
        )
        _capture_note(note)
        for w in warns:
            warnings.warn(f"{self.name}: {w}", KernelWarning, stacklevel=2)
        for i, w in enumerate(written):
            if w is None or views[i] is None:
                continue
            name, shape, data = w
            target = views[i]
            if not target.flags.writeable:
                raise ValueError(f"{self.name}: argument {i} is read-only, but the kernel writes to it; pass a writable array")
            raw = np.frombuffer(data, dtype=target.dtype).reshape(shape)
            np.copyto(target, raw, casting="no")
            _write_back(args[i], target)
        _raise_or_warn(self.name, _findings(findings_json))


def _is_number_list(x: Any) -> bool:
    """A list or tuple of Python ints/floats (not bools), as PyTorch takes them."""
    return (isinstance(x, (list, tuple)) and len(x) > 0
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x))


def _write_back(original: Any, view: np.ndarray) -> None:
    """Arrays that `to_numpy` could not view in place get the new values copied in."""
    if _arrays.kind_of(original) == "mlx":
        # MLX arrays are immutable values; their NumPy view is the same memory.
        return
    if isinstance(original, np.ndarray) or _arrays.kind_of(original) == "torch":
        return
    if hasattr(original, "__setitem__"):
        try:
            original[...] = view
        except Exception:  # noqa: BLE001 - best effort for foreign containers
            pass


class ShaderLibrary:
    """A compiled Metal source; its kernels are attributes (``lib.my_kernel``)."""

    def __init__(self, source: str, file_name: str = "shader.metal"):
        self._native = _native.ShaderLibrary(source, file_name)
        warns = self._native.warnings()
        if warns:
            warnings.warn(warns, KernelWarning, stacklevel=3)
        self._names = list(self._native.kernel_names())

    def __dir__(self):
        return list(super().__dir__()) + self._names

    def __getattr__(self, name: str) -> ShaderKernel:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._names:
            names = ", ".join(self._names) or "(none)"
            raise AttributeError(f"the library has no kernel named `{name}`; its kernels are: {names}")
        return ShaderKernel(self, name)

    @property
    def kernel_names(self) -> List[str]:
        return list(self._names)


def compile_shader(source: str) -> ShaderLibrary:
    """Compile a whole Metal source, like ``torch.mps.compile_shader``.

    Raises :class:`CompileError` (file, line, column and the source line)
    when it does not compile. Kernels are attributes of the result::

        lib = compile_shader(src)
        lib.scale(x, out, 2.0, threads=x.numel())
    """
    return ShaderLibrary(source)
