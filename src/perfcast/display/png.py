"""Static PNG plots for papers (needs matplotlib: ``pip install perfcast[report]``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from perfcast.analyze.diagnosis import Diagnosis
from perfcast.core.errors import InputError, WorkError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.display.html import measurement_table, plot_setting


def _file_name(kernel: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", kernel).strip("_")[:120] or "kernel"


def write_pngs(
    experiment: Experiment,
    models: Sequence[Model],
    diagnosis: Diagnosis,
    directory: Path,
    top: int = 20,
) -> list[Path]:
    """Write one PNG per kernel (the ``top`` most expensive plus every flagged one), the
    scaling error and the hotspot shift into ``directory``; returns the files written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise WorkError("PNG figures need matplotlib: pip install 'perfcast[report]'") from error
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"cannot create: {error.strerror}", directory) from None
    scale, target = diagnosis.scale, diagnosis.target[diagnosis.scale]
    setting = plot_setting(experiment, scale)
    measured = measurement_table(experiment, diagnosis.metric, scale, setting)
    by_kernel = {m.kernel: m for m in models}
    chosen = [r.kernel for r in diagnosis.ranking[:top]]
    chosen += [b.kernel for b in diagnosis.flagged if b.kernel not in chosen]
    written = []
    for kernel in chosen:
        model = by_kernel[kernel]
        figure, axes = plt.subplots(figsize=(4.5, 3.2), dpi=150)
        low = target / 8
        if kernel in measured:
            rows = measured[kernel]
            low = rows.x.min()
            errors = np.vstack([rows.mean - rows.low, rows.high - rows.mean])
            axes.errorbar(
                rows.x,
                rows.mean,
                yerr=errors,
                fmt="o",
                color="black",
                ms=3,
                capsize=2,
                label="measured",
            )
        xs = np.geomspace(low, target, 96)
        columns = {n: np.full(len(xs), v) for n, v in setting.items()}
        columns[scale] = xs
        prediction, lower, upper = model.predict_interval(columns)
        axes.fill_between(xs, lower, upper, alpha=0.2, label="95 % prediction")
        axes.plot(xs, prediction, label=model.expression(digits=3))
        axes.set_xscale("log", base=2)
        axes.set_xlabel(scale)
        axes.set_ylabel(diagnosis.metric)
        axes.set_title(kernel, fontsize=8)
        axes.legend(fontsize=6)
        figure.tight_layout()
        path = directory / f"{_file_name(kernel)}.png"
        figure.savefig(path)
        plt.close(figure)
        written.append(path)
    scaling = diagnosis.modeled
    first = [] if scaling is None else [e for e in scaling.errors if e.n1 == scaling.scales[0]]
    if first:
        figure, axes = plt.subplots(figsize=(4.5, 3.2), dpi=150)
        axes.plot([e.n2 for e in first], [e.error for e in first], "o-", label="models")
        for measured_scaling in diagnosis.measured:
            row = [e for e in measured_scaling.errors if e.n1 == measured_scaling.scales[0]]
            axes.plot([e.n2 for e in row], [e.error for e in row], "s--", label="measured")
        axes.set_xscale("log", base=2)
        axes.set_xlabel(f"n2 = {scale}")
        axes.set_ylabel(f"{diagnosis.mode} scaling error")
        axes.legend(fontsize=6)
        figure.tight_layout()
        path = directory / "scaling_error.png"
        figure.savefig(path)
        plt.close(figure)
        written.append(path)
    if diagnosis.hotspots is not None and diagnosis.hotspots.steps:
        shift = diagnosis.hotspots
        figure, axes = plt.subplots(figsize=(4.5, 3.2), dpi=150)
        ends = [s.end for s in shift.steps]
        axes.plot(ends, [s.kendall_distance for s in shift.steps], "o-", label="Kendall distance")
        axes.plot(ends, [s.total_variation for s in shift.steps], "s-", label="total variation")
        axes.plot(ends, [1 - s.chi_square_p for s in shift.steps], "^-", label="chi-square 1-p")
        axes.set_xscale("log", base=2)
        axes.set_xlabel(f"step ending at {shift.parameter}")
        axes.set_ylabel("profile difference")
        axes.legend(fontsize=6)
        figure.tight_layout()
        path = directory / "hotspot_shift.png"
        figure.savefig(path)
        plt.close(figure)
        written.append(path)
    return written
