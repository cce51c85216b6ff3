"""PyTorch as PyTorch does it: :func:`install` makes
``torch.mps.compile_shader(src)`` compile on the simulator, so code written
for a Mac runs unchanged on CPU tensors:

    import torch
    import metal_puzzles.torch
    metal_puzzles.torch.install()

    lib = torch.mps.compile_shader(src)
    lib.axpy(x, y, 2.0, threads=x.numel())   # x, y: CPU tensors; y is written in place

Kernels take torch CPU tensors (and NumPy arrays) bound at their offset,
``threads=`` and ``group_size=`` as an int or a list of up to three ints,
and Python scalars exactly as PyTorch sends them: an ``int`` as 8 bytes
(int64), a ``float`` as 4 bytes (float32), a list of ints/floats as
int64/float32 elements. A ``constant uint&`` reads the low 4 bytes of an
int as a Mac does; a :class:`metal_puzzles.KernelWarning` says when what the
kernel reads is not the value that was passed. Tensors on the ``mps``
device cannot exist here: use CPU tensors.
"""

from __future__ import annotations

from .shader import ShaderLibrary, compile_shader

__all__ = ["install", "uninstall", "installed", "compile_shader", "ShaderLibrary"]

_original = None
_installed = False


def install(force: bool = True) -> bool:
    """Route ``torch.mps.compile_shader`` to the simulator (with
    ``force=False``, only where ``torch.backends.mps.is_available()`` is
    false). Returns whether it did."""
    global _original, _installed
    import torch
    import torch.mps

    if _installed:
        return True
    if not force and torch.backends.mps.is_available():
        return False
    _original = getattr(torch.mps, "compile_shader", None)
    torch.mps.compile_shader = compile_shader
    _installed = True
    return True


def uninstall() -> None:
    """Put PyTorch's own ``torch.mps.compile_shader`` back."""
    global _original, _installed
    if not _installed:
        return
    import torch.mps

    if _original is None:
        del torch.mps.compile_shader
    else:
        torch.mps.compile_shader = _original
    _original = None
    _installed = False
_installed = False


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    return _installed
