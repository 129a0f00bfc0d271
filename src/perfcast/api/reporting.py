"""Results as text, JSON, CSV and HTML: render, the HTML report, strict JSON text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.core import progress as progress_bars
from perfcast.core.errors import InputError
from perfcast.core.jsonout import dumps
from perfcast.core.points import parse_point
from perfcast.core.progress import ProgressBar

# The models and analyses (numpy, pandas, scipy) are imported where they are used, so that a
# command that renders only an instruction mix or JSON text does not load them.
if TYPE_CHECKING:
    from perfcast.analyze.advice import Advice
    from perfcast.analyze.compare import Comparison
    from perfcast.analyze.diagnosis import Diagnosis
    from perfcast.analyze.optimize import Optimum
    from perfcast.core.experiment import Experiment
    from perfcast.model.modelset import ModelSet
    from perfcast.model.predict import Prediction
    from perfcast.static.instruction_mix import InstructionMix


def report(
    experiment: Experiment,
    models: ModelSet | None = None,
    *,
    path: str | Path | None = None,
    title: str | None = None,
    metric: str | None = None,
    modeler: str = "pmnf",
    diagnosis: Diagnosis | None = None,
    png_directory: str | Path | None = None,
    progress: bool = False,
    **options: Any,
) -> str:
    """A self-contained HTML report: models, plots, warnings, scaling error, hotspot shifts.

    Parameters
    ----------
    experiment : Experiment
    models : ModelSet, optional
        Fitted with ``modeler`` when None.
    path : str or Path, optional
        Also write the report there.
    title : str, optional
        Default: from the experiment's source.
    metric : str, optional
    modeler : str
    diagnosis : Diagnosis, optional
        Of these models; made with ``options`` when None.
    png_directory : str or Path, optional
        Also write static PNG plots (matplotlib) there.
    progress : bool
        Show a progress bar of the kernel plots drawn on standard error, when it is a terminal
        and the work takes more than a second.
    **options
        Passed to :func:`diagnose`.

    Returns
    -------
    str
        The HTML document.

    Raises
    ------
    InputError
        When ``path`` cannot be written.
    """
    from perfcast.analyze.diagnosis import diagnose as run_diagnosis
    from perfcast.api.analysis import diagnosis_options, models_of_metric
    from perfcast.display.html import build_report

    experiment, chosen = models_of_metric(experiment, models, metric, modeler)
    if diagnosis is None:
        diagnosis = run_diagnosis(experiment, chosen, **diagnosis_options(experiment, options))
    modeler_name = models.modeler if models is not None else modeler
    bar = ProgressBar(len(diagnosis.ranking), unit="kernel plots", delay=progress_bars.API_DELAY)
    try:
        html = build_report(
            experiment,
            chosen,
            diagnosis,
            title,
            modeler_name,
            (lambda done: bar.advance(steps=done)) if progress else None,
        )
    finally:
        bar.close()
    if path is not None:
        try:
            Path(path).write_text(html, encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write: {error.strerror}", path) from None
    if png_directory is not None:
        from perfcast.display.png import write_pngs

        write_pngs(experiment, chosen, diagnosis, Path(png_directory))
    return html


def render(
    value: ModelSet
    | Sequence[Prediction]
    | Diagnosis
    | Comparison
    | Optimum
    | InstructionMix
    | Advice,
    format: str = "text",  # noqa: A002 - the documented keyword
    *,
    at: Mapping[str, float] | str | None = None,
    width: int | None = None,
    tree: bool = False,
) -> str:
    """A result as text for people or strict JSON (no NaN) for scripts.

    Parameters
    ----------
    value : ModelSet, list of Prediction, Diagnosis, Comparison, Optimum, InstructionMix or
        Advice
    format : str
        ``text`` or ``json``; model sets and predictions also ``markdown`` and ``csv``;
        instruction mixes also ``python`` (an importable module of the models).
    at : mapping of str to float, or str, optional
        Model sets: the point whose costs order the tables (``"p=4096"``; default: the
        largest measured values). The JSON document keeps the fitting order.
    width : int, optional
        Model sets and predictions: the width a ``text`` table fits in, model and kernel
        cells cut with an ellipsis where needed (default: as wide as its cells).
    tree : bool
        Model sets: the call tree of call-path kernels, exclusive and inclusive values apart,
        totals and shares from the exclusive ones.

    Returns
    -------
    str
        Ending in a newline.

    Raises
    ------
    ValueError
        For a format the value has no rendering in.
    InputError
        When ``at`` is malformed or misses a parameter of the models.
    """
    from perfcast.display.tables import FORMATS, format_models, format_predictions, format_tree
    from perfcast.model.modelset import ModelSet

    if isinstance(value, ModelSet | Sequence):
        if format not in FORMATS:
            raise ValueError(f"format: must be one of {', '.join(FORMATS)}, not {format!r}")
        if isinstance(value, ModelSet):
            point = parse_point(at, value.parameters, source="at") if isinstance(at, str) else at
            if tree:
                return format_tree(value, format, point, width)
            return format_models(value, format, point, width)
        return format_predictions(list(value), format, width)
    # Here, not above: the analyses need pandas, which printing models does not.
    from perfcast.analyze.advice import Advice
    from perfcast.analyze.compare import Comparison
    from perfcast.analyze.diagnosis import Diagnosis
    from perfcast.display.text import advice_text, comparison_text, diagnosis_text, optimum_text
    from perfcast.static.instruction_mix import InstructionMix

    if isinstance(value, InstructionMix):
        return _render_mix(value, format)
    if format == "json":
        return dumps(value.to_dict()) + "\n"
    if format != "text":
        raise ValueError(f"format: must be 'text' or 'json', not {format!r}")
    if isinstance(value, Advice):
        return advice_text(value)
    if isinstance(value, Diagnosis):
        return diagnosis_text(value)
    if isinstance(value, Comparison):
        return comparison_text(value)
    return optimum_text(value)


def render_warnings(value: ModelSet | Sequence[Prediction]) -> str:
    """The warnings of a model set's models (quality gates) or of predictions (far
    extrapolation), one line each, ``kernel: message``; empty when there are none.

    The same warnings are in the JSON of :func:`render` as each model's or prediction's
    ``warnings``.
    """
    from perfcast.display.tables import format_warnings
    from perfcast.model.modelset import ModelSet

    return format_warnings(value.models if isinstance(value, ModelSet) else list(value))


def _render_mix(mix: InstructionMix, format: str) -> str:  # noqa: A002 - as render's
    from perfcast.static.mix_output import mix_to_json, mix_to_python, mix_to_text

    if format == "json":
        return dumps(mix_to_json(mix)) + "\n"
    if format == "python":
        return mix_to_python(mix)
    if format != "text":
        raise ValueError(f"format: must be 'text', 'json' or 'python', not {format!r}")
    return mix_to_text(mix)


def json_text(value: Any) -> str:
    """Strict JSON text of ``value`` (NaN and infinities as null), indented, as every JSON
    output of perfcast is written.

    Parameters
    ----------
    value : Any
        Dictionaries, lists, strings, numbers (numpy ones too), booleans and None.

    Returns
    -------
    str
    """
    return dumps(value)
