"""``python -m metal_puzzles …`` and the ``metal-puzzles`` command the wheel
installs: the same command line as the Rust binary, run in this process."""

import os
import sys

from . import _native


def main(argv=None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``)."""
    args = sys.argv[1:] if argv is None else list(argv)
    launched_as_module = os.path.basename(sys.argv[0] or "") in ("__main__.py", "-m", "-c")
    program = f"{os.path.basename(sys.executable)} -m metal_puzzles" if launched_as_module else "metal-puzzles"
    sys.stdout.flush()
    sys.stderr.flush()
    return _native.cli_main([program, *args], program)


if __name__ == "__main__":
    sys.exit(main())
