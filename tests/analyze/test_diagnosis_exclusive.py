"""diagnose counts every callee once: its ranking shares and hotspot profiles of call-path data
come from exclusive values, whether the metric's values are inclusive or not."""

from __future__ import annotations

import pytest

import perfcast
from tests.analyze.synthetic import experiment

A = 60.0  # main->a costs A / p
B = 30.0  # main->b costs B / p
OWN = 10.0  # main's own part, constant


def _call_tree(metric: str, inclusive: bool) -> perfcast.Experiment:
    truth = {
        "main": (lambda p: OWN + (A + B) / p) if inclusive else (lambda p: OWN + 0 * p),
        "main->a": lambda p: A / p,
        "main->b": lambda p: B / p,
    }
    frame = experiment(truth, {"p": [2, 4, 8, 16, 32]}, repetitions=2).frame.assign(metric=metric)
    return perfcast.Experiment.from_frame(frame, [perfcast.Parameter("p", "processes")])


@pytest.mark.parametrize(
    ("metric", "inclusive"), [("time_inclusive", True), ("time", True), ("time", False)]
)
def test_ranking_shares_are_of_exclusive_values(metric, inclusive):
    exp = _call_tree(metric, inclusive)
    diagnosis = perfcast.diagnose(exp, metric=metric, at="p=64")
    shares = {r.kernel: r.share for r in diagnosis.ranking}
    own = {"main": OWN, "main->a": A / 64, "main->b": B / 64}
    total = sum(own.values())
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-9)
    for kernel, value in own.items():
        assert shares[kernel] == pytest.approx(value / total, rel=0.05)
    main = next(r for r in diagnosis.ranking if r.kernel == "main")
    assert main.exclusive == pytest.approx(OWN, rel=0.05)
    document = diagnosis.to_dict()
    assert document["values"] == ("inclusive" if inclusive else "exclusive")
    assert document["total_from"] == "exclusive"
    if inclusive:
        assert main.predicted == pytest.approx(OWN + (A + B) / 64, rel=0.05)
        assert "shares are of exclusive values" in perfcast.render(diagnosis)


def test_hotspot_profiles_count_callees_once():
    inclusive = perfcast.diagnose(_call_tree("time", True), at="p=64").hotspots
    exclusive = perfcast.diagnose(_call_tree("time", False), at="p=64").hotspots
    assert inclusive is not None and exclusive is not None
    assert inclusive.kernels == exclusive.kernels
    for one, other in zip(inclusive.steps, exclusive.steps, strict=True):
        assert one.total_variation == pytest.approx(other.total_variation, abs=0.02)
