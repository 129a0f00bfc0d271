"""Renderings of the diagnoses: text (:mod:`~perfcast.report.text`), strict JSON
(:mod:`~perfcast.report.jsonout`), one self-contained HTML file with inline SVG
(:mod:`~perfcast.report.html`, :mod:`~perfcast.report.svg`) and PNG plots via matplotlib
(:mod:`~perfcast.report.png`)."""
