"""The core every layer builds on: the data model (:mod:`~perfcast.core.experiment`), scaling
functions (:mod:`~perfcast.core.function`), errors (:mod:`~perfcast.core.errors`), the progress
bar (:mod:`~perfcast.core.progress`) and the version (:mod:`~perfcast.core.version`).

Nothing here imports any other part of perfcast.
"""
