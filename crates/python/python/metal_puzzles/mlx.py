"""Run unchanged MLX programs on the simulator: :func:`install` makes
``mx.fast.metal_kernel`` build simulated kernels where MLX has no Metal
device (Linux, the CPU-only wheel).

    import mlx.core as mx
    import metal_puzzles.mlx
    metal_puzzles.mlx.install()
    # ... the Mac script, unchanged ...
"""

from __future__ import annotations

from typing import Optional

from . import fast

__all__ = ["install", "uninstall", "installed"]

_original = None


def _metal_kernel(name, input_names, output_names, source, header="", ensure_row_contiguous=True,
                  atomic_outputs=False, compile_options: Optional[dict] = None):
    k = fast.metal_kernel(name, input_names, output_names, source, header, ensure_row_contiguous, atomic_outputs,
                          compile_options)
    k.output_kind = "mlx"  # MLX's kernels return mx.array whatever the inputs
    return k


_metal_kernel.__doc__ = fast.metal_kernel.__doc__


def install(force: bool = False) -> bool:
    """Route ``mx.fast.metal_kernel`` to the simulator when MLX has no Metal
    device (or always, with ``force=True``). Returns whether it did.
    Kernels made afterwards take MLX arrays and return MLX arrays; they
    work inside ``mx.custom_function`` (kernel-based ``vjp``) and under
    ``mx.grad``."""
    global _original
    import mlx.core as mx

    if _original is not None:
        return True
    if not force and mx.metal.is_available():
        return False
    _original = mx.fast.metal_kernel
    mx.fast.metal_kernel = _metal_kernel
    return True


def uninstall() -> None:
    """Put MLX's own ``mx.fast.metal_kernel`` back."""
    global _original
    if _original is None:
        return
    import mlx.core as mx

    mx.fast.metal_kernel = _original
    _original = None


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    return _original is not None
