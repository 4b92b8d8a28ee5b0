"""Speed-up of one cutting-plane oracle pass (loss-augmented Viterbi on every word of OCR folds 1-9,
16 fixed chunks) with 2 threads vs 1: `python benchmarks/oracle_speedup.py`."""
from pathlib import Path
import time, numpy as np
from joblib import Parallel, delayed
from ssvmlinear import load_svmlight_file
from ssvmlinear.validation import check_csr
from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.chain import ChainStructure
from ssvmlinear._kernels.cuttingplane import OneSlackOracle
X, y, lengths = load_svmlight_file(Path(__file__).resolve().parent.parent / "data" / "ocr_letters_train.svm.gz", n_features=128)
classes, yi = np.unique(y, return_inverse=True)
st = ChainStructure(CSRDataset(check_csr(X), -1.0), yi, lengths, 26)
w = np.random.default_rng(0).standard_normal(st.n_weights) * 0.1
n = st.n_examples
bounds = np.linspace(0, n, 17).astype(int)
def one_pass(jobs):
    orc = OneSlackOracle(st, np.full(n, 0.1), False, 10, False, bounds)
    run = lambda k: orc.pass_chunk(w, k, True, True)
    t = time.perf_counter()
    if jobs == 1:
        [run(k) for k in range(16)]
    else:
        Parallel(n_jobs=jobs, require="sharedmem", batch_size=1)(delayed(run)(k) for k in range(16))
    return time.perf_counter() - t
for jobs in (1, 2, 1, 2):
    one_pass(jobs)
t1 = np.median([one_pass(1) for _ in range(7)]); t2 = np.median([one_pass(2) for _ in range(7)])
print(f"oracle pass over {n} words (47,535 letters): n_jobs=1 {t1*1000:.1f} ms, n_jobs=2 {t2*1000:.1f} ms, speed-up {t1/t2:.2f}x")
