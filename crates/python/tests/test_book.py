"""The book through MetalKernel/MetalProblem: the same puzzles and verdicts as the CLI."""

import numpy as np
import pytest

import metal_puzzles as mp
from metal_puzzles import MetalKernel, MetalProblem


def test_the_book_is_the_clis(cli):
    import subprocess

    for p in mp.puzzles:
        hint = subprocess.run([cli, "hint", str(p.number)], capture_output=True, text=True).stdout
        assert hint.startswith(f"Puzzle {p.number}: {p.title}"), hint[:80]
    missing = subprocess.run([cli, "hint", str(len(mp.puzzles) + 1)], capture_output=True, text=True)
    assert missing.returncode != 0
    assert [p.number for p in mp.puzzles] == list(range(1, len(mp.puzzles) + 1))
    assert len(mp.puzzles) >= 14


@pytest.mark.parametrize("p", mp.puzzles, ids=lambda p: p.slug)
def test_reference_solution_passes(p, solutions, capsys):
    problem = p.problem(solutions[p.slug])
    assert problem.book_puzzle() == p
    assert problem.check() is True
    out = capsys.readouterr().out
    assert out.startswith("Passed Tests!")
    # One score table per test, or one per kernel for a pipeline puzzle.
    assert f"# {p.tests[0]['name']}" in out or "# Kernel 1 of " in out


@pytest.mark.parametrize("p", mp.puzzles, ids=lambda p: p.slug)
def test_starter_fails_cleanly(p, capsys):
    problem = p.problem()
    assert problem.check() is False
    assert capsys.readouterr().out.startswith("Failed Tests.")
    problem.show()  # a diagram even for a kernel that does nothing yet
    assert "Score (Max Per Thread)" in capsys.readouterr().out


def test_known_wrong_solutions_report_the_right_finding(solutions, capsys):
    guard = mp.puzzle("guard").problem("uint local_i = thread_position_in_grid.x;\nout[local_i] = a[local_i] + 10;\n")
    assert guard.check() is False
    assert "out-of-bounds" in [f.kind for f in guard.findings]
    racy = solutions["pooling"].replace("threadgroup_barrier(mem_flags::mem_threadgroup);", "")
    pooling = mp.puzzle("pooling").problem(racy)
    assert pooling.check() is False
    f = next(f for f in pooling.findings if f.kind == "data-race")
    assert f.line > 0 and f.count >= 1
    assert "data race" in capsys.readouterr().out


def test_seed_style_problem_with_the_books_inputs(capsys):
    # Written as the notebook writes it: the book's inputs, a kernel factory, a spec.
    def map_spec(a):
        return a + 10

    def map_test(a):
        return MetalKernel(name="map", input_names=["a"], output_names=["out"], source="""
uint local_i = thread_position_in_grid.x;
out[local_i] = a[local_i] + 10;
""")

    a = np.arange(4, dtype=np.int32)
    problem = MetalProblem("Map", map_test, [a], (4,), grid=(4, 1, 1), spec=map_spec)
    assert problem.book_puzzle().number == 1
    assert problem.check()
    assert "Puzzle 1 solved" in capsys.readouterr().out


def test_own_problem_with_randomized_tests(capsys):
    def spec(a, b):
        return a * b

    def good(a, b):
        return MetalKernel("mul", ["a", "b"], ["out"], "uint i = thread_position_in_grid.x;\nif (i < 6) out[i] = a[i] * b[i];")

    def wrong_on_negatives(a, b):
        # Right for the given (non-negative) inputs only: the randomized tests catch it.
        return MetalKernel("mul", ["a", "b"], ["out"], "uint i = thread_position_in_grid.x;\nif (i < 6) out[i] = abs(a[i] * b[i]);")

    a = np.arange(6, dtype=np.float32)
    ok = MetalProblem("Mul", good, [a, a], (6,), grid=(8, 1, 1), threadgroup=(4, 1, 1), spec=spec)
    assert ok.book_puzzle() is None
    assert ok.check()
    assert capsys.readouterr().out.startswith("Passed Tests!")
    bad = MetalProblem("Mul", wrong_on_negatives, [a, a], (6,), grid=(8, 1, 1), threadgroup=(4, 1, 1), spec=spec)
    assert not bad.check()
    out = capsys.readouterr().out
    assert out.startswith("Failed Tests. (Mul, random #")
    assert "Yours:" in out and "Spec :" in out


def test_diagram_has_svg_and_text():
    problem = mp.puzzle("zip").problem("uint i = thread_position_in_grid.x;\nout[i] = a[i] + b[i];")
    d = problem.diagram(width=100)
    assert d._repr_svg_().lstrip().startswith("<svg")
    assert "threadgroup" in str(d)
    assert problem.score()[:4] == [2, 1, 0, 0]


def test_compile_error_in_show_and_check(capsys):
    problem = mp.puzzle("map").problem("out[thread_position_in_grid.x] = nope;")
    problem.show()
    assert "undeclared identifier `nope`" in capsys.readouterr().out
    assert problem.check() is False
    assert "does not compile" in capsys.readouterr().out


def test_the_teachers_spec_and_title_win_over_a_book_puzzle(capsys):
    # A "My Map" that adds 20, with the book's Map kernel name, shapes and grid.
    def my_map(a):
        return MetalKernel(name="map", input_names=["a"], output_names=["out"],
                           source="uint i = thread_position_in_grid.x;\nout[i] = a[i] + 20;")

    a = np.arange(4, dtype=np.int32)
    p = MetalProblem("My Map", my_map, [a], (4,), grid=(4, 1, 1), spec=lambda a: a + 20)
    assert p.check() is True
    out = capsys.readouterr().out
    assert out.startswith("Passed Tests!") and "# My Map" in out and "Puzzle 1" not in out
    # The book's title but the teacher's own (different) spec: still the teacher's.
    q = MetalProblem("Map", my_map, [a], (4,), grid=(4, 1, 1), spec=lambda a: a + 20)
    assert q.check() is True


def test_check_shows_no_extra_line_in_a_notebook():
    from metal_puzzles.book import Verdict

    v = Verdict(True)
    assert v and v == True and repr(v) == "True"  # noqa: E712
    assert v._ipython_display_() is None
