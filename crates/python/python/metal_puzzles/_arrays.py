"""Arrays in and out: NumPy, MLX, PyTorch (CPU) and anything with DLPack or
the array protocol become the plain tuples the native module reads; results
come back as the kind of array that went in."""

from __future__ import annotations

import ctypes
from typing import Any, Tuple

import numpy as np

# dtype names the simulator knows (Metal has no float64).
_NUMPY_NAMES = {
    "bool": "bool",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float16": "float16",
    "float32": "float32",
    "bfloat16": "bfloat16",
}


def kind_of(x: Any) -> str:
    """"mlx", "torch", "numpy" or "scalar"."""
    if isinstance(x, (bool, int, float)):
        return "scalar"
    mod = type(x).__module__ or ""
    if mod.startswith("mlx"):
        return "mlx"
    if mod.startswith("torch"):
        return "torch"
    return "numpy"


def to_numpy(x: Any, what: str) -> Tuple[np.ndarray, str]:
    """A NumPy view of `x` (no copy where possible) and its dtype name.
    bfloat16 arrays come back as uint16 bit patterns named "bfloat16"."""
    kind = kind_of(x)
    if kind == "mlx":
        import mlx.core as mx

        if x.dtype == mx.bfloat16:
            return np.asarray(x.view(mx.uint16)), "bfloat16"
        a = np.asarray(x)
    elif kind == "torch":
        import torch

        t = x.detach()
        if t.device.type != "cpu":
            raise TypeError(f"{what}: the tensor is on {t.device}; the simulator needs CPU tensors (use .cpu())")
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(np.uint16), "bfloat16"
        a = t.numpy()
    elif isinstance(x, np.ndarray):
        a = x
    elif isinstance(x, np.generic):
        a = np.asarray(x)
    elif hasattr(x, "__dlpack__") and not hasattr(x, "__array_interface__"):
        a = np.from_dlpack(x)
    else:
        try:
            a = np.asarray(x)
        except Exception as e:  # noqa: BLE001 - explain what was passed
            raise TypeError(f"{what}: cannot read {type(x).__name__} as an array ({e})") from None
    name = a.dtype.name
    if name == "bfloat16":  # ml_dtypes
        return a.view(np.uint16), "bfloat16"
    if name not in _NUMPY_NAMES:
        hint = " (Metal has no 64-bit float: convert with .astype(np.float32))" if name == "float64" else ""
        raise TypeError(f"{what}: arrays of dtype {name} are not supported{hint}")
    return a, _NUMPY_NAMES[name]


def to_native(a: np.ndarray, name: str) -> tuple:
    """(dtype, shape, strides in elements, offset in elements, bytes)."""
    item = a.itemsize
    shape = [int(d) for d in a.shape]
    if a.size == 0 or a.flags.c_contiguous or any(s % item for s in a.strides):
        c = np.ascontiguousarray(a)
        return (name, shape, _row_major(shape), 0, c.tobytes())
    # A strided view: the bytes it spans, and where its first element sits.
    lo = sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s > 0) + item
    data = ctypes.string_at(a.ctypes.data + lo, hi - lo)
    return (name, shape, [s // item for s in a.strides], -lo // item, data)


def _row_major(shape):
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(d, 1)
    return strides[::-1]


def numpy_result(name: str, shape, data: bytearray) -> np.ndarray:
    """A NumPy array from native bytes (bfloat16 needs ml_dtypes; without it,
    the uint16 bit patterns)."""
    if name == "bfloat16":
        raw = np.frombuffer(data, dtype=np.uint16).reshape(shape)
        try:
            import ml_dtypes

            return raw.view(ml_dtypes.bfloat16)
        except ImportError:
            return raw
    return np.frombuffer(data, dtype=np.dtype(name)).reshape(shape)


def result_as(kind: str, name: str, shape, data: bytearray):
    """The native result as an array of `kind`."""
    if kind == "mlx":
        import mlx.core as mx

        if name == "bfloat16":
            return mx.array(np.frombuffer(data, dtype=np.uint16).reshape(shape)).view(mx.bfloat16)
        return mx.array(np.frombuffer(data, dtype=np.dtype(name)).reshape(shape))
    if kind == "torch":
        import torch

        if name == "bfloat16":
            raw = np.frombuffer(data, dtype=np.int16).reshape(shape)
            return torch.from_numpy(raw.copy()).view(torch.bfloat16)
        return torch.from_numpy(numpy_result(name, shape, data))
    return numpy_result(name, shape, data)


def dtype_name(d: Any, what: str) -> str:
    """The name of a dtype given as an MLX/NumPy/PyTorch dtype, a type or a string."""
    mod = type(d).__module__ or ""
    if mod.startswith("mlx"):
        text = str(d).rsplit(".", 1)[-1]
    elif mod.startswith("torch"):
        text = str(d).rsplit(".", 1)[-1]
    elif isinstance(d, str):
        text = d
    else:
        try:
            text = np.dtype(d).name
        except TypeError:
            raise TypeError(f"{what}: {d!r} is not a dtype") from None
    aliases = {"bool_": "bool", "half": "float16", "float": "float32", "int": "int32"}
    text = aliases.get(text, text)
    if text not in _NUMPY_NAMES:
        hint = " (Metal has no 64-bit float)" if text in ("float64", "double") else ""
        raise TypeError(f"{what}: {d!r} is not a supported dtype{hint}")
    return text
