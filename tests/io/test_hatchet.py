"""Hatchet / Thicket bridge, on GraphFrames hatchet's own Caliper reader builds from the real
LULESH series. Needs the optional extra ``perfcast[hatchet]`` (hatchet pins pandas < 3)."""

from __future__ import annotations

import pandas as pd
import pytest

from perfcast.core.errors import InputError
from perfcast.core.experiment import Metric
from perfcast.io.caliper import UNANNOTATED, read_caliper
from perfcast.io.hatchet_bridge import (
    from_graphframe,
    from_graphframes,
    from_thicket,
    to_graphframe,
)
from tests.io.importer_data import CALI_SERIES, RANKS, require

hatchet = pytest.importorskip("hatchet")
pytestmark = pytest.mark.slow  # hatchet and thicket take seconds to import and read

# hatchet names Caliper's columns by their aliases.
ALIASES = {
    "Avg time/rank": Metric("time_inclusive_rank_avg", "s"),
    "Min time/rank": Metric("time_inclusive_rank_min", "s"),
    "Max time/rank": Metric("time_inclusive_rank_max", "s"),
    "Total time": Metric("time_inclusive_rank_sum", "s"),
}
KEY = ["kernel", "metric", "p"]


@pytest.fixture(scope="module")
def files():
    return [require(CALI_SERIES) / f"{p}_cores.cali" for p in RANKS]


@pytest.fixture(scope="module")
def graphframes(files):
    return [hatchet.GraphFrame.from_caliperreader(str(f)) for f in files]


@pytest.fixture(scope="module")
def imported(files):
    return read_caliper(CALI_SERIES)


def without_unannotated(experiment):
    frame = experiment.frame
    return frame[frame.kernel != UNANNOTATED].sort_values(KEY).reset_index(drop=True)


def test_graphframes_give_the_same_experiment_as_the_caliper_importer(graphframes, imported):
    experiment = from_graphframes(graphframes, metrics=ALIASES)
    assert experiment.parameter_names == ("p",)
    assert experiment.metadata["parameter_keys"] == {"mpi.world.size": "p"}
    assert experiment.metrics == imported.metrics
    # hatchet drops Caliper's record outside any region; everything else is identical.
    assert len(experiment.kernels) == 45
    left = experiment.frame.sort_values(KEY).reset_index(drop=True)
    assert left.equals(without_unannotated(imported))


def test_one_graphframe_with_explicit_values(graphframes, imported):
    experiment = from_graphframe(graphframes[1], {"p": 64}, metrics=ALIASES)
    assert experiment.points().tolist() == [[64.0]]
    frame = experiment.frame.set_index(["kernel", "metric"])["value"]
    reference = imported.frame[imported.frame.p == 64].set_index(["kernel", "metric"])["value"]
    assert (
        frame[("main", "time_inclusive_rank_avg")] == reference[("main", "time_inclusive_rank_avg")]
    )
    with pytest.raises(InputError, match="one GraphFrame is one run"):
        from_graphframe(graphframes[0])


def test_unnamed_columns_keep_hatchets_names(graphframes):
    experiment = from_graphframe(graphframes[0], params={"mpi.world.size": "p"})
    assert set(experiment.metric_names) == set(ALIASES)
    assert experiment.metrics["Avg time/rank"].unit == ""


def test_thicket_profiles_are_runs(files, imported):
    thicket = pytest.importorskip("thicket")
    th = thicket.Thicket.from_caliperreader([str(f) for f in files], disable_tqdm=True)
    experiment = from_thicket(th, metrics=ALIASES)
    assert experiment.parameter_names == ("p",)
    left = experiment.frame.sort_values(KEY).reset_index(drop=True)
    assert left.equals(without_unannotated(imported))


def test_per_rank_rows_reduce_with_the_statistic(graphframes):
    frame = graphframes[0].dataframe
    tripled = frame.copy()
    tripled["Avg time/rank"] *= 3
    ranked = graphframes[0].deepcopy()
    ranked.dataframe = pd.concat([frame.assign(rank=0), tripled.assign(rank=1)]).set_index(
        "rank", append=True
    )
    for statistic, factor in (("max", 3.0), ("avg", 2.0), ("sum", 4.0)):
        experiment = from_graphframe(ranked, {"p": 27}, metrics=ALIASES, statistic=statistic)
        values = experiment.frame.set_index(["kernel", "metric"])["value"]
        main = frame.loc[frame["name"] == "main", "Avg time/rank"].item()
        name = f"time_inclusive_rank_avg_rank_{statistic}"
        assert values[("main", name)] == pytest.approx(main * factor, rel=1e-15)


def test_to_graphframe_round_trip(imported):
    graphframe = to_graphframe(imported, {"p": 125})
    back = from_graphframe(
        graphframe, {"p": 125}, metrics={name: imported.metrics[name] for name in imported.metrics}
    )
    expected = imported.frame[imported.frame.p == 125]
    expected = expected[expected.kernel != UNANNOTATED].sort_values(KEY).reset_index(drop=True)
    got = back.frame[back.frame.kernel != UNANNOTATED].sort_values(KEY).reset_index(drop=True)
    assert got.equals(expected)
    with pytest.raises(InputError, match="no measurements"):
        to_graphframe(imported, {"p": 100})


def test_hatchet_reads_our_json_split_file_like_we_do(tmp_path, imported):
    from tests.io.test_caliper import json_split_from_cali

    path = json_split_from_cali(CALI_SERIES / "216_cores.cali", tmp_path / "216.json")
    graphframe = hatchet.GraphFrame.from_caliper(str(path), node_ordering=False)
    attributes = {f"{s}#inclusive#sum#time.duration": f"time_inclusive_rank_{s}"
                  for s in ("avg", "min", "max", "sum")}  # fmt: skip
    assert sorted(graphframe.exc_metrics) == sorted(attributes)
    theirs = from_graphframe(graphframe, {"p": 216}, metrics=attributes)
    ours = read_caliper(path, params={"mpi.world.size": "p"})
    assert theirs.frame.sort_values(KEY).reset_index(drop=True).equals(without_unannotated(ours))
