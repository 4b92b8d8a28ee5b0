"""Training on a Dask cluster (a LocalCluster of two worker processes): with joblib's dask backend
active, the cutting plane's model equals the single-process one bit for bit, CoCoA+ over SDM and
LSE-SDCD reaches the single-process optimum within the tolerance, prediction and cross-validation
give the same answers."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from joblib import parallel_config

distributed = pytest.importorskip("distributed")

from ssvmlinear import ChainSSVM, MulticlassSSVM, MultiLabelSSVM   # noqa: E402
from ssvmlinear._kernels.dataset import CSRDataset                  # noqa: E402
from ssvmlinear.distributed import active_client                   # noqa: E402
from ssvmlinear.model_selection import cross_val_predict            # noqa: E402
from ssvmlinear.solvers import GDMM, SDCD, CuttingPlane, solve        # noqa: E402

from conftest import random_multiclass                              # noqa: E402
from test_multilabel import random_multilabel                       # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def on_cluster(est, *fit_args, **fit_params):
    with parallel_config(backend="dask"):
        assert active_client() is not None
        return est.fit(*fit_args, **fit_params)


def random_chains(n_seq=40, d=8, K=4, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 7, size=n_seq)
    T = int(lengths.sum())
    X = sp.random(T, d, density=0.5, format="csr", random_state=seed)
    W = rng.standard_normal((K, d))
    y = np.argmax(X @ W.T + 0.7 * rng.standard_normal((T, K)), axis=1)
    return X, y, lengths


def test_no_backend_no_client():
    assert active_client() is None


@pytest.mark.parametrize("loss", ["margin", "lse", "slack"])
def test_cutting_plane_chain_equals_single_process(client, loss):
    X, y, lengths = random_chains()
    kw = dict(C=1.0, solver="cutting-plane", loss=loss, tol=0.01, random_state=0)
    local = ChainSSVM(**kw).fit(X, y, lengths)
    dist = on_cluster(ChainSSVM(**kw), X, y, lengths)
    np.testing.assert_array_equal(dist.coef_, local.coef_)
    assert dist.n_iter_ == local.n_iter_ and dist.objective_ == local.objective_


def test_cutting_plane_multilabel_equals_single_process(client):
    X, Y = random_multilabel(n=60, d=6, K=5, seed=2)
    kw = dict(C=1.0, solver="cutting-plane", tol=0.01)
    local = MultiLabelSSVM(**kw).fit(X, Y)
    dist = on_cluster(MultiLabelSSVM(**kw), X, Y)
    np.testing.assert_array_equal(dist.coef_, local.coef_)
    assert dist.dual_objective_ == local.dual_objective_


def reference(est_cls, fit_args, **kw):
    """The single-process optimum, to a relative gap far below the default 1 %."""
    solver = kw.get("solver", "sdm")
    name = solver if isinstance(solver, str) else solver.name
    kw = dict(kw, tol=1e-3 if name == "sdm" else 1e-7, max_iter=20000)
    return est_cls(**kw).fit(*fit_args)


@pytest.mark.parametrize("case", ["multiclass-sdm", "chain-sdm", "multiclass-sdcd", "chain-sdcd"])
def test_cocoa_reaches_the_single_process_optimum(client, case):
    name, solver = case.split("-")
    loss = "margin" if solver == "sdm" else "lse"
    kw = dict(C=1.0, solver=solver, loss=loss)
    if name == "multiclass":
        est_cls, fit_args = MulticlassSSVM, random_multiclass(n=120, d=8, K=4, density=0.6, seed=3)
    elif solver == "sdm":
        est_cls, fit_args = ChainSSVM, random_chains(seed=4)
    else:
        # LSE on chains: exact_violators, so that both runs solve OP3 (not each its own restriction
        # to the labels it met); a small problem, as OP3 takes SDCD hundreds of passes
        est_cls, fit_args = ChainSSVM, random_chains(n_seq=15, K=3, seed=4)
        kw.update(C=0.1, solver=SDCD(exact_violators=True))
    ref = reference(est_cls, fit_args, **kw)
    assert ref.gap_ <= 1e-3 * ref.objective_
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no ConvergenceWarning: the rule and the gap are met
        # (CoCoA+'s local steps are 1/sigma' = 1/2 of the sequential ones: more passes)
        dist = on_cluster(est_cls(max_iter=10000, **kw), *fit_args)
    # CoCoA+'s own certificate, and the optimum it certifies against an independent run
    assert dist.converged_ and dist.gap_ <= 0.01 * dist.objective_
    assert dist.dual_objective_ <= ref.objective_ + 1e-9 * abs(ref.objective_)
    assert ref.objective_ - 1e-6 * ref.objective_ <= dist.objective_ <= ref.objective_ * 1.01
    assert len(dist.objective_curve_) == len(dist.dual_curve_) >= 2      # one entry per round
    # the primal is measured when the rule fires (NaN in the other rounds), last at the model
    assert dist.objective_curve_[-1] == pytest.approx(dist.objective_, rel=1e-12)
    assert np.all(np.isfinite(dist.dual_curve_))


def test_cocoa_deals_the_examples_to_the_shards_at_random(client, monkeypatch):
    """Each shard holds examples drawn at random (random_state), not a run of consecutive ones:
    every example once, with its own C_i, and the draw repeats with the seed."""
    from ssvmlinear.solvers import cocoa
    seen = []
    original = cocoa.ClusterShards.__init__

    def spy(self, client, make, args_list, workers=None):
        seen.append([(a[1], a[2]) for a in args_list])
        original(self, client, make, args_list, workers)
    monkeypatch.setattr(cocoa.ClusterShards, "__init__", spy)
    X, y = random_multiclass(n=60, d=5, K=3, density=0.8, seed=7)
    weights = np.arange(1, 61, dtype=float)
    for seed in (0, 0, 1):
        on_cluster(MulticlassSSVM(C=1.0, max_iter=3, random_state=seed, fit_intercept=False), X, y,
                   sample_weight=weights)
    shards = [[(np.asarray(st.X.sqnorms), Cs) for st, Cs in draw] for draw in seen]
    norms = np.asarray(CSRDataset(X.tocsr(), -1.0).sqnorms)
    for draw in shards:
        assert len(draw) == 2
        # C_i = sample weight: it names each example; its row travels with it
        Cs = np.concatenate([c for _, c in draw])
        np.testing.assert_array_equal(np.sort(Cs), weights)
        order = np.rint(Cs).astype(int) - 1
        np.testing.assert_allclose(np.concatenate([n for n, _ in draw]), norms[order])
        assert not np.array_equal(order, np.arange(60))
    np.testing.assert_array_equal(shards[0][0][1], shards[1][0][1])
    assert not np.array_equal(shards[0][0][1], shards[2][0][1])


@pytest.mark.parametrize("fmo_subsets", [1, 2])
def test_cocoa_over_gdmm_reaches_the_single_process_optimum(client, fmo_subsets):
    X, y, lengths = random_chains(n_seq=50, K=5, seed=21)
    ref = reference(ChainSSVM, (X, y, lengths), C=1.0)
    kw = dict(C=1.0, solver=GDMM(fmo_subsets=fmo_subsets), max_iter=20000)
    local = ChainSSVM(**kw).fit(X, y, lengths)
    dist = on_cluster(ChainSSVM(**kw), X, y, lengths)
    assert dist.converged_
    for est in (local, dist):
        assert ref.objective_ * (1 - 1e-6) <= est.objective_ <= ref.objective_ * 1.01
    # GDMM's dual (at the consistent point nearest its factor duals, summed over the shards) is a
    # bound at every round
    assert dist.dual_objective_ <= ref.objective_ * (1 + 1e-9)
    assert np.all(dist.dual_curve_ <= ref.objective_ * (1 + 1e-9))
    # 1-strong convexity: 1/2 |w - w*|^2 <= P(w) - P* <= P(w) - D_ref
    bound = np.sqrt(2 * (dist.objective_ - ref.dual_objective_)) + np.sqrt(2 * ref.gap_)
    assert np.linalg.norm(dist._weight_vector() - ref._weight_vector()) <= bound


@pytest.mark.parametrize("edges", ["chow-liu", "full"])
def test_cocoa_over_gdmm_on_pairwise_multilabel_reaches_the_single_process_optimum(client, edges):
    X, Y = random_multilabel(n=80, d=6, K=4, seed=23)
    ref = reference(MultiLabelSSVM, (X, Y), C=1.0, edges=edges)
    kw = dict(C=1.0, solver="gdmm", edges=edges, max_iter=20000)
    dist = on_cluster(MultiLabelSSVM(**kw), X, Y)
    assert dist.converged_
    assert ref.objective_ * (1 - 1e-6) <= dist.objective_ <= ref.objective_ * 1.01
    assert dist.dual_objective_ <= ref.objective_ * (1 + 1e-9)
    assert np.all(dist.dual_curve_ <= ref.objective_ * (1 + 1e-9))
    bound = np.sqrt(2 * (dist.objective_ - ref.dual_objective_)) + np.sqrt(2 * ref.gap_)
    assert np.linalg.norm(dist._weight_vector() - ref._weight_vector()) <= bound


def test_pairwise_gdmm_set_weights_writes_the_tables():
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear._kernels.gdmm import FactorGDMM
    from ssvmlinear._kernels.pairwise_multilabel import PairwiseMultiLabelStructure
    X, Y = random_multilabel(n=30, d=5, K=4, seed=24)
    edges = np.array([[0, 1], [1, 2], [1, 3]])
    st = PairwiseMultiLabelStructure(CSRDataset(X, -1.0), sp.csr_matrix(Y).astype(np.int32), edges, False)
    g = FactorGDMM(st.factor_graph(), np.ones(30), seed=0)
    g.run_pass()
    w = np.random.default_rng(1).standard_normal(st.n_weights)
    g.set_weights(w)
    np.testing.assert_allclose(g.coef, w, rtol=0, atol=1e-12)
    before = g.dual() + 0.5 * w @ w                 # the linear term: unchanged by set_weights
    g.set_weights(w)
    assert g.dual() + 0.5 * w @ w == pytest.approx(before)


def test_gdmm_set_weights_rebuilds_the_transition_multimaps():
    from ssvmlinear._kernels.chain import ChainStructure
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear._kernels.gdmm import FactorGDMM
    X, y, lengths = random_chains(n_seq=10, K=6, seed=22)
    st = ChainStructure(CSRDataset(X, -1.0), y.astype(np.int32), lengths, 6, False, False)
    g = FactorGDMM(st.factor_graph(), np.ones(10), fmo_subsets=3, sublinear=True, seed=0, eta=1.0)
    g.run_pass()
    rng = np.random.default_rng(0)
    w = rng.standard_normal(st.n_weights)
    w[st.n_weights - 36:][rng.random(36) < 0.5] = 0.0          # some transitions exactly 0
    g.set_weights(w)
    np.testing.assert_array_equal(g.coef, w)
    assert g.multimap_consistent()
    for i in range(10):
        for t in range(lengths[i] - 1):
            assert g.pair_fmo(i, t, True)[0] == pytest.approx(g.pair_fmo(i, t, False)[0], rel=1e-12, abs=1e-12)


def test_cocoa_at_tight_tolerance_matches_sdm(client):
    X, y = random_multiclass(n=150, d=10, K=5, density=0.6, seed=7)
    ref = reference(MulticlassSSVM, (X, y), C=1.0)
    dist = on_cluster(MulticlassSSVM(C=1.0, tol=1e-3, max_iter=20000), X, y)
    assert dist.converged_ and dist.gap_ <= 2e-3 * dist.objective_
    assert abs(dist.objective_ - ref.objective_) <= 2e-3 * ref.objective_
    # |w - w*|^2 <= 2 (P(w) - P*) (strong convexity): the weights agree, not only the objective
    # and P - P* <= gap for both, so |w - w_ref| <= sqrt(2 gap) + sqrt(2 gap_ref)
    assert np.sqrt(np.sum((dist.coef_ - ref.coef_) ** 2)) <= np.sqrt(2 * dist.gap_) + np.sqrt(2 * ref.gap_)


def test_prediction_on_cluster_equals_local(client):
    X, y, lengths = random_chains(seed=5)
    est = ChainSSVM(C=1.0).fit(X, y, lengths)
    local = est.predict(X, lengths)
    with parallel_config(backend="dask"):
        np.testing.assert_array_equal(est.predict(X, lengths), local)
    X, Y = random_multilabel(n=50, d=6, K=4, seed=6)
    est = MultiLabelSSVM(C=1.0).fit(X, Y)
    local = est.predict(X)
    with parallel_config(backend="dask"):
        dist = est.predict(X)
    assert (abs(dist - local)).nnz == 0 if sp.issparse(local) else np.array_equal(dist, local)


def test_cross_validation_on_cluster_equals_local(client):
    X, y = random_multiclass(n=90, d=6, K=3, seed=8)
    est = MulticlassSSVM(C=1.0, solver="cutting-plane", tol=0.01)
    local = cross_val_predict(est, X, y, n_folds=3)
    with parallel_config(backend="dask"), distributed.get_task_stream(client) as tasks:
        dist = cross_val_predict(est, X, y, n_folds=3)
    np.testing.assert_array_equal(dist, local)
    assert len(tasks.data) >= 3        # the folds ran on the workers


def test_cli_scheduler_trains_the_single_process_model(client, tmp_path):
    from ssvmlinear import dump_svmlight_file
    from ssvmlinear.cli import train_main
    X, y = random_multiclass(n=80, d=6, K=3, seed=9)
    data = tmp_path / "train.svm"
    dump_svmlight_file(X, y, data)
    args = ["-s", "2", "-e", "0.01", "-q", str(data)]
    assert train_main(args + [str(tmp_path / "local.model")]) == 0
    with distributed.get_task_stream(client) as tasks:
        assert train_main(["--scheduler", client.scheduler.address] + args + [str(tmp_path / "dist.model")]) == 0
    assert (tmp_path / "dist.model").read_bytes() == (tmp_path / "local.model").read_bytes()
    assert len(tasks.data) >= 2          # the shards' actors ran on the workers


# ---------------------------------------------------------------- data parsed on the workers

def test_shard_starts_cover_every_line_and_never_split_a_sequence():
    from ssvmlinear.io import _shard_start
    rng = np.random.default_rng(0)
    for trial in range(30):
        lengths = rng.integers(1, 6, size=rng.integers(1, 30))
        lines = [f"{rng.integers(1, 4)} qid:{q + 1} 1:{rng.random():.3f}" for q, L in enumerate(lengths)
                 for _ in range(L)]
        buf = ("\n".join(lines) + ("\n" if trial % 2 else "")).encode()
        starts_of_lines = np.concatenate([[0], np.flatnonzero(np.frombuffer(buf, np.uint8) == 10) + 1])
        seq_starts = set(np.cumsum(np.concatenate([[0], lengths]))[:-1].tolist())
        for n_shards in (1, 2, 3, 7, 50):
            cuts = [_shard_start(buf, k, n_shards, True) for k in range(n_shards + 1)]
            assert cuts[0] == 0 and cuts[-1] == len(buf) and cuts == sorted(cuts)
            for c in cuts[1:-1]:
                if c < len(buf):
                    line = int(np.searchsorted(starts_of_lines, c))
                    assert starts_of_lines[line] == c and line in seq_starts


def test_load_svmlight_shards_trains_where_the_data_lives(client, tmp_path):
    from ssvmlinear import dump_svmlight_file, load_svmlight_file
    from ssvmlinear.distributed import load_svmlight_shards
    X, y = random_multiclass(n=300, d=12, K=4, density=0.4, seed=11)
    path = tmp_path / "train.svm"
    dump_svmlight_file(X, y, path)
    X, y = load_svmlight_file(path)
    for n_shards in (2, 3):
        data = load_svmlight_shards(client, path, n_shards)
        assert data.n_samples == X.shape[0] and data.n_features == X.shape[1]
        np.testing.assert_array_equal(data.labels(), y)        # every line once, in file order
    ref = reference(MulticlassSSVM, (X, y), C=1.0)
    for solver, tol in (("sdm", None), ("cutting-plane", 0.001)):
        est = MulticlassSSVM(C=1.0, solver=solver, tol=tol, max_iter=10000).fit(data)
        assert ref.objective_ * (1 - 1e-6) <= est.objective_ <= ref.objective_ * 1.01
        assert est.dual_objective_ <= ref.objective_ * (1 + 1e-9)
        np.testing.assert_array_equal(est.predict(data), est.predict(X))


@pytest.mark.parametrize("kind", ["multiclass", "sequence"])
def test_shards_map_a_binary_cache(client, tmp_path, kind):
    """load_svmlight_shards on a .ssvmdata folder: each worker maps its rows (no parsing); the
    same rows, labels and optimum as the text file."""
    from ssvmlinear import dump_svmlight_file, load_svmlight_file
    from ssvmlinear.datacache import convert_main
    from ssvmlinear.distributed import load_svmlight_shards
    path = tmp_path / "train.svm"
    if kind == "sequence":
        X, y, lengths = random_chains(n_seq=50, seed=21)
        dump_svmlight_file(X, y, path, lengths=lengths)
    else:
        X, y = random_multiclass(n=300, d=12, K=4, density=0.4, seed=21)
        dump_svmlight_file(X, y, path)
    assert convert_main(["-q", str(path), str(tmp_path / "train.ssvmdata")]) == 0
    whole = load_svmlight_file(path)
    data = load_svmlight_shards(client, tmp_path / "train.ssvmdata", 3, kind=kind)
    assert data.n_samples == whole[0].shape[0]
    np.testing.assert_array_equal(data.labels(), whole[1])
    est_cls = ChainSSVM if kind == "sequence" else MulticlassSSVM
    ref = reference(est_cls, whole, C=1.0)
    est = est_cls(C=1.0, max_iter=10000).fit(data)
    assert ref.objective_ * (1 - 1e-6) <= est.objective_ <= ref.objective_ * 1.01
    np.testing.assert_array_equal(est.predict(data), est.predict(*((whole[0], whole[2]) if kind == "sequence"
                                                                  else (whole[0],))))
    if kind == "multiclass":
        with pytest.raises(ValueError, match="not sequences"):
            load_svmlight_shards(client, tmp_path / "train.ssvmdata", 2, kind="sequence")


def test_load_svmlight_shards_errors_name_the_file_and_line(client, tmp_path):
    from ssvmlinear.distributed import load_svmlight_shards
    lines = [f"{k % 3} 1:{k}.5 4:1" for k in range(60)]
    lines[47] = "2 1:0.5 x:1"
    path = tmp_path / "bad.svm"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=f"{path}:48:"):
        load_svmlight_shards(client, path, 2)
    import gzip
    gz = tmp_path / "train.svm.gz"
    gz.write_bytes(gzip.compress(b"1 1:1\n"))
    with pytest.raises(ValueError, match="compressed"):
        load_svmlight_shards(client, gz, 2)


@pytest.mark.parametrize("kind", ["multiclass", "sequence", "multilabel"])
def test_block_parse_equals_the_whole_file_parse(monkeypatch, tmp_path, kind):
    import ssvmlinear.io as dist
    from ssvmlinear import dump_svmlight_file, load_svmlight_file
    monkeypatch.setattr(dist, "PARSE_BLOCK", 97)          # many blocks of a few lines
    rng = np.random.default_rng(12)
    X = sp.random(80, 30, density=0.2, format="csr", random_state=12)
    path = tmp_path / f"{kind}.svm"
    if kind == "multilabel":
        dump_svmlight_file(X, sp.random(80, 5, density=0.3, format="csr", random_state=1, data_rvs=np.ones), path)
    else:
        lengths = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3])      # 80 tokens
        dump_svmlight_file(X, rng.integers(0, 4, size=80), path, lengths=lengths if kind == "sequence" else None)
    whole = load_svmlight_file(path, zero_based=False, kind=kind)
    buf = path.read_bytes()
    for lo, hi in ((0, len(buf)), (dist._shard_start(buf, 1, 3, kind == "sequence"), len(buf))):
        part = dist._parse_range(buf, lo, hi, kind, False, str(path))
        first = whole[0].shape[0] - part[0].shape[0]
        assert abs(part[0] - whole[0][first:, :part[0].shape[1]]).nnz == 0
        if kind == "multilabel":
            assert abs(part[1] - whole[1][first:, :part[1].shape[1]]).nnz == 0
        else:
            np.testing.assert_array_equal(part[1], whole[1][first:])
        if kind == "sequence":
            assert part[2].sum() == part[0].shape[0] and np.all(part[2] >= 1)
            np.testing.assert_array_equal(part[2], whole[2][len(whole[2]) - len(part[2]):])
    lines = buf.decode().split("\n")
    lines[63] = lines[63] + " oops"
    bad = tmp_path / "bad.svm"
    bad.write_text("\n".join(lines))
    with pytest.raises(ValueError, match=f"{bad}:64:"):
        dist._parse_range(bad.read_bytes(), 0, len(bad.read_bytes()), kind, False, str(bad))


def test_chains_train_on_shards_loaded_on_the_workers(client, tmp_path):
    from ssvmlinear import dump_svmlight_file, load_svmlight_file
    from ssvmlinear.distributed import load_svmlight_shards
    X, y, lengths = random_chains(n_seq=60, seed=13)
    path = tmp_path / "chains.svm"
    dump_svmlight_file(X, y, path, lengths=lengths)
    X, y, lengths = load_svmlight_file(path)
    data = load_svmlight_shards(client, path, 3, kind="sequence")
    np.testing.assert_array_equal(data.labels(), y)
    ref = reference(ChainSSVM, (X, y, lengths), C=1.0)
    for solver, tol in (("sdm", None), ("cutting-plane", 0.001), ("gdmm", None)):
        est = ChainSSVM(C=1.0, solver=solver, tol=tol, max_iter=10000).fit(data)
        assert ref.objective_ * (1 - 1e-6) <= est.objective_ <= ref.objective_ * 1.01
        assert est.dual_objective_ <= ref.objective_ * (1 + 1e-9)
        np.testing.assert_array_equal(est.predict(data), est.predict(X, lengths))
    with pytest.raises(ValueError, match="sequence"):
        MulticlassSSVM().fit(data)
    with pytest.raises(ValueError, match="does not run on sharded"):
        ChainSSVM(solver="pegasos").fit(data)
    # multi-label files are read on the workers too (every row once, in order)
    X, Y = random_multilabel(n=70, d=6, K=4, seed=14)
    path = tmp_path / "ml.svm"
    dump_svmlight_file(X, Y, path)
    data = load_svmlight_shards(client, path, 3, kind="multilabel")
    Yw = load_svmlight_file(path, zero_based=False, kind="multilabel")[1]
    got = data.labels()
    assert got.shape[0] == 70 and abs(got[:, :Yw.shape[1]] - Yw).nnz == 0
    np.testing.assert_array_equal(data.class_counts[:Yw.shape[1]], np.asarray(Yw.sum(axis=0)).ravel())


@pytest.mark.parametrize("edges", [None, "chow-liu"])
def test_multilabel_trains_on_shards_loaded_on_the_workers(client, tmp_path, edges):
    from ssvmlinear import dump_svmlight_file, load_svmlight_file
    from ssvmlinear.distributed import load_svmlight_shards
    X, Y = random_multilabel(n=90, d=6, K=4, seed=15)
    path = tmp_path / "ml.svm"
    dump_svmlight_file(X, Y, path)
    X, Yfile = load_svmlight_file(path, zero_based=False, kind="multilabel")
    values = np.unique(Yfile.indices)           # the label values that occur, as ssvm-train trains
    data = load_svmlight_shards(client, path, 3, kind="multilabel")
    ref = reference(MultiLabelSSVM, (X, Yfile[:, values]), C=1.0, edges=edges)
    assert edges is None or ref.edges_.shape[0] > 0
    for solver, tol in (("sdm", None), ("cutting-plane", 0.001)):
        est = MultiLabelSSVM(C=1.0, solver=solver, tol=tol, max_iter=10000, edges=edges).fit(data)
        np.testing.assert_array_equal(est.classes_, values)
        np.testing.assert_array_equal(est.edges_, ref.edges_)   # Chow-Liu from the shards' summed pair counts
        assert ref.objective_ * (1 - 1e-6) <= est.objective_ <= ref.objective_ * 1.01
        assert est.dual_objective_ <= ref.objective_ * (1 + 1e-9)
        assert abs(est.predict(data) - est.predict(X)).nnz == 0
    with pytest.raises(ValueError, match="multilabel"):
        ChainSSVM().fit(data)


def test_cutting_plane_seeded_caches_on_cluster_equal_single_process(client):
    """init_caches split over the shards (their label lengths) gives the single-process model."""
    from ssvmlinear._kernels.chain import ChainStructure
    from ssvmlinear._kernels.dataset import CSRDataset
    X, y, lengths = random_chains(seed=15)
    st = ChainStructure(CSRDataset(X, 1.0), y.astype(np.int32), lengths, 4, False, False)
    Cs = np.ones(len(lengths))
    seed_caches = solve(CuttingPlane(), st, Cs, 0.1, 30).caches
    local = solve(CuttingPlane(init_caches=seed_caches), st, Cs, 0.01, 200)
    with parallel_config(backend="dask"):
        dist = solve(CuttingPlane(init_caches=seed_caches), st, Cs, 0.01, 200)
    np.testing.assert_array_equal(dist.w, local.w)
    assert dist.n_iter == local.n_iter


def test_shard_round_works_in_the_solvers_weights(monkeypatch):
    """DualShard: w arrives in chunks written into the solver's own weights, and a round returns
    them (a worker process holds one vector of the weight dimension), in the client's process a
    copy; the change local_change takes is the same either way and equals the plain solver's."""
    import os
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear._kernels.multiclass import MulticlassStructure
    from ssvmlinear._kernels.sdm import SDMSolver
    from ssvmlinear.solvers import SDM, cocoa as dist
    from ssvmlinear.solvers.sdm import INNER_TOL, MAX_TYPE2_PASSES, ascent_objective, run_type2_passes

    class Local:            # ClusterShards' call on one shard in this process
        def __init__(self, shard):
            self.shard = shard

        def call(self, method, *args):
            return [getattr(self.shard, method)(*args)]

    monkeypatch.setattr(dist, "WEIGHTS_CHUNK", 7)       # several chunks, a partial last one
    X, y = random_multiclass(n=300, d=30, K=4, seed=2)
    st = MulticlassStructure(CSRDataset(X.tocsr(), -1.0), np.asarray(y, dtype=np.int32), 4)
    w0 = np.random.default_rng(0).standard_normal(st.n_weights) * 0.01
    got = {}
    for pid in (os.getpid(), -1):            # -1: as from a client in another process
        shard = dist.DualShard(SDM(), st, np.full(300, 0.5), 3, 2.0)
        dist.send_weights(Local(shard), w0)
        np.testing.assert_array_equal(shard.kernel.coef, w0)
        u = shard.round(0.1, pid)[0]
        assert np.shares_memory(u, shard.kernel.coef) == (pid == -1)
        got[pid] = dist.local_change(u.copy(), w0, 2.0)
    np.testing.assert_array_equal(got[os.getpid()], got[-1])
    ref = SDMSolver(st, np.full(300, 0.5), 3)
    ref.sigma = 2.0
    ref.coef[:] = w0
    before = ascent_objective(ref)
    ref.run_pass(True, INNER_TOL * 0.1)
    run_type2_passes(ref, 0.1, INNER_TOL * 0.1, before, MAX_TYPE2_PASSES)      # (SDM.local_round's type-II passes)
    np.testing.assert_array_equal(got[-1], (ref.coef - w0) / 2.0)
    assert np.abs(got[-1]).max() > 0


def test_cocoa_over_gdmm_on_multiclass_reaches_the_single_process_optimum(client):
    X, y = random_multiclass(n=80, d=6, K=5, density=0.5, seed=4)
    ref = reference(MulticlassSSVM, (X, y), C=1.0)
    dist = on_cluster(MulticlassSSVM(C=1.0, solver="gdmm", max_iter=20000), X, y)
    assert dist.converged_
    assert ref.objective_ * (1 - 1e-6) <= dist.objective_ <= ref.objective_ * 1.01
    assert np.all(dist.dual_curve_ <= ref.objective_ * (1 + 1e-9))


def test_gdmm_on_one_factor_per_example_is_refused_before_the_cluster(client):
    """GDMM's one-factor form (a hierarchy) has no CoCoA+ hooks: one ValueError in the caller, no actor."""
    from ssvmlinear import HierarchicalSSVM
    from test_hierarchy import synthetic
    h, X, y = synthetic(seed=0, n=60, d=5)
    with parallel_config(backend="dask"):
        with pytest.raises(ValueError, match="GDMM runs on a cluster for chains"):
            HierarchicalSSVM(h, solver="gdmm").fit(X, y)


def test_hierarchies_on_sharded_data_say_so(client, tmp_path):
    """A model without a sharded problem refuses ShardedData in one line, before any work."""
    from ssvmlinear import HierarchicalSSVM, dump_svmlight_file
    from ssvmlinear.distributed import load_svmlight_shards
    X, y = random_multiclass(n=40, d=5, K=2, density=0.5, seed=3)
    path = tmp_path / "train.svm"
    dump_svmlight_file(X, y, path)
    data = load_svmlight_shards(client, path, 2)
    est = HierarchicalSSVM(hierarchy=(np.array([2, 2]), np.array([0, 1])))
    with pytest.raises(ValueError, match="HierarchicalSSVM does not train on sharded data"):
        est.fit(data, None)
