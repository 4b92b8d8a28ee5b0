"""(Not named distributed.py: that would shadow the dask package for the workers.)
Training on a Dask LocalCluster of 1 and 2 worker processes (one thread each) against one
process: time to the default stopping rule, rounds or iterations, bytes sent per round (weights
and running sums; the data travels once per fit), and each worker's peak RSS beside its shard's
CSR size plus the weights.

- planted multiclass (benchmarks/planted.py: --n rows x --d features, --nnz nonzeros per row,
  K = 20 classes, C = 0.1, no bias), written once as svmlight and converted once to the .ssvmdata
  cache: SDM in one process vs CoCoA+ over SDM on the cluster, each worker mapping its rows of the
  cache (the time to parse the text on the workers instead is printed too); with --mmap-limit-mb,
  one process (ssvm-train) on the memory-mapped cache inside a memory cgroup smaller than the CSR;
- OCR letters chains (folds 1-9), the one-slack cutting plane (-s 2, C = 0.1, eps 0.1), whose model
  on the cluster equals the single-process one bit for bit (checked here), and GDMM (-s 6, its
  default rule) in one process vs CoCoA+ over GDMM.

    python benchmarks/cluster.py                          # 200,000 x 100,000 (a few minutes)
    python benchmarks/cluster.py --ocr-only               # the OCR runs only
    python benchmarks/cluster.py --n 2000000 --d 1000000 --nnz 50 --skip-ocr --mmap-limit-mb 640
                                                          # the issue's size (~15 minutes; 2.7 GB of text)
"""
import argparse
import os
import resource
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def worker_peak_mb():
    """This process's peak RSS (VmHWM: getrusage's maxrss survives fork and exec, so a worker
    would report its parent's)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def csr_mb(X):
    return (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20


def worker_floor_mb():
    """A worker's peak RSS once it has imported what training imports, before any data: the
    runtime's floor (dask, numpy, scipy, scikit-learn, ssvmlinear)."""
    import importlib
    for module in ("ssvmlinear.distributed", "ssvmlinear.multiclass"):
        importlib.import_module(module)
    return worker_peak_mb()


def run_cluster(n_workers, fit, path=None, cache=None):
    """fit() (or fit(data) with the data loaded on the workers: the svmlight file `path` parsed
    there, timed and dropped, then the .ssvmdata `cache` mapped there and trained on) on a
    LocalCluster of n_workers processes; (estimator, seconds, [peak MB per worker], shard CSR MB
    or None, the workers' largest runtime floor in MB, (parse seconds, map seconds) or None)."""
    import distributed
    from joblib import parallel_config
    from ssvmlinear.distributed import load_svmlight_shards
    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, memory_limit=0)
    client = distributed.Client(cluster)
    shard_mb = loads = None
    try:
        floor = max(client.run(worker_floor_mb).values())
        if path is not None:
            t = time.perf_counter()
            data = load_svmlight_shards(client, path, n_workers)
            parse = time.perf_counter() - t
            del data
            t = time.perf_counter()
            data = load_svmlight_shards(client, cache, n_workers)
            loads = (parse, time.perf_counter() - t)
            shard_mb = data.csr_bytes / n_workers / 2**20
            t = time.perf_counter()
            est = fit(data)
        else:
            t = time.perf_counter()
            with parallel_config(backend="dask"):
                est = fit()
        secs = time.perf_counter() - t
        peaks = sorted(client.run(worker_peak_mb).values())
    finally:
        client.close()
        cluster.close()
    return est, secs, peaks, shard_mb, floor, loads


def memory_cgroup(limit_mb):
    """A fresh memory cgroup (v2, else v1) limited to limit_mb, or None (not root, no cgroupfs):
    its pids file, to put a child in."""
    for root, limit_file, procs in (("/sys/fs/cgroup", "memory.max", "cgroup.procs"),
                                    ("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "cgroup.procs")):
        path = os.path.join(root, f"ssvm-bench-{os.getpid()}")
        try:
            if not os.path.exists(os.path.join(root, limit_file)) and root == "/sys/fs/cgroup":
                continue            # v1 hierarchy mounted here, not v2
            os.makedirs(path, exist_ok=True)
            with open(os.path.join(path, limit_file), "w") as fh:
                fh.write(str(limit_mb << 20))
            return path, os.path.join(path, procs)
        except OSError:
            continue
    return None


def mmap_run(ssvmdata, C, limit_mb):
    """ssvm-train on a .ssvmdata folder (memory-mapped CSR) in a child process, in a memory cgroup
    of limit_mb when one can be made: (seconds, the child's peak RSS in MB, whether it was limited)."""
    import shutil
    from memory import peak_rss_mb
    # the cache's pages out of the page cache first (pages cached earlier are charged to whoever
    # read them, not to the child's cgroup)
    for name in os.listdir(ssvmdata):
        fd = os.open(os.path.join(ssvmdata, name), os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    cg = memory_cgroup(limit_mb)
    exe = shutil.which("ssvm-train") or os.path.join(os.path.dirname(sys.executable), "ssvm-train")
    model = os.path.join(os.path.dirname(os.path.abspath(ssvmdata)), "cluster-mmap.model")

    def enter():
        if cg is not None:
            with open(cg[1], "w") as fh:
                fh.write(str(os.getpid()))
    try:
        peak, secs = peak_rss_mb([exe, "-c", str(C), "-q", ssvmdata, model], preexec_fn=enter)
    finally:
        if cg is not None:
            try:
                os.rmdir(cg[0])
            except OSError:
                pass
    return secs, peak, cg is not None


def ocr():
    """The OCR runs: the cutting plane (bit for bit) and GDMM (passes), one process vs 1 and 2 workers."""
    from ssvmlinear import ChainSSVM, ConvergenceWarning, load_svmlight_file
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    Xo, yo, lengths = load_svmlight_file(os.path.join(here, "data", "ocr_letters_train.svm.gz"), n_features=128)

    def fit_chain():
        return ChainSSVM(C=0.1, solver="cutting-plane", tol=0.1, fit_intercept=False).fit(Xo, yo, lengths)

    print(f"\nOCR letters chains ({Xo.shape[0]} tokens), one-slack cutting plane, C = 0.1, eps 0.1")
    t = time.perf_counter()
    ref = fit_chain()
    print(f"{'one process':24s} {time.perf_counter() - t:8.1f} {ref.n_iter_:7d} iterations")
    for k in (1, 2):
        est, secs, peaks, _, _, _ = run_cluster(k, fit_chain)
        same = np.array_equal(est.coef_, ref.coef_)
        print(f"{f'{k} worker(s)':24s} {secs:8.1f} {est.n_iter_:7d} iterations; model equal bit for bit: {same}; "
              f"peak MB per worker {' '.join(f'{p:.0f}' for p in peaks)}")

    def fit_gdmm():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return ChainSSVM(C=0.1, solver="gdmm", fit_intercept=False).fit(Xo, yo, lengths)

    print("\nOCR letters chains, GDMM (default rule: block gaps and consistency <= tol, relative gap <= 1 %), "
          "C = 0.1; on the cluster CoCoA+ over GDMM, one pass per round")
    t = time.perf_counter()
    ref = fit_gdmm()
    print(f"{'one process':24s} {time.perf_counter() - t:8.1f} {ref.n_iter_:7d} passes; objective {ref.objective_:.6g} "
          f"rel. gap {ref.gap_ / ref.objective_:.4f}")
    for k in (1, 2):
        est, secs, peaks, _, _, _ = run_cluster(k, fit_gdmm)
        print(f"{f'{k} worker(s)':24s} {secs:8.1f} {est.n_iter_:7d} passes; objective {est.objective_:.6g} "
              f"rel. gap {est.gap_ / est.objective_:.4f}; converged {est.converged_}; "
              f"peak MB per worker {' '.join(f'{p:.0f}' for p in peaks)}")



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--d", type=int, default=100000)
    ap.add_argument("--nnz", type=int, default=50)
    ap.add_argument("--K", type=int, default=20)
    ap.add_argument("--C", type=float, default=0.1)
    ap.add_argument("--skip-ocr", action="store_true")
    ap.add_argument("--ocr-only", action="store_true", help="only the OCR runs")
    ap.add_argument("--mmap-only", action="store_true", help="only the memory-mapped run (--mmap-limit-mb)")
    ap.add_argument("--tmp", default="/tmp", help="where the svmlight file is written once")
    ap.add_argument("--mmap-limit-mb", type=int, default=0,
                    help="also train one process on the .ssvmdata cache (ssvm-convert) of the planted file, in a "
                         "memory cgroup of this many MB (root and a cgroup filesystem needed; 0: skip)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.ocr_only:
        return ocr()
    from planted import planted
    from ssvmlinear import MulticlassSSVM, dump_svmlight_file, load_svmlight_file
    from ssvmlinear.datacache import convert_main, load_ssvmdata

    path = os.path.join(args.tmp, f"cluster_planted_{args.n}_{args.d}_{args.nnz}_{args.K}.svm")
    if not os.path.exists(path):            # written once
        X, y = planted(args.n, args.d, args.K, nnz=args.nnz, seed=0)
        dump_svmlight_file(X, y, path + ".tmp")
        os.replace(path + ".tmp", path)
    cache = path[:-4] + ".ssvmdata"
    if not os.path.exists(cache):           # converted once
        convert_main(["-q", path, cache])
    if args.mmap_only:
        X, y = load_ssvmdata(cache)
    else:
        X, y = load_svmlight_file(path, n_features=args.d, zero_based=False)
    csr_mb_total = csr_mb(X)
    weights_mb = 8 * args.d * args.K / 2**20
    print(f"planted multiclass: {args.n} x {args.d}, {X.nnz / args.n:.1f} nonzeros per row, K = {args.K}, "
          f"C = {args.C}, no bias; CSR {csr_mb(X):.0f} MB, weights {weights_mb:.0f} MB; the cluster runs map "
          f"their shards of the .ssvmdata cache on the workers (load_svmlight_shards)")
    print(f"{'run':24s} {'seconds':>8s} {'passes':>7s} {'rounds':>7s} {'rel gap':>8s} {'objective':>12s} "
          f"{'MB/round':>9s}  peak MB per worker (1.5 x (shard CSR + weights); a worker's runtime floor)")

    if args.mmap_only:      # (a mapping kept here would keep the cache's pages out of the child's cgroup)
        del X, y
    else:
        def fit_mc(*data):
            return MulticlassSSVM(C=args.C, fit_intercept=False).fit(*data)

        t = time.perf_counter()
        one = fit_mc(X, y)
        secs = time.perf_counter() - t
        print(f"{'SDM, one process':24s} {secs:8.1f} {one.n_iter_:7d} {'':>7s} {one.gap_ / one.objective_:8.4f} "
              f"{one.objective_:12.6g} {'':>9s}  {worker_peak_mb():.0f} (this process, file parsed here)")
        del X, y
        loads = []
        for k in (1, 2):
            est, secs, peaks, shard_mb, floor, load = run_cluster(k, fit_mc, path, cache)
            loads.append(load)
            rounds = len(est.objective_curve_)       # one entry per CoCoA+ round
            # per round: w to every worker and its local iterate back
            print(f"{f'CoCoA+ SDM, {k} worker(s)':24s} {secs:8.1f} {est.n_iter_:7d} {rounds:7d} "
                  f"{est.gap_ / est.objective_:8.4f} {est.objective_:12.6g} {2 * weights_mb * k:9.1f}  "
                  f"{' '.join(f'{p:.0f}' for p in peaks)} ({1.5 * (shard_mb + weights_mb):.0f}; floor {floor:.0f})")
        print("loading the shards on 1 / 2 workers: parsing the svmlight file "
              + " / ".join(f"{p:.1f}" for p, _ in loads) + " s, mapping the .ssvmdata cache (trained on) "
              + " / ".join(f"{m:.2f}" for _, m in loads) + " s")
    if args.mmap_limit_mb:
        secs, peak, limited = mmap_run(cache, args.C, args.mmap_limit_mb)
        print(f"\none process on the memory-mapped cache {cache}: {secs:.1f} s, peak RSS {peak:.0f} MB "
              + (f"in a memory cgroup of {args.mmap_limit_mb} MB" if limited else "(no cgroup could be made: "
                 "unlimited)") + f"; the CSR is {csr_mb_total:.0f} MB")
    if not (args.skip_ocr or args.mmap_only):
        ocr()

if __name__ == "__main__":
    main()
