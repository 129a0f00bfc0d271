"""Models and predictions as text tables, markdown, CSV and JSON documents."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from perfcast.core.function import Model
from perfcast.core.jsonout import dumps
from perfcast.model.modelset import ModelSet
from perfcast.model.predict import Prediction

FORMATS = ("text", "json", "markdown", "csv")


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def model_rows(models: Sequence[Model]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the model table (quality figures formatted)."""
    header = ["kernel", "metric", "model", "SMAPE %", "adj R2", "CV SMAPE %", "LOF p"]
    rows = []
    for m in models:
        q = m.quality
        rows.append(
            [
                m.kernel,
                m.metric,
                m.expression(),
                _number(q.smape if q else None, ".2f"),
                _number(q.adj_r2 if q else None, ".4f"),
                _number(q.cv_smape if q else None, ".2f"),
                _number(q.lof_p if q else None, ".3f"),
            ]
        )
    return header, rows


def format_models(models: ModelSet, output_format: str) -> str:
    """Render models as ``text``, ``json`` (the :meth:`ModelSet.to_json` document), ``markdown``
    or ``csv``."""
    if output_format == "json":
        return models.to_json()
    if output_format == "csv":
        return _models_csv(models.models)
    header, rows = model_rows(models.models)
    return render_table(header, rows, output_format)


def _models_csv(models: Sequence[Model]) -> str:
    parameters = list(dict.fromkeys(p for m in models for p in m.parameters))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "kernel",
            "metric",
            "expression",
            "constant",
            "rss",
            "smape",
            "adj_r2",
            "cv_smape",
            "lof_p",
        ]
        + [f"lead_{p}" for p in parameters]
    )
    for m in models:
        q = m.quality.to_dict() if m.quality else {}
        writer.writerow(
            [m.kernel, m.metric, m.expression(digits=None), repr(m.constant)]
            + [
                "" if q.get(k) is None else q[k]
                for k in ("rss", "smape", "adj_r2", "cv_smape", "lof_p")
            ]
            + [m.lead_term(p) if p in m.parameters else "" for p in parameters]
        )
    return out.getvalue()


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]], output_format: str) -> str:
    """Aligned plain-text table (``text``) or a markdown table (``markdown``)."""
    if output_format == "markdown":
        escape = [[cell.replace("|", "\\|") for cell in row] for row in rows]
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in escape]
        return "\n".join(lines) + "\n"
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines += [
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    return "\n".join(lines) + "\n"


def format_predictions(predictions: Sequence[Prediction], output_format: str) -> str:
    """Render predictions (already ranked) in one of :data:`FORMATS`."""
    if output_format == "json":
        return dumps({"predictions": [p.to_dict() for p in predictions]}) + "\n"
    header = ["rank", "kernel", "metric", "at", "prediction", "interval", "model"]
    rows = [
        [
            str(i + 1),
            p.kernel,
            p.metric,
            ",".join(f"{k}={v:g}" for k, v in p.point.items()),
            f"{p.value:.6g}",
            f"[{p.lower:.4g}, {p.upper:.4g}] ({100 * p.level:g}%)",
            p.expression,
        ]
        for i, p in enumerate(predictions)
    ]
    if output_format == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["rank", "kernel", "metric", "at", "prediction", "lower", "upper", "level"])
        for i, p in enumerate(predictions):
            at = ",".join(f"{k}={v:g}" for k, v in p.point.items())
            writer.writerow([i + 1, p.kernel, p.metric, at, p.value, p.lower, p.upper, p.level])
        return out.getvalue()
    return render_table(header, rows, output_format)
