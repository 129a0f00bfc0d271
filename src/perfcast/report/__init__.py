"""Renderings for people and scripts: model and prediction tables (:mod:`~perfcast.report.tables`),
diagnoses as text (:mod:`~perfcast.report.text`) and strict JSON (:mod:`~perfcast.report.jsonout`),
one self-contained HTML file with inline SVG (:mod:`~perfcast.report.html`,
:mod:`~perfcast.report.svg`) and PNG plots via matplotlib (:mod:`~perfcast.report.png`)."""
