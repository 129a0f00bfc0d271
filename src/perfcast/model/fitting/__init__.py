"""The fitting machinery every modeler shares.

:mod:`~perfcast.model.fitting.blocks` (building blocks of the PMNF and their values),
:mod:`~perfcast.model.fitting.candidates` (predictor generation: allowed blocks, marginal means,
candidate factors and their products), :mod:`~perfcast.model.fitting.least_squares` (batched
weighted least squares over many kernels and hypotheses), :mod:`~perfcast.model.fitting.selection`
(forward F-tests and AICc), :mod:`~perfcast.model.fitting.data` with
:mod:`~perfcast.model.fitting.location` and :mod:`~perfcast.model.fitting.moderation` (a series'
statistics, point estimators, noise moderation), :mod:`~perfcast.model.fitting.quality` (quality
measures and uncertainty) and :mod:`~perfcast.model.fitting.assembly` (chosen hypotheses to
:class:`~perfcast.core.function.Model` objects).
"""
