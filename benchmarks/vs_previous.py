"""Speed against a previous release, measured interleaved in one run (a redesign must lose nothing).

Builds --tag (default v0.2.0, the last release) from this repository's
git history into a temporary venv (`git archive` + `pip install`, the dependencies from the index
pip is configured with), then fits the same problems with both versions in turn -- previous,
current, previous, current ... -- each fit in a fresh subprocess, and prints medians of the train
seconds (timed around fit(), not the imports), the objectives, peak RSS and current/previous ratios.

Cases (a redesign loses no speed):
  ocr-sdm      ChainSSVM on OCR folds 1-9 (data/ocr_letters_train.svm.gz), C = 0.1, SDM (-s 0)
  ocr-sdcd     the same with loss="lse", LSE-SDCD (-s 1)
  ocr-cp2      the same with the cutting plane (-s 2), n_jobs = 2
  planted-sdm  MulticlassSSVM, SDM, C = 0.1, no bias, on the seeded planted sparse problem of
               benchmarks/planted.py (n = 200,000, d = 100,000, K = 50, 40 nonzeros per row):
               the multiclass benchmark of the LIBLINEAR comparison

    python benchmarks/vs_previous.py                       # all cases, 3 pairs each
    python benchmarks/vs_previous.py --cases ocr-sdm --reps 5
    python benchmarks/vs_previous.py --previous-python /tmp/prev/bin/python   # reuse a built venv
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CASES = ("ocr-sdm", "ocr-sdcd", "ocr-cp2", "planted-sdm")

# Runs in the version under test (its own interpreter): one fit, one JSON line.
WORKER = r"""
import json, resource, sys, time, warnings
import numpy as np
case, root, planted = sys.argv[1], sys.argv[2], sys.argv[3]
warnings.simplefilter("ignore")
import ssvmlinear
from ssvmlinear import ChainSSVM, MulticlassSSVM, load_svmlight_file
if case.startswith("ocr"):
    X, y, lengths = load_svmlight_file(root + "/data/ocr_letters_train.svm.gz")
    kw = {"ocr-sdm": dict(solver="sdm"), "ocr-sdcd": dict(loss="lse"),
          "ocr-cp2": dict(solver="cutting-plane", n_jobs=2)}[case]
    est = ChainSSVM(C=0.1, **kw)
    t = time.perf_counter(); est.fit(X, y, lengths); seconds = time.perf_counter() - t
else:
    import scipy.sparse as sp
    z = np.load(planted)
    X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    est = MulticlassSSVM(C=0.1, fit_intercept=False)
    t = time.perf_counter(); est.fit(X, z["y"]); seconds = time.perf_counter() - t
# peak RSS of this process: VmHWM (ru_maxrss would include the parent's size at fork, kept across exec)
try:
    rss = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")][0] / 1024
except (OSError, IndexError):
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(dict(seconds=seconds, objective=float(est.objective_), n_iter=int(est.n_iter_),
                      rss_mb=rss, version=ssvmlinear.__file__)))
"""


def build_previous(tag, where):
    """A venv at `where` with `tag` installed (non-editable); returns its python."""
    src = Path(where) / "src"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", tag], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "venv", str(Path(where) / "venv")], check=True)
    python = str(Path(where) / "venv" / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", str(src)], check=True)
    return python


def run(python, case, planted):
    # cwd outside the repository: `import ssvmlinear` must be the interpreter's installed copy
    r = subprocess.run([python, "-c", WORKER, case, str(ROOT), planted], capture_output=True, text=True,
                       cwd=tempfile.gettempdir(), timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"{case} with {python} failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tag", default="v0.2.0")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    ap.add_argument("--reps", type=int, default=3, help="pairs of runs per case")
    ap.add_argument("--previous-python", help="interpreter of an already built previous version")
    ap.add_argument("--current-python", default=sys.executable,
                    help="interpreter with the current version installed (default: this one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ssvm-prev-") as tmp:
        prev = args.previous_python or build_previous(args.tag, tmp)
        planted = os.path.join(tmp, "planted.npz")
        if "planted-sdm" in args.cases:
            sys.path.insert(0, str(ROOT))
            from benchmarks.planted import planted as make
            X, y = make(200000, 100000, 50, 40, seed=0)
            np.savez(planted, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y)
            del X, y
        print(f"previous: {args.tag} ({prev}); current: {args.current_python}; {args.reps} interleaved pairs, "
              "medians; ratio = current / previous")
        print(f"{'case':12s} {'prev s':>8s} {'cur s':>8s} {'ratio':>6s} {'prev obj':>14s} {'cur obj':>14s} "
              f"{'prev MB':>8s} {'cur MB':>8s}")
        for case in args.cases:
            rows = {"prev": [], "cur": []}
            for _ in range(args.reps):
                rows["prev"].append(run(prev, case, planted))
                rows["cur"].append(run(args.current_python, case, planted))
            med = {k: {f: float(np.median([r[f] for r in v])) for f in ("seconds", "objective", "rss_mb")}
                   for k, v in rows.items()}
            ratio = float(np.median([c["seconds"] / p["seconds"] for p, c in zip(rows["prev"], rows["cur"])]))
            print(f"{case:12s} {med['prev']['seconds']:8.2f} {med['cur']['seconds']:8.2f} {ratio:6.3f} "
                  f"{med['prev']['objective']:14.6f} {med['cur']['objective']:14.6f} "
                  f"{med['prev']['rss_mb']:8.0f} {med['cur']['rss_mb']:8.0f}", flush=True)


if __name__ == "__main__":
    main()
