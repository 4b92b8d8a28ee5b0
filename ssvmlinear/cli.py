"""ssvm-train / ssvm-predict: LIBLINEAR-style command lines."""
import contextlib
import sys
import warnings

import numpy as np
import scipy.sparse as sp

from .registry import SOLVERS, SOLVER_TYPES, STRUCTURES, structure_of, structure_for_file_kind
from .datacache import load_data
from .io import load_crfsuite_file, is_crfsuite_file, read_instance_weights
from .token_features import TokenFeatures
from .model_io import save_model, load_model, format_label
from .params import Param
from .utils import UsageError, match_columns, write_atomic, run_command

SOLVER_LINES = "\n".join(f"\t {number} -- {text}" for number, _, text in
                         sorted(line for s in SOLVERS.values() for line in s.cli))
STRUCTURE_LINES = "\n".join(f"\t{s.name}" + (f": {s.usage}" if s.usage else "") for s in STRUCTURES.values())


def _types_taking(flag, solver_name=None):
    """The -s numbers an option applies to (of one solver, given its name): -l to those whose loss
    it chooses, -S to those whose solver searches for the loss -l chooses, the others to those whose
    solver takes them."""
    def takes(solver, loss):
        if flag == "l":
            return loss is None
        return flag in SOLVERS[solver].cli_options and (flag != "S" or loss is None)
    numbers = [str(n) for n, (solver, loss) in sorted(SOLVER_TYPES.items())
               if takes(solver, loss) and solver_name in (None, solver)]
    return numbers if solver_name is not None else ", ".join(numbers)


# ssvm-train's own options; the models' (-c, -e, -m, -n, -r, -E, -H, -M) and the solvers' (-b, -P,
# -S, -F) come from their parameter descriptions, and the usage text below is generated from all.
COMMAND_OPTIONS = (
    Param("type", "int", 0, "", flag="s", metavar="type", cli="solver and surrogate (default 0)"),
    Param("structure", "str", "auto", "", flag="t", metavar="structure",
          cli="auto, crfsuite or one of the structures below (default auto: a file in CRFsuite's format is a "
              "chain over its attribute names (as -t crfsuite), a file with qid: is a chain, one with label lists "
              "l1,l2 is multilabel, otherwise multiclass; -t multiclass reads a qid file as independent examples; "
              "-t multilabel reads a file whose lines all hold one label as multi-label)"),
    Param("loss", "str", "margin", "", flag="l", metavar="loss",
          cli="surrogate for -s 4, -s 2 and -s 5 (default margin): margin, slack, beta:B, generalized:A,B, "
              "probloss, probloss-convex, logloss, microf1 (multilabel; chains whose tag O is outside the "
              "entities) (see ssvmlinear.surrogates); -s 2 takes those convex in the margin (all but probloss), "
              "-s 5 those linear in it (slack, beta:B, generalized:A,B)"),
    Param("bias", "real", -1.0, "", flag="B", metavar="bias",
          cli="if bias > 0, instance x becomes [x; bias] (a regularised bias); if <= 0, no bias term (default -1, "
              "as LIBLINEAR). NOTE: MulticlassSSVM and MultiLabelSSVM default to fit_intercept=True (as "
              "scikit-learn): -B 1 trains their default problem"),
    Param("folds", "int", None, "", low=2, flag="v", metavar="n",
          cli="n-fold cross validation mode (prints the accuracy; writes no model; chains are split by sequence; "
              "multilabel prints the measures ssvm-predict prints)"),
    Param("search_C", "bool", False, "", flag="C",
          cli="find C by cross validation (-v n folds, default 5) along a warm-started path: C from -c (default: "
              "LIBLINEAR's start, 1 / (examples x max |x_i|^2) rounded down to a power of 2) doubling up to 1024, "
              "each fold starting from its solution at the previous C, stopping early after 3 values of C without "
              "a better accuracy (multilabel: example-based); prints each C's accuracy and the best C; writes no "
              "model (-s {warm}: the solvers that warm-start)"),
    Param("class_weight", "real", 1.0, "", low=0, flag="w", metavar="weight",
          cli="weights adjust the parameter C of class i (multiclass; hierarchy: its leaf i), e.g. -w2 5 -w7 0.5; "
              "the other classes weigh 1; chains: a mistake on a token whose true tag is i costs weight in the "
              "Hamming loss (-s 0, 2, 4 and 5 with margin rescaling)"),
    Param("instance_weights", "str", None, "", flag="W", metavar="file",
          cli="one weight per example, a number a line: C_i = C * weight_i (chains: equal within a sequence)"),
    Param("scheduler", "str", None, "", flag="-scheduler", metavar="address",
          cli="train on a Dask cluster (needs the package distributed): the examples' shards on its workers; "
              "-s 2, 3 give the single-process model, -s 0, 1, 6 run CoCoA+, -v runs the folds there (see the user "
              "guide, \"Parallelism and the cluster\")"),
    Param("quiet", "bool", False, "", flag="q", cli="quiet mode (no progress or summary; warnings are still printed)"),
)
# a description's kind -> how its flag's value is read (None: a switch; other kinds: the text)
KIND_CONVERTERS = {"int": int, "real": float, "seed": int, "bool": None}
# the order of the options in the usage text
USAGE_ORDER = ("s", "t", "E", "H", "M", "l", "S", "b", "P", "F", "c", "e", "B", "m", "v", "C", "w", "W", "n", "r",
               "-scheduler", "q")


def _train_options():
    """{flag: [(description, the -s numbers it applies to, or None for every -s)]}: the command's
    options, the common parameters', the structures' and the solvers' (a solver flag may have one
    description per solver)."""
    from .models.base import COMMON_PARAMS
    out = {}
    for p in COMMAND_OPTIONS + tuple(p for p in COMMON_PARAMS if p.flag):
        out.setdefault(p.flag, []).append((p, None))
    for spec in STRUCTURES.values():
        for flag, name in spec.cli_options.items():
            if flag not in out:
                out[flag] = [(next(p for p in spec.model_class().params if p.name == name), None)]
    for spec in SOLVERS.values():
        cls = spec.solver_class()
        for flag, name in spec.cli_options.items():
            out.setdefault(flag, []).append((cls.param(name), _types_taking(flag, spec.name)))
    return out


def _wrap(text, first):
    import textwrap
    return "\n".join(textwrap.wrap(text, width=96, initial_indent=first, subsequent_indent="\t",
                                   break_on_hyphens=False, break_long_words=False))


def train_usage():
    """ssvm-train's usage text, from the descriptions of its options."""
    options = _train_options()
    lines = ["Usage: ssvm-train [options] training_set_file [model_file]", "options:"]
    for flag in USAGE_ORDER + tuple(f for f in options if f not in USAGE_ORDER):
        described = options[flag]
        p = described[0][0]
        head = f"-{flag}{'i' if flag == 'w' else ''}" + (f" {p.metavar}" if p.metavar else "") + " : "
        if described[0][1] is None:
            text = p.cli.replace("{warm}", ", ".join(_warm_types()))
        else:                      # a solver flag: each solver's description, by its -s numbers
            parts = {}
            for q, types in described:
                key = q.cli + (f": {', '.join(q.options)}" if q.kind == "options" else "")
                parts.setdefault(key, []).extend(types)
            text = "; ".join(f"-s {', '.join(sorted(set(t), key=int))}: {k}" for k, t in parts.items())
        lines.append(_wrap(text, head))
        if flag == "s":
            lines.append(SOLVER_LINES)
        elif flag == "t":
            lines += [STRUCTURE_LINES, "\tcrfsuite: CRFsuite's data format, one token a line: the label, then "
                      "tab-separated\n\tattributes name or name:value; a blank line ends a sequence (the model keeps "
                      "the names)"]
        elif flag == "e":
            rules = {}
            for number, (solver, _) in sorted(SOLVER_TYPES.items()):
                cls = SOLVERS[solver].solver_class()
                rules.setdefault(f"{cls.cli_rule} (default {cls.default_tol:g})", []).append(str(number))
            lines += [_wrap(rule, f"\t-s {', '.join(numbers)}: ") for rule, numbers in rules.items()]
            lines.append("\twithout -e, -s 0-3, 5 and 6 also require a relative duality gap (primal - dual) / "
                         "primal <= 1%")
    lines += ["-h, --help : print this text; --version : print the version",
              "Feature indices are 1-based; gzip/bz2 files are read transparently; a .ssvmdata folder written by",
              "ssvm-convert is read by memory map (no parsing).", ""]
    return "\n".join(lines)


def __getattr__(name):
    """TRAIN_USAGE: the generated text (built when asked for: it imports every solver)."""
    if name == "TRAIN_USAGE":
        return train_usage()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _warm_types():
    return [str(n) for n, (s, _) in sorted(SOLVER_TYPES.items()) if SOLVERS[s].solver_class().warm_starts]


PREDICT_OPTIONS = (
    Param("jobs", "int", 1, "", flag="n", metavar="jobs", cli="threads for decoding (default 1)"),
    Param("quiet", "bool", False, "", flag="q", cli="quiet mode (no outputs)"),
)

PREDICT_USAGE = "\n".join(
    ["Usage: ssvm-predict [options] test_file model_file output_file", "options:"]
    + [_wrap(p.cli, f"-{p.flag}" + (f" {p.metavar}" if p.metavar else "") + " : ") for p in PREDICT_OPTIONS]) + """
-h, --help : print this text; --version : print the version
Writes one predicted label per line (per token for a chain model, a blank line after each
sequence for a CRFsuite file; for a multilabel model the label set, comma-separated as in the
input, an empty line for the empty set) to output_file and
prints the accuracy (chain models: token accuracy and sequence accuracy, and with entity tags such
as B-PER, I-PER, O the entities' precision, recall and F1 by conlleval's rules, overall and per
type; a model trained on a CRFsuite file reads test files in that format; multilabel models: subset
accuracy, Hamming loss, micro- and macro-F1, and Acc = mean over examples of |y & y'| / |y | y'|;
single-label hierarchy models also the tree-induced error: the mean number of nodes in which the
predicted and the true leaf's ancestor sets differ, the path length between them on a tree).
"""


def _say(*args):
    """print() whose stdout may be a closed pipe (`ssvm-train ... | head -1`): the rest of the
    output is dropped, the work goes on."""
    try:
        print(*args, flush=True)
    except BrokenPipeError:
        import os
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())   # so that the flush at exit does not fail either


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as LIBLINEAR prints them: one line, no Python source."""
    try:
        sys.stderr.write(f"WARNING: {message}\n")
    except (BrokenPipeError, ValueError):
        pass


def check_output_path(path):
    """Fail before the work, naming the user's path, when the output file cannot be written there."""
    import os
    if os.path.isdir(path):
        raise OSError(f"{path}: is a directory, not a file name")
    directory = os.path.dirname(os.path.abspath(path))
    probe = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.probe")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        os.unlink(probe)
    except OSError as e:
        raise OSError(f"{path}: cannot write there ({e.strerror})") from None


def training_summary(est):
    """The line ssvm-train prints after a fit: only what the solver has."""
    parts = [f"passes {est.n_iter_}"]
    for name, value, fmt in (("primal", est.objective_, ".10g"), ("dual", est.dual_objective_, ".10g"),
                             ("gap", est.gap_, ".3g")):
        if value is not None and np.isfinite(value):
            parts.append(f"{name} {value:{fmt}}")
    if est.working_set_size_:
        parts.append(f"working set {est.working_set_size_}")
    return "  ".join(parts)


def _parse_options(argv, spec, labelled=(), accepts=None):
    """LIBLINEAR-style '-x value' options followed by positional arguments; a flag of `labelled`
    followed by a label ('-w2 0.5': class 2's weight) collects {label text: value} under its flag.
    accepts: {flag: what it takes, in words} for the error on a value that does not convert."""
    opts, i = {}, 0
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        flag = argv[i][1:]
        prefix = next((p for p in labelled if flag.startswith(p) and len(flag) > len(p)), None)
        if prefix is not None and flag not in spec:
            if i + 1 >= len(argv):
                raise UsageError(f"option -{flag} needs a value")
            try:
                value = float(argv[i + 1])
            except ValueError:
                value = float("nan")
            if not (np.isfinite(value) and value >= 0):
                raise UsageError(f"-{flag} must be a finite number >= 0, got {argv[i + 1]}")
            opts.setdefault(prefix, {})[flag[len(prefix):]] = value
            i += 2
            continue
        if flag not in spec:
            raise UsageError(f"unknown option: -{flag}")
        conv = spec[flag]
        if conv is None:
            opts[flag] = True
            i += 1
            continue
        if i + 1 >= len(argv):
            raise UsageError(f"option -{flag} needs a value")
        try:
            opts[flag] = conv(argv[i + 1])
        except ValueError:
            if accepts and flag in accepts:
                raise UsageError(f"-{flag} must be {accepts[flag]}, got {argv[i + 1]}") from None
            raise UsageError(f"bad value for -{flag}: {argv[i + 1]!r}") from None
        i += 2
    return opts, argv[i:]


def train_main(argv=None):
    """ssvm-train; returns the exit status (0, 1 on an error, 130 when interrupted)."""
    return run_command("ssvm-train", _train, argv, train_usage)


def _train(argv):
    options = _train_options()
    spec = {flag: KIND_CONVERTERS.get(described[0][0].kind, str) for flag, described in options.items() if flag != "w"}
    accepts = {flag: d[0][0].cli_accepts() for flag, d in options.items() if d[0][0].kind in KIND_CONVERTERS}
    opts, rest = _parse_options(argv, spec, labelled=("w",), accepts=accepts)
    if len(rest) not in (1, 2):
        raise UsageError("expected training_set_file [model_file]")
    train_file = rest[0]
    model_file = rest[1] if len(rest) == 2 else _default_model_name(train_file)
    stype = opts.get("s", 0)
    if stype not in SOLVER_TYPES:
        raise UsageError(f"unknown solver type -s {stype}")
    solver, loss = SOLVER_TYPES[stype]
    # a solver's flag applies to the -s numbers whose solver has it (-S: those taking -l's surrogate)
    for flag in ["l"] + [f for f, described in options.items() if described[0][1] is not None]:
        if flag in opts and str(stype) not in _types_taking(flag).split(", "):
            raise UsageError(f"-{flag} applies to -s {_types_taking(flag)}")
    if loss is None:            # the surrogate is -l's
        from .surrogates import parse_surrogate
        loss = opts.get("l", "margin")
        try:
            parse_surrogate(loss)
        except ValueError as e:
            raise UsageError(f"-l: {e}") from None
    # every value, checked by the description of what it sets (the chosen solver's for its flags)
    solver_class = SOLVERS[solver].solver_class()
    for flag, described in options.items():
        if flag not in opts or flag == "w":
            continue
        param = next((p for p, types in described if types is None or str(stype) in types), described[0][0])
        if param.kind == "options" and opts[flag] not in param.options and not param.also:
            raise UsageError(f"-{flag}: unknown {param.metavar} {opts[flag]!r}; expected one of "
                             + ", ".join(param.options))
        if param.cli_problem(opts[flag]) is not None:
            raise UsageError(param.cli_problem(opts[flag]))
    if opts.get("P", 1) > 1 and opts.get("b", 1) > 1:
        raise UsageError("-b and -P: SDM's threads share either oracle blocks or shards, not both")
    structure = opts.get("t", "auto")
    if structure not in ("auto", "crfsuite") and structure not in STRUCTURES:
        raise UsageError(f"unknown structure -t {structure}; expected auto, crfsuite or one of {', '.join(STRUCTURES)}")
    if "n" in opts and opts["n"] == 0:
        raise UsageError("-n: jobs must be nonzero")
    if "C" in opts and not solver_class.warm_starts:
        raise UsageError(f"-C applies to -s {', '.join(_warm_types())} (the solvers that warm-start along the path "
                         "of C)")
    if "C" in opts and "-scheduler" in opts:
        raise UsageError("-C runs its folds in local threads (-n), not on a cluster: not with --scheduler")
    quiet = opts.get("q", False)
    try:
        if "v" not in opts and "C" not in opts:       # (cross-validation writes no model)
            check_output_path(model_file)
        if structure == "auto" and "H" in opts:
            structure = "hierarchy"
        features = None
        if structure == "crfsuite" or (structure == "auto" and is_crfsuite_file(train_file)):
            X, y, lengths, names = load_crfsuite_file(train_file)      # a chain over attribute names
            features = TokenFeatures()
            features.feature_names = names
            structure = "chain"
        else:
            data = load_data(train_file, zero_based=False,
                             kind="auto" if structure == "auto" else STRUCTURES[structure].file_kind)
            X, y = data[0], data[1]
            lengths = data[2] if len(data) == 3 else None
        label_sets = sp.issparse(y)
        spec = STRUCTURES[structure] if structure != "auto" else structure_for_file_kind(
            "sequence" if lengths is not None else "multilabel" if label_sets else "multiclass")
        for flag in {f for s_ in STRUCTURES.values() for f in s_.cli_options}:
            if flag in opts and flag not in spec.cli_options:
                raise ValueError(f"-{flag} applies to -t " + ", ".join(s.name for s in STRUCTURES.values()
                                                                      if flag in s.cli_options)
                                 + f"; {train_file} is read as {spec.name}")
        structure_params = {param: opts[flag] for flag, param in spec.cli_options.items() if flag in opts}
        values_as_columns = getattr(spec.model_class(), "_label_columns_are_values", False)
        if label_sets and not values_as_columns:
            # column j of the loaded Y is label value j: train over the labels that occur (a label
            # 2000000000 must not ask for two billion columns)
            label_values, cols = np.unique(y.indices, return_inverse=True)
            y = sp.csr_matrix((y.data, cols.astype(np.int32), y.indptr), shape=(y.shape[0], len(label_values)))
            if structure_params.get("edges", "chow-liu") not in ("chow-liu", "full"):   # -E FILE: label value pairs
                from .models.multilabel import read_edges_file
                structure_params["edges"] = read_edges_file(structure_params["edges"], label_values)
        sample_weight = None if "W" not in opts else read_instance_weights(opts["W"], X.shape[0])
        class_weight = None
        if "w" in opts:
            class_weight, sample_weight = _class_weights(opts["w"], spec.name, y, train_file, sample_weight)
        bias = opts.get("B", -1.0)
        common = dict(C=opts.get("c", 1.0), solver=solver, loss=loss, tol=opts.get("e"),
                      max_iter=opts.get("m", 1000), fit_intercept=bias > 0,
                      intercept_scaling=bias if bias > 0 else 1.0, n_jobs=opts.get("n", 1),
                      random_state=opts.get("r", 1), verbose=0 if quiet else 1)
        common["solver"] = SOLVERS[solver].solver_class()(
            **{param: opts[flag] for flag, param in SOLVERS[solver].cli_options.items() if flag in opts})
        if class_weight is not None:
            structure_params["class_weight"] = class_weight
        est = spec.model_class()(**common, **structure_params)
        fit_kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        with warnings.catch_warnings(), cluster_backend(opts.get("-scheduler")):
            warnings.showwarning = _one_line_warning
            if "C" in opts:
                return _search_C(est, X, y, lengths, sample_weight, opts, label_sets)
            if "v" in opts:
                from .model_selection import cross_val_predict
                est.set_params(verbose=0)
                pred, fitted = cross_val_predict(est, X, y, opts["v"], seed=opts.get("r", 1), n_jobs=opts.get("n", 1),
                                                 lengths=lengths, return_estimators=True, sample_weight=sample_weight)
                if label_sets and values_as_columns:     # (y's columns are label values, pred's the model's)
                    y, pred = on_model_columns(y, pred, fitted[0].classes_)
                lines = (multilabel_report(y, pred) if label_sets else
                         [f"Accuracy = {100 * float(np.mean(pred == y)):g}%"] + sequence_report(y == pred, lengths)
                         + entity_report(y, pred, lengths))
                for line in lines + fitted[0]._report_lines(y, pred):
                    _say(f"Cross Validation {line}")
                return 0
            try:
                est.fit(X, y, **fit_kw) if lengths is None else est.fit(X, y, lengths, **fit_kw)
            except ValueError as e:   # the data's problem: name the file it came from
                raise ValueError(f"{train_file}: {e}") from None
            if label_sets and not values_as_columns:
                est.classes_ = label_values[est.classes_]
            est.token_features_ = features
        if not quiet:
            _say(training_summary(est))
        save_model(est, model_file)
    except (ValueError, OSError) as e:
        sys.stderr.write(f"ssvm-train: error: {e}\n")
        return 1
    return 0


def _class_weights(weights, structure, y, train_file, sample_weight):
    """-wi: (class_weight for a multiclass model or a chain's tags, sample_weight) -- a
    hierarchy's examples weigh as their leaf's weight; label sets have no classes to weigh."""
    if structure not in ("multiclass", "hierarchy", "chain"):
        raise ValueError(f"-w{next(iter(weights))}: class weights apply to multiclass, chain and hierarchy "
                         f"data; {train_file} is read as {structure}")
    classes = np.unique(y)
    by_text = {format_label(c): c for c in classes.tolist()}
    unknown = [t for t in weights if t not in by_text]
    if unknown:
        raise ValueError(f"-w{unknown[0]}: class {unknown[0]} does not occur in {train_file}")
    class_weight = {by_text[t]: w for t, w in weights.items()}
    if structure in ("multiclass", "chain"):
        return class_weight, sample_weight
    per_example = np.array([class_weight.get(v, 1.0) for v in y.tolist()])
    return None, per_example if sample_weight is None else sample_weight * per_example


def _search_C(est, X, y, lengths, sample_weight, opts, label_sets):
    """-C: cross-validation along a warm-started path of C (LIBLINEAR's grid: from -c, or its
    start, doubling up to MAX_C; PATIENCE values of C without a better score end it early); prints
    each C's score and the best C. Writes no model."""
    from .model_selection import PATIENCE, c_grid, c_path, default_start_C, kfold_indices
    n_examples = X.shape[0] if lengths is None else len(lengths)
    folds = kfold_indices(n_examples, opts.get("v", 5), opts.get("r", 1))
    start = opts["c"] if "c" in opts else default_start_C(X, lengths)
    # the estimator's score: accuracy; per token for chains; example-based for label sets (the
    # multi-label papers' Acc, |y & y'| / |y | y'|, which ssvm-predict prints too)
    what = "Accuracy (example-based)" if label_sets else "Accuracy" if lengths is None else "Accuracy (tokens)"
    Cs, scores = c_path(est.set_params(verbose=0), X, y, c_grid(start), folds, lengths, sample_weight,
                        n_jobs=opts.get("n", 1), patience=PATIENCE,
                        on_score=lambda C, s: _say(f"C = {C:g}  Cross Validation {what} = {100 * s:g}%"))
    mean = scores.mean(axis=0)
    best = int(np.argmax(mean))
    _say(f"Best C = {Cs[best]:g}  Cross Validation {what} = {100 * mean[best]:g}%")
    return 0


@contextlib.contextmanager
def cluster_backend(address):
    """With a scheduler address: a dask.distributed Client connected to it and joblib's dask
    backend active for the block (what an API user writes); without one, nothing."""
    if address is None:
        yield
        return
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--scheduler needs the package distributed (pip install distributed)") from None
    from joblib import parallel_config
    try:
        client = Client(address, timeout="20s")
    except OSError as e:
        raise ValueError(f"--scheduler {address}: cannot connect ({e})") from None
    try:
        with parallel_config(backend="dask"):
            yield
    except (ValueError, OSError, KeyboardInterrupt):
        raise
    except Exception as e:     # a worker died, the scheduler went away, ...: the cluster's failure
        raise ValueError(f"--scheduler {address}: training on the cluster failed ({type(e).__name__}: "
                         f"{str(e).splitlines()[0] if str(e) else 'no message'})") from None
    finally:
        client.close()


def _default_model_name(path):
    import os
    return os.path.basename(path) + ".model"


def predict_main(argv=None):
    """ssvm-predict; returns the exit status (0, 1 on an error, 130 when interrupted)."""
    return run_command("ssvm-predict", _predict, argv, PREDICT_USAGE)


def _predict(argv):
    opts, rest = _parse_options(argv, {p.flag: KIND_CONVERTERS[p.kind] for p in PREDICT_OPTIONS},
                                accepts={p.flag: p.cli_accepts() for p in PREDICT_OPTIONS if p.kind == "int"})
    if len(rest) != 3:
        raise UsageError("expected test_file model_file output_file")
    test_file, model_file, output_file = rest
    try:
        check_output_path(output_file)
        model = load_model(model_file, estimator=False)
        model.n_jobs = opts.get("n", 1)
        kind = structure_of(model).file_kind
        if getattr(model, "_predicts_label_sets", kind == "multilabel"):
            return _predict_multilabel(model, test_file, model_file, output_file, opts.get("q", False))
        features = getattr(model, "token_features_", None)
        if features is not None:       # a model of attribute names reads CRFsuite files by its vocabulary
            if not is_crfsuite_file(test_file):
                raise ValueError(f"{model_file} was trained on CRFsuite's format (attribute names); {test_file} "
                                 "does not hold that format (one token a line: label, then tab-separated "
                                 "attributes)")
            X, y, lengths, _ = load_crfsuite_file(test_file, feature_names=features.feature_names)
        else:
            data = load_test_data(test_file, model_file, structure_of(model).name, kind)
            X, y, lengths = data[0], data[1], (data[2] if kind == "sequence" else None)
        X = match_columns(X, model.n_features_in_)
        pred = model.predict(X) if lengths is None else model.predict(X, lengths)
        pred_text = [format_label(p) for p in pred]
        if features is not None:       # as `crfsuite tag` writes them: a blank line after each sequence
            ends = set((np.cumsum(lengths) - 1).tolist())
            write_atomic(output_file, "".join(p + ("\n\n" if t in ends else "\n") for t, p in enumerate(pred_text)))
        else:
            write_atomic(output_file, "".join(p + "\n" for p in pred_text))
        if not opts.get("q"):
            ok = np.array([format_label(v) for v in y]) == np.array(pred_text)
            correct, total = int(ok.sum()), len(y)
            _say(f"Accuracy = {100.0 * correct / max(total, 1):g}% ({correct}/{total})")
            for line in sequence_report(ok, lengths) + entity_report(y, pred, lengths) + model._report_lines(y, pred):
                _say(line)
    except (ValueError, OSError) as e:
        sys.stderr.write(f"ssvm-predict: error: {e}\n")
        return 1
    return 0


def sequence_report(correct, lengths):
    """The line on whole sequences (chains; none otherwise): correct holds one bool per token."""
    if lengths is None or not len(lengths):
        return []
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    seq_ok = int(np.sum(np.add.reduceat(~np.asarray(correct, dtype=bool), starts) == 0))
    return [f"Sequence accuracy = {100.0 * seq_ok / len(lengths):g}% ({seq_ok}/{len(lengths)})"]


def entity_report(y, pred, lengths):
    """The entity-level lines of a chain whose tags look like entity tags (B-PER, I-PER, O, ...):
    micro-averaged precision, recall and F1, then one line per type (as conlleval prints)."""
    from .metrics import entity_scores, looks_like_entity_tags
    if lengths is None or not looks_like_entity_tags(set(np.asarray(y).tolist()) | set(np.asarray(pred).tolist())):
        return []
    scores = entity_scores(np.asarray(y, dtype=object), np.asarray(pred, dtype=object), lengths=lengths)

    def line(name, s):
        return (f"{name}: precision {100 * s['precision']:.2f}%, recall {100 * s['recall']:.2f}%, "
                f"F1 {100 * s['f1-score']:.2f} ({s['support']} entities)")
    return ([line("Entities (micro)", scores["micro avg"])]
            + [line(f"  {t}", v) for t, v in scores.items() if not t.endswith(" avg")])


KIND_TEXT = {"multiclass": "one label per line", "multilabel": "label lists l1,l2",
             "sequence": "sequences, qid:N on every line"}


def load_test_data(test_file, model_file, structure, kind, **kw):
    """A test file of the kind the model predicts; when it holds another kind, the error says so
    (and names both files) instead of the first line the parser refused."""
    try:
        return load_data(test_file, zero_based=False, kind=kind, **kw)
    except ValueError as refused:
        if is_crfsuite_file(test_file):
            raise ValueError(f"{test_file} holds CRFsuite's format; {model_file} was trained on svmlight data "
                             "(train on a CRFsuite file to predict CRFsuite files)") from None
        try:
            actual = load_data(test_file, zero_based=False, kind="auto")
        except (ValueError, OSError):
            raise refused from None
        found = "sequence" if len(actual) == 3 else "multilabel" if sp.issparse(actual[1]) else "multiclass"
        if found == kind:
            raise
        raise ValueError(f"{test_file} holds {found} data ({KIND_TEXT[found]}); {model_file} is a {structure} "
                         f"model, which predicts {kind} data ({KIND_TEXT[kind]})") from None


def multilabel_report(Y, P):
    """The lines ssvm-predict prints for a multi-label model (Y, P: indicator matrices of one shape)."""
    from .metrics import subset_accuracy, hamming_loss, micro_f1, macro_f1, example_accuracy
    n = Y.shape[0]
    exact = int(round(subset_accuracy(Y, P) * n))
    return [f"Subset accuracy = {100.0 * exact / max(n, 1):g}% ({exact}/{n})",
            f"Hamming loss = {hamming_loss(Y, P):g}",
            f"Micro-F1 = {micro_f1(Y, P):g}",
            f"Macro-F1 = {macro_f1(Y, P):g}",
            f"Acc = {100.0 * example_accuracy(Y, P):g}% (example-based accuracy)"]


def _predict_multilabel(model, test_file, model_file, output_file, quiet):
    """Label sets of a multi-label test file; measures over the model's labels plus any label of
    the file the model does not know (always missed)."""
    X, Y = load_test_data(test_file, model_file, structure_of(model).name, "multilabel", qid="error")
    P = sp.csr_matrix(model.predict(match_columns(X, model.n_features_in_)))
    names = [format_label(c) for c in model.classes_]
    write_atomic(output_file, "".join(",".join(names[j] for j in P.indices[P.indptr[r]:P.indptr[r + 1]]) + "\n"
                                      for r in range(P.shape[0])))
    if not quiet:
        Yt, Pt = on_model_columns(Y, P, model.classes_)
        for line in multilabel_report(Yt, Pt) + model._report_lines(Yt, Pt):
            _say(line)
    return 0


def on_model_columns(Y, P, classes):
    """Y (column j: the label value j, as read from a file) and P (the model's columns) on the
    model's columns plus one for every label of Y the model does not know (always missed)."""
    index = {format_label(c): k for k, c in enumerate(classes)}
    occurring, at = np.unique(Y.indices, return_inverse=True)   # never a loop over all label values
    cols = np.array([index.setdefault(format_label(j), len(index)) for j in occurring.tolist()], dtype=np.int64)
    K = len(index)
    P = sp.csr_matrix(P)
    return (sp.csr_matrix((np.ones(Y.nnz, dtype=np.int32), cols[at].reshape(-1), Y.indptr), shape=(Y.shape[0], K)),
            sp.csr_matrix((P.data, P.indices, P.indptr), shape=(P.shape[0], K)))


if __name__ == "__main__":
    sys.exit(train_main())
