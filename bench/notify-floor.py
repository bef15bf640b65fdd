#!/usr/bin/env python3
"""What one seccomp user notification costs an exec, on this machine: the floor under the
per-exec cost of deny rules at exec (issue 22's target: <= 30 us more per exec).

    bench/notify-floor.py [ROUNDS]     (default 40 rounds of 300 execs per mode)

Builds bench/notify-floor.c with `cc -O2` into a scratch directory and runs its modes
interleaved: no filter; execve notified and answered at once (the floor, whatever a
supervisor does); and answered after the reads gate's supervisor makes for a program
no rule names. Prints the median microseconds per fork+exec+wait and the difference to
no filter. Compare with bench/exec-deny.py's "one exec" on the same machine.
"""

import os
import statistics
import subprocess
import sys
import tempfile

MODES = {-1: "no filter", 0: "notified, answered at once", 1: "notified, with gate's reads"}


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    here = os.path.dirname(os.path.abspath(__file__))
    scratch = tempfile.mkdtemp(prefix="gate-notify-floor-")
    binary = os.path.join(scratch, "notify-floor")
    subprocess.run(["cc", "-O2", "-o", binary, os.path.join(here, "notify-floor.c")],
                   check=True)
    times = {mode: [] for mode in MODES}
    order = list(MODES)
    for round_ in range(rounds + 2):
        for mode in order if round_ % 2 == 0 else reversed(order):
            out = subprocess.run([binary, str(mode), "300"], capture_output=True, text=True,
                                 check=True).stdout
            if round_ >= 2:
                times[mode].append(float(out))
    base = statistics.median(times[-1])
    for mode, name in MODES.items():
        median = statistics.median(times[mode])
        print(f"{name:28} median {median:8.1f} us per exec   +{median - base:5.1f} us")
    os.remove(binary)
    os.rmdir(scratch)


if __name__ == "__main__":
    main()
