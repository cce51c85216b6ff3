"""Shared helpers: the reference solutions come from the Rust tests' file
(one copy of them in the repository)."""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def reference_solutions():
    text = (ROOT / "crates/puzzles/tests/common/mod.rs").read_text()
    block = text[text.index("pub const SOLUTIONS"):]
    pairs = re.findall(r'\(\s*"(\w+)",\s*r#"(.*?)"#,?\s*\)', block, re.S)
    assert len(pairs) >= 14, f"expected a solution per puzzle, found {len(pairs)}"
    return dict(pairs)


@pytest.fixture(scope="session")
def solutions():
    return reference_solutions()


def cli_binary():
    """The command-line binary (built by the test command before pytest)."""
    for profile in ("debug", "release"):
        p = ROOT / "target" / profile / "metal-puzzles"
        if p.exists():
            return p
    return None


@pytest.fixture(scope="session")
def cli():
    exe = cli_binary()
    if exe is None:
        subprocess.run(["cargo", "build", "--bin", "metal-puzzles"], cwd=ROOT, check=True)
        exe = cli_binary()
    return str(exe)
