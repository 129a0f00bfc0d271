"""Learned run-time models and their predictions as text, JSON and CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from perfcast.core.jsonout import dumps
from perfcast.model.learned import LearnedModel, RunPrediction

#: Formats of :func:`format_run_predictions`.
RUN_PREDICTION_FORMATS = ("text", "json", "csv")


def format_run_predictions(
    predictions: Sequence[RunPrediction],
    format: str,  # noqa: A002
    model_warnings: Sequence[str] = (),
) -> str:
    """One prediction per row of the table predicted.

    ``json`` is ``{"predictions": [{"row": 0, "prediction": 1.23, "interval": [1.1, 1.4]},
    ...]}`` (rows 0-based); a row with warnings has them as ``"warnings": [...]``, and the
    ``model_warnings`` (the learned model's, such as an untrustworthy error) are a top-level
    ``"warnings"`` list when there are any. ``text`` ends with both; ``csv`` has the rows'
    warnings in a column (the model's are not in it). See also
    :func:`format_prediction_warnings`.

    Raises
    ------
    ValueError
        For another format.
    """
    if format == "json":
        return (
            dumps(
                {
                    "predictions": [
                        {"row": p.row, "prediction": p.value, "interval": [p.lower, p.upper]}
                        | ({"warnings": list(p.warnings)} if p.warnings else {})
                        for p in predictions
                    ]
                }
                | ({"warnings": list(model_warnings)} if model_warnings else {})
            )
            + "\n"
        )
    if format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["row", "prediction", "lower", "upper", "warnings"])
        for p in predictions:
            writer.writerow([p.row, repr(p.value), repr(p.lower), repr(p.upper),
                             "; ".join(p.warnings)])  # fmt: skip
        return buffer.getvalue()
    if format != "text":
        raise ValueError(
            f"format: must be one of {', '.join(RUN_PREDICTION_FORMATS)}, not {format!r}"
        )
    lines = [f"{'row':>5}  {'prediction':>12}  {'interval':>27}"]
    for p in predictions:
        mark = "  !" if p.warnings else ""
        lines.append(f"{p.row:>5}  {p.value:>12.5g}  [{p.lower:>11.5g}, {p.upper:>11.5g}]{mark}")
    warnings = format_prediction_warnings(predictions)
    warnings += "".join(f"model: {w}\n" for w in model_warnings)
    if warnings:
        lines.append("")
        lines.append("! " + warnings.rstrip("\n").replace("\n", "\n! "))
    return "\n".join(lines) + "\n"


def format_prediction_warnings(predictions: Sequence[RunPrediction]) -> str:
    """``row N: warning`` lines for the predictions that carry warnings (empty if none)."""
    return "".join(f"row {p.row}: {w}\n" for p in predictions for w in p.warnings)


def learned_summary(model: LearnedModel) -> str:
    """What was learned, for people: method, error, features by importance, reductions,
    collection overhead, transfer, warnings."""
    settings = model.get_params()
    target = f"log({model.target_})" if model.log_target_ else model.target_
    lines = [
        f"learned {target} with {settings['method']} from {model.runs_} runs",
        f"cross-validated mean relative error: {model.cv_error_:.1%} "
        f"({min(settings['folds'], model.runs_)} folds)",
    ]
    if model.selection_ is not None:
        errors = model.selection_["errors"]
        tried = ", ".join(f"{m} {e:.1%}" for m, e in sorted(errors.items(), key=lambda i: i[1]))
        lines.append(
            f"method chosen by cross-validation on these runs (the least error is optimistic "
            f"for the one kept): {tried}"
        )
        for method, why in model.selection_["skipped"].items():
            lines.append(f"  not tried: {method}: {why}")
    if model.transfer_ is not None and "step" in model.transfer_:
        transfer = model.transfer_
        mapped = (
            f"mapped by log t = {transfer['offset']:.3g} + {transfer['slope']:.3g} log t_source "
            "and "
            if "slope" in transfer
            else ""
        )
        lines.append(
            f"transfer: {transfer['source_runs']} source runs {mapped}re-weighted by two-stage "
            f"TrAdaBoost.R2, step {transfer['step'] + 1} of {transfer['steps']} kept "
            f"(source weight {transfer['source_weight']:.1%}); "
            f"error without them: {transfer['error_without_source']:.1%}"
        )
    elif model.transfer_ is not None:
        transfer = model.transfer_
        lines.append(
            f"transfer: {transfer['source_runs']} source runs mapped by "
            f"log t = {transfer['offset']:.3g} + {transfer['slope']:.3g} log t_source; "
            f"error without them: {transfer['error_without_source']:.1%}"
        )
    lines.append("features (share of importance):")
    for name, share in model.importances_.items():
        lines.append(f"  {share:7.1%}  {name}")
    for dropped in model.dropped_:
        lines.append(f"dropped {dropped.feature} ({dropped.reduction}): {dropped.reason()}")
    if model.overhead_:
        lines.append(
            f"feature collection cost: {model.overhead_['before']:.2%} of the run time, "
            f"{model.overhead_['after']:.2%} for the features kept"
        )
    expression = model.expression()
    if expression is not None:
        lines.append(f"model: {expression}")
    lines.extend(f"warning: {w}" for w in model.warnings_)
    return "\n".join(lines) + "\n"
