"""A report of input whose every name is an attack: nothing injected runs, every name reads back.

Reports get mailed around, so a measurement file must not be able to run script in the reader's
browser. Each field of the input carries payloads for every context the report writes text into
(element text, quoted and unquoted attributes, ``<title>``, ``<script>``, comments, SVG). A payload
that runs writes ``PWNED-<field>`` to the console and into the document title; that text is
assembled at run time, so it appears in the browser's output only if a payload ran.

The Chromium test is not marked slow (about 3 s): it is the check that matters most for a report.
"""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import perfcast
from tests.display.chromium import chromium, with_script

P = [2, 4, 8, 16, 32, 64]


def hostile(field: str) -> str:
    """Text that breaks out of any HTML, SVG or script context unless escaped for it."""
    run = f"console.error('PWNED-'+'{field}');document.title='PWNED-'+'{field}'"
    return " ".join(
        [
            f'"><img src=x onerror="{run}">',
            f"'><img src=x onerror={run}>",
            f"</script><script>{run}</script>",
            f"</title><script>{run}</script>",
            f"<!--<script>{run}</script>-->",
            f"javascript:{run}",
            f"<svg onload={run}>",
            "&amp; & ' \" ` \\u003c ]]>",
        ]
    )


PARAMETER = hostile("parameter")
METRIC = hostile("metric")
KERNELS = [f"{hostile(f'kernel{i}')}->{hostile(f'leaf{i}')}" for i in range(3)]
FIELDS = {
    "source": hostile("source"),
    "title": hostile("title"),
    "unit": hostile("unit"),
    "metadata key": hostile("metadata-key"),
    "metadata value": hostile("metadata-value"),
    "modeler": hostile("modeler"),
}


def hostile_report(title: str | None = None) -> str:
    """The report, through the public API, of three kernels whose every name is hostile."""
    truth = [lambda p: 100.0 / p, lambda p: 0.02 * np.log2(p) + 0.5, lambda p: 0.01 * p]
    rng = np.random.default_rng(3)
    rows = [
        {"kernel": kernel, "metric": METRIC, PARAMETER: p, "value": f(p) * rng.normal(1, 0.01)}
        for _ in range(3)
        for kernel, f in zip(KERNELS, truth, strict=True)
        for p in P
    ]
    experiment = perfcast.Experiment.from_frame(
        pd.DataFrame(rows),
        [perfcast.Parameter(PARAMETER, "processes")],
        [perfcast.Metric(METRIC, FIELDS["unit"])],
        metadata={FIELDS["metadata key"]: FIELDS["metadata value"]},
        source=FIELDS["source"],
    )
    fitted = perfcast.fit(experiment)
    models = perfcast.ModelSet(fitted.models, modeler=FIELDS["modeler"])
    return perfcast.report(experiment, models, title=title, at={PARAMETER: 4096})


class _Elements(HTMLParser):
    """Every element and attribute of a document, and the text of each element, as a browser's
    tokenizer sees them (script content is raw text, entities are decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: dict[str, list[str]] = {}
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag) :]

    def handle_data(self, data: str) -> None:
        if self._open:
            self.text.setdefault(self._open[-1], []).append(data)


def _elements(document: str) -> _Elements:
    parser = _Elements()
    parser.feed(document)
    parser.close()
    return parser


@pytest.mark.parametrize("title", [None, FIELDS["title"]], ids=["title from source", "title"])
def test_hostile_names_stay_text_in_every_field(title):
    document = hostile_report(title)
    # the text holds no markup an attacker wrote: one script, no comment, no image, no handler
    assert document.count("<script") == 1 and document.count("</script") == 1
    assert "<img" not in document and "<svg onload" not in document and "<!--" not in document
    assert "</title><script" not in document
    parsed = _elements(document)
    assert [tag for tag, _ in parsed.tags].count("script") == 1
    assert {tag for tag, _ in parsed.tags} <= {
        "html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "table", "thead",
        "tbody", "tr", "th", "td", "span", "code", "a", "div", "details", "summary", "input",
        "button", "script", "svg", "path", "circle", "rect", "text",
    }  # fmt: skip
    for tag, attributes in parsed.tags:
        assert not [name for name in attributes if name.startswith("on")], (tag, attributes)
        assert tag != "a" or re.fullmatch(r"#k\d+", attributes["href"] or "")
    # and every name reads back exactly, neither lost nor escaped twice
    texts = {tag: "".join(parts) for tag, parts in parsed.text.items()}
    expected_title = title or f"perfcast report: {FIELDS['source']}"
    assert texts["title"].startswith(expected_title)  # the SVG titles follow the document's
    assert texts["h1"] == expected_title
    assert sorted(parsed.text["summary"]) == sorted(KERNELS)
    rows = [a["data-k"] for tag, a in parsed.tags if tag == "tr" and "data-k" in a]
    assert sorted(rows) == sorted(KERNELS)
    readout_names = {a["data-name"] for tag, a in parsed.tags if tag == "svg" and "data-name" in a}
    assert readout_names == {PARAMETER}
    cells = set(parsed.text["td"]) | set(parsed.text["th"])
    for name in (METRIC, PARAMETER, FIELDS["metadata key"], FIELDS["metadata value"]):
        assert name in cells, name
    assert any(FIELDS["modeler"] == cell for cell in cells)
    assert any(FIELDS["unit"] in text for text in parsed.text["text"])  # the y-axis titles


FILTER = "+'kernel1'\""  # quotes of both kinds: the filter reads names from data-k attributes
EXERCISE = """(function(){
  var out={},table=document.getElementById('kernels'),filter=document.getElementById('filter');
  function keys(){return Array.prototype.filter.call(table.tBodies[0].rows,function(r){
    return r.style.display!=='none';}).map(function(r){return r.getAttribute('data-k');});}
  out.before=keys();
  filter.value=QUERY;filter.dispatchEvent(new Event('input'));
  out.filtered=keys();out.shown=document.getElementById('shown').textContent;
  out.cards=Array.prototype.filter.call(document.querySelectorAll('.card'),function(c){
    return c.style.display!=='none';}).map(function(c){return c.getAttribute('data-k');});
  filter.value='';filter.dispatchEvent(new Event('input'));
  table.tHead.rows[0].cells[3].click();out.sorted=keys();
  Array.prototype.forEach.call(document.querySelectorAll('.card'),function(c){c.open=false;});
  document.getElementById('expand').click();
  out.open=document.querySelectorAll('details.card[open]').length;
  var svg=document.querySelector('svg[data-px]'),box=svg.getBoundingClientRect();
  svg.dispatchEvent(new MouseEvent('mousemove',
    {clientX:box.left+box.width/2,clientY:box.top+60,bubbles:true}));
  out.readout=svg.querySelector('text.readout').textContent;
  document.body.setAttribute('data-result',JSON.stringify(out));
})();"""


def _script_literal(value: str) -> str:
    """A JavaScript string literal that cannot end the script element it sits in."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def test_no_hostile_name_runs_in_chromium_and_the_report_still_works(tmp_path):
    page = with_script(hostile_report(), EXERCISE.replace("QUERY", _script_literal(FILTER)))
    dom, console = chromium(tmp_path, page, "--dump-dom")
    assert console == []  # no payload ran, nothing the policy blocked, no script error
    assert not re.search(r"PWNED-\w", dom)  # the payloads' source holds only "PWNED-'+'"
    title = re.search(r"<title>(.*?)</title>", dom, flags=re.S).group(1)
    assert html.unescape(title) == f"perfcast report: {FIELDS['source']}"
    result = json.loads(html.unescape(re.search(r'data-result="([^"]*)"', dom).group(1)))
    assert sorted(result["before"]) == sorted(KERNELS)
    assert result["filtered"] == result["cards"] == [KERNELS[1]] and result["shown"] == "1"
    assert result["sorted"] == result["before"][::-1]  # by share, ascending
    assert result["open"] == len(KERNELS)
    assert result["readout"].startswith(f"{PARAMETER}=")
