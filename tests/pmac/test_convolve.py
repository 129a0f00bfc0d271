"""Convolution against a hand computation; machine profiles with missing entries."""

from __future__ import annotations

import json

import pytest

from perfcast.analyze.convolve import convolve, streaming_share
from perfcast.api import render_pmac
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.io.machine_profile import read_machine

MACHINE = {
    "format": "perfcast-machine",
    "version": 1,
    "name": "hand",
    "memory": {
        "load": {"l1": 100.0, "ll": 20.0, "memory": 5.0},
        "store": {"l1": 50.0, "ll": 10.0, "memory": 2.5},
    },
    "fp": {"add.f64.scalar": 2.0, "mul.f64.vector": 8.0},
}


def _write(tmp_path, data, name="machine.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2))
    return path


def _two_blocks(ll_rate: str = "ll.cumulative_hit_rate") -> Experiment:
    # solve: 75 % of the accesses hit the first level, 87.5 % hit at or above the last level
    # (the earlier format's local rate: half of the first-level misses, 0.5)
    solve_ll = 0.875 if ll_rate == "ll.cumulative_hit_rate" else 0.5
    features = {
        "bb:solve+0x10": {
            "bytes.loaded": 8e9,
            "bytes.stored": 1e9,
            "l1.hit_rate": 0.75,
            ll_rate: solve_ll,
            "fp.add.f64.scalar": 4e9,
        },
        "bb:setup+0x0": {"bytes.loaded": 2e9, "l1.hit_rate": 1.0, ll_rate: 1.0,
                         "fp.mul.f64.vector": 16e9},
        "fn:solve": {"bytes.loaded": 1e20},  # aggregate levels are not summed again
    }  # fmt: skip
    kernels, metrics, values = [], [], []
    for kernel, row in features.items():
        for metric, value in row.items():
            kernels.append(kernel)
            metrics.append(metric)
            values.append(value)
    return Experiment.from_columns(kernels, metrics, {"p": [64] * len(values)}, values)


@pytest.mark.parametrize("overlap", [0.0, 1.0, 0.25])
def test_convolution_matches_a_hand_computation(tmp_path, overlap):
    machine = read_machine(_write(tmp_path, {**MACHINE, "overlap": overlap}))
    result = convolve(_two_blocks(), machine)
    # solve: per loaded byte h1/B_l1 + (hc - h1)/B_ll + (1 - hc)/B_memory
    #   = 0.75/100e9 + 0.125/20e9 + 0.125/5e9 = 0.0075 + 0.00625 + 0.025 ns
    load_cost = 0.75 / 100e9 + 0.125 / 20e9 + 0.125 / 5e9
    store_cost = 0.75 / 50e9 + 0.125 / 10e9 + 0.125 / 2.5e9
    solve_memory = 8e9 * load_cost + 1e9 * store_cost
    assert solve_memory == pytest.approx(0.31 + 0.0775)  # the hand figures, in seconds
    solve_fp, setup_memory, setup_fp = 4e9 / 2e9, 2e9 / 100e9, 16e9 / 8e9
    # the longer of fp and memory, plus the part of the shorter that does not overlap
    solve = solve_fp + (1 - overlap) * solve_memory
    setup = setup_fp + (1 - overlap) * setup_memory
    assert result.functions["solve"] == pytest.approx(solve, rel=1e-12)
    assert result.functions["setup"] == pytest.approx(setup, rel=1e-12)
    assert result.total == pytest.approx(solve + setup, rel=1e-12)
    if overlap == 0.0:  # the sum, as in earlier versions
        assert result.total == pytest.approx(0.3875 + 2.0 + 0.02 + 2.0)
    assert result.point == {"p": 64.0}
    assert len(result.warnings) == 1 and result.warnings[0].startswith("computation only")
    assert "no 'core' figures" in result.warnings[0]


def test_streams_instructions_and_mispredictions_follow_the_hand_computation(tmp_path):
    data = {
        **MACHINE,
        "cache": {"D1": {"size": 32768, "associativity": 8, "line": 64}},
        "stream": {"load": {"ll": 50.0, "memory": 25.0}, "store": {"ll": 40.0, "memory": 20.0}},
        "core": {"instructions": 4.0, "misprediction_penalty": 5.0},
        "overlap": 0.0,
    }
    machine = read_machine(_write(tmp_path, data))
    features = {
        # a stride-1 stream of 8-byte loads served by memory: one miss per 64-byte line
        "bb:stream+0x0": {"loads": 1e9, "bytes.loaded": 8e9, "l1.hit_rate": 0.875,
                          "ll.cumulative_hit_rate": 0.875, "instructions": 2e9,
                          "branch.mispredictions": 1e6},
        # every reference misses both levels: strided, charged at B_memory
        "bb:gather+0x0": {"loads": 1e8, "bytes.loaded": 8e8, "l1.hit_rate": 0.0,
                          "ll.cumulative_hit_rate": 0.0},
    }  # fmt: skip
    rows = [(k, m, v) for k, row in features.items() for m, v in row.items()]
    kernels, metrics, values = zip(*rows, strict=True)
    result = convolve(Experiment.from_columns(kernels, metrics, {"p": [1] * len(rows)}, values),
                      machine)  # fmt: skip
    blocks = {b.kernel: b for b in result.blocks}
    # stream: s = h1 / (1 - 8/64) = 1; cost per memory-served byte from the stream plateau:
    # (1/25e9 - 0.875/100e9) / 0.125 = (0.04 - 0.00875) / 0.125 ns = 0.25 ns
    stream_cost = 0.875 / 100e9 + 0.125 * (1 / 25e9 - 0.875 / 100e9) / 0.125
    assert stream_cost == pytest.approx(1 / 25e9)  # the whole stream moves at 25 GB/s
    assert blocks["bb:stream+0x0"].memory_time == pytest.approx(8e9 / 25e9, rel=1e-12)
    assert blocks["bb:stream+0x0"].instruction_time == pytest.approx(2e9 / 4e9, rel=1e-12)
    assert blocks["bb:stream+0x0"].branch_time == pytest.approx(1e6 * 5e-9, rel=1e-12)
    assert blocks["bb:stream+0x0"].time == pytest.approx(0.32 + 0.5 + 0.005, rel=1e-12)
    assert blocks["bb:gather+0x0"].memory_time == pytest.approx(8e8 / 5e9, rel=1e-12)
    assert result.warnings == [
        "computation only: time in libraries (MPI, libc) and communication is not modeled"
    ]
    shown = render_pmac(machine)
    assert "load stride-1 stream: ll 50 GB/s, memory 25 GB/s" in shown
    assert "integer instructions: 4 Gop/s; mispredicted branch: 5 ns" in shown
    assert "overlap of fp, memory and instruction time: 0" in shown
    assert "instructions 0.5 s, branches 0.005 s)" in render_pmac(result)


def test_streaming_share_follows_the_misses_per_line():
    assert streaming_share(0.875, 8, 64) == 1.0  # one miss per line of 8-byte references
    assert streaming_share(0.0, 8, 64) == 0.0  # a miss on every reference
    assert streaming_share(0.4375, 8, 64) == pytest.approx(0.5)
    assert streaming_share(0.75, 16, 64) == 1.0  # 16-byte references: one miss in four
    assert streaming_share(1.0, 64, 64) == 0.0  # a reference per line cannot tell


def test_an_earlier_signature_format_is_converted_with_the_same_cost(tmp_path):
    machine = read_machine(_write(tmp_path, MACHINE))
    legacy = convolve(_two_blocks("ll.hit_rate"), machine)
    current = convolve(_two_blocks(), machine)
    assert legacy.total == pytest.approx(current.total, rel=1e-12)
    assert any("2 last-level hit rate(s) of an earlier" in w for w in legacy.warnings)


def test_an_earlier_rate_without_its_first_level_rate_is_refused(tmp_path):
    machine = read_machine(_write(tmp_path, MACHINE))
    signature = Experiment.from_columns(
        ["bb:f+0x0", "bb:f+0x0"], ["bytes.loaded", "ll.hit_rate"], {"p": [1, 1]}, [8.0, 0.5],
        source="old.json",
    )  # fmt: skip
    with pytest.raises(InputError, match="'bb:f\\+0x0' has 'll.hit_rate'.*no 'l1.hit_rate'") as e:
        convolve(signature, machine)
    assert e.value.source == "old.json"


def test_machine_without_a_needed_rate_names_file_and_field(tmp_path):
    data = json.loads(json.dumps(MACHINE))
    del data["fp"]["mul.f64.vector"]
    machine = read_machine(_write(tmp_path, data))
    with pytest.raises(InputError) as caught:
        convolve(_two_blocks(), machine)
    assert caught.value.source.endswith("machine.json")
    assert "fp.mul.f64.vector" in str(caught.value)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["memory"]["store"].pop("ll"), "memory.store.ll"),
        (lambda d: d.pop("memory"), "memory"),
        (lambda d: d["fp"].update({"add.f64.scalar": -1}), "fp.add.f64.scalar"),
        (lambda d: d["fp"].update({"add.f64.scalar": "fast"}), "fp.add.f64.scalar"),
        (lambda d: d.update({"overlap": 1.5}), "overlap"),
        (lambda d: d.update({"core": {"instructions": 4.0}}), "core.misprediction_penalty"),
        (
            lambda d: d.update({"core": {"instructions": 0, "misprediction_penalty": 1}}),
            "core.instructions",
        ),
        (lambda d: d.update({"stream": {"load": {"ll": 1.0, "memory": 1.0}}}), "stream.store"),
    ],
)
def test_bad_machine_files_name_the_field(tmp_path, change, field):
    data = json.loads(json.dumps(MACHINE))
    change(data)
    path = _write(tmp_path, data)
    with pytest.raises(InputError, match=f"field '{field}'") as caught:
        read_machine(path)
    assert caught.value.source == str(path)


def test_machine_file_that_is_not_json_names_the_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n "format": "perfcast-machine",\n oops\n}\n')
    with pytest.raises(InputError) as caught:
        read_machine(path)
    assert caught.value.line == 3


def test_block_moving_data_without_hit_rates_is_refused(tmp_path):
    machine = read_machine(_write(tmp_path, MACHINE))
    signature = Experiment.from_columns(
        ["bb:f+0x0"], ["bytes.loaded"], {"p": [1]}, [8.0], source="sig.json"
    )
    with pytest.raises(InputError, match="l1.hit_rate") as caught:
        convolve(signature, machine)
    assert caught.value.source == "sig.json"


def test_signature_without_features_is_refused(tmp_path):
    machine = read_machine(_write(tmp_path, MACHINE))
    signature = Experiment.from_columns(["bb:f+0x0"], ["time"], {"p": [1]}, [8.0])
    with pytest.raises(InputError, match="none of the features"):
        convolve(signature, machine)


def test_cache_geometry_for_the_simulation_has_a_power_of_two_of_sets(tmp_path):
    data = json.loads(json.dumps(MACHINE))
    data["cache"] = {
        "D1": {"size": 49152, "associativity": 12, "line": 64},  # 64 sets: kept
        "LL": {"size": 503316480, "associativity": 16, "line": 64},  # 491,520 sets
    }
    machine = read_machine(_write(tmp_path, data))
    assert machine.cache_geometry() == {"D1": "49152,12,64", "LL": "268435456,16,64"}


@pytest.mark.parametrize(
    ("geometry", "field"),
    [
        ({"size": 24576, "associativity": 8, "line": 48}, "cache.D1.line"),
        ({"size": 10**400, "associativity": 8, "line": 64}, "cache.D1.size"),
        ({"size": 2**32, "associativity": 16, "line": 64}, "cache.D1.size"),
    ],
)
def test_a_cache_valgrind_cannot_simulate_names_the_field(tmp_path, geometry, field):
    # These reached valgrind ('Bad argument', exit 1) after perfcast signature had started.
    data = {**json.loads(json.dumps(MACHINE)), "cache": {"D1": geometry}}
    path = _write(tmp_path, data)
    machine = read_machine(path)
    convolve(_two_blocks(), machine)  # the convolution does not use the caches
    with pytest.raises(InputError, match=f"field '{field}': valgrind simulates") as caught:
        machine.cache_geometry()
    assert caught.value.source == str(path)


def test_a_machine_profile_round_trips(tmp_path):
    machine = read_machine(_write(tmp_path, MACHINE))
    again = tmp_path / "again.json"
    again.write_text(machine.to_json())
    back = read_machine(again)
    assert (back.memory, back.fp, back.name) == (machine.memory, machine.fp, "hand")


def test_a_machine_profile_not_in_utf8_is_bad_input(tmp_path):
    path = tmp_path / "machine.json"
    path.write_bytes(b'{"format": "perfcast-machine", "name": "\xff"}')
    with pytest.raises(InputError, match="not UTF-8"):
        read_machine(path)


@pytest.mark.parametrize(
    ("feature", "value", "warning"),
    [
        ("bytes.loaded", -8e9, "negative bytes or operations (e.g. 'bb:solve+0x10')"),
        ("l1.hit_rate", 1.7, "hit rates outside [0, 1] or a last-level rate below"),
        ("ll.cumulative_hit_rate", 0.5, "rate below the first-level one (e.g. 'bb:solve+0x10')"),
    ],
)
def test_a_convolution_of_out_of_range_figures_says_not_to_trust_it(
    tmp_path, feature, value, warning
):
    # These were convolved silently: -8e9 bytes shortened the time, a hit rate of 1.7 was
    # clamped as if it were measured.
    signature = _two_blocks()
    frame = signature.frame.copy()
    frame.loc[(frame["kernel"] == "bb:solve+0x10") & (frame["metric"] == feature), "value"] = value
    changed = Experiment.from_frame(frame, parameters=signature.parameters)
    result = convolve(changed, read_machine(_write(tmp_path, MACHINE)))
    assert any(warning in w for w in result.warnings), result.warnings
    assert json.loads(render_pmac(result, "json"))["warnings"] == result.warnings


def test_an_infinite_prediction_says_so(tmp_path):
    # A bandwidth of 1e-310 GB/s is a positive number, yet the time overflows: the total was
    # written as null in JSON without a word.
    data = json.loads(json.dumps(MACHINE))
    data["memory"]["load"]["l1"] = 1e-310
    result = convolve(_two_blocks(), read_machine(_write(tmp_path, data)))
    assert result.total == float("inf")
    text = render_pmac(result, "json")
    assert json.loads(text)["total_seconds"] is None
    assert any("not a finite number" in w for w in json.loads(text)["warnings"])


@pytest.mark.parametrize("probe", [5, {"notes": "one note"}, {"notes": ["one note"]}])
def test_a_hand_written_probe_entry_is_shown_or_left_out(tmp_path, probe):
    # render_pmac of a profile with "probe": 5 raised AttributeError; "notes": "abc" printed
    # one note per character.
    data = {**json.loads(json.dumps(MACHINE)), "probe": probe}
    text = render_pmac(read_machine(_write(tmp_path, data)))
    assert text.startswith("machine hand\n")
    notes = [line for line in text.splitlines() if line.startswith("note:")]
    assert notes == (["note: one note"] if probe == {"notes": ["one note"]} else [])
