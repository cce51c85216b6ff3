"""Run unchanged MLX programs on the simulator: :func:`install` makes
``mx.fast.metal_kernel`` build simulated kernels where MLX has no Metal
device (Linux, the CPU-only wheel).

    import mlx.core as mx
    import metal_puzzles.mlx
    metal_puzzles.mlx.install(available=True)
    # ... the Mac script, unchanged ...

Library code (mlx-lm and others) builds and dispatches its custom kernels
only behind ``mx.metal.is_available()`` (and ``mx.default_device() ==
mx.gpu``); elsewhere it silently takes a slower path made of ordinary ops,
and no kernel reaches the simulator. ``available=True`` is the switch that
makes those checks true while installed (the pytest plugin turns it on):

* ``mx.metal.is_available()`` and ``mx.is_available(mx.gpu)`` are True;
* ``mx.default_device()`` says ``Device(gpu, 0)`` and
  ``mx.set_default_device(mx.gpu)`` is accepted; the ops still run on the
  CPU (only custom kernels go to the simulated GPU), so a stream made for
  ``mx.gpu`` by hand still fails;
* ``mx.metal.device_info()`` / ``mx.device_info()`` describe the simulated
  GPU (32-wide SIMD-groups, 1024 threads per threadgroup, 32 KiB of
  threadgroup memory).

While installed, ``mx.compile`` runs functions as they are (through MLX's
own ``mx.disable_compile()``): a simulated kernel needs its inputs' values,
which a compiled graph does not have while it is traced, and compiling only
changes speed. ``mx.vmap`` over a function that calls a simulated kernel is
refused with a message that says so (loop over the batch, or give the kernel
a batch dimension). The first call of a kernel compiles MLX's preamble and
the kernel (about 0.1-0.5 s); later calls with the same input dtypes and
shapes reuse it (about 1 ms for a small kernel).
"""

from __future__ import annotations

from typing import Optional

from . import fast

__all__ = ["install", "uninstall", "installed", "available"]

_original = None
_patched: dict = {}
_nominal_default = None


def metal_kernel(name, input_names, output_names, source, header="", ensure_row_contiguous=True,
                 atomic_outputs=False, compile_options: Optional[dict] = None, math_mode: Optional[str] = None):
    k = fast.metal_kernel(name, input_names, output_names, source, header, ensure_row_contiguous, atomic_outputs,
                          compile_options, math_mode=math_mode)
    k.output_kind = "mlx"  # MLX's kernels return mx.array whatever the inputs
    return k


metal_kernel.__doc__ = fast.metal_kernel.__doc__
metal_kernel.__module__ = "mlx.core.fast"


def install(force: bool = False, *, available: bool = False) -> bool:
    """Route ``mx.fast.metal_kernel`` to the simulator when MLX has no Metal
    device (or always, with ``force=True``). Returns whether it did.

    ``available=True`` also makes MLX's availability checks say there is a
    GPU (see the module's documentation), so library code that gates its
    kernels on them reaches the simulator.

    Kernels made afterwards take MLX arrays and return MLX arrays; they
    work inside ``mx.custom_function`` (kernel-based ``vjp``), under
    ``mx.grad`` and inside ``mx.compile``."""
    global _original
    import mlx.core as mx

    if _original is not None:
        if available:
            _make_available(mx)
        return True
    if not force and mx.metal.is_available():
        return False
    _original = mx.fast.metal_kernel
    mx.fast.metal_kernel = metal_kernel
    if hasattr(mx, "disable_compile"):
        mx.disable_compile()
        _patched["compile"] = True
    if available:
        _make_available(mx)
    return True


def _device_info() -> dict:
    """What the simulated GPU reports (Apple's keys, the simulator's limits)."""
    return {
        "architecture": "metal-puzzles-simulator",
        "device_name": "metal-puzzles simulated Apple GPU",
        "max_buffer_length": 1 << 34,
        "max_recommended_working_set_size": 1 << 34,
        "memory_size": 1 << 35,
        "resource_limit": 499000,
        "threads_per_simdgroup": 32,
        "max_threads_per_threadgroup": 1024,
        "max_threadgroup_memory_length": 32768,
    }


def _make_available(mx) -> None:
    global _nominal_default
    if "is_available" in _patched:
        return
    real_is_available = mx.is_available
    real_default_device = mx.default_device
    real_set_default_device = mx.set_default_device
    gpu = mx.Device(mx.gpu)
    cpu = mx.Device(mx.cpu)
    _nominal_default = gpu if real_default_device() == cpu else None

    def as_device(d):
        return d if isinstance(d, mx.Device) else mx.Device(d)

    def is_available(device=None, *args, **kwargs):
        if device is not None and as_device(device) == gpu:
            return True
        return real_is_available(device, *args, **kwargs)

    def default_device():
        return _nominal_default if _nominal_default is not None else real_default_device()

    def set_default_device(device):
        global _nominal_default
        d = as_device(device)
        if d == gpu:
            real_set_default_device(cpu)
            _nominal_default = gpu
        else:
            real_set_default_device(d)
            _nominal_default = None

    def device_info(*args, **kwargs):
        return _device_info()

    _patched["is_available"] = real_is_available
    _patched["default_device"] = real_default_device
    _patched["set_default_device"] = real_set_default_device
    _patched["metal.is_available"] = mx.metal.is_available
    _patched["metal.device_info"] = mx.metal.device_info
    mx.is_available = is_available
    mx.default_device = default_device
    mx.set_default_device = set_default_device
    mx.metal.is_available = lambda: True
    mx.metal.device_info = device_info
    if hasattr(mx, "device_info"):
        _patched["device_info"] = mx.device_info
        mx.device_info = device_info


def uninstall() -> None:
    """Put MLX's own ``mx.fast.metal_kernel`` (and availability checks, and
    ``mx.compile``) back."""
    global _original, _nominal_default
    if _original is None:
        return
    import mlx.core as mx

    mx.fast.metal_kernel = _original
    _original = None
    if _patched.pop("compile", False) and hasattr(mx, "enable_compile"):
        mx.enable_compile()
    if "is_available" in _patched:
        mx.is_available = _patched.pop("is_available")
        mx.default_device = _patched.pop("default_device")
        mx.set_default_device = _patched.pop("set_default_device")
        mx.metal.is_available = _patched.pop("metal.is_available")
        mx.metal.device_info = _patched.pop("metal.device_info")
        if "device_info" in _patched:
            mx.device_info = _patched.pop("device_info")
    _nominal_default = None


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    return _original is not None


def available() -> bool:
    """Whether the availability checks are switched on (``install(available=True)``)."""
    return "is_available" in _patched
