"""The conformance matrix as a table: every structure x loss x search x solver, each cell trained to
its problem's optimum (T), trained with a heuristic search and an honest objective (A), refused
before any work (R) or failed (F). The cells and their references are tests/conformance_matrix.py's.

    python benchmarks/conformance.py                  # every cell (about 15 minutes on 2 cores)
    python benchmarks/conformance.py --structures chain multiclass --failures
"""
import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import conformance_matrix as matrix  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--structures", nargs="+", choices=matrix.STRUCTURES, default=list(matrix.STRUCTURES))
    ap.add_argument("--failures", action="store_true", help="print each failed cell's reason as it runs")
    args = ap.parse_args()
    cells = [c for c in matrix.cells() if c[0] in args.structures]
    t = time.perf_counter()

    def log(r):
        if args.failures and r["status"] == "FAIL":
            print("FAIL", r["cell"], r["why"], flush=True)
    results = matrix.run_matrix(cells, log)
    print(matrix.table(results))
    counts = Counter(r["status"] for r in results)
    print(f"\n{len(results)} cells: {counts['trained']} trained to the optimum, {counts['approximate']} with a "
          f"heuristic search (objective honest), {counts['refused']} refused before any work, {counts['FAIL']} "
          f"failed ({time.perf_counter() - t:.0f} s)")
    worst = sorted((r for r in results if r["status"] == "approximate" and r.get("rel") is not None),
                   key=lambda r: -r["rel"])[:5]
    for r in worst:
        print(f"  heuristic search furthest from the optimum: {r['cell']}: {100 * r['rel']:.2f} % above")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
