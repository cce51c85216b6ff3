"""The README's Python examples run as shown."""

import re
import subprocess
import sys

import pytest

from conftest import ROOT


def examples():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## From Python"):text.index("## Real-world Metal")]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_there_are_two_examples_of_at_most_ten_lines():
    found = examples()
    assert len(found) == 2
    for code in found:
        assert len(code.strip().splitlines()) <= 12


def test_mlx_example_runs():
    pytest.importorskip("mlx.core", reason="MLX's CPU wheel is not installed")
    code = examples()[0]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Generated source code for `custom_kernel_myexp_float16_t_float16_t`" in r.stdout


def test_compile_shader_example_runs():
    code = examples()[1]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[ 1.  3.  5.  7.  9. 11. 13. 15.]"
