"""Hypothesis budgets of the fuzz tests.

``fuzz`` is the fixed, derandomized budget of the default suite (the same examples on every
run, so a failure in CI reproduces locally); ``fuzz-long`` is the larger budget of the tests
marked slow, also derandomized, with a different seed space through its size.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fuzz",
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "fuzz-long",
    parent=settings.get_profile("fuzz"),
    max_examples=250,
)
