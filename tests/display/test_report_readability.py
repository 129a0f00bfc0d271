"""The report reads right: legends, distinct engineering-notation ticks, full titles, a note on
what the scale parameter means, and totals that count inclusive kernels once."""

from __future__ import annotations

import re

import numpy as np
import pytest

import perfcast
from perfcast.analyze.exclusive import exclusive_values, is_inclusive_metric
from perfcast.display.svg import Chart, tick_labels
from tests.analyze.bug_example import bug_experiment
from tests.analyze.synthetic import experiment
from tests.display.chromium import chromium

Y_TICK = re.compile(r'<text x="\d+" y="[\d.]+" text-anchor="end" dy="3">([^<]*)</text>')


@pytest.fixture(scope="module")
def bug_report():
    exp = bug_experiment()
    models = perfcast.fit(exp)
    return exp, models, perfcast.report(exp, models, title="bug example")


@pytest.mark.parametrize(
    ("values", "labels"),
    [
        ([10000, 12000, 14000, 16000], ["10000", "12000", "14000", "16000"]),
        ([1e5, 1.2e5, 1.4e5], ["100k", "120k", "140k"]),
        ([1.5e6, 2e6, 2.5e6], ["1.5M", "2M", "2.5M"]),
        ([1e-5, 1.2e-5, 1.4e-5], ["10µ", "12µ", "14µ"]),
        ([0, 0.2, 0.4, 0.6], ["0", "0.2", "0.4", "0.6"]),
        ([1e-9, 1e-6, 1e-3, 1, 1e3], ["1n", "1µ", "1m", "1", "1k"]),
        ([131072, 262144, 524288], ["131k", "262k", "524k"]),
        ([99999.6, 100000.4], ["99.9996k", "100k"]),
    ],
)
def test_tick_labels_are_distinct_engineering_notation(values, labels):
    assert tick_labels(values) == labels


def test_a_narrow_axis_of_large_values_repeats_no_label():
    # once labelled 1e5 1e5 1e5 1e5
    chart = Chart((1.0, 64.0), (100500.0, 103500.0), x_log=True)
    ticks = Y_TICK.findall(chart.svg())
    assert len(ticks) >= 3 and len(set(ticks)) == len(ticks)
    assert all(re.fullmatch(r"10\d(\.\d+)?k", t) for t in ticks), ticks


def test_every_chart_of_the_report_has_distinct_ticks_and_kernel_charts_a_legend(bug_report):
    _, models, html = bug_report
    charts = re.findall(r"<svg[^>]*class=\"chart\".*?</svg>", html, flags=re.S)
    assert charts
    for chart in charts:
        ticks = Y_TICK.findall(chart)
        assert len(set(ticks)) == len(ticks), ticks
    cards = re.findall(r'<details class="card".*?</details>', html, flags=re.S)
    assert len(cards) == len(models.models)
    for card in cards:
        for entry in ("mean (min–max)", "model", "extrapolated", "95 % interval"):
            assert f'class="note">{entry}</text>' in card


def test_titles_are_whole(bug_report):
    _, models, html = bug_report
    for model in models.models:
        name = model.kernel.replace(">", "&gt;")
        assert f"<summary>{name}</summary>" in html  # the card title, wrapped not cut
        assert f"<title>{name}</title>" in html  # the chart's accessible name, shown on hover
    assert "text-overflow:ellipsis" not in html
    # a cut legend entry of the hotspot chart carries the full name on hover
    cut = re.search(r'class="note"><title>([^<]*)</title>([^<]*…)</text>', html)
    assert cut is not None and cut.group(2)[:-1] in cut.group(1)


def test_the_note_tells_a_problem_size_sweep_from_process_scaling(bug_report):
    exp, models, html = bug_report
    note = re.search(r'<p class="note-box">(.*?)</p>', html).group(1)
    assert "process scaling, strong" in note and "n: problem size, problem-size sweep" in note
    along_n = perfcast.report(exp, models, scale="n")
    note = re.search(r'<p class="note-box">(.*?)</p>', along_n).group(1)
    assert "a problem-size sweep" in note and "this is not process scaling" in note
    assert "weak" not in note
    assert "Not computed along n (problem-size sweep" in along_n


def _call_tree(metric: str, inclusive: bool):
    a = lambda p: 60.0 / p  # noqa: E731
    b = lambda p: 30.0 / p  # noqa: E731
    own = lambda p: 10.0 + 0 * p  # noqa: E731
    truth = {
        "main": (lambda p: own(p) + a(p) + b(p)) if inclusive else own,
        "main->a": a,
        "main->b": b,
    }
    frame = experiment(truth, {"p": [2, 4, 8, 16]}, repetitions=2).frame.assign(metric=metric)
    return perfcast.Experiment.from_frame(frame, [perfcast.Parameter("p", "processes")])


@pytest.mark.parametrize(
    ("metric", "inclusive"),
    [("time_inclusive", True), ("time", True), ("time", False), ("visits", False)],
)
def test_totals_and_shares_come_from_exclusive_values(metric, inclusive):
    exp = _call_tree(metric, inclusive)
    assert is_inclusive_metric(exp, metric) == inclusive
    html = perfcast.report(exp, metric=metric, at="p=16")
    total = float(re.search(r"predicted total at target</th><td>([\d.e+-]+)", html).group(1))
    # at p = 16: main's own 10, a 3.75, b 1.875, counted once each
    assert total == pytest.approx(10 + 60 / 16 + 30 / 16, rel=0.02)
    shares = {
        kernel: float(share)
        for kernel, share in re.findall(
            r'<tr data-k="([^"]*)">.*?<td class=n data-v="[^"]*">([\d.]+) %</td><td class=n',
            html,
        )
    }
    assert sum(shares.values()) == pytest.approx(100, abs=0.3)
    assert shares["main"] == pytest.approx(100 * 10 / total, abs=0.3)
    assert ("sum of exclusive values" in html) == inclusive


def test_exclusive_values_subtract_the_nearest_kernel_descendants():
    kernels = ["main", "main->a", "main->a->x->y", "main->b", "other"]
    values = np.array([10.0, 6.0, 2.0, 3.0, 1.0])
    assert exclusive_values(kernels, values).tolist() == [1.0, 4.0, 2.0, 3.0, 1.0]


@pytest.mark.slow
def test_chromium_draws_the_bug_report_without_console_errors(tmp_path, bug_report):
    _, _, html = bug_report
    dom, console = chromium(tmp_path, html, "--dump-dom")
    assert console == []
    assert '<body class="js-ready"' in dom
    assert dom.count('class="note">95 % interval</text>') == 7
