"""Ctrl-C stops a long kernel (the simulator polls a cancel flag)."""

import signal
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import signal, sys, numpy as np
    from metal_puzzles.fast import metal_kernel
    # As in a terminal, whatever the test runner's parent did: a process
    # started in the background by a shell without job control inherits
    # SIGINT ignored, and Python then installs no handler for it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    k = metal_kernel("spin", ["a"], ["out"], """
    uint i = thread_position_in_grid.x;
    float acc = 0;
    for (uint n = 0; n < 4000000000u; n++) { acc += a[i]; }
    out[i] = acc;
    """)
    try:
        print("running", flush=True)
        k(inputs=[np.ones(64, np.float32)], grid=(64, 1, 1), threadgroup=(64, 1, 1),
          output_shapes=[(64,)], output_dtypes=[np.float32], check="none")
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(3)
    print("finished", flush=True)
''')


def test_ctrl_c_interrupts_a_long_kernel():
    p = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "running"
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=120)
    finally:
        p.kill()
    assert p.returncode == 3, out
    assert "interrupted" in out
