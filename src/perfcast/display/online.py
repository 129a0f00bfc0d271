"""Text and JSON of online modeling results: per kernel the model, the latest batch's PARS and
lack-of-fit p-value, the counts, the warnings and the performance exceptions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from perfcast.core.jsonout import dumps

#: The output formats of :func:`render_online`.
ONLINE_FORMATS = ("text", "json")
#: Exceptions listed per kernel in text (JSON lists them all).
TEXT_EXCEPTIONS = 5


def _figure(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def render_online(summaries: Sequence[dict[str, Any]], format: str = "text") -> str:  # noqa: A002
    """Render kernel summaries (``perfcast.model.online.summary_of``).

    Parameters
    ----------
    summaries : sequence of dict
    format : {"text", "json"}
        ``json`` is ``{"kernels": [summary, ...]}``.

    Returns
    -------
    str
        Ends with a newline.
    """
    if format == "json":
        return dumps({"kernels": list(summaries)}) + "\n"
    if format != "text":
        raise ValueError(f"format must be one of {', '.join(ONLINE_FORMATS)}, not {format!r}")
    if not summaries:
        return "no kernels\n"
    lines = []
    for item in summaries:
        model = item["model"]
        expression = (
            "no model yet (too few configurations)" if model is None else model["expression"]
        )
        lines.append(f"{item['kernel']} [{item['metric']}]: {expression}")
        lines.append(
            f"  PARS {_figure(item['pars'])}, lack-of-fit p {_figure(item['lof_p'])}, "
            f"{item['updates']} update(s), {item['measured']} measured, "
            f"{item['skipped']} skipped, {len(item['exceptions'])} exception(s)"
        )
        for warning in [] if model is None else model.get("warnings", []):
            lines.append(f"  warning: {warning['message']}")
        for exception in item["exceptions"][:TEXT_EXCEPTIONS]:
            point = ", ".join(f"{k}={v:g}" for k, v in exception["params"].items())
            low, high = exception["interval"]
            lines.append(
                f"  exception at #{exception['index']} ({point}): {exception['value']:.4g}, "
                f"predicted {exception['predicted']:.4g} in [{_figure(low, 4)}, "
                f"{_figure(high, 4)}]"
            )
        hidden = len(item["exceptions"]) - TEXT_EXCEPTIONS
        if hidden > 0:
            lines.append(f"  ... and {hidden} more exception(s) (the JSON form lists all)")
    return "\n".join(lines) + "\n"
