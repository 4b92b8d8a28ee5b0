"""Peak RSS of `ssvm-train` on the planted multiclass problem against the size of what it must
hold (CSR + weights), and how much of it is the Python runtime (target: peak RSS <= 1.5 x (CSR +
weights)).

Each command runs in a fresh subprocess; its peak RSS is the kernel's VmHWM of that process
(/usr/bin/time's "Maximum resident set size"). The runtime row is a process that only imports
what ssvm-train imports (numpy, scipy and the core models: ssvm-train never imports
scikit-learn): a floor no change to our solvers moves.

    python benchmarks/planted.py --n 800000 --out /tmp/p800k.svm
    python benchmarks/memory.py /tmp/p800k.svm --C 0.1
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def peak_rss_mb(cmd, preexec_fn=None):
    """(peak RSS in MB, seconds) of a subprocess, read from /proc while it runs (getrusage's
    maxrss would include the parent's: it survives fork and exec)."""
    import time
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn)
    hwm = 0.0
    status = f"/proc/{p.pid}/status"
    while p.poll() is None:
        try:
            with open(status) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        hwm = max(hwm, int(line.split()[1]) / 1024)
        except OSError:
            pass
        time.sleep(0.05)
    err = p.stderr.read()
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {err.strip()}")
    return hwm, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", help="svmlight file (benchmarks/planted.py --out)")
    ap.add_argument("--C", type=float, default=0.1)
    args = ap.parse_args()
    py = sys.executable
    # the sizes the run must hold: the CSR it parses and the weights it trains
    probe = (f"from ssvmlinear.io import load_svmlight_file; X, y = load_svmlight_file({args.file!r}); "
             "import numpy as np; print(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes, X.shape[1], "
             "np.unique(y).size)")
    csr_bytes, d, K = map(int, subprocess.check_output([py, "-c", probe], text=True).split())
    csr, weights = csr_bytes / 2**20, d * K * 8 / 2**20
    # what the ssvm-train command imports, and the command
    imports = "import ssvmlinear.cli, ssvmlinear.models.multiclass"
    command = shutil.which("ssvm-train", path=os.path.dirname(sys.executable)) or "ssvm-train"
    base = csr + weights
    print(f"{args.file}: CSR {csr:.0f} MB + weights {weights:.0f} MB ({d} features x {K} classes) = {base:.0f} MB")
    print(f"{'run':40s} {'peak RSS MB':>11s} {'/ (CSR+w)':>9s} {'seconds':>8s}")
    with tempfile.TemporaryDirectory() as tmp:
        runtime, _ = peak_rss_mb([py, "-c", imports])
        train, secs = peak_rss_mb([command, "-q", "-c", str(args.C), args.file, os.path.join(tmp, "model")])
    print(f"{'Python runtime (imports only)':40s} {runtime:11.0f} {runtime / base:9.2f}")
    print(f"{'ssvm-train -c ' + str(args.C):40s} {train:11.0f} {train / base:9.2f} {secs:8.1f}")
    print(f"{'ssvm-train minus the runtime':40s} {train - runtime:11.0f} {(train - runtime) / base:9.2f}")
    print(f"target peak RSS <= 1.5 x (CSR + weights): {'met' if train <= 1.5 * base else 'NOT met'} "
          f"({train / base:.2f})")


if __name__ == "__main__":
    main()
