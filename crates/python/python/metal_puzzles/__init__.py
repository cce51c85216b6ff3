"""metal_puzzles: Apple Metal compute kernels on a simulated GPU, from Python.

* :func:`metal_puzzles.fast.metal_kernel` — MLX's ``mx.fast.metal_kernel``;
  :func:`metal_puzzles.mlx.install` routes MLX's own to the simulator.
* :func:`compile_shader` — PyTorch's ``torch.mps.compile_shader``;
  :func:`metal_puzzles.torch.install` routes PyTorch's own to the simulator.
* ``pytest --metal-sim`` — the pytest plugin (:mod:`metal_puzzles.pytest_plugin`).
* ``metal-puzzles`` / ``python -m metal_puzzles`` — the command line.
* :class:`MetalKernel`, :class:`MetalProblem` and :data:`puzzles` — the
  Metal Puzzles book, as its notebook has it.
* :class:`CompileError`, :class:`KernelError` (with :class:`Finding`
  objects), :func:`set_default_check`.
"""

from . import fast
from ._errors import (
    CompileError,
    Diagnostic,
    Finding,
    KernelError,
    KernelWarning,
    get_default_check,
    set_default_check,
)
from .shader import compile_shader

__all__ = [
    "fast",
    "compile_shader",
    "CompileError",
    "Diagnostic",
    "Finding",
    "KernelError",
    "KernelWarning",
    "get_default_check",
    "set_default_check",
]

__version__ = "0.1.0"

from .book import Diagram, MetalKernel, MetalProblem, Puzzle, puzzle, puzzles  # noqa: E402

__all__ += ["Diagram", "MetalKernel", "MetalProblem", "Puzzle", "puzzle", "puzzles"]
