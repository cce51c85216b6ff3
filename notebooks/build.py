#!/usr/bin/env python3
"""Write notebooks/metal_puzzles.ipynb from the book's data (run it after
the book changes: `python notebooks/build.py`, with metal_puzzles installed).

Each puzzle gets a markdown cell (its explanation and hints) and a code
cell tagged with the puzzle's slug in its metadata; the body to complete
is the triple-quoted string assigned to `source` (the tests fill it with
the reference solutions)."""

import json
from pathlib import Path

import metal_puzzles as mp

HERE = Path(__file__).resolve().parent


def md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def code(text, **meta):
    return {"cell_type": "code", "metadata": meta, "execution_count": None, "outputs": [], "source": text}


def puzzle_cells(p):
    t = p.tests[0]
    hints = "\n".join(f"<details><summary>Hint {i + 1}</summary>\n\n{h}\n\n</details>\n" for i, h in enumerate(p.hints))
    shapes = ", ".join(f"`{i['name']}` {i['dtype']}{list(i['shape'])}" for i in t["inputs"])
    intro = (
        f"## Puzzle {p.number}: {p.title}\n\n{p.explanation}\n\n"
        f"Inputs: {shapes}; output `{p.output_name}` {p.output_dtype}{list(t['output_shape'])}; "
        f"grid {tuple(t['grid'])}, threadgroup {tuple(t['threadgroup'])}.\n\n{hints}"
    )
    fn = f"{p.slug}_kernel" if p.slug[0].isalpha() else f"kernel_{p.slug}"
    args = ", ".join(p.input_names)
    lines = [f"p = puzzle({p.number})"]
    if p.header:
        lines.append(f'header = """\n{p.header.rstrip()}\n"""')
    lines.append(f'source = """\n{p.starter.rstrip()}\n// FILL ME IN\n"""')
    lines.append("")
    lines.append("")
    lines.append(f"def {fn}({args}):")
    extra = ", header=header" if p.header else ""
    if p.atomic_outputs:
        extra += ", atomic_outputs=True"
    lines.append(
        f"    return MetalKernel(name={p.kernel_name!r}, input_names={list(p.input_names)!r}, "
        f"output_names=[{p.output_name!r}], source=source{extra})"
    )
    lines.append("")
    lines.append("")
    dtype = f", output_dtype={p.output_dtype!r}" if p.output_dtype != "float32" else ""
    lines.append(
        f"problem = MetalProblem({p.title!r}, {fn}, p.inputs(), {tuple(t['output_shape'])!r}, "
        f"grid={tuple(t['grid'])!r}, threadgroup={tuple(t['threadgroup'])!r}{dtype})"
    )
    lines.append("problem.show()")
    return [md(intro), code("\n".join(lines), puzzle=p.slug), code("problem.check()", puzzle_check=p.slug)]


def main():
    cells = [
        md(
            "# Metal Puzzles\n\n"
            "GPU puzzles in Apple's Metal Shading Language, run on a simulated Apple GPU, so they work on "
            "any machine (Linux, Colab, a container). Each puzzle gives you the body of an MLX custom kernel "
            "(`mx.fast.metal_kernel`): the signature is generated from the input and output names, and your "
            "body fills in what each thread does.\n\n"
            "* `problem.show()` prints the score (memory operations per thread, the most any thread did) and "
            "draws which thread read and wrote which cell.\n"
            "* `problem.check()` runs the puzzle's tests (the book's inputs, then randomized ones) under a "
            "sanitizer that reports out-of-bounds accesses, data races and barrier divergence with the line "
            "and the thread. It prints `Passed Tests!` or `Failed Tests.` with your output and the expected one.\n\n"
            "The same puzzles are checked by the command line (`metal-puzzles check N`). "
            "Set `VERBOSE=1` to see the full Metal source generated around your body."
        ),
        code("import numpy as np\n\nfrom metal_puzzles import MetalKernel, MetalProblem, puzzle"),
    ]
    for p in mp.puzzles:
        cells.extend(puzzle_cells(p))
    nb = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    for i, c in enumerate(nb["cells"]):
        c["id"] = f"cell-{i}"
    (HERE / "metal_puzzles.ipynb").write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
