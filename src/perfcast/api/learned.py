"""Learned run-time models: feature instrumentation, run tables, learning, transfer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.core.errors import InputError
from perfcast.core.jsonout import dumps

if TYPE_CHECKING:
    from perfcast.io.run_table import RunTable
    from perfcast.model.learned import LearnedModel, RunPrediction
    from perfcast.static.features import InstrumentedSource


def load_run_table(path: str | Path) -> RunTable:
    """Read a run table: one row per run, one column per feature or target (CSV or Parquet).

    Raises
    ------
    InputError
        Naming file and line for a missing file, a bad cell, a column mixing numbers and words.
    """
    from perfcast.io.run_table import read_run_table

    return read_run_table(path)


def parse_reductions(text: str, source: str = "reductions") -> dict[str, float]:
    """``time=0.05,importance=0.95`` as ``{"reduce_time": 0.05, "reduce_importance": 0.95}``.

    Raises
    ------
    InputError
        With reason ``"bad-reduction"`` for another key or a value outside (0, 1].
    """
    from perfcast.core.numbers import parse_number

    settings: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in ("time", "importance") or not value:
            raise InputError(
                f"reduction {part!r}: expected time=SHARE or importance=SHARE",
                source,
                reason="bad-reduction",
                value=part,
            )
        share = parse_number(value, f"reduction {key}", source, None)
        if not 0.0 < share <= 1.0:
            raise InputError(
                f"reduction {key}={value}: a share in (0, 1] expected",
                source,
                reason="bad-reduction",
                value=part,
            )
        settings[f"reduce_{key}"] = share
    return settings


def learn(
    table: RunTable | str | Path,
    target: str = "time",
    *,
    method: str = "extra-trees",
    exclude: Sequence[str] = (),
    features: Sequence[str] | None = None,
    transfer_from: RunTable | LearnedModel | str | Path | None = None,
    **settings: Any,
) -> LearnedModel:
    """Learn a run's ``target`` (time, instructions, ...) from the other columns of a run table.

    Parameters
    ----------
    table : RunTable, str or Path
        The runs (a path is read with :func:`load_run_table`).
    target : str
        The column to predict.
    method : {"extra-trees", "forest", "poly-lasso", "pmnf", "nn-linear", "log-linear", \
"products", "auto"}
        Extremely randomized trees (default), random forest, Lasso over a polynomial of the
        features, or a PMNF hypothesis over the most important numeric features; for
        positive counts a non-negative sum of the features (``nn-linear``), a product of their
        powers (``log-linear``) or a non-negative sum of features and pairwise products of
        features (``products``); ``auto`` fits every method and keeps the one of least
        cross-validated error on ``table`` (recorded in the model's ``selection_``).
    exclude : sequence of str
        Columns that are no features (other targets measured in the same runs).
    features : sequence of str, optional
        Only these columns are features.
    transfer_from : RunTable, LearnedModel, str or Path, optional
        Runs (or a learned model file, which keeps its runs) of the same program on another
        platform; ``table`` holds the few runs of the new platform.
    **settings
        :class:`~perfcast.model.learned.LearnedModel` settings: ``trees``, ``log_target``,
        ``linear_base``, ``reduce_time``, ``reduce_importance`` (see
        :func:`parse_reductions`), ``folds``, ``seed``, ``transfer`` (``"map"`` or
        ``"tradaboost"`` or ``"map+tradaboost"``: how ``transfer_from`` is used).

    Returns
    -------
    LearnedModel
        With its cross-validated error, importances, reductions and warnings.

    Raises
    ------
    InputError
        For a bad table, a missing target or feature, a source of other features.
    ValueError
        For a setting outside its range.
    """
    from perfcast.model.learned import LearnedModel

    runs = table if not isinstance(table, str | Path) else load_run_table(table)
    source: RunTable | LearnedModel | None
    if isinstance(transfer_from, str | Path):
        path = Path(transfer_from)
        source = load_learned(path) if path.suffix == ".json" else load_run_table(path)
    else:
        source = transfer_from
    model = LearnedModel(method, **settings)
    return model.fit(runs, target, exclude=exclude, features=features, source=source)


def save_learned(model: LearnedModel, path: str | Path) -> None:
    """Write a learned model file (JSON, format ``perfcast-learned-model``).

    Raises
    ------
    InputError
        When the file cannot be written.
    """
    try:
        Path(path).write_text(dumps(model.to_json()) + "\n", encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", path) from None


def load_learned(path: str | Path) -> LearnedModel:
    """Read a learned model file written by :func:`save_learned`.

    The estimator inside is a pickle: load only files you trust.

    Raises
    ------
    InputError
        Naming the file when it is missing, not a learned model, damaged, or written by an
        incompatible perfcast or scikit-learn version (reason ``"incompatible-model"``).
    """
    import json

    from perfcast.core.jsonin import parse_json
    from perfcast.model.learned import LearnedModel

    try:
        data = parse_json(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no such file", path, reason="missing-file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"not a learned model file ({error})", path, reason="bad-model") from None
    return LearnedModel.from_json(data, path)


def predict_runs(
    model: LearnedModel, table: RunTable | str | Path, *, level: float = 0.95
) -> list[RunPrediction]:
    """Predict the target of every run of ``table`` (extra columns are ignored).

    Raises
    ------
    InputError
        When a feature column the model uses is missing (named) or of the wrong kind.
    """
    runs = table if not isinstance(table, str | Path) else load_run_table(table)
    return model.predict(runs, level=level)


def render_learned(
    value: LearnedModel | Sequence[RunPrediction],
    format: str = "text",  # noqa: A002 - as render's
    *,
    model_warnings: Sequence[str] = (),
) -> str:
    """A learned model (``text`` summary or its ``json`` file) or run predictions (``text``,
    ``json``, ``csv``); with predictions, ``model_warnings`` (the model's ``warnings_``, such
    as an untrustworthy cross-validated error) are shown in text and JSON.

    Raises
    ------
    ValueError
        For a format the value has no rendering in.
    """
    from perfcast.display.learned import format_run_predictions, learned_summary
    from perfcast.model.learned import LearnedModel

    if isinstance(value, LearnedModel):
        if format == "json":
            return dumps(value.to_json()) + "\n"
        if format != "text":
            raise ValueError(f"format: must be 'text' or 'json', not {format!r}")
        return learned_summary(value)
    return format_run_predictions(value, format, model_warnings)


def run_prediction_warnings(predictions: Sequence[RunPrediction]) -> str:
    """``row N: warning`` lines of the run predictions that carry warnings (empty if none)."""
    from perfcast.display.learned import format_prediction_warnings

    return format_prediction_warnings(predictions)


def learning_methods() -> tuple[str, ...]:
    """The methods :func:`learn` takes."""
    from perfcast.model.learned import AUTO, METHODS

    return (*METHODS, AUTO)


def transfer_methods() -> tuple[str, ...]:
    """The ways :func:`learn` transfers from ``transfer_from`` (its ``transfer`` setting)."""
    from perfcast.model.learned import TRANSFERS

    return TRANSFERS


def instrument_features(
    sources: Sequence[str | Path],
    output: str | Path,
    compile_args: Sequence[str] = (),
    *,
    parameters: Sequence[str] = (),
) -> list[InstrumentedSource]:
    """Rewrite C sources so that each run records its run-time features (libclang).

    Assignments to scalar variables outside loops, branch outcomes, loop trips and MPI calls
    and bytes become features named ``file:line:kind:name``; the copies in ``output`` build
    with the original command (the runtime header is copied beside them) and append one JSON
    line per run to ``$PERFCAST_FEATURES_FILE`` (read it with :func:`load_feature_records`).

    Parameters
    ----------
    sources : sequence of str or Path
    output : str or Path
        Directory for the instrumented copies, ``perfcast_features.h`` and ``features.json``.
    compile_args : sequence of str
        ``-I``/``-D`` flags the sources need to parse.
    parameters : sequence of str
        Variables holding the program's inputs: their first assignment is named by the
        variable alone.

    Returns
    -------
    list of InstrumentedSource
        Per source: its features and the sites left alone (spelled by macros).

    Raises
    ------
    InputError
        When a source is missing or does not parse.
    """
    from perfcast.static.features import instrument_features as instrument

    return instrument(sources, output, compile_args, parameters)


def load_feature_records(path: str | Path, *, phase: str = "exit") -> RunTable:
    """The run table of an instrumented program's feature records: one row per run, its
    ``time`` the run's elapsed seconds; ``phase="features_end"`` takes the features recorded
    when the early phase ended (``#pragma perfcast features_end``).

    Raises
    ------
    InputError
        Naming file and line of a malformed record.
    """
    from perfcast.io.run_table import read_feature_records

    return read_feature_records(path, phase)


def save_run_table(table: RunTable, path: str | Path) -> None:
    """Write a run table as CSV (or Parquet, by the suffix ``.parquet``).

    Raises
    ------
    InputError
        When the file cannot be written.
    """
    from perfcast.io.run_table import write_run_table

    write_run_table(table, path)
