"""Learned run-time models: a regression from the features of a run to its measured cost.

Scaling models need the inputs that drive cost to be named parameters; a learned model takes
whatever a run table holds instead: input parameters, and run-time features an instrumented
program recorded (values of variables, branch outcomes, loop trip counts, MPI traffic). The
estimators are scikit-learn's: extremely randomized trees (``extra-trees``, the default), a
random forest (``forest``), a Lasso over a polynomial expansion (``poly-lasso``) and, as the
interpretable baseline, perfcast's own PMNF search over the most important numeric features
(``pmnf``); and for counts (instructions, bytes) ``nn-linear``: a non-negative linear sum of
the features, corrected by extremely randomized trees as a ratio (:class:`_CountsTimesTrees`);
and two that form products, which a sum over counts cannot (a run's steps times the counts of
one step): ``log-linear``, a product of powers of the features, and ``products``, a
non-negative sum of features and pairwise products of features, both with few terms chosen by
their leave-one-out error (:mod:`perfcast.model.products`). ``auto`` fits every method and
keeps the one whose cross-validated error is least, on the training runs alone.

What the model does on top of the estimator:

* the target is learned as its logarithm (``log_target``) when every value is positive, so the
  trees split on ratios: the error that matters for run times is relative, and a feature that
  multiplies the cost is then an additive effect;
* two reductions, in order: features whose measured collection cost exceeds a share of the
  run time are dropped (``reduce_time``), then the least important features beyond a share of
  the total importance (``reduce_importance``), each recording what it dropped and why;
* out-of-fold predictions (k-fold cross-validation) give the reported error, the paper's mean
  relative error, and the empirical residuals the prediction intervals are built from;
* transfer to another platform (:meth:`LearnedModel.fit` with ``source=``), one of two ways
  (``transfer``): ``map`` (the default) rescales the source runs to the target platform by a
  log-linear map fitted on the few target runs, then pools them, the target runs weighted as
  much as all source runs together; ``tradaboost`` is instance transfer, two-stage
  TrAdaBoost.R2 (:mod:`perfcast.model.tradaboost`): the source runs keep their values and lose
  weight step by step where they disagree with the target runs, the step kept by
  cross-validation over the target runs; ``map+tradaboost`` re-weights the source runs after
  the map (the map corrects a shift of the whole platform, the weights the runs it fits badly).

A learned model is no registered modeler: those fit one scaling function per kernel of an
experiment over a grid of parameters, while this one maps rows of a run table to one target, and
its result is a forest, not a formula. It has its own file format (:meth:`LearnedModel.to_json`).
"""

from __future__ import annotations

import base64
import hashlib
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.version import __version__
from perfcast.io.run_table import RunTable
from perfcast.model.products import CountProducts, PowerProduct
from perfcast.model.settings import check_int, check_open_interval

METHODS = ("extra-trees", "forest", "poly-lasso", "pmnf", "nn-linear", "log-linear", "products")
#: The method that tries every one of ``METHODS`` and keeps the one of least cross-validated
#: error.
AUTO = "auto"
#: Methods for positive targets only: they learn a product or a sum of counts, and its logarithm.
POSITIVE_METHODS = ("nn-linear", "log-linear", "products")
#: Ways of transfer to another platform (see the module's docstring).
TRANSFERS = ("map", "tradaboost", "map+tradaboost")
#: Two-stage TrAdaBoost.R2: steps of stage 1, AdaBoost.R2' rounds of stage 2, and the
#: smallest leaf of its forests (a fully grown forest reproduces its training runs, leaving no
#: error to weight by).
TRADABOOST_STEPS = 10
TRADABOOST_ROUNDS = 3
TRADABOOST_LEAF = 3
FORMAT = "perfcast-learned-model"
FORMAT_VERSION = 1
#: Cross-validated mean relative error above which a model says it should not be trusted.
UNTRUSTED_ERROR = 0.2
#: Fewer training runs than this and a model says it has too few.
FEW_RUNS = 30
#: Fewer runs than this cannot be learned from (two folds of at least two runs).
MIN_RUNS = 4
#: The largest feature magnitude: scikit-learn's trees hold features as float32.
FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Numeric features the ``pmnf`` method models at most (the most important ones).
PMNF_FEATURES = 3
#: Columns that number runs and so are never features.
BOOKKEEPING = ("run", "row", "repetition")
#: The targets feature records give (wall and CPU seconds) and a campaign's run table adds
#: (``launch_time``, the whole launch): never features of each other.
MEASURED_TARGETS = ("time", "cpu", "launch_time")


@dataclass(frozen=True)
class Dropped:
    """A feature a reduction removed.

    Attributes
    ----------
    feature : str
    reduction : str
        ``"time"`` or ``"importance"``.
    value : float
        Its collection cost as a share of the run time, or its share of the importance.
    """

    feature: str
    reduction: str
    value: float

    def reason(self) -> str:
        """Why it was dropped, in words."""
        if self.reduction == "time":
            return f"collecting it costs {self.value:.1%} of the run time"
        return f"{self.value:.2%} of the importance, beyond the kept share"


@dataclass(frozen=True)
class RunPrediction:
    """The predicted target of one run.

    Attributes
    ----------
    row : int
        0-based row of the table predicted.
    value, lower, upper : float
        The prediction and its interval.
    warnings : tuple of str
        Why this prediction is less trustworthy than the model's error says (extrapolation,
        an unseen category).
    """

    row: int
    value: float
    lower: float
    upper: float
    warnings: tuple[str, ...] = ()


class LearnedModel:
    """A learned map from a run's features to a target such as its time.

    Parameters
    ----------
    method : {"extra-trees", "forest", "poly-lasso", "pmnf", "nn-linear", "log-linear", \
"products", "auto"}
        ``auto`` fits each of the others and keeps the one of least cross-validated error
        (:attr:`selection_` records every method's error).
    trees : int
        Trees of the forest methods, 10 to 5000.
    log_target : bool
        Learn the logarithm of the target (when all its values are positive).
    linear_base : bool
        Forest methods: a ridge regression over the logarithms of the positive features first,
        the trees learning its residuals (see :class:`_LinearPlusTrees`); False is the plain
        forest.
    reduce_time : float, optional
        Drop features whose mean collection cost (``cost:`` columns) exceeds this share of the
        mean run time, in (0, 1]; None keeps them.
    reduce_importance : float, optional
        Keep the most important features up to this share of the total importance, in (0, 1];
        None keeps them all.
    folds : int
        Folds of the cross-validation, 2 to 20.
    seed : int
        Seed of the random forests and the folds.
    transfer : {"map", "tradaboost", "map+tradaboost"}
        How ``fit(..., source=...)`` uses the source runs: a log-linear map of their values,
        two-stage TrAdaBoost.R2 instance weighting, or the map and then the weighting.

    Attributes
    ----------
    target_ : str
    features_ : list of str
        The features used, after the reductions.
    categories_ : dict of str to list of str
        The values seen of each categorical feature.
    ranges_ : dict of str to (float, float)
        The training range of each numeric feature.
    importances_ : dict of str to float
        Share of the importance of each feature, largest first (summing to 1).
    dropped_ : list of Dropped
    cv_error_ : float
        Out-of-fold mean relative error (a fraction, 0.05 for 5 %).
    runs_ : int
        Training runs (target runs under transfer).
    transfer_ : dict or None
        Under transfer: its ``method``, the source runs, the fitted map (``map``) or the
        chosen step and the source's weight share (``tradaboost``), and the error without
        the source.
    warnings_ : list of str
    source_ : str or None
        The model file it was loaded from (:meth:`from_json`), for messages.
    selection_ : dict or None
        Under ``method="auto"``: the cross-validated error of every method tried
        (``errors``), the methods that could not learn this table and why (``skipped``), and
        the one kept (``chosen``, also the model's ``method`` from then on).
    """

    #: Set by :meth:`from_json`; None for a model learned in this process.
    source_: str | None = None
    #: Set by ``fit`` under ``method="auto"``.
    selection_: dict[str, Any] | None = None

    def __init__(
        self,
        method: str = "extra-trees",
        *,
        trees: int = 200,
        log_target: bool = True,
        linear_base: bool = True,
        reduce_time: float | None = None,
        reduce_importance: float | None = None,
        folds: int = 5,
        seed: int = 0,
        transfer: str = "map",
    ) -> None:
        if method not in (*METHODS, AUTO):
            choices = ", ".join((*METHODS, AUTO))
            raise ValueError(f"method: must be one of {choices}, not {method!r}")
        if transfer not in TRANSFERS:
            raise ValueError(f"transfer: must be one of {', '.join(TRANSFERS)}, not {transfer!r}")
        check_int("trees", trees, 10, 5000)
        check_int("folds", folds, 2, 20)
        for name, share in (("reduce_time", reduce_time), ("reduce_importance", reduce_importance)):
            if share is not None:
                check_open_interval(name, share, 0.0, 1.0 + 1e-12)
        self.method = method
        self.trees = trees
        self.log_target = log_target
        self.linear_base = linear_base
        self.reduce_time = reduce_time
        self.reduce_importance = reduce_importance
        self.folds = folds
        self.seed = seed
        self.transfer = transfer

    def get_params(self) -> dict[str, Any]:
        """The settings, by name."""
        return {
            "method": self.method,
            "trees": self.trees,
            "log_target": self.log_target,
            "linear_base": self.linear_base,
            "reduce_time": self.reduce_time,
            "reduce_importance": self.reduce_importance,
            "folds": self.folds,
            "seed": self.seed,
            "transfer": self.transfer,
        }

    # ------------------------------------------------------------------ fitting

    def fit(
        self,
        table: RunTable,
        target: str,
        *,
        exclude: Sequence[str] = (),
        features: Sequence[str] | None = None,
        source: RunTable | LearnedModel | None = None,
    ) -> LearnedModel:
        """Learn ``target`` from the other columns of ``table``; returns self.

        Parameters
        ----------
        table : RunTable
        target : str
            The column to predict (e.g. ``time``).
        exclude : sequence of str
            Columns that are no features (other targets of the same runs); ``run``, ``row``,
            ``repetition``, ``time`` and ``cpu`` never are.
        features : sequence of str, optional
            Use only these columns as features.
        source : RunTable or LearnedModel, optional
            Runs of the same program on another platform (or the model learned from them): the
            model is transferred, ``table`` being the few runs of the new platform.

        Raises
        ------
        InputError
            When the target or a named feature is missing, the target is categorical or not
            finite, or no feature is left.
        """
        if self.method == AUTO:
            return self._fit_auto(table, target, exclude, features, source)
        y = _target_column(table, target)
        if table.rows < MIN_RUNS:
            raise InputError(
                f"{table.rows} run(s); learning and cross-validating needs at least {MIN_RUNS}",
                table.source,
                reason="too-few-runs",
            )
        names = _feature_names(table, target, exclude, features)
        self.target_ = target
        self.dropped_: list[Dropped] = []
        self.warnings_: list[str] = []
        names = self._reduce_by_time(table, names, y)
        if not names:
            raise InputError(
                f"every feature costs more than {self.reduce_time:.1%} of the run time to "
                "collect; nothing is left to learn from",
                table.source,
                reason="no-features",
            )
        if self.method in POSITIVE_METHODS and not np.all(y > 0):
            raise InputError(
                f"target {target!r} has values <= 0; the {self.method} method learns positive "
                "counts (instructions, bytes, seconds); learn with another method",
                table.source,
                reason="bad-target",
                value=target,
            )
        wants_log = self.log_target or self.method in POSITIVE_METHODS
        self.log_target_ = bool(wants_log and self.method != "pmnf" and np.all(y > 0))
        if self.log_target and self.method != "pmnf" and not self.log_target_:
            self.warnings_.append(
                f"target {target!r} has values <= 0, learned as measured (not its logarithm)"
            )
        self.categories_ = {n: sorted(set(table.categorical[n])) for n in names if _cat(table, n)}
        self.features_ = list(names)
        x = self._matrix(table)
        importances = self._importances(x, y)
        names = self._reduce_by_importance(table, importances)
        self.features_ = names
        self.categories_ = {n: c for n, c in self.categories_.items() if n in names}
        self.ranges_ = {
            n: (float(table.numeric[n].min()), float(table.numeric[n].max()))
            for n in names
            if n in table.numeric
        }
        x = self._matrix(table)
        self.importances_ = _normalized({n: importances.get(n, 0.0) for n in names})
        if self.method == "pmnf" and not self._pmnf_features():
            raise InputError(
                "the pmnf method models numeric features whose values are all above 0, and "
                "this table has none left; learn with another method",
                table.source,
                reason="no-features",
            )
        self.overhead_ = (
            {
                "before": sum(self.cost_shares_.values()),
                "after": sum(v for n, v in self.cost_shares_.items() if n in names),
            }
            if self.cost_shares_
            else {}
        )
        self.transfer_: dict[str, Any] | None = None
        self.runs_ = table.rows
        self.training_ = (x, y)
        if source is not None and self.transfer != "map":
            self._fit_tradaboost(source, x, y)
            self._add_warnings(table.rows)
            return self
        if source is not None:
            x, y, weights = self._pool_with_source(source, x, y)
        else:
            weights = None
        self.residuals_, self.cv_error_ = self._cross_validate(x, y, weights, table.rows)
        self.estimator_ = self._estimator(x.shape[1], len(y))
        self._fit_estimator(self.estimator_, x, y, weights)
        self._add_warnings(table.rows)
        return self

    def _fit_auto(
        self,
        table: RunTable,
        target: str,
        exclude: Sequence[str],
        features: Sequence[str] | None,
        source: RunTable | LearnedModel | None,
    ) -> LearnedModel:
        """Fit every method with these settings and become the one of least cross-validated
        error (the held-out folds of the training runs decide, nothing else)."""
        errors: dict[str, float] = {}
        skipped: dict[str, str] = {}
        best: LearnedModel | None = None
        for method in METHODS:
            candidate = LearnedModel(**{**self.get_params(), "method": method})
            try:
                candidate.fit(table, target, exclude=exclude, features=features, source=source)
            except InputError as error:
                if error.reason not in ("bad-target", "no-features"):
                    raise
                skipped[method] = error.message
                continue
            errors[method] = candidate.cv_error_
            if best is None or candidate.cv_error_ < best.cv_error_:
                best = candidate
        if best is None:
            reasons = "; ".join(f"{m}: {why}" for m, why in skipped.items())
            raise InputError(
                f"no method can learn this table ({reasons})", table.source, reason="no-features"
            )
        self.__dict__.update(best.__dict__)
        self.selection_ = {"errors": errors, "skipped": skipped, "chosen": best.method}
        return self

    def _reduce_by_time(self, table: RunTable, names: list[str], y: np.ndarray) -> list[str]:
        """Drop the features costing more than ``reduce_time`` of the mean run time (the
        ``time`` column, else the target); records every feature's cost share."""
        costs = {n: table.costs[n] for n in names if n in table.costs}
        time = table.numeric.get("time", y)
        scale = float(np.mean(time)) if np.mean(time) > 0 else 1.0
        self.cost_shares_ = {n: float(np.mean(c)) / scale for n, c in costs.items()}
        if self.reduce_time is not None:
            for name, share in self.cost_shares_.items():
                if share > self.reduce_time:
                    self.dropped_.append(Dropped(name, "time", share))
        gone = {d.feature for d in self.dropped_}
        return [n for n in names if n not in gone]

    def _reduce_by_importance(self, table: RunTable, importances: dict[str, float]) -> list[str]:
        names = list(self.features_)
        if self.reduce_importance is None or len(names) <= 1:
            return names
        shares = _normalized(importances)
        kept: list[str] = []
        total = 0.0
        for name, share in shares.items():
            if total >= self.reduce_importance - 1e-12:
                self.dropped_.append(Dropped(name, "importance", share))
            else:
                kept.append(name)
                total += share
        return [n for n in names if n in kept]

    def _importances(self, x: np.ndarray, y: np.ndarray) -> dict[str, float]:
        """Impurity importance of each feature from extremely randomized trees (whatever the
        method: the reductions and the PMNF baseline need a ranking), one-hot columns summed."""
        from sklearn.ensemble import ExtraTreesRegressor

        forest = ExtraTreesRegressor(n_estimators=min(self.trees, 100), random_state=self.seed)
        forest.fit(x, self._transform(y))
        by_column = forest.feature_importances_
        result: dict[str, float] = {}
        for name, columns in self._column_slices().items():
            result[name] = float(by_column[columns].sum())
        return result

    def _source_runs(self, source: RunTable | LearnedModel) -> tuple[np.ndarray, np.ndarray]:
        """The source runs' feature matrix (in this model's layout) and target values."""
        if isinstance(source, LearnedModel):
            if source.training_ is None:
                raise InputError(
                    "the source model holds no training runs to transfer from", source.source_
                )
            xs_model, ys = source.training_
            return _realign(source, self, xs_model), ys
        ys = _target_column(source, self.target_)
        _require_columns(source, self.features_)
        return self._matrix(source), ys

    def _fit_tradaboost(
        self, source: RunTable | LearnedModel, x: np.ndarray, y: np.ndarray
    ) -> None:
        """Instance transfer by two-stage TrAdaBoost.R2 with this model's learner (forests
        grown to leaves of at least ``TRADABOOST_LEAF`` runs; pmnf, which takes no weights,
        uses extra-trees), errors measured on the learned scale (log target: ratios)."""
        from perfcast.model.tradaboost import two_stage_tradaboost_r2

        xs, ys = self._source_runs(source)
        mapped: dict[str, float] = {}
        if self.transfer == "map+tradaboost":
            ys, mapped["slope"], mapped["offset"] = self._mapped_source(xs, ys, x, y)
        if self.log_target_ and not np.all(ys > 0):
            raise InputError(
                f"the source's target {self.target_!r} has values <= 0; the target runs' "
                "are all positive and learned as logarithms",
                getattr(source, "source", None) or getattr(source, "source_", None),
                reason="bad-target",
            )
        method = self.method if self.method != "pmnf" else "extra-trees"

        def learner() -> _WeightedFit:
            estimator = self._estimator(x.shape[1], len(ys) + len(y), method, TRADABOOST_LEAF)
            return _WeightedFit(estimator, "lassocv__" if method == "poly-lasso" else "")

        result = two_stage_tradaboost_r2(
            learner,
            (xs, self._transform(ys)),
            (x, self._transform(y)),
            steps=TRADABOOST_STEPS,
            rounds=TRADABOOST_ROUNDS,
            folds=self.folds,
            seed=self.seed,
        )
        self.estimator_ = result.ensemble
        predicted = self._inverse(result.oof)
        if self.log_target_:
            residuals = np.log(y) - np.log(np.maximum(predicted, 1e-300))
        else:
            residuals = y - predicted
        self.residuals_ = np.sort(residuals)
        self.cv_error_ = _mean_relative_error(predicted, y)
        alone, _ = self._oof(x, y, None, len(y))
        self.transfer_ = {
            "method": self.transfer,
            "source_runs": len(ys),
            **mapped,
            "step": result.step,
            "steps": TRADABOOST_STEPS,
            "source_weight": result.source_share,
            "error_without_source": _mean_relative_error(alone, y),
        }

    def _pool_with_source(
        self, source: RunTable | LearnedModel, x: np.ndarray, y: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        xs, ys = self._source_runs(source)
        ys_mapped, slope, offset = self._mapped_source(xs, ys, x, y)
        # the error on the target runs without any source data, for comparison
        alone, _ = self._oof(x, y, None, len(y))
        self.transfer_ = {
            "method": "map",
            "source_runs": len(ys),
            "slope": slope,
            "offset": offset,
            "error_without_source": _mean_relative_error(alone, y),
        }
        weights = np.concatenate([np.full(len(ys), 1.0), np.full(len(y), len(ys) / len(y))])
        return np.vstack([xs, x]), np.concatenate([ys_mapped, y]), weights

    def _mapped_source(
        self, xs: np.ndarray, ys: np.ndarray, x: np.ndarray, y: np.ndarray
    ) -> tuple[np.ndarray, float, float]:
        """The source values rescaled to the target platform by ``log y = offset + slope *
        log y_source``, fitted between a model of the source runs and the target runs."""
        source_model = LearnedModel(
            self.method if self.method != "pmnf" else "extra-trees",
            trees=self.trees,
            log_target=self.log_target,
            linear_base=self.linear_base,
            seed=self.seed,
        )
        source_model._adopt(self)
        estimator = source_model._estimator(xs.shape[1], len(ys))
        source_model._fit_estimator(estimator, xs, ys, None)
        at_target = source_model._inverse(estimator.predict(x))
        slope, offset = _log_linear_map(at_target, y)
        return np.exp(offset + slope * np.log(np.maximum(ys, 1e-300))), slope, offset

    def _adopt(self, other: LearnedModel) -> None:
        """Take the feature layout of ``other`` (the same columns in the same order)."""
        self.target_ = other.target_
        self.features_ = list(other.features_)
        self.categories_ = dict(other.categories_)
        self.log_target_ = other.log_target_
        self.ranges_ = dict(other.ranges_)
        self.importances_ = dict(other.importances_)

    def _cross_validate(
        self, x: np.ndarray, y: np.ndarray, weights: np.ndarray | None, target_runs: int
    ) -> tuple[np.ndarray, float]:
        """Out-of-fold residuals (log ratios, or differences without the log) of the target
        runs (the last ``target_runs`` rows), and their mean relative error."""
        predicted, rows = self._oof(x, y, weights, target_runs)
        truth = y[rows]
        if self.log_target_:
            residuals = np.log(truth) - np.log(np.maximum(predicted, 1e-300))
        else:
            residuals = truth - predicted
        return np.sort(residuals), _mean_relative_error(predicted, truth)

    def _oof(
        self, x: np.ndarray, y: np.ndarray, weights: np.ndarray | None, target_runs: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Out-of-fold predictions of the last ``target_runs`` rows (the others, source runs
        under transfer, are always trained on)."""
        n = len(y)
        rows = np.arange(n - target_runs, n)
        folds = min(self.folds, target_runs)
        rng = np.random.default_rng(self.seed)
        order = rng.permutation(rows)
        predicted = np.empty(target_runs)
        for fold in range(folds):
            held = order[fold::folds]
            train = np.setdiff1d(np.arange(n), held)
            estimator = self._estimator(x.shape[1], len(train))
            self._fit_estimator(
                estimator, x[train], y[train], None if weights is None else weights[train]
            )
            predicted[held - (n - target_runs)] = self._inverse(estimator.predict(x[held]))
        return predicted, rows

    def _estimator(self, columns: int, rows: int, method: str | None = None, leaf: int = 1) -> Any:
        """A fresh estimator of ``method`` (default: the model's), forests grown to leaves of
        at least ``leaf`` runs."""
        method = method or self.method
        slices = self._column_slices()
        positive = [slices[n].start for n, (low, _) in self.ranges_.items() if low > 0]
        if method in ("extra-trees", "forest"):
            forest = _forest(method, self.trees, self.seed, leaf)
            return _LinearPlusTrees(forest, positive) if self.linear_base else forest
        if method == "poly-lasso":
            return _poly_lasso(columns, rows, self.seed, positive)
        if method == "nn-linear":
            return _CountsTimesTrees(_forest("extra-trees", self.trees, self.seed, leaf))
        if method == "log-linear":
            return PowerProduct(self._column_names())
        if method == "products":
            return CountProducts(self._column_names())
        chosen = self._pmnf_features()
        return _PMNFRegressor([slices[n].start for n in chosen], chosen)

    def _pmnf_features(self) -> list[str]:
        """The most important numeric features with positive values."""
        ranked = [n for n in self.importances_ if n in self.ranges_ and self.ranges_[n][0] > 0]
        return ranked[:PMNF_FEATURES]

    def _fit_estimator(
        self, estimator: Any, x: np.ndarray, y: np.ndarray, weights: np.ndarray | None
    ) -> None:
        if weights is None or self.method == "pmnf":
            estimator.fit(x, self._transform(y))
        elif self.method == "poly-lasso":
            estimator.fit(x, self._transform(y), lassocv__sample_weight=weights)
        else:
            estimator.fit(x, self._transform(y), sample_weight=weights)

    def _transform(self, y: np.ndarray) -> np.ndarray:
        return np.log(y) if self.log_target_ else y

    def _inverse(self, t: np.ndarray) -> np.ndarray:
        return np.exp(np.clip(t, -700, 700)) if self.log_target_ else t

    def _add_warnings(self, runs: int) -> None:
        if self.cv_error_ > UNTRUSTED_ERROR:
            self.warnings_.append(
                f"cross-validated mean relative error {self.cv_error_:.1%} exceeds "
                f"{UNTRUSTED_ERROR:.0%}: do not trust these predictions"
            )
        if runs < FEW_RUNS:
            self.warnings_.append(
                f"only {runs} training runs: the error estimate itself is uncertain"
            )

    # ------------------------------------------------------------------ features

    def _column_slices(self) -> dict[str, slice]:
        slices: dict[str, slice] = {}
        start = 0
        for name in self.features_:
            width = len(self.categories_[name]) if name in self.categories_ else 1
            slices[name] = slice(start, start + width)
            start += width
        return slices

    def _column_names(self) -> list[str]:
        """The name of every column of the feature matrix (``name=category`` for one-hot)."""
        names: list[str] = []
        for name in self.features_:
            if name in self.categories_:
                names.extend(f"{name}={category}" for category in self.categories_[name])
            else:
                names.append(name)
        return names

    def _matrix(self, table: RunTable) -> np.ndarray:
        """The feature matrix of ``table``: numeric features as they are, categorical ones
        one-hot over the categories seen in training."""
        columns: list[np.ndarray] = []
        for name in self.features_:
            if name in self.categories_:
                values = table.column(name)
                if name in table.numeric:
                    raise InputError(
                        f"column {name!r} holds numbers, the model learned it as categories",
                        table.source,
                        reason="bad-run-table",
                        value=name,
                    )
                columns.extend((values == c).astype(float) for c in self.categories_[name])
            else:
                if name in table.categorical:
                    raise InputError(
                        f"column {name!r} holds words, the model learned it as numbers",
                        table.source,
                        reason="bad-run-table",
                        value=name,
                    )
                column = table.column(name).astype(float)
                _check_single_precision(table, name, column)
                columns.append(column)
        return np.column_stack(columns) if columns else np.empty((table.rows, 0))

    # ------------------------------------------------------------------ prediction

    def predict(self, table: RunTable, level: float = 0.95) -> list[RunPrediction]:
        """Predict the target of every row of ``table``, with intervals at ``level``.

        The interval is the wider of two: the empirical quantiles of the cross-validated
        residuals applied to the prediction, and (forests) the spread of the trees.

        Raises
        ------
        InputError
            When a feature column the model uses is missing (named) or of the wrong kind.
        ValueError
            For a level outside (0, 1).
        """
        check_open_interval("level", level, 0.0, 1.0)
        _require_columns(table, self.features_)
        x = self._matrix(table)
        values = self._inverse(self.estimator_.predict(x))
        lower_q, upper_q = _quantiles(self.residuals_, level)
        if self.log_target_:
            lower, upper = values * math.exp(lower_q), values * math.exp(upper_q)
        else:
            lower, upper = values + lower_q, values + upper_q
        spread = self._tree_spread(x, level)
        if spread is not None:
            lower, upper = np.minimum(lower, spread[0]), np.maximum(upper, spread[1])
        return [
            RunPrediction(row, float(values[row]), float(lower[row]), float(upper[row]),
                          self._row_warnings(table, row))
            for row in range(table.rows)
        ]  # fmt: skip

    def _tree_spread(self, x: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray] | None:
        estimator = self.estimator_
        if isinstance(estimator, _LinearPlusTrees | _CountsTimesTrees):
            per_tree = self._inverse(estimator.tree_predictions(x))
        elif hasattr(estimator, "estimators_"):  # a plain scikit-learn forest
            per_tree = np.stack([self._inverse(tree.predict(x)) for tree in estimator.estimators_])
        else:  # no trees: poly-lasso, pmnf, a TrAdaBoost.R2 ensemble
            return None
        tail = (1.0 - level) / 2.0 * 100.0
        low, high = np.percentile(per_tree, [tail, 100.0 - tail], axis=0)
        return low, high

    def _extrapolation_note(self) -> str:
        if self.method == "nn-linear":
            return ": beyond it only the linear sum of the features follows a trend"
        if self.method in ("log-linear", "products"):
            return ": beyond it the fitted formula is extrapolated"
        if self.method not in ("extra-trees", "forest"):
            return ""
        if self.linear_base:
            return ": beyond it only the log-linear part of the model follows a trend"
        return ": a forest predicts no trend beyond it"

    def _row_warnings(self, table: RunTable, row: int) -> tuple[str, ...]:
        notes: list[str] = []
        for name, (low, high) in self.ranges_.items():
            number = float(table.numeric[name][row])
            if number < low or number > high:
                notes.append(
                    f"{name} = {number:g} lies outside the training range [{low:g}, {high:g}]"
                    + self._extrapolation_note()
                )
        for name, seen in self.categories_.items():
            value = str(table.categorical[name][row])
            if value not in seen:
                notes.append(f"{name} = {value!r} was never seen in training")
        return tuple(notes)

    def expression(self) -> str | None:
        """The fitted formula of the ``pmnf``, ``log-linear`` and ``products`` methods (None for
        the others)."""
        if isinstance(self.estimator_, _PMNFRegressor | PowerProduct | CountProducts):
            return self.estimator_.expression()
        return None

    # ------------------------------------------------------------------ file format

    def to_json(self) -> dict[str, Any]:
        """The model as a JSON object (see docs: format ``perfcast-learned-model``).

        The estimator is stored as a joblib pickle (base64) with its SHA-256; everything a
        reader needs to know without unpickling (features, reductions, error) is plain JSON.
        """
        import joblib
        import sklearn

        buffer = io.BytesIO()
        joblib.dump({"estimator": self.estimator_, "training": self.training_}, buffer, compress=3)
        blob = buffer.getvalue()
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "perfcast": __version__,
            "sklearn": sklearn.__version__,
            "settings": self.get_params(),
            "target": self.target_,
            "log_target": self.log_target_,
            "features": [
                {
                    "name": name,
                    "kind": "categorical" if name in self.categories_ else "numeric",
                    **({"categories": self.categories_[name]} if name in self.categories_ else {}),
                    **({"range": list(self.ranges_[name])} if name in self.ranges_ else {}),
                    "importance": self.importances_.get(name, 0.0),
                }
                for name in self.features_
            ],
            "dropped": [
                {
                    "feature": d.feature,
                    "reduction": d.reduction,
                    "value": d.value,
                    "reason": d.reason(),
                }
                for d in self.dropped_
            ],  # fmt: skip
            "collection_overhead": self.overhead_,
            "runs": self.runs_,
            "cross_validation": {"folds": self.folds, "mean_relative_error": self.cv_error_},
            "residuals": self.residuals_.tolist(),
            "transfer": self.transfer_,
            "selection": self.selection_,
            "warnings": list(self.warnings_),
            "estimator": {
                "encoding": "joblib+base64",
                "sha256": hashlib.sha256(blob).hexdigest(),
                "data": base64.b64encode(blob).decode("ascii"),
            },
        }

    @classmethod
    def from_json(cls, data: Any, source: str | Path | None = None) -> LearnedModel:
        """The model of :meth:`to_json`, checked for format, version and scikit-learn version.

        Only load model files you trust: the estimator is a pickle, and unpickling runs code.

        Raises
        ------
        InputError
            With reason ``"incompatible-model"`` when the file is of another format, a newer
            format version or perfcast, or another scikit-learn version (major.minor) than the
            one installed; ``"bad-model"`` when it is damaged.
        """
        import joblib
        import sklearn

        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(
                f"not a learned model (format {FORMAT!r} expected)", source, reason="bad-model"
            )
        version = data.get("version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise InputError(
                f"learned model format version {version!r}; this perfcast reads up to "
                f"{FORMAT_VERSION}",
                source,
                reason="incompatible-model",
                value=version,
            )
        for what, theirs, ours in (
            ("perfcast", data.get("perfcast"), __version__),
            ("scikit-learn", data.get("sklearn"), sklearn.__version__),
        ):
            newer_only = what == "perfcast"
            if not isinstance(theirs, str) or not _compatible(theirs, ours, newer_only=newer_only):
                raise InputError(
                    f"written by {what} {theirs}, incompatible with the installed {ours}: "
                    "learn the model again",
                    source,
                    reason="incompatible-model",
                    value=theirs,
                )  # fmt: skip
        try:
            blob = base64.b64decode(data["estimator"]["data"], validate=True)
            if hashlib.sha256(blob).hexdigest() != data["estimator"]["sha256"]:
                raise ValueError("checksum mismatch")
            stored = joblib.load(io.BytesIO(blob))
            model = cls(**data["settings"])
            model.target_ = str(data["target"])
            model.log_target_ = bool(data["log_target"])
            model.features_ = [str(f["name"]) for f in data["features"]]
            model.categories_ = {
                f["name"]: list(f["categories"]) for f in data["features"] if "categories" in f
            }
            model.ranges_ = {
                f["name"]: (float(f["range"][0]), float(f["range"][1]))
                for f in data["features"]
                if "range" in f
            }
            model.importances_ = {f["name"]: float(f["importance"]) for f in data["features"]}
            model.dropped_ = [
                Dropped(d["feature"], d["reduction"], float(d["value"])) for d in data["dropped"]
            ]
            model.overhead_ = dict(data["collection_overhead"])
            model.runs_ = int(data["runs"])
            model.cv_error_ = float(data["cross_validation"]["mean_relative_error"])
            model.residuals_ = np.asarray(data["residuals"], dtype=float)
            residuals = model.residuals_
            if residuals.ndim != 1 or not residuals.size or not np.isfinite(residuals).all():
                raise ValueError("residuals: a non-empty list of finite numbers expected")
            model.transfer_ = data["transfer"]
            model.selection_ = data.get("selection")
            model.warnings_ = list(data["warnings"])
            model.estimator_ = stored["estimator"]
            model.training_ = stored["training"]
            model.source_ = None if source is None else str(source)
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise InputError(
                f"damaged learned model ({type(error).__name__}: {error})",
                source,
                reason="bad-model",
            ) from None
        return model


# ---------------------------------------------------------------------- helpers


def _cat(table: RunTable, name: str) -> bool:
    return name in table.categorical


def _target_column(table: RunTable, target: str) -> np.ndarray:
    if target not in table.numeric:
        if target in table.categorical:
            raise InputError(
                f"target column {target!r} holds words, a number per run was expected",
                table.source,
                reason="bad-target",
                value=target,
            )
        raise InputError(
            f"no target column {target!r} (have {', '.join(table.columns)})",
            table.source,
            reason="missing-target",
            value=target,
        )
    return table.numeric[target]


def _feature_names(
    table: RunTable, target: str, exclude: Sequence[str], features: Sequence[str] | None
) -> list[str]:
    for name in [*exclude, *(features or ())]:
        table.column(name)  # names a missing column
    if features is not None:
        names = [n for n in features if n != target]
    else:
        skip = {target, *exclude, *BOOKKEEPING, *MEASURED_TARGETS}
        names = [n for n in table.columns if n not in skip]
    if not names:
        raise InputError(
            f"no feature column besides the target {target!r}", table.source, reason="no-features"
        )
    return names


def _check_single_precision(table: RunTable, name: str, column: np.ndarray) -> None:
    """Reject a feature value the forests cannot hold: they compare features as float32, so a
    larger one would end in an error deep inside scikit-learn instead of a message."""
    beyond = np.flatnonzero(np.abs(column) > FLOAT32_MAX)
    if beyond.size:
        row = int(beyond[0])
        raise InputError(
            f"run {row + 1}: feature {name!r} is {column[row]:g}, beyond the largest magnitude "
            f"a learned model takes ({FLOAT32_MAX:.4g})",
            table.source,
            reason="bad-run-table",
            value=float(column[row]),
        )


def _require_columns(table: RunTable, names: Sequence[str]) -> None:
    missing = [n for n in names if n not in table.numeric and n not in table.categorical]
    if missing:
        raise InputError(
            f"the model uses the feature column(s) {', '.join(map(repr, missing))}, missing here",
            table.source,
            reason="missing-column",
            value=missing[0],
        )


def _normalized(importances: dict[str, float]) -> dict[str, float]:
    total = sum(importances.values())
    if total <= 0:
        share = 1.0 / max(len(importances), 1)
        return dict.fromkeys(importances, share)
    ranked = sorted(importances.items(), key=lambda item: -item[1])
    return {name: value / total for name, value in ranked}


def _mean_relative_error(predicted: np.ndarray, truth: np.ndarray) -> float:
    """The paper's error: mean of |predicted - real| / real (a fraction)."""
    denominator = np.where(truth != 0, np.abs(truth), 1.0)
    return float(np.mean(np.abs(predicted - truth) / denominator))


def _quantiles(residuals: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(residuals, [tail, 1.0 - tail])
    return float(min(low, 0.0)), float(max(high, 0.0))


def _log_linear_map(predicted: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """``log truth = offset + slope * log predicted``: the slope fitted only from 10 runs on and
    kept in [0.5, 2]; with fewer runs the slope is 1 and the offset the median log ratio."""
    logs_p = np.log(np.maximum(predicted, 1e-300))
    logs_t = np.log(np.maximum(truth, 1e-300))
    if len(truth) >= 10 and np.ptp(logs_p) > 0:
        slope = float(np.clip(np.polyfit(logs_p, logs_t, 1)[0], 0.5, 2.0))
    else:
        slope = 1.0
    return slope, float(np.median(logs_t - slope * logs_p))


def _realign(source: LearnedModel, model: LearnedModel, x: np.ndarray) -> np.ndarray:
    """The source model's training matrix in the column layout of ``model``."""
    slices = source._column_slices()
    columns: list[np.ndarray] = []
    for name in model.features_:
        if name not in slices:
            raise InputError(
                f"the source model has no feature {name!r}",
                source.source_,
                reason="missing-column",
                value=name,
            )
        part = x[:, slices[name]]
        if name in model.categories_:
            seen = source.categories_.get(name, [])
            for category in model.categories_[name]:
                columns.append(
                    part[:, seen.index(category)] if category in seen else np.zeros(len(x))
                )
        else:
            columns.append(part[:, 0])
    return np.column_stack(columns)


def _poly_lasso(columns: int, rows: int, seed: int, positive: list[int]) -> Any:
    """Take the logarithm of the ``positive`` columns (a power law becomes linear), standardize,
    expand to a polynomial (degree 3 up to 20 columns, 2 up to 60, else 1), standardize again
    and select by a cross-validated Lasso."""
    from sklearn.linear_model import LassoCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, PolynomialFeatures, StandardScaler

    degree = 3 if columns <= 20 else 2 if columns <= 60 else 1
    return make_pipeline(
        FunctionTransformer(_log_columns, kw_args={"columns": positive}),
        StandardScaler(),
        PolynomialFeatures(degree, include_bias=False),
        StandardScaler(),
        LassoCV(cv=min(5, max(2, rows // 2)), max_iter=20000, random_state=seed),
    )


def _forest(method: str, trees: int, seed: int, leaf: int = 1) -> Any:
    from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

    kind = ExtraTreesRegressor if method == "extra-trees" else RandomForestRegressor
    return kind(n_estimators=trees, random_state=seed, min_samples_leaf=leaf)


class _LinearPlusTrees:
    """A ridge regression over the logarithms of the positive features, and a forest learning
    what it leaves: the linear part carries power laws (and their trend beyond the training
    range, where trees alone stay flat), the trees what is not linear in the logarithms
    (algorithm switches, thresholds, interactions)."""

    def __init__(self, forest: Any, positive: list[int]) -> None:
        self.forest = forest
        self.positive = positive

    def fit(
        self, x: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> _LinearPlusTrees:
        from sklearn.linear_model import RidgeCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import FunctionTransformer, StandardScaler

        self.base_ = make_pipeline(
            FunctionTransformer(_log_columns, kw_args={"columns": self.positive}),
            StandardScaler(),
            RidgeCV(alphas=np.logspace(-3, 3, 13)),
        )
        self.base_.fit(x, y, ridgecv__sample_weight=sample_weight)
        self.forest.fit(x, y - self.base_.predict(x), sample_weight=sample_weight)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.base_.predict(x) + self.forest.predict(x))

    def tree_predictions(self, x: np.ndarray) -> np.ndarray:
        """Every tree's prediction (with the linear part), shape (trees, rows)."""
        base = self.base_.predict(x)
        return np.stack([base + tree.predict(x) for tree in self.forest.estimators_])

    @property
    def feature_importances_(self) -> np.ndarray:
        return np.asarray(self.forest.feature_importances_)


class _WeightedFit:
    """An estimator whose ``fit`` takes ``sample_weight`` under the name the estimator wants
    (``prefix + "sample_weight"``: a pipeline's step name)."""

    def __init__(self, estimator: Any, prefix: str) -> None:
        self.estimator = estimator
        self.prefix = prefix

    def fit(
        self, x: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> _WeightedFit:
        self.estimator.fit(x, y, **{self.prefix + "sample_weight": sample_weight})
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.estimator.predict(x))


class _CountsTimesTrees:
    """A non-negative linear sum of the features times a forest's correction factor.

    A count a program's own code executes, its instructions, is the sum over its basic blocks
    of how often each ran times its size; loop trip counts and branch outcomes are such
    frequencies, so the count is close to a non-negative linear combination of them. The sum
    is fitted by non-negative least squares of the relative residuals (with a constant term);
    the forest learns the logarithm of the ratio the sum leaves (what the features do not
    count, the share of the slowest rank). Fitted to the logarithm of the target, like the
    other estimators of a log target.
    """

    def __init__(self, forest: Any) -> None:
        self.forest = forest

    def fit(
        self, x: np.ndarray, t: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> _CountsTimesTrees:
        from scipy.optimize import nnls

        y = np.exp(t)
        design = np.column_stack([np.ones(len(x)), x])
        self.scale_ = np.max(np.abs(design), axis=0)
        self.scale_[self.scale_ == 0] = 1.0
        root = np.ones(len(y)) if sample_weight is None else np.sqrt(sample_weight)
        rows = (root / y)[:, None]
        solution, _ = nnls(design / self.scale_ * rows, root, maxiter=50 * design.shape[1])
        self.coefficients_ = solution / self.scale_
        self.floor_ = 1e-6 * float(np.min(y))
        self.forest.fit(x, t - self._log_sum(x), sample_weight=sample_weight)
        return self

    def _log_sum(self, x: np.ndarray) -> np.ndarray:
        total = np.column_stack([np.ones(len(x)), x]) @ self.coefficients_
        return np.asarray(np.log(np.maximum(total, self.floor_)))

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self._log_sum(x) + self.forest.predict(x))

    def tree_predictions(self, x: np.ndarray) -> np.ndarray:
        """Every tree's prediction (with the linear sum), shape (trees, rows)."""
        base = self._log_sum(x)
        return np.stack([base + tree.predict(x) for tree in self.forest.estimators_])

    @property
    def feature_importances_(self) -> np.ndarray:
        return np.asarray(self.forest.feature_importances_)


def _log_columns(x: np.ndarray, columns: list[int]) -> np.ndarray:
    """``x`` with the logarithm of ``columns`` (values clipped to 1e-300 first)."""
    out = np.array(x, dtype=float)
    out[:, columns] = np.log(np.maximum(out[:, columns], 1e-300))
    return out


class _PMNFRegressor:
    """A PMNF hypothesis over a few numeric features, as a scikit-learn style regressor.

    perfcast's PMNF search wants repeated measurements on lines through a grid, which runs drawn
    at random do not give; this baseline searches the same building blocks (``x^i log2(x)^j``)
    in the two shapes of a multi-parameter PMNF, ``c0 + c1 * b1(x1) * b2(x2) ...`` and
    ``c0 + c1 * b1(x1) + c2 * b2(x2) ...``, choosing one block per feature greedily (two passes
    over the features, least squares), and keeps the shape with the smaller residual.
    """

    def __init__(self, columns: list[int], names: list[str] | None = None) -> None:
        self.columns = columns
        self.names = names

    def fit(self, x: np.ndarray, y: np.ndarray) -> _PMNFRegressor:
        from perfcast.model.fitting.blocks import building_blocks, evaluate_blocks

        self.blocks_ = ((Fraction(0), 0), *building_blocks(negative=True))
        values = [evaluate_blocks(self.blocks_, x[:, c]) for c in self.columns]
        best: tuple[float, str, list[int], np.ndarray] | None = None
        for shape in ("product", "sum"):
            chosen = [0] * len(self.columns)
            rss = math.inf
            coefficients = np.array([float(np.mean(y))])
            for _ in range(2):
                for k in range(len(self.columns)):
                    for block in range(len(self.blocks_)):
                        trial = [*chosen[:k], block, *chosen[k + 1 :]]
                        design = self._design(values, trial, shape)
                        solution, residual = _least_squares(design, y)
                        if rss - residual > 1e-12 * residual:
                            rss, chosen, coefficients = residual, trial, solution
            if best is None or rss < best[0]:
                best = (rss, shape, chosen, coefficients)
        assert best is not None
        _, self.shape_, self.chosen_, self.coefficients_ = best
        return self

    def _design(self, values: list[np.ndarray], chosen: list[int], shape: str) -> np.ndarray:
        rows = values[0].shape[1] if values else 0
        if shape == "product":
            product = np.ones(rows)
            for column, block in zip(values, chosen, strict=True):
                product = product * column[block]
            return np.column_stack([np.ones(rows), product])
        parts = [column[block] for column, block in zip(values, chosen, strict=True) if block]
        return np.column_stack([np.ones(rows), *parts])

    def predict(self, x: np.ndarray) -> np.ndarray:
        from perfcast.model.fitting.blocks import evaluate_blocks

        values = [evaluate_blocks(self.blocks_, np.maximum(x[:, c], 1e-300)) for c in self.columns]
        return np.asarray(self._design(values, self.chosen_, self.shape_) @ self.coefficients_)

    def expression(self) -> str:
        """The fitted hypothesis as text, features named as given."""
        names = self.names or [f"x{c}" for c in self.columns]
        factors = [
            _block_text(names[k], *self.blocks_[block]) for k, block in enumerate(self.chosen_)
        ]
        constant = f"{self.coefficients_[0]:.4g}"
        if self.shape_ == "product":
            used = [f for f in factors if f]
            slope = f"{self.coefficients_[1]:.4g}" if len(self.coefficients_) > 1 else "0"
            return f"{constant} + {slope} * {' * '.join(used) or '1'}"
        terms = [f for f in factors if f]
        pairs = zip(self.coefficients_[1:], terms, strict=True)
        return " + ".join([constant, *(f"{c:.4g} * {t}" for c, t in pairs)])


def _block_text(name: str, exponent: Fraction, log_power: int) -> str:
    parts = []
    if exponent:
        parts.append(name if exponent == 1 else f"{name}^{float(exponent):g}")
    if log_power:
        parts.append(f"log2({name})" + (f"^{log_power}" if log_power > 1 else ""))
    return " * ".join(parts)


def _least_squares(design: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Least squares of the relative residuals ``(y - f) / y`` when every ``y`` is positive
    (run times: an error of 1 s matters at 2 s, not at 1000 s), else of the plain ones."""
    scale = 1.0 / y if np.all(y > 0) else np.ones_like(y)
    solution, *_ = np.linalg.lstsq(design * scale[:, None], y * scale, rcond=None)
    residual = (y - design @ solution) * scale
    return solution, float(residual @ residual)


def _compatible(theirs: str, ours: str, *, newer_only: bool) -> bool:
    """Whether a file written under version ``theirs`` loads under ``ours``: the same
    major.minor, or (``newer_only``) any version not newer than ours."""
    try:
        their_key = tuple(int(part) for part in theirs.split(".")[:2])
        our_key = tuple(int(part) for part in ours.split(".")[:2])
    except ValueError:
        return False
    return their_key <= our_key if newer_only else their_key == our_key
