"""Start-up of the command lines and of `import ssvmlinear`, against LIBLINEAR's `train` when
liblinear-official is installed (its usage text, printed by the Python package's train()).

Prints the median wall time of each command over --reps runs, the import time of the package
(python -X importtime, cumulative), and which scikit-learn modules each start-up loads (targets:
usage in <= 0.3 s, import in <= 0.3 s, no scikit-learn). Peak memory of a fit: benchmarks/memory.py.

    python benchmarks/startup.py [--reps 7]
"""
import argparse
import re
import subprocess
import sys
import time

import numpy as np

COMMANDS = {
    "ssvm-train (usage)": "from ssvmlinear.cli import train_main; train_main([])",
    "ssvm-predict (usage)": "from ssvmlinear.cli import predict_main; predict_main([])",
    "ssvm-convert (usage)": "from ssvmlinear.datacache import convert_main; convert_main([])",
    "import ssvmlinear": "import ssvmlinear",
    "python (nothing)": "pass",
}
LIBLINEAR = "from liblinear.commonutil import *; from liblinear import liblinearutil"


# appended to a command's code: its peak RSS (VmHWM) on stderr at exit, even through sys.exit (the
# rusage of a child would count the parent's size at fork, kept across exec)
PEAK = ("\nimport sys as _s\ntry:\n    _s.stderr.write('VmHWM-MB %.1f\\n' % (int([l.split()[1] for l in "
        "open('/proc/self/status') if l.startswith('VmHWM:')][0]) / 1024))\nexcept (OSError, IndexError):\n    pass\n")


def run_once(code, python=None, cwd=None):
    """One run of `python -c code` in a fresh process: (wall seconds, its peak RSS in MB or nan).
    The RSS line costs a read of /proc/self/status after the code (under a millisecond)."""
    wrapped = "try:\n" + "".join(f"    {line}\n" for line in code.splitlines()) + "finally:" + \
        "".join(f"\n    {line}" for line in PEAK.strip().splitlines())
    t = time.perf_counter()
    r = subprocess.run([python or sys.executable, "-c", wrapped], capture_output=True, text=True, cwd=cwd)
    seconds = time.perf_counter() - t
    rss = [float(line.split()[1]) for line in r.stderr.splitlines() if line.startswith("VmHWM-MB ")]
    return seconds, (rss[-1] if rss else float("nan"))


def wall(code, reps, python=None):
    return float(np.median([run_once(code, python)[0] for _ in range(reps)]))


def sklearn_modules(code):
    probe = code + "\nimport sys\nprint(sum(m.split('.')[0] == 'sklearn' for m in list(sys.modules)))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    return int(r.stdout.strip().splitlines()[-1])


def import_seconds():
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", "import ssvmlinear"], capture_output=True,
                       text=True)
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| ssvmlinear$", line)
        if m:
            return int(m.group(1)) / 1e6
    return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    rows = dict(COMMANDS)
    try:
        import liblinear  # noqa: F401
        rows["liblinear (import)"] = LIBLINEAR
    except ImportError:
        pass
    print(f"{'command':24s} {'median s':>9s} {'sklearn modules':>16s}")
    for name, code in rows.items():
        print(f"{name:24s} {wall(code, args.reps):9.3f} {sklearn_modules(code):16d}", flush=True)
    print(f"python -X importtime -c 'import ssvmlinear': {import_seconds():.3f} s (cumulative)")


if __name__ == "__main__":
    main()
