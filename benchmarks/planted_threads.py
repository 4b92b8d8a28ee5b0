"""Why a second thread buys SDM little on the planted sparse multiclass problem (issue 18's
"<= 0.45x LIBLINEAR with n_jobs = 2" row): the measurements behind the closing note.

Data: benchmarks/planted.py (d = 100,000, 40 nonzeros per row, Zipf feature popularity, K = 50,
10 % label noise, seed 0), --n rows, C = 0.1, no bias; SDM at tol 0.05 (the tol that reaches
LIBLINEAR -s 4's objective in benchmarks/planted_vs_liblinear.py). The solver runs on the kernel
structure directly (MulticlassSSVM's own driver: type-I passes, type-II passes while they pay), so
that the rounds of sharded passes can be set; every time is the solver's clock.

A. The machine: a plain one-thread fit alone, then two of them at once in two processes (fork:
   the same pages of X). Two threads sharing one fit cannot beat 2 / (the slowdown of each).
B. Sharded passes, S = 2, rounds as MulticlassSSVM(solver=SDM(shards=2)) runs them (S x max(256, n_weights / 8)
   examples: one round per pass here, so the combination, a dense pass over w, costs once per
   pass): seconds per type-I and type-II pass (medians), passes to tol, fit seconds -- plain SDM,
   the sharded passes on one thread (their cost alone) and on two.
C. Progress per pass when the rounds are small (shard_block examples per shard, combined after
   every round; the dense combination makes these runs slow, so no time is reported): the dual
   after each of the first passes against plain SDM's, the combination's step, and the KKT
   violation each pass measures (it stalls: a step below 1 leaves part of every alpha a shard set
   to 0, sdm.pyx).

    python benchmarks/planted_threads.py                  # n = 200,000, 3 repetitions
    python benchmarks/planted_threads.py --n 50000 --reps 1 --small-passes 4
"""
import argparse
import multiprocessing as mp
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from planted import planted       # noqa: E402

from ssvmlinear._kernels.dataset import CSRDataset          # noqa: E402
from ssvmlinear._kernels.multiclass import MulticlassStructure      # noqa: E402
from ssvmlinear._kernels.sdm import SDMSolver               # noqa: E402
from ssvmlinear.parallel import KernelTeam                  # noqa: E402
from ssvmlinear.solvers.sdm import ascent_objective, run_type2_passes   # noqa: E402


def structure_of(X, y):
    classes, y_idx = np.unique(y, return_inverse=True)
    return MulticlassStructure(CSRDataset(X, -1.0), y_idx.astype(np.int32), classes.shape[0])


def drive(structure, C, tol, max_passes, **solver_kw):
    """SDM's outer loop (solvers.sdm.SDMRun without the gap checks): a type-I pass, type-II passes while they
    pay, until a type-I pass's violation <= tol. Returns per pass (type-I?, seconds, violation,
    dual, step) and the fit's seconds."""
    solver = SDMSolver(structure, np.full(structure.n_examples, C), 1, **solver_kw)
    passes = []
    with KernelTeam(solver.team):
        t_fit = time.perf_counter()
        while len(passes) < max_passes:
            before = ascent_objective(solver)
            t = time.perf_counter()
            viol = solver.run_pass(True, 0.1 * tol)
            passes.append((True, time.perf_counter() - t, viol, solver.dual(), solver.last_step))
            if viol <= tol:
                break
            clock = [time.perf_counter()]

            def after(_):
                now = time.perf_counter()
                passes.append((False, now - clock[0], np.nan, solver.dual(), solver.last_step))
                clock[0] = now
            run_type2_passes(solver, tol, 0.1 * tol, before, max_passes - len(passes), after)
        seconds = time.perf_counter() - t_fit
    solver.release()
    return passes, seconds


_SHARED = {}       # the structure and settings, inherited by the forked processes of part A


def _fit_seconds(_=None):
    return drive(_SHARED["structure"], _SHARED["C"], _SHARED["tol"], 1000)[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--C", type=float, default=0.1)
    ap.add_argument("--tol", type=float, default=0.05)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--shard-block", type=int, default=4096, help="examples per shard and round (part C)")
    ap.add_argument("--small-passes", type=int, default=10, help="passes of part C")
    args = ap.parse_args()
    X, y = planted(args.n, 100000, 50, nnz=40)
    st = structure_of(X, y)
    print(f"planted: n = {args.n}, d = 100000, 40 nonzeros per row, K = 50, C = {args.C}, tol = {args.tol}; "
          f"medians of {args.reps}")

    # A: two single-thread fits at once (fork: the children share X's pages)
    _SHARED.update(structure=st, C=args.C, tol=args.tol)
    alone, pair = [], []
    ctx = mp.get_context("fork")
    for _ in range(args.reps):
        alone.append(_fit_seconds())
        with ctx.Pool(2) as pool:
            pair.extend(pool.map(_fit_seconds, range(2), chunksize=1))
    slow = statistics.median(pair) / statistics.median(alone)
    print("\nA. one-thread fits: alone vs two at once in two processes (solver seconds)")
    print(f"   alone {statistics.median(alone):.2f} s   two at once {statistics.median(pair):.2f} s each   "
          f"slowdown {slow:.2f}x   => two threads on one fit: about {2 / slow:.2f}x at best (each process has its own w)")

    # B: per-pass cost of sharded passes, default rounds
    runs = [("plain", dict()), ("shards/1", dict(n_shards=2, n_threads=1)),
            ("shards/2", dict(n_shards=2, n_threads=2))]
    rows = {name: [] for name, _ in runs}
    for _ in range(args.reps):
        for name, kw in runs:
            rows[name].append(drive(st, args.C, args.tol, 1000, **kw))
    print("\nB. sharded passes, S = 2, default rounds: seconds per pass (medians), passes to tol, fit seconds")
    print(f"   {'run':9s} {'type-I':>7s} {'type-II':>8s} {'passes':>7s} {'fit s':>7s} {'x plain':>8s}")
    base = statistics.median(s for _, s in rows["plain"])
    for name, _ in runs:
        p1 = [t for passes, _ in rows[name] for kind, t, *_ in passes if kind]
        p2 = [t for passes, _ in rows[name] for kind, t, *_ in passes if not kind]
        fit = statistics.median(s for _, s in rows[name])
        print(f"   {name:9s} {statistics.median(p1):7.3f} {statistics.median(p2) if p2 else np.nan:8.3f} "
              f"{len(rows[name][0][0]):7d} {fit:7.2f} {base / fit:8.2f}")

    # C: progress per pass with small rounds
    P = args.small_passes
    plain = drive(st, args.C, args.tol, P)[0]
    small = drive(st, args.C, args.tol, P, n_shards=2, n_threads=2, shard_block=args.shard_block)[0]
    print(f"\nC. rounds of 2 x {args.shard_block} examples: dual after each pass (plain's own schedule; "
          f"plain stops at its pass {len(plain)})")
    print(f"   {'pass':>4s} {'type':>4s} {'plain dual':>12s} {'small rounds':>12s} {'rel. diff':>10s} "
          f"{'last step':>9s} {'viol (I)':>9s} {'plain viol':>10s}")
    for k in range(max(len(plain), len(small))):
        a = plain[k] if k < len(plain) else None
        b = small[k] if k < len(small) else None
        da = a[3] if a else np.nan
        db = b[3] if b else np.nan
        print(f"   {k + 1:4d} {('I' if (b or a)[0] else 'II'):>4s} {da:12.2f} {db:12.2f} {(da - db) / abs(da):10.2e} "
              f"{(b[4] if b else np.nan):9.3f} {(b[2] if b else np.nan):9.3g} {(a[2] if a else np.nan):10.3g}")


if __name__ == "__main__":
    main()
