"""Renderings for people and scripts: model and prediction tables (:mod:`~perfcast.render.tables`),
diagnoses as text (:mod:`~perfcast.render.text`) and strict JSON (:mod:`~perfcast.core.jsonout`),
one self-contained HTML file with inline SVG (:mod:`~perfcast.render.html`,
:mod:`~perfcast.render.svg`) and PNG plots via matplotlib (:mod:`~perfcast.render.png`)."""
