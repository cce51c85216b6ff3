"""The notebook runs headless from top to bottom: with the starters (every
check fails cleanly) and with the reference solutions (every check passes)."""

import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT

NOTEBOOK = ROOT / "notebooks" / "metal_puzzles.ipynb"
SOURCE = re.compile(r'(source = """\n)(.*?)(""")', re.S)


def execute(nb):
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    return nb


def check_results(nb):
    """(slug, printed text, returned value) of every `problem.check()` cell."""
    out = []
    for cell in nb.cells:
        slug = cell.metadata.get("puzzle_check")
        if not slug:
            continue
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        value = "".join(o["data"].get("text/plain", "") for o in cell.outputs if o.output_type == "execute_result")
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"{slug}: {errors[0].get('ename')}: {errors[0].get('evalue')}"
        out.append((slug, text, value))
    return out


def test_the_notebook_is_current():
    """notebooks/build.py writes the notebook from the book's data."""
    import metal_puzzles as mp

    nb = json.loads(NOTEBOOK.read_text())
    slugs = [c["metadata"]["puzzle"] for c in nb["cells"] if "puzzle" in c.get("metadata", {})]
    assert slugs == [p.slug for p in mp.puzzles], "run `python notebooks/build.py` after changing the book"


def test_starters_fail_cleanly():
    nb = execute(nbformat.read(NOTEBOOK, as_version=4))
    results = check_results(nb)
    assert len(results) >= 14
    for slug, text, value in results:
        assert text.startswith("Failed Tests."), (slug, text[:200])
        assert value == "", (slug, value)  # check() shows its report and no extra `False` line
    shows = [c for c in nb.cells if c.metadata.get("puzzle")]
    for cell in shows:
        kinds = {o.output_type for o in cell.outputs}
        assert "error" not in kinds, cell.metadata["puzzle"]
        # The diagram is displayed as SVG in Jupyter.
        assert any("image/svg+xml" in o.get("data", {}) for o in cell.outputs), cell.metadata["puzzle"]


def test_reference_solutions_pass(solutions):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:
        slug = cell.metadata.get("puzzle")
        if slug:
            cell.source, n = SOURCE.subn(lambda m: m.group(1) + solutions[slug].lstrip("\n") + m.group(3), cell.source)
            assert n == 1, slug
    results = check_results(execute(nb))
    for slug, text, value in results:
        assert text.startswith("Passed Tests!"), (slug, text[:400])
        assert value == "", (slug, value)  # no extra `True` line under the cell
