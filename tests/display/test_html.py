"""The HTML report: self-contained, small enough, and drawn by a real headless Chromium."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from perfcast.analyze.diagnosis import diagnose
from perfcast.core.function import Uncertainty
from perfcast.display.html import build_report
from tests.analyze.synthetic import experiment, model
from tests.display.chromium import allow_inline_scripts, chromium, script_hash, with_script

P = [2, 4, 8, 16, 32, 64]


def _with_band(m, noise=0.04):
    covariance = np.diag([1e-6] + [(0.02 * t.coefficient) ** 2 for t in m.terms])
    return replace(m, uncertainty=Uncertainty(covariance, noise**2, dof=20, relative=True))


def small_report() -> str:
    truth = {
        "main->compute": lambda p: 100.0 / p,
        "main->MPI_Allreduce": lambda p: 0.02 * np.log2(p),
        "main->gather_on_root": lambda p: 0.01 * p,
    }
    models = [
        _with_band(model("main->compute", ["p"], 0.0, (100.0, {"p": (-1, 0)}))),
        _with_band(model("main->MPI_Allreduce", ["p"], 0.0, (0.02, {"p": (0, 1)}))),
        _with_band(model("main->gather_on_root", ["p"], 0.0, (0.01, {"p": (1, 0)}))),
    ]
    exp = experiment(truth, {"p": P}, repetitions=5, noise=0.04, seed=1)
    return build_report(exp, models, diagnose(exp, models, at={"p": 4096}), "test report")


def test_report_is_self_contained():
    html = small_report()
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(link|img|iframe)\b|<script[^>]+src=|@import|url\(", html)
    # the only URL is the SVG namespace name (an identifier, never fetched)
    assert set(re.findall(r"https?://[^\"' ]+", html)) == {"http://www.w3.org/2000/svg"}
    # each kernel chart: measurements with error bars, model curve, extrapolation, band
    chart = html[html.index('data-k="main-&gt;compute"') :]
    chart = chart[: chart.index("</details>")]
    assert chart.count("<circle") == len(P)
    assert 'stroke-dasharray="5 3"' in chart  # the extrapolation
    assert 'fill-opacity="0.18"' in chart  # the prediction band
    assert "target p=4096" in chart
    assert '<span class="bug">bug</span>' in html
    matrix = html[html.index('<table class="matrix">') :]
    matrix = matrix[: matrix.index("</table>")]
    assert matrix.count("<td class=n>") == len(P) * (len(P) - 1) // 2  # every pair n1 < n2


def _power(c: float, e: float):
    return lambda p: c * p**e


def test_report_for_1000_kernels_stays_under_10_mb():
    rng = np.random.default_rng(0)
    coefficients = rng.uniform(0.1, 100, 1000)
    exponents = rng.choice([-1, 0.5, 1], 1000)
    truth = {
        f"main->k{i}": _power(c, e)
        for i, (c, e) in enumerate(zip(coefficients, exponents, strict=True))
    }
    models = [
        _with_band(model(f"main->k{i}", ["p"], 0.0, (c, {"p": (e, 0)})))
        for i, (c, e) in enumerate(zip(coefficients, exponents, strict=True))
    ]
    exp = experiment(truth, {"p": P}, repetitions=3, noise=0.03)
    html = build_report(exp, models, diagnose(exp, models), "1000 kernels")
    size = len(html.encode("utf-8"))
    assert html.count("<details") == 1000
    assert size < 10 * 1024 * 1024, f"{size / 2**20:.1f} MiB"


@pytest.mark.slow
def test_chromium_draws_the_report_without_console_errors(tmp_path):
    dom, console = chromium(tmp_path, small_report(), "--dump-dom")
    assert console == []
    assert re.search(r'<body class="js-ready"', dom), "the inline script did not run"
    assert '<span id="shown">3</span>' in dom  # filled in by the script
    assert dom.count('<text class="readout"') == 3  # hover read-out added to each kernel chart
    charts = re.findall(r"<svg[^>]*class=\"chart\".*?</svg>", dom, flags=re.S)
    assert len(charts) == 3 + 1 + 2  # kernels, scaling error, hotspot profiles and differences
    curve = r'<path d="M[\d.]+,[\d.]+ [\d.]+,[\d.]+'
    assert all(
        re.search(curve, c) for c in charts[:1] + charts[2:]
    )  # scaling, differences, kernels
    assert charts[1].count("<rect") > 7 * 6  # hotspot profiles: stacked bars


@pytest.mark.slow
def test_hovering_a_kernel_chart_reads_out_the_model(tmp_path):
    hover = (
        "var svg=document.querySelector('svg[data-px]'),box=svg.getBoundingClientRect();"
        "svg.dispatchEvent(new MouseEvent('mousemove',"
        "{clientX:box.left+box.width/2,clientY:box.top+60,bubbles:true}));"
    )
    dom, console = chromium(tmp_path, with_script(small_report(), hover), "--dump-dom")
    assert console == []
    readout = re.search(r'<text class="readout"[^>]*>([^<]*)</text>', dom).group(1)
    assert re.fullmatch(r"p=[\d.e+]+: model [\d.e+-]+ \(95 %: [\d.e+-]+ to [\d.e+-]+\)", readout)
    assert re.search(r'<path class="cursor" d="M[\d.]+,14V184"', dom)


@pytest.mark.slow
def test_the_console_check_catches_a_script_error(tmp_path):
    broken = allow_inline_scripts(
        small_report().replace("<script>", "<script>undefinedFunction();", 1)
    )
    dom, console = chromium(tmp_path, broken, "--dump-dom")
    assert any("undefinedFunction is not defined" in line for line in console)
    assert '<body class="js-ready"' not in dom


def test_the_policy_allows_only_the_reports_own_script_and_style():
    html = small_report()
    head = html[: html.index("</head>")]
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', head)
    assert policy and policy.start() < head.index("<style>")  # in force before anything runs
    directives = dict(d.strip().split(" ", 1) for d in policy.group(1).split(";"))
    (script,) = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    (style,) = re.findall(r"<style>(.*?)</style>", html, flags=re.S)
    assert directives == {
        "default-src": "'none'",
        "script-src": script_hash(script),
        "style-src": script_hash(style),  # the same hash form applies to inline styles
        "base-uri": "'none'",
        "form-action": "'none'",
        "connect-src": "'none'",
    }
    assert not re.search(r"\son[a-z]+=", html)  # no event-handler attributes, which it would block


@pytest.mark.slow
def test_the_policy_blocks_script_that_escaping_would_miss(tmp_path):
    run = "document.title='PWNED-'+'csp'"
    click = "document.getElementById('link').click();"  # a test's script, allowed by its hash
    injected = (
        f'<img src=x onerror="{run}"><svg onload="{run}"></svg><script>{run}</script>'
        f'<a id="link" href="javascript:{run}">link</a><script>{click}</script></body>'
    )
    page = small_report().replace("</body>", injected)
    page = page.replace("script-src ", f"script-src {script_hash(click)} ", 1)
    dom, console = chromium(tmp_path, page, "--dump-dom")
    assert "<title>test report</title>" in dom and "PWNED-csp" not in dom
    assert re.search(r'<body class="js-ready"', dom), "the report's own script was blocked"
    blocked = " ".join(line for line in console if "Content Security Policy" in line)
    for what in ("inline event handler", "inline script", "JavaScript URL", "Loading the image"):
        assert what in blocked, console


@pytest.mark.slow
def test_chromium_screenshot(tmp_path):
    shot = tmp_path / "shot.png"
    chromium(tmp_path, small_report(), f"--screenshot={shot}", "--window-size=1200,2000")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000  # a blank page is ~10 KB


def test_report_of_two_parameters_plots_along_the_scale():
    truth = {"solve": lambda p, n: 1e-3 * n / p, "gather": lambda p, n: 0.002 * p + 0 * n}
    models = [
        _with_band(model("solve", ["p", "n"], 0.0, (1e-3, {"p": (-1, 0), "n": (1, 0)}))),
        _with_band(model("gather", ["p", "n"], 0.0, (0.002, {"p": (1, 0)}))),
    ]
    exp = experiment(truth, {"p": [2, 4, 8, 16], "n": [1e4, 4e4]}, repetitions=3, noise=0.02)
    html = build_report(exp, models, diagnose(exp, models, at={"p": 256}))
    assert "Other parameters at n=40000" in html
    chart = html[html.index('data-k="solve"') :]
    assert chart[: chart.index("</details>")].count("<circle") == 4  # the p values at n = 4e4


def test_a_hostile_parameter_name_is_escaped_everywhere():
    name = 'p<img src=x onerror="alert(1)">'
    truth = {"main->compute": lambda **kw: 100.0 / kw[name], "main->gather": lambda **kw: kw[name]}
    models = [
        _with_band(model("main->compute", [name], 0.0, (100.0, {name: (-1, 0)}))),
        _with_band(model("main->gather", [name], 0.0, (1.0, {name: (1, 0)}))),
    ]
    exp = experiment(truth, {name: P}, repetitions=3, noise=0.01, seed=2, roles={name: "processes"})
    html = build_report(exp, models, diagnose(exp, models, at={name: 4096}), "hostile")
    assert "Hotspot shift" in html  # the paragraph that once wrote the name unescaped
    assert "<img" not in html
    assert "onerror=" not in html.replace("onerror=&quot;", "")
    assert "p&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html


@pytest.mark.parametrize("log", [False, True])
def test_an_axis_over_values_beyond_a_double_still_has_ticks(log):
    from perfcast.display.svg import Axis

    axis = Axis(1.0, float("inf"), 0.0, 100.0, log)
    ticks = axis.ticks()
    assert ticks and all(np.isfinite(ticks))
    assert np.all(np.isfinite(axis(np.array([1.0, 1e308]))))


def test_the_report_lists_the_models_own_warnings_escaped():
    from perfcast.core.function import ModelWarning

    clean = small_report()
    assert "<h2>Model warnings</h2><p>None" in clean
    truth = {"main->a<b>": lambda p: 1.0 + 0.0 * p, "main->c": lambda p: 2.0 * p}
    warned = replace(
        model("main->a<b>", ["p"], 1.0),
        warnings=(ModelWarning("poor-fit", "misses by 40 % <really>"),),
    )
    models = [_with_band(warned), _with_band(model("main->c", ["p"], 0.0, (2.0, {"p": (1, 0)})))]
    exp = experiment(truth, {"p": P}, repetitions=3, noise=0.01, seed=3)
    html = build_report(exp, models, diagnose(exp, models, at={"p": 512}), "warned")
    assert "<li>main-&gt;a&lt;b&gt;: misses by 40 % &lt;really&gt;</li>" in html
