"""Renderings for people and scripts: model and prediction tables (:mod:`~perfcast.display.tables`),
diagnoses as text (:mod:`~perfcast.display.text`) and strict JSON (:mod:`~perfcast.core.jsonout`),
one self-contained HTML file with inline SVG (:mod:`~perfcast.display.html`,
:mod:`~perfcast.display.svg`) and PNG plots via matplotlib (:mod:`~perfcast.display.png`)."""
