"""One-slack cutting plane (ssvmlinear -s 2 / -s 3) beside SDM and LSE-SDCD on OCR words, and
the n_jobs = 1 vs 2 speed-up of its oracle phase.

Protocol of Balamurugan et al. (Sec. V.B): partition k trains on the words of fold k and tests on
all other words. For each C and partition:
  - LSE: cutting plane (Alg. 1, -s 3) vs LSE-SDCD (Alg. 2, -s 1): seconds, iterations, oracle
    calls, objective, test accuracy, beside the paper's published CP and SDCD seconds (Table III)
    and the ratio paper-CP / our-CP. Both solve the LSE problem restricted to the working sets
    their oracles built (the paper's OP5; the full problem sums over all 26^T labelings), and
    they build different sets, so their objectives differ. The comparison at equal problem is
    "same V": the cutting plane with the oracle off on LSE-SDCD's final working sets, whose
    primal (an upper bound) must lie within eps = tol * sum_i C_i of LSE-SDCD's optimum there
    (SDCD's primal and dual on those sets are printed beside it).
  - margin rescaling: cutting plane (-s 2) vs SDM (-s 0): seconds, iterations, oracle calls and
    the primal objective of both (the same problem: the cutting plane's primal is within
    eps = tol * sum_i C_i of the optimum, SDM's within its own rule's reach).
Then "large" (train on folds 1-9, test on fold 0): the cutting plane with n_jobs = 1 and 2, the
seconds of its oracle phase (loss-augmented inference of every example, in threads) and of the
whole fit, and the speed-up; then the oracle pass alone at a fixed w (interleaved runs) with the
CPU time other processes took meanwhile (the machine must be otherwise idle for a fair figure).
Times are medians of --reps interleaved runs in this process.

    python benchmarks/cutting_plane.py                      # folds 0-9, C = 0.01 0.1 1
    python benchmarks/cutting_plane.py --folds 0 --C 0.01 0.1 1 --reps 3
"""
import argparse
import json
import resource
import time
import warnings
from pathlib import Path

import numpy as np

from ssvmlinear import ChainSSVM, load_svmlight_file
from ssvmlinear.exceptions import ConvergenceWarning
from ssvmlinear.solvers import SDCD, CuttingPlane, solve
from ssvmlinear.validation import check_csr
from ssvmlinear._kernels.chain import ChainStructure
from ssvmlinear._kernels.dataset import CSRDataset

DATA = Path(__file__).resolve().parent.parent / "data"
PAPER_CP = {0.01: [115.36, 99.37, 119.97, 132.31, 142.08, 113.14, 156, 175.91, 133.95, 113.33],
            0.1: [595.13, 628.05, 474.26, 432.04, 1288.68, 467.75, 418.11, 378.49, 511.23, 1193.12],
            1.0: [4181.79, 9013.09, 4928.94, 9628, 8971.55, 7657.24, 7134.54, 4904.36, 4118.72, 3822.71]}
PAPER_SDCD = {0.01: [24.89, 23.41, 20.84, 25.44, 29.35, 25.62, 34.66, 23.07, 30.87, 24.95],
              0.1: [37.37, 38.73, 36.73, 49.69, 38.71, 33.47, 54.11, 68.39, 49.2, 37.63],
              1.0: [106.39, 179.53, 123.81, 116.5, 178.28, 148.41, 184.26, 193.44, 146.02, 116.76]}


def fit_all(configs, data, reps):
    """Fit every config `reps` times, interleaved; median seconds and the last estimator's figures."""
    Xtr, ytr, ltr, Xte, yte, lte = data
    times = {k: [] for k in configs}
    ests = {}
    for _ in range(reps):
        for k, params in configs.items():
            t = time.perf_counter()
            ests[k] = ChainSSVM(**params).fit(Xtr, ytr, ltr)
            times[k].append(time.perf_counter() - t)
    out = {}
    for k, est in ests.items():
        out[k] = dict(seconds=float(np.median(times[k])), iters=int(est.n_iter_), calls=int(est.n_oracle_calls_),
                      dual=float(est.dual_objective_), primal=float(est.objective_),
                      converged=bool(est.converged_), accuracy=float(est.score(Xte, yte, lte)),
                      oracle_seconds=getattr(est, "oracle_seconds_", None),
                      working_set=int(est.working_set_size_))
    return out


def structure(Xtr, ytr, ltr):
    classes, yi = np.unique(ytr, return_inverse=True)
    return ChainStructure(CSRDataset(check_csr(Xtr), -1.0), yi, ltr, classes.shape[0], False, False)


def same_working_sets(C, Xtr, ytr, ltr, max_iter, polish=5000):
    """LSE-SDCD, then the cutting plane with the oracle off on SDCD's final working sets."""
    from ssvmlinear._kernels.cuttingplane import OneSlackOracle
    st = structure(Xtr, ytr, ltr)
    Cs = np.full(st.n_examples, C)
    sd = solve(SDCD(), st, Cs, 1e-4, max_iter, 0, loss="lse", keep_state=True)
    orc = OneSlackOracle(st, Cs, True)
    orc.set_caches(sd.state)
    _, hsum, _ = orc.cache_pass(sd.w, np.zeros(st.n_weights))
    sd_primal = 0.5 * float(sd.w @ sd.w) + hsum
    t = time.perf_counter()
    cp = solve(CuttingPlane(init_caches=sd.state, oracle=False), st, Cs, 0.1, max_iter, 0, loss="lse")
    cp_seconds = time.perf_counter() - t
    # the reference optimum on these sets: LSE-SDCD continued with type-II passes only (the sets
    # stay fixed) until its primal-dual gap is below eps / 100
    from ssvmlinear._kernels.sdcd import SDCDSolver
    ref = SDCDSolver(st, Cs, 0, False)
    ref.set_state(sd.state, Cs)
    eps = 0.1 * float(Cs.sum())
    for p in range(polish):
        ref.run_pass(False, 0.0)
        if p % 50 == 49:
            _, hsum, _ = orc.cache_pass(ref.coef, np.zeros(st.n_weights))
            ref_primal = 0.5 * float(ref.coef @ ref.coef) + hsum
            if ref_primal - ref.dual() <= eps / 100:
                break
    _, hsum, _ = orc.cache_pass(ref.coef, np.zeros(st.n_weights))
    ref_primal = 0.5 * float(ref.coef @ ref.coef) + hsum
    return dict(sdcd_primal=sd_primal, sdcd_dual=float(sd.dual), cp_primal=float(cp.primal), cp_dual=float(cp.dual),
                cp_seconds=cp_seconds, cp_iters=int(cp.n_iter), eps=eps, labels=int(cp.working_set_size),
                ref_primal=ref_primal, ref_dual=float(ref.dual()), ref_passes=p + 1)


def busy_seconds():
    """CPU seconds the whole machine spent busy (all cores), from /proc/stat (Linux)."""
    try:
        v = list(map(int, open("/proc/stat").readline().split()[1:]))
    except OSError:
        return float("nan")
    return (sum(v) - v[3] - v[4]) / 100.0


def own_seconds():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def oracle_pass_speedup(Xtr, ytr, ltr, C, reps=15):
    """One oracle pass of the cutting plane (Viterbi on every word, its cache's margins and the
    constraint's chunk accumulators rebuilt) at the weights of a short run, n_jobs = 1 and 2
    interleaved; medians, and the cores other processes used meanwhile. On a busy machine the
    wall-clock ratio says little, so the chunks' thread CPU times are also recorded and the pass
    is replayed on two free cores (chunks to the first free thread, as the solver's kernel team does):
    total CPU of the serial pass / that schedule's makespan."""
    from ssvmlinear._kernels.cuttingplane import OneSlackOracle
    from concurrent.futures import ThreadPoolExecutor
    from ssvmlinear.solvers.cutting_plane import CP_CHUNKS
    st = structure(Xtr, ytr, ltr)
    n = st.n_examples
    Cs = np.full(n, C)
    out = {}
    for loss in ("margin", "lse"):
        r = solve(CuttingPlane(), st, Cs, 0.1, 60, 0, loss=loss)
        bounds = np.linspace(0, n, CP_CHUNKS + 1).astype(np.int64)
        a = np.zeros(st.n_weights)

        def task(orc, k, cpu):
            c0 = time.thread_time()
            orc.pass_chunk(r.w, k, True, True)
            cpu[k] = time.thread_time() - c0

        def makespan(cpu, workers=2):
            # chunks handed out in order to the first free thread (as the kernel team does)
            free = [0.0] * workers
            for k in range(CP_CHUNKS):
                j = int(np.argmin(free))
                free[j] += cpu[k]
            return max(free)

        def one(par):
            orc = OneSlackOracle(st, Cs, loss == "lse", 10, False, bounds)
            orc.set_caches(r.caches)
            cpu = {}
            t = time.perf_counter()
            if par is None:
                for k in range(CP_CHUNKS):
                    task(orc, k, cpu)
            else:
                list(par.map(lambda k: task(orc, k, cpu), range(CP_CHUNKS)))
            orc.collect(a)
            return time.perf_counter() - t, sum(cpu.values()), makespan(cpu)
        with ThreadPoolExecutor(2) as par:   # chunks to the first free thread (pass_chunk releases the GIL)
            one(None), one(par)
            b0, o0, t0 = busy_seconds(), own_seconds(), time.perf_counter()
            t1, t2 = [], []
            for _ in range(reps):
                t1.append(one(None))
                t2.append(one(par))
            other = ((busy_seconds() - b0) - (own_seconds() - o0)) / (time.perf_counter() - t0)
        t1, t2 = np.median(np.array(t1), axis=0), np.median(np.array(t2), axis=0)
        out[loss] = dict(ms1=1e3 * t1[0], ms2=1e3 * t2[0], cpu1=1e3 * t1[1], cpu2_total=1e3 * t2[1],
                         cpu2_makespan=1e3 * t2[2], other_cores=other)
        print(f"oracle pass alone ({loss}, {n} words, {int(r.caches['sizes'].sum())} cached labels): n_jobs=1 "
              f"{out[loss]['ms1']:.1f} ms, n_jobs=2 {out[loss]['ms2']:.1f} ms, speed-up "
              f"{out[loss]['ms1'] / out[loss]['ms2']:.2f}x (other processes used {other:.2f} cores meanwhile); "
              f"chunk CPU times: n_jobs=1 {t1[1] * 1e3:.1f} ms in all, n_jobs=2 {t2[1] * 1e3:.1f} ms in all, "
              f"{t2[2] * 1e3:.1f} ms for the busier of two free cores -> {t1[1] / t2[2]:.2f}x", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folds", nargs="+", type=int, default=list(range(10)))
    ap.add_argument("--C", nargs="+", type=float, default=[0.01, 0.1, 1.0])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--max-iter", type=int, default=100000)
    ap.add_argument("--large-C", type=float, default=0.1)
    ap.add_argument("--large-reps", type=int, default=1)
    ap.add_argument("--large-max-iter", type=int, default=None,
                    help="cap the large fits (the oracle-phase speed-up needs only some oracle passes)")
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--skip-same-v", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters.svm.gz", n_features=128)
    folds = np.loadtxt(DATA / "ocr_letters.folds", dtype=np.int64)
    rows = []
    print("LSE: cutting plane (-s 3) vs LSE-SDCD (-s 1); margin: cutting plane (-s 2) vs SDM (-s 0); "
          "tol = defaults (CP 0.1 per example, SDCD 1e-4, SDM 0.1); eps = 0.1 * sum_i C_i")
    print(f"{'C':>5} {'part':>5} | {'CP-lse s':>8} {'it':>5} {'calls':>7} {'|V|':>6} {'primal':>9} {'dual':>9} {'acc':>6} | "
          f"{'SDCD s':>7} {'|V|':>6} {'dual':>9} {'acc':>6} | {'paperCP':>8} {'paperSD':>8} {'pCP/CP':>7} {'CP/SDCD':>7} | "
          f"{'CP s':>6} {'it':>5} {'calls':>7} {'primal':>10} | {'SDM s':>6} {'primal':>10} {'|dP|':>7} {'eps':>7}")
    for C in args.C:
        for k in args.folds:
            tr_w = folds == k
            tr, te = np.repeat(tr_w, lengths), np.repeat(~tr_w, lengths)
            data = (X[tr], y[tr], lengths[tr_w], X[te], y[te], lengths[~tr_w])
            r = dict(C=C, fold=k)
            configs = dict(cp_lse=dict(C=C, solver="cutting-plane", loss="lse", max_iter=args.max_iter),
                           sdcd=dict(C=C, loss="lse", max_iter=args.max_iter),
                           cp=dict(C=C, solver="cutting-plane", loss="margin", max_iter=args.max_iter),
                           sdm=dict(C=C, loss="margin", max_iter=args.max_iter))
            r.update(fit_all(configs, data, args.reps))
            pcp, psd = PAPER_CP.get(C, [np.nan] * 10)[k], PAPER_SDCD.get(C, [np.nan] * 10)[k]
            a, s, c, m = r["cp_lse"], r["sdcd"], r["cp"], r["sdm"]
            eps = 0.1 * C * int(tr_w.sum())
            r["eps"] = eps
            r["paper_cp_over_ours"] = pcp / a["seconds"]
            r["cp_over_sdcd"] = a["seconds"] / s["seconds"]
            r["cp_primal_minus_sdm"] = c["primal"] - m["primal"]
            rows.append(r)
            flag = "" if a["converged"] and c["converged"] else "  (not converged)"
            print(f"{C:5g} {'OCR%d' % k:>5} | {a['seconds']:8.2f} {a['iters']:5d} {a['calls']:7d} {a['working_set']:6d} "
                  f"{a['primal']:9.3f} {a['dual']:9.3f} {100 * a['accuracy']:6.2f} | {s['seconds']:7.2f} {s['working_set']:6d} "
                  f"{s['dual']:9.3f} {100 * s['accuracy']:6.2f} | "
                  f"{pcp:8.1f} {psd:8.1f} {r['paper_cp_over_ours']:7.1f} {r['cp_over_sdcd']:7.1f} | "
                  f"{c['seconds']:6.2f} {c['iters']:5d} {c['calls']:7d} {c['primal']:10.3f} | "
                  f"{m['seconds']:6.2f} {m['primal']:10.3f} {abs(r['cp_primal_minus_sdm']):7.3f} {eps:7.3f}{flag}", flush=True)
            if not args.skip_same_v:
                v = same_working_sets(C, X[tr], y[tr], lengths[tr_w], args.max_iter)
                r["same_v"] = v
                print(f"        same V (LSE-SDCD's {v['labels']} labels): SDCD primal {v['sdcd_primal']:.3f} dual "
                      f"{v['sdcd_dual']:.3f} | CP (oracle off) primal {v['cp_primal']:.3f} dual {v['cp_dual']:.3f} "
                      f"({v['cp_iters']} it, {v['cp_seconds']:.2f} s) | optimum (SDCD + {v['ref_passes']} type-II "
                      f"passes) in [{v['ref_dual']:.3f}, {v['ref_primal']:.3f}] | CP primal above it by <= "
                      f"{v['cp_primal'] - v['ref_dual']:.3f}, SDCD dual below it by <= {v['ref_primal'] - v['sdcd_dual']:.3f} "
                      f"(eps {v['eps']:.3f})", flush=True)
        sel = [r for r in rows if r["C"] == C]
        print(f"  C={C:g}: paper-CP / our-CP min {min(r['paper_cp_over_ours'] for r in sel):.1f}x, "
              f"median {np.median([r['paper_cp_over_ours'] for r in sel]):.1f}x; our CP / SDCD median "
              f"{np.median([r['cp_over_sdcd'] for r in sel]):.1f}x (paper: "
              f"{np.median([PAPER_CP[C][r['fold']] / PAPER_SDCD[C][r['fold']] for r in sel]) if C in PAPER_CP else np.nan:.1f}x)",
              flush=True)
    result = dict(rows=rows)
    if not args.skip_large:
        tr_w = folds != 0
        tr, te = np.repeat(tr_w, lengths), np.repeat(~tr_w, lengths)
        data = (X[tr], y[tr], lengths[tr_w], X[te], y[te], lengths[~tr_w])
        print(f"\nlarge: train folds 1-9 ({int(tr.sum())} letters), test fold 0; cutting plane, C={args.large_C}")
        print(f"{'loss':>6} {'n_jobs':>6} | {'oracle s':>9} {'total s':>8} {'it':>5} {'calls':>8} {'acc':>6}")
        large = {}
        for loss in ("margin", "lse"):
            b0, o0, t0 = busy_seconds(), own_seconds(), time.perf_counter()
            res = fit_all({jobs: dict(C=args.large_C, solver="cutting-plane", loss=loss, n_jobs=jobs,
                                      max_iter=args.large_max_iter or args.max_iter) for jobs in (1, 2)},
                          data, args.large_reps)
            other = ((busy_seconds() - b0) - (own_seconds() - o0)) / (time.perf_counter() - t0)
            for jobs in (1, 2):
                large[(loss, jobs)] = res[jobs]
                print(f"{loss:>6} {jobs:6d} | {res[jobs]['oracle_seconds']:9.2f} {res[jobs]['seconds']:8.2f} "
                      f"{res[jobs]['iters']:5d} {res[jobs]['calls']:8d} {100 * res[jobs]['accuracy']:6.2f}", flush=True)
            sp = large[(loss, 1)]["oracle_seconds"] / large[(loss, 2)]["oracle_seconds"]
            tot = large[(loss, 1)]["seconds"] / large[(loss, 2)]["seconds"]
            print(f"{loss:>6} speed-up n_jobs 2 vs 1: oracle phase {sp:.2f}x, whole fit {tot:.2f}x "
                  f"(other processes used {other:.2f} cores meanwhile)", flush=True)
        result["large"] = {f"{k[0]}-{k[1]}": v for k, v in large.items()}
        result["oracle_pass"] = oracle_pass_speedup(X[tr], y[tr], lengths[tr_w], args.large_C)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, default=float))


if __name__ == "__main__":
    main()
