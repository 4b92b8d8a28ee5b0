"""Do the default fits converge? Every dual solver at its defaults on three data sets and four C.

Solvers (the estimators' default rule, tol=None): SDM (-s 0), LSE-SDCD (-s 1), the one-slack
cutting plane with margin rescaling (-s 2) and with the LSE (-s 3), GDMM (-s 6). Data:
  ocr-chain   ChainSSVM on OCR words, folds 1-9 (47,535 letters, 6,251 words, 26 tags)
  ocr-letters MulticlassSSVM(fit_intercept=False) on the same letters as independent examples
  scene       MultiLabelSSVM (independent labels) on scene's training set (1,211 examples)
A row: passes (n_iter_), whether the fit stopped at max_iter, the relative gap of the problem
the solver solves ((objective_ - dual_objective_) / objective_; for LSE-SDCD on chains and
multi-label its working-set primal), seconds, and whether it converged (converged_ and a
relative gap <= 1 %). Every fit runs in this process, one after the other.

    python benchmarks/convergence.py                                  # everything (long at C = 10)
    python benchmarks/convergence.py --C 0.01 0.1 --data ocr-letters scene --solvers sdm cp
"""
import argparse
import json
import sys
import time
import warnings
from pathlib import Path


DATA = Path(__file__).resolve().parent.parent / "data"
SOLVERS = {"sdm": ("sdm", "margin"), "sdcd": ("sdcd", "lse"), "cp": ("cutting-plane", "margin"),
           "cp-lse": ("cutting-plane", "lse"), "gdmm": ("gdmm", "margin")}


def load(name):
    from ssvmlinear import load_svmlight_file
    if name == "scene":
        return load_svmlight_file(DATA / "scene_train.svm.gz", kind="multilabel")
    return load_svmlight_file(DATA / "ocr_letters_train.svm.gz", n_features=128)


def estimator(data, solver, loss, C, max_iter):
    from ssvmlinear import ChainSSVM, MulticlassSSVM, MultiLabelSSVM
    kw = dict(C=C, solver=solver, loss=loss, max_iter=max_iter)
    if data == "ocr-chain":
        return ChainSSVM(**kw)
    if data == "ocr-letters":
        return MulticlassSSVM(fit_intercept=False, **kw)
    return MultiLabelSSVM(**kw)


def run(data, name, C, arrays, max_iter):
    from ssvmlinear import ConvergenceWarning
    solver, loss = SOLVERS[name]
    est = estimator(data, solver, loss, C, max_iter)
    args = arrays if data == "ocr-chain" else arrays[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t = time.perf_counter()
        try:
            est.fit(*args)
        except ValueError as e:           # a combination the solver refuses
            return dict(data=data, solver=name, C=C, error=str(e).splitlines()[0])
        seconds = time.perf_counter() - t
    gap = (est.objective_ - est.dual_objective_) / abs(est.objective_) if est.objective_ else float("nan")
    converged = bool(est.converged_ and gap <= 0.01)      # (the rule may fire on the last pass allowed)
    return dict(data=data, solver=name, C=C, passes=int(est.n_iter_),
                max_iter_stop=not est.converged_ and est.n_iter_ >= max_iter, rel_gap=float(gap),
                seconds=seconds, converged=converged)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", default=["ocr-chain", "ocr-letters", "scene"])
    ap.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=list(SOLVERS))
    ap.add_argument("--C", type=float, nargs="+", default=[0.01, 0.1, 1.0, 10.0])
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    rows = []
    print(f"{'data':12} {'solver':7} {'C':>6} {'passes':>7} {'max_iter':>8} {'rel. gap':>9} {'seconds':>9}  converged")
    for data in args.data:
        arrays = load(data)
        for C in args.C:
            for name in args.solvers:
                r = run(data, name, C, arrays, args.max_iter)
                rows.append(r)
                if "error" in r:
                    print(f"{data:12} {name:7} {C:6g}  refused: {r['error']}")
                else:
                    print(f"{data:12} {name:7} {C:6g} {r['passes']:7d} {str(r['max_iter_stop']):>8} "
                          f"{r['rel_gap']:9.2e} {r['seconds']:9.2f}  {'yes' if r['converged'] else 'NO'}")
                sys.stdout.flush()
    done = [r for r in rows if "error" not in r]
    print(f"{sum(r['converged'] for r in done)} of {len(done)} default fits converged "
          f"(relative gap <= 1 %, no max_iter stop)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
