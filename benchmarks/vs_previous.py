"""Speed against the last release, measured interleaved in one run (a change must lose nothing).

Builds --tag (default: the last release, RELEASES below) from this repository's git history into a
temporary venv (`git archive` + `pip install`, the dependencies from the index pip is configured
with; a clone without tags resolves the tag through RELEASES, and needs the full history) and the
working tree into another (both non-editable, as users install them), then runs every case with both versions in turn -- previous, current, current, previous, ... (the order
alternates pair by pair) -- each fit in a fresh process: one server per version imports numpy, the
package and its estimators once and forks a child per fit, which loads the data and times fit()
(the state of a new interpreter at the line before fit, without paying its start-up 200 times).
Per case it prints one row of one table: the median train seconds (timed around fit(), not the
imports or the data loading) of each version, their ratio, the median objective_ and n_iter_ of
each, the median peak RSS (VmHWM of the fit's process: the package, the data and the fit; a forked
child counts only the library pages it touches, some tens of MB below a new interpreter) of each
and its ratio. ratio = the MEDIAN OF THE PAIRED RATIOS current / previous (each pair run
back to back, so a slow spell of the shared machine hits both halves of a pair); the gate reads
the same number. A case the previous version cannot run (its API lacks an estimator, solver or
parameter) says so in its row instead of stopping the run.

Cases (C = 0.1 unless named; "-e X" = an explicit tol=X, "-e eps" = the paper's epsilon of
Balamurugan et al., 0.1 / the number of training sequences (chains) or examples (multiclass) --
on OCR fold 0 alone that is 0.1 / 626 = 0.000159744):
  chain-<solver>[-e..]  ChainSSVM on OCR words (data/ocr_letters.svm.gz, folds 1-9: 6,251 words,
                        47,535 letters; --quick: fold 1, 704 words), every solver at its
                        default tol and at the tolerance a user of its peer would give:
       sdm   (-s 0)  default, -e 0.1 (LIBLINEAR's -e)
       sdcd  (-s 1, loss="lse")  default, -e eps
       cp2   (-s 2, cutting plane, margin, n_jobs = 2)  default, -e 0.1 (svm_struct's -e)
       cp3   (-s 3, cutting plane, loss="lse")  default, -e eps
       pegasos (-s 4), bcfw (-s 5), gdmm (-s 6)  default, -e 0.1 (LIBLINEAR's -e; BCFW's
             gap_threshold 0.1)
  chain-C10-e0.5, chain-C10-e2   SDM at large C = 10 with -e 0.5 and -e 2, max_iter = 1000
                        so a case ends
  mc-<solver>[-e..]     the same fourteen on MulticlassSSVM, the same letters as independent
                        examples (tests/conftest.py's ocr_letters; eps = 0.1 / the letters); v0.2.0
                        has no multiclass GDMM: mc-gdmm* say "not in previous"
  ml-tree, ml-full      MultiLabelSSVM on scene (1,211 examples, 6 labels), edges="chow-liu"
                        (a tree) and edges="full" (all pairs), default solver and tol
  hier-nhsvm            HierarchicalSSVM(model="nhsvm") on data/hier_demo (a one-sided tree of 6
                        leaves, 2,000 examples)
  planted-sdm           MulticlassSSVM, SDM, no bias, on the seeded planted sparse problem of
                        benchmarks/planted.py (n = 200,000, d = 100,000, K = 50, 40 nonzeros per
                        row; --quick: n = 20,000, d = 20,000): the LIBLINEAR comparison's problem
  startup-import, startup-train-h   `python -c "import ssvmlinear"` and `ssvm-train -h`
                        (benchmarks/startup.py's run_once): wall seconds of the whole process

--quick runs every case (every solver at its default and explicit tol, on chains and multiclass)
on the smaller data, 3 pairs each, 60 s per fit at most (a current fit that times out fails its
case and ends it). With --gate F, a case whose ratio is in (F, 2F] gets --reps more pairs and
is judged on all of them (a confirmation against noise, not a retry until it passes); --gate F
exits with status 1 and a line per failing case (ratio > F, or the current version failing or
timing out on a case the previous one runs); the cases KNOWN_SLOWER lists for that release get a
"GATE KNOWN" line with their reason instead. CI runs `--quick --gate 1.5`; before calling a solver
change done, run the full suite and put its table in the closing note (every ratio <= 1.05).

    python benchmarks/vs_previous.py                                   # the full run, 3 pairs
    python benchmarks/vs_previous.py --quick --gate 1.5                # CI's release gate
    python benchmarks/vs_previous.py --cases chain-sdm mc-sdm --reps 5
    python benchmarks/vs_previous.py --previous-python /tmp/prev/bin/python   # reuse a built venv
    python benchmarks/vs_previous.py --list                            # the cases
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from startup import COMMANDS, run_once   # noqa: E402

# The releases this script can compare with: tag -> commit (a clone without tags, as CI's can be,
# resolves a tag here). The last entry is the default.
RELEASES = {"v0.2.0": "797ba0ebc6e8900f797cf9d94a1ea7da39609c12",
            "v0.3.0": "4c9b59e9fcd8ee5aeeaf685aed8aeba4092e80e3"}
LAST_RELEASE = list(RELEASES)[-1]
# Per release, the cases known to be slower than it beyond the gate, each with its reason: the gate
# reports them on a line of their own and does not fail on them; every other case fails it. An
# entry is removed when its case is fixed, and none may be added to make a change pass.
KNOWN_SLOWER = {
    "v0.2.0": {
        "chain-cp3-eps": "the LSE cutting plane at the paper's tolerance on one OCR fold: both end at max_iter, "
                         "v0.2.0 with more cache-only iterations; run to the rule (max_iter=20000) the current "
                         "one stops several times sooner",
    },
}

EPS = "eps"   # tol placeholder: the paper's epsilon, 0.1 / the number of training sequences or examples
# solver key -> (-s number, estimator keywords, the explicit tol a user of the peer tool gives)
SOLVER_CASES = {
    "sdm": (0, dict(solver="sdm"), 0.1),
    "sdcd": (1, dict(solver="sdcd", loss="lse"), EPS),
    "cp2": (2, dict(solver="cutting-plane", n_jobs=2), 0.1),
    "cp3": (3, dict(solver="cutting-plane", loss="lse"), EPS),
    "pegasos": (4, dict(solver="pegasos"), 0.1),
    "bcfw": (5, dict(solver="bcfw"), 0.1),
    "gdmm": (6, dict(solver="gdmm"), 0.1),
}


def _tol_name(tol):
    return "0.1/n (the paper's eps)" if tol == EPS else f"{tol:g}"


def make_cases():
    """name -> case: data (which problem), est (estimator class), kw (its parameters), desc."""
    cases = {}
    for data, est, prefix in (("ocr-chain", "ChainSSVM", "chain"), ("ocr-letters", "MulticlassSSVM", "mc")):
        for key, (s, kw, tol) in SOLVER_CASES.items():
            for t in (None, tol):
                name = f"{prefix}-{key}" + ("" if t is None else "-eps" if t == EPS else f"-e{t:g}")
                cases[name] = dict(data=data, est=est, kw=dict(C=0.1, **kw, **({} if t is None else {"tol": t})),
                                   desc=f"{est} -s {s}" + (" default tol" if t is None else f" -e {_tol_name(t)}"))
    for tol in (0.5, 2.0):
        cases[f"chain-C10-e{tol:g}"] = dict(data="ocr-chain", est="ChainSSVM", cap_iter=True,
                                            kw=dict(C=10.0, solver="sdm", tol=tol),
                                            desc=f"ChainSSVM -s 0 -c 10 -e {tol:g}, max_iter capped")
    for name, edges in (("ml-tree", "chow-liu"), ("ml-full", "full")):
        cases[name] = dict(data="scene", est="MultiLabelSSVM", kw=dict(C=0.1, edges=edges),
                           desc=f"MultiLabelSSVM edges={edges!r} on scene")
    cases["hier-nhsvm"] = dict(data="hier", est="HierarchicalSSVM", kw=dict(C=0.1, model="nhsvm"),
                               desc="HierarchicalSSVM nhsvm on data/hier_demo")
    cases["planted-sdm"] = dict(data="planted", est="MulticlassSSVM",
                                kw=dict(C=0.1, solver="sdm", fit_intercept=False),
                                desc="MulticlassSSVM -s 0 on the planted sparse problem")
    cases["startup-import"] = dict(data="startup", code=COMMANDS["import ssvmlinear"],
                                   desc='python -c "import ssvmlinear"')
    cases["startup-train-h"] = dict(data="startup", code="from ssvmlinear.cli import train_main; train_main(['-h'])",
                                    desc="ssvm-train -h")
    return cases


CASES = make_cases()
SIZES = {  # OCR folds, planted (n, d), max_iter of the capped cases, max_iter of every case (None: default)
    "full": dict(folds=list(range(1, 10)), planted=(200000, 100000), cap_iter=1000, max_iter=None),
    "quick": dict(folds=[1], planted=(20000, 20000), cap_iter=1000, max_iter=None),
}

# Runs in the version under test (its own interpreter), started once per version: imports numpy,
# the package and its four estimators (the state of a fresh process at the line before fit), then
# for each job line on stdin forks a child that loads the data, times one fit and sends one JSON
# line; any exception becomes {"error": ...} (a previous version without the case's API). Each
# fit thus runs in a fresh process without paying the interpreter's start-up every time.
SERVER = r"""
import json, os, signal, sys, time, traceback, warnings
import numpy as np
warnings.simplefilter("ignore")
import ssvmlinear
for _name in ("ChainSSVM", "MulticlassSSVM", "MultiLabelSSVM", "HierarchicalSSVM"):
    getattr(ssvmlinear, _name, None)      # a lazily imported estimator: imported here, not in the fit


def job(spec):
    root, kind = spec["root"], spec["data"]
    Est = getattr(ssvmlinear, spec["est"])
    if kind in ("ocr-chain", "ocr-letters"):
        X, y, lengths = ssvmlinear.load_svmlight_file(root + "/data/ocr_letters.svm.gz", n_features=128)
        words = np.isin(np.loadtxt(root + "/data/ocr_letters.folds", dtype=np.int64), spec["folds"])
        tokens = np.repeat(words, lengths)
        X, y, lengths = X[tokens], y[tokens], lengths[words]
        fit_args = (X, y, lengths) if kind == "ocr-chain" else (X, y)
        n = len(lengths) if kind == "ocr-chain" else X.shape[0]
    elif kind == "scene":
        X, Y = ssvmlinear.load_svmlight_file(root + "/data/scene_train.svm.gz", kind="multilabel")[:2]
        fit_args = (X, Y)
    elif kind == "hier":
        X, y = ssvmlinear.load_svmlight_file(root + "/data/hier_demo_train.svm.gz")[:2]
        spec["kw"]["hierarchy"] = root + "/data/hier_demo.hier"
        fit_args = (X, y)
    elif kind == "planted":
        import scipy.sparse as sp
        z = np.load(spec["planted"])
        fit_args = (sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"])), z["y"])
    kw = dict(spec["kw"])
    if kw.get("tol") == "eps":
        kw["tol"] = 0.1 / n
    if spec.get("max_iter"):
        kw["max_iter"] = spec["max_iter"]
    est = Est(**kw)
    t = time.perf_counter(); est.fit(*fit_args); seconds = time.perf_counter() - t
    return dict(seconds=seconds, objective=float(getattr(est, "objective_", float("nan"))),
                n_iter=int(np.max(getattr(est, "n_iter_", -1))))


def child(spec, fd):
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        out = job(spec)
    except Exception as e:
        out = dict(error=f"{type(e).__name__}: {e}".splitlines()[0][:300], traceback=traceback.format_exc()[-3000:])
    # peak RSS of this process: VmHWM (ru_maxrss would include the parent's size at fork, kept across exec)
    try:
        out["rss_mb"] = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")][0] / 1024
    except (OSError, IndexError):
        import resource
        out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    os.write(fd, (json.dumps(out) + "\n").encode())


print(json.dumps(dict(ready=ssvmlinear.__file__)), flush=True)
for line in sys.stdin:
    spec = json.loads(line)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            child(spec, w)
        finally:
            os._exit(0)
    os.close(w)
    deadline, status = time.monotonic() + spec["timeout"], None
    while status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
        elif time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = "timeout"
        else:
            time.sleep(0.005)
    with os.fdopen(r, "rb") as f:
        data = f.read().decode().strip()
    if status == "timeout":
        data = json.dumps(dict(error=f"timeout after {spec['timeout']:.0f} s"))
    elif not data:
        data = json.dumps(dict(error=f"the fit's process ended with status {status} and no result"))
    print(data, flush=True)
"""


class Server:
    """One version's fork server (SERVER above), outside the repository: `import ssvmlinear` is the
    interpreter's installed copy."""

    def __init__(self, python):
        self.python = python
        self.proc = subprocess.Popen([python, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, cwd=tempfile.gettempdir())
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the fit server of {python} did not start")
        self.package = json.loads(line)["ready"]

    def fit(self, spec):
        self.proc.stdin.write(json.dumps(spec) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the fit server of {self.python} died")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def resolve(tag):
    """The commit of a release tag: git's, else RELEASES' (a clone without tags)."""
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{tag}^{{commit}}"],
                       capture_output=True, text=True)
    if r.returncode == 0:
        return r.stdout.strip()
    if tag in RELEASES:
        return RELEASES[tag]
    raise SystemExit(f"vs_previous: {tag!r} is neither a git revision here nor in RELEASES {sorted(RELEASES)}")


def build_previous(tag, where):
    """A venv at `where` with `tag` installed (non-editable); returns its python."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", resolve(tag)], check=True,
                             capture_output=True).stdout
    src = Path(where) / "src"
    src.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    return install(src, where)


def build_current(where):
    """A venv at `where` with the working tree (the files git tracks or does not ignore, as they are
    now) installed as a user installs it, non-editable: an editable install starts slower and takes
    more memory, which the start-up and RSS columns would count against the change."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           check=True, capture_output=True).stdout.decode().split("\0")
    src = Path(where) / "src"
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    return install(src, where)


def install(src, where):
    """A venv at where/venv with the source tree `src` installed (non-editable); its python."""
    subprocess.run([sys.executable, "-m", "venv", str(Path(where) / "venv")], check=True)
    python = str(Path(where) / "venv" / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", str(src)], check=True)
    return python


def run(server, name, size, planted, timeout):
    """One fit of a case in a fresh process: dict(seconds, objective, n_iter, rss_mb) or dict(error=...).
    The start-up cases start the interpreter itself (benchmarks/startup.py's run_once)."""
    case = CASES[name]
    if case["data"] == "startup":
        seconds, rss = run_once(case["code"], server.python, cwd=tempfile.gettempdir())
        return dict(seconds=seconds, objective=float("nan"), n_iter=-1, rss_mb=rss)
    spec = dict(case, root=str(ROOT), folds=size["folds"], planted=planted, timeout=timeout,
                max_iter=size["cap_iter"] if case.get("cap_iter") else size["max_iter"])
    return server.fit(spec)


def summarize(pairs):
    """pairs: [(previous result, current result)] -> a row: medians of each side, the median of the
    paired ratios (seconds and RSS), and the errors of each side (None when it ran)."""
    def side(k):
        ok = [p[k] for p in pairs if "error" not in p[k]]
        err = next((p[k]["error"] for p in pairs if "error" in p[k]), None)
        med = {f: float(np.median([r[f] for r in ok])) if ok else float("nan")
               for f in ("seconds", "objective", "n_iter", "rss_mb")}
        return med, err
    (prev, perr), (cur, cerr) = side(0), side(1)
    both = [(p, c) for p, c in pairs if "error" not in p and "error" not in c]
    ratio = float(np.median([c["seconds"] / p["seconds"] for p, c in both])) if both else float("nan")
    rss = float(np.median([c["rss_mb"] / p["rss_mb"] for p, c in both])) if both else float("nan")
    return dict(prev=prev, cur=cur, ratio=ratio, rss_ratio=rss, prev_error=perr, cur_error=cerr, pairs=len(pairs))


def gate_failures(rows, factor, known=None):
    """The lines naming each case that fails the gate: ratio > factor, or the current version failing
    where the previous one ran. A case the previous version cannot run is not gated; the cases of
    `known` (default: KNOWN_SLOWER of the last release) get a GATE KNOWN line instead."""
    known = KNOWN_SLOWER.get(LAST_RELEASE, {}) if known is None else known
    out = []
    for name, row in rows.items():
        if name in known:
            if not row["prev_error"] and (row["cur_error"] or row["ratio"] > factor):
                out.append(f"GATE KNOWN: {name}: ratio {row['ratio']:.2f} ({known[name]})")
            continue
        if row["cur_error"] and not row["prev_error"]:
            out.append(f"GATE FAILED: {name}: the current version fails ({row['cur_error']})")
        elif not row["prev_error"] and not row["cur_error"] and row["ratio"] > factor:
            out.append(f"GATE FAILED: {name}: median ratio current/previous {row['ratio']:.2f} > {factor:g} "
                       f"({row['prev']['seconds']:.3f} s -> {row['cur']['seconds']:.3f} s, {row['pairs']} pairs)")
    return out


HEADER = (f"{'case':18s} {'prev s':>8s} {'cur s':>8s} {'ratio':>6s} {'prev obj':>13s} {'cur obj':>13s} "
          f"{'prev it':>7s} {'cur it':>6s} {'prev MB':>7s} {'cur MB':>7s} {'RSS r':>6s}")


def _num(x, fmt, width):
    return f"{'-':>{width}s}" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, f">{width}{fmt}")


def format_row(name, row):
    p, c = row["prev"], row["cur"]
    line = (f"{name:18s} {_num(p['seconds'], '.3f', 8)} {_num(c['seconds'], '.3f', 8)} {_num(row['ratio'], '.3f', 6)} "
            f"{_num(p['objective'], '.6g', 13)} {_num(c['objective'], '.6g', 13)} "
            f"{_num(p['n_iter'] if p['n_iter'] >= 0 else None, '.0f', 7)} "
            f"{_num(c['n_iter'] if c['n_iter'] >= 0 else None, '.0f', 6)} "
            f"{_num(p['rss_mb'], '.0f', 7)} {_num(c['rss_mb'], '.0f', 7)} {_num(row['rss_ratio'], '.2f', 6)}")
    if row["prev_error"]:
        what = "previous" if row["prev_error"].startswith("timeout") else "not in previous"
        line += f"  [{what}: {row['prev_error']}]"
    if row["cur_error"]:
        line += f"  [CURRENT FAILED: {row['cur_error']}]"
    return line


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tag", default=LAST_RELEASE, help=f"the release to compare with (default {LAST_RELEASE})")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES), metavar="CASE")
    ap.add_argument("--quick", action="store_true", help="the smaller data (CI's gate): OCR fold 1, "
                    "a planted problem of 20,000 x 20,000")
    ap.add_argument("--reps", type=int, default=3, help="interleaved pairs of runs per case (default 3)")
    ap.add_argument("--gate", type=float, help="exit 1 when a case's median ratio current/previous exceeds this")
    ap.add_argument("--previous-python", help="interpreter of an already built previous version")
    ap.add_argument("--current-python", help="interpreter with the current version installed (default: the "
                    "working tree built and installed into a temporary venv, as the previous release is)")
    ap.add_argument("--timeout", type=float, help="seconds per fit before it counts as failed "
                    "(default 60 with --quick, 3600 otherwise)")
    ap.add_argument("--json", help="also write every run's results to this file")
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    args = ap.parse_args(argv)
    if args.list:
        for name, case in CASES.items():
            print(f"{name:18s} {case['desc']}")
        return 0
    size = SIZES["quick" if args.quick else "full"]
    timeout = args.timeout or (60 if args.quick else 3600)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ssvm-prev-") as tmp:
        if args.previous_python:
            prev = args.previous_python
        else:
            print(f"building {args.tag} ({resolve(args.tag)[:12]}) into {tmp} ...", flush=True)
            prev = build_previous(args.tag, os.path.join(tmp, "previous"))
            print(f"built in {time.perf_counter() - start:.0f} s", flush=True)
        current = args.current_python
        if not current:
            print("building the working tree ...", flush=True)
            current = build_current(os.path.join(tmp, "current"))
            print(f"built in {time.perf_counter() - start:.0f} s", flush=True)
        planted = os.path.join(tmp, "planted.npz")
        if "planted-sdm" in args.cases:
            sys.path.insert(0, str(ROOT))
            from benchmarks.planted import planted as make
            X, y = make(*size["planted"], 50, 40, seed=0)
            np.savez(planted, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y)
            del X, y
        servers = {"prev": Server(prev), "cur": Server(current)}
        print(f"previous: {args.tag} ({servers['prev'].package}); current: {servers['cur'].package}; "
              f"{'quick' if args.quick else 'full'} sizes; {args.reps} interleaved pairs a case, medians; "
              "ratio = median of the paired ratios current / previous (seconds of fit(); RSS r: peak RSS)")
        print(HEADER, flush=True)
        rows, raw = {}, {}
        for name in args.cases:
            pairs = []

            def more(k, name=name, pairs=pairs):
                for i in range(k):
                    if pairs and "error" in pairs[-1][1]:      # the current version fails (or timed out): enough
                        return
                    if pairs and "error" in pairs[0][0]:       # not in the previous version: the current only
                        pairs.append((pairs[0][0], run(servers["cur"], name, size, planted, timeout)))
                        continue
                    order = ("prev", "cur") if len(pairs) % 2 == 0 else ("cur", "prev")
                    got = {k: run(servers[k], name, size, planted, timeout) for k in order}
                    pairs.append((got["prev"], got["cur"]))

            more(args.reps)
            row = summarize(pairs)
            if args.gate and args.gate < row["ratio"] <= 2 * args.gate:
                more(args.reps)            # confirm a failure on twice the pairs (beyond 2x the gate: no need)
                row = summarize(pairs)
            rows[name], raw[name] = row, pairs
            print(format_row(name, row), flush=True)
        for server in servers.values():
            server.close()
        if args.json:
            Path(args.json).write_text(json.dumps(dict(rows=rows, runs=raw), indent=1, default=str))
    print(f"total {time.perf_counter() - start:.0f} s")
    if args.gate:
        lines = gate_failures(rows, args.gate, KNOWN_SLOWER.get(args.tag, {}))
        for line in lines:
            print(line)
        failures = [line for line in lines if line.startswith("GATE FAILED")]
        if failures:
            return 1
        print(f"gate {args.gate:g}: every case within {args.gate:g}x the previous release")
    return 0


if __name__ == "__main__":
    sys.exit(main())
