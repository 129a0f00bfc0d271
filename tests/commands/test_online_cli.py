"""``perfcast online replay`` and ``show``: the JSON form, exceptions named by stream line, the
Extra-P line form, bad lines (exit 2, store untouched) and life-long models in a store."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from perfcast.cli import main

GRID = [(n, p) for n in (64, 128, 256, 512, 1024, 2048) for p in (1, 2, 4, 8, 16)]
KERNEL_KEYS = {"kernel", "metric", "model", "pars", "lof_p", "updates", "measured", "skipped",
               "exceptions"}  # fmt: skip
EXCEPTION_KEYS = {"index", "params", "value", "predicted", "interval"}


def write_stream(path: Path, count: int, *, seed: int = 0, shift_at: int | None = None) -> Path:
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(count):
        n, p = GRID[rng.integers(len(GRID))]
        kernel = "solve" if i % 2 == 0 else "halo"
        value = n * math.log2(n) / p * 1e-6 if kernel == "solve" else 1e-4 * math.log2(2 * p)
        value *= 1 + 0.03 * rng.standard_normal()
        if shift_at is not None and i >= shift_at and kernel == "solve":
            value *= 1.5
        lines.append(json.dumps({"kernel": kernel, "params": {"n": n, "p": p},
                                 "metric": "time", "value": value}))  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_replay_json_has_the_documented_fields_and_line_indices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = write_stream(tmp_path / "s.jsonl", 6000, shift_at=4000)
    status, out, _ = run(
        capsys, "online", "replay", str(stream), "--batch", "128", "--no-backoff",
        "--format", "json",
    )  # fmt: skip
    assert status == 0
    document = json.loads(out)
    assert set(document) == {"kernels"}
    kernels = {k["kernel"]: k for k in document["kernels"]}
    assert set(kernels) == {"solve", "halo"}
    for item in kernels.values():
        assert set(item) == KERNEL_KEYS
        assert item["measured"] == 3000 and item["skipped"] == 0
        assert item["updates"] >= 20
    solve, halo = kernels["solve"], kernels["halo"]
    assert solve["model"]["expression"] and set(solve["exceptions"][0]) == EXCEPTION_KEYS
    lines = stream.read_text().splitlines()
    for exception in solve["exceptions"]:
        record = json.loads(lines[exception["index"]])  # the index is the 0-based line
        assert record["kernel"] == "solve" and record["value"] == exception["value"]
        assert exception["index"] >= 4000
        low, high = exception["interval"]
        assert not low <= exception["value"] <= high
    assert min(e["index"] for e in solve["exceptions"]) < 4000 + 2 * 2 * 128  # 2 batches
    # a stable kernel: exceptions only at the interval's false rate (1e-4 per measurement;
    # a 3 % noise draws a 4-sigma value now and then)
    assert len(halo["exceptions"]) <= 3
    codes = [w["code"] for w in solve["model"]["warnings"]]
    assert "performance-exceptions" in codes


def test_extrap_lines_are_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = tmp_path / "x.jsonl"
    rows = [{"callpath": "main->f", "params": {"p": p}, "value": [p * 1.0, p * 1.01]}
            for p in (2, 4, 8, 16, 32, 64) for _ in range(3)]  # fmt: skip
    stream.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    status, out, _ = run(capsys, "online", "replay", str(stream), "--batch", "8", "--format",
                         "json")  # fmt: skip
    assert status == 0
    (item,) = json.loads(out)["kernels"]
    assert item["kernel"] == "main->f" and item["metric"] == "<default>"
    assert item["measured"] + item["skipped"] == 36
    # the repetitions p and 1.01 p of each line are both used: the model is their mean, 1.005 p
    (term,) = item["model"]["terms"]
    assert term["factors"] == [{"parameter": "p", "exponent": 1, "log_exponent": 0}]
    assert term["coefficient"] == pytest.approx(1.005, rel=1e-6)
    assert abs(item["model"]["constant"]) < 1e-9


def test_store_keeps_models_across_runs_and_show_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "models.db"
    first = write_stream(tmp_path / "a.jsonl", 4000, seed=1)
    second = write_stream(tmp_path / "b.jsonl", 4000, seed=2)
    assert run(capsys, "online", "replay", str(first), "--batch", "128", "--store", str(store),
               "--app", "cg")[0] == 0  # fmt: skip
    _, out, _ = run(capsys, "online", "show", "--store", str(store), "--app", "cg", "--format",
                    "json")  # fmt: skip
    after_first = {k["kernel"]: k for k in json.loads(out)["kernels"]}
    run(capsys, "online", "replay", str(second), "--batch", "128", "--store", str(store),
        "--app", "cg")  # fmt: skip
    _, out, _ = run(capsys, "online", "show", "--store", str(store), "--app", "cg", "--format",
                    "json")  # fmt: skip
    after_second = {k["kernel"]: k for k in json.loads(out)["kernels"]}
    for kernel in ("solve", "halo"):
        one, two = after_first[kernel], after_second[kernel]
        assert one["measured"] + one["skipped"] == 2000
        assert two["measured"] + two["skipped"] == 4000
        # life-long: the second run started from the stored model and its back-off
        assert two["measured"] - one["measured"] < one["measured"]
    status, text, _ = run(capsys, "online", "show", "--store", str(store), "--app", "cg")
    assert status == 0 and "solve [time]:" in text and "PARS" in text


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"kernel": "solve", "params": {"n": 64, "p": 1}, "value": NaN}', "value is"),
        ('{"kernel": "solve", "params": {"n": 64, "p": 1}, "value": 1', "malformed JSON"),
        ('{"kernel": "solve", "params": {"n": 64, "p": 1}, "value": 1, "x": 2}', "unknown key"),
        ('{"kernel": "solve", "params": {"n": 64}, "metric": "time", "value": 1}', "parameters"),
        ('["solve"]', "JSON object"),
        # used to pass the checks and fail at the final refit as "<table>: the table has no
        # parameter columns", without file or line, after batches had been stored
        ('{"kernel": "fresh", "params": {}, "value": 1}', "'params' is empty"),
        # its square overflowed the statistics: "<table>: record 1: value is -inf" at a refit
        (
            '{"kernel": "solve", "params": {"n": 64, "p": 1}, "value": 1e200}',
            "online modeling takes values up to 1e+154",
        ),
        # with a store: "OverflowError: Python int too large to convert to SQLite INTEGER"
        (
            '{"kernel": "solve", "params": {"n": 64, "p": 1}, "value": 1, '
            '"skipped": 100000000000000000000000}',
            "not a count",
        ),
        # an unnamed parameter was modeled: "a [<default>]: 0.00966 + 2*"
        ('{"kernel": "fresh", "params": {"": 1}, "value": 1}', "a parameter without a name"),
        # a duplicate key used to be read silently as its last value
        (
            '{"kernel": "solve", "kernel": "halo", "params": {"n": 64, "p": 1}, "value": 1}',
            "the key 'kernel' appears twice",
        ),
        (
            '{"kernel": "solve", "params": {"n": 64, "n": 128, "p": 1}, "value": 1}',
            "the key 'n' appears twice",
        ),
    ],
)
def test_bad_line_names_file_and_line_and_keeps_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    store = tmp_path / "models.db"
    good = write_stream(tmp_path / "good.jsonl", 1000)
    assert (
        run(capsys, "online", "replay", str(good), "--batch", "64", "--store", str(store))[0] == 0
    )
    before = run(capsys, "online", "show", "--store", str(store), "--format", "json")[1]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + line + "\n")
    status, out, err = run(capsys, "online", "replay", str(bad), "--batch", "64", "--store",
                           str(store))  # fmt: skip
    assert status == 2 and out == ""
    assert f"{bad}:1001:" in err and message in err and "Traceback" not in err
    assert run(capsys, "online", "show", "--store", str(store), "--format", "json")[1] == before


def test_show_of_an_unknown_application_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "models.db"
    run(capsys, "online", "replay", str(write_stream(tmp_path / "s.jsonl", 200)), "--store",
        str(store))  # fmt: skip
    status, _, err = run(capsys, "online", "show", "--store", str(store), "--app", "other")
    assert status == 2 and "no application 'other'" in err and "default" in err


def test_show_does_not_create_a_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "online", "show", "--store", str(tmp_path / "none.db"))
    assert status == 2 and "no store" in err and not (tmp_path / "none.db").exists()


def test_clusters_from_a_file_let_one_kernel_stand_for_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = tmp_path / "s.jsonl"
    rng = np.random.default_rng(4)
    lines = []
    for _ in range(3000):
        n, p = GRID[rng.integers(len(GRID))]
        value = n * math.log2(n) / p * 1e-6 * (1 + 0.03 * rng.standard_normal())
        for kernel in ("loop_a", "loop_b"):  # statically similar, behaving alike
            lines.append(json.dumps({"kernel": kernel, "params": {"n": n, "p": p},
                                     "metric": "time", "value": value}))  # fmt: skip
    stream.write_text("\n".join(lines) + "\n")
    clusters = tmp_path / "static.json"
    clusters.write_text(json.dumps({"clusters": [["loop_a", "loop_b"]], "kernels": []}))
    status, out, _ = run(capsys, "online", "replay", str(stream), "--batch", "128",
                         "--clusters", str(clusters), "--format", "json")  # fmt: skip
    assert status == 0
    kernels = {k["kernel"]: k for k in json.loads(out)["kernels"]}
    base, member = kernels["loop_a"], kernels["loop_b"]
    assert member["updates"] == 0 and member["measured"] < base["measured"]
    codes = [w["code"] for w in member["model"]["warnings"]]
    assert "borrowed-model" in codes
    assert member["model"]["expression"] == base["model"]["expression"]
    clusters.write_text('{"clusters": "loop_a"}')
    status, _, err = run(capsys, "online", "replay", str(stream), "--clusters", str(clusters))
    assert status == 2 and "clusters" in err
    clusters.write_text('[["loop_a", "loop_b"], ["loop_c", "loop_a"]]')
    status, _, err = run(capsys, "online", "replay", str(stream), "--clusters", str(clusters))
    assert status == 2 and "'loop_a' is in cluster 1 and cluster 2" in err


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("UPDATE online_kernels SET model = '{bad'", "the store is damaged: kernel"),
        ("UPDATE online_kernels SET state = '[]'", "where a JSON dict belongs"),
        ("UPDATE online_kernels SET parameters = '5'", "where a JSON list belongs"),
        ('UPDATE online_kernels SET state = \'{"hit_count": "a"}\'', "is not valid (ValueError"),
        ("UPDATE online_judgements SET judgement = '{\"x\": 1}'", "is not valid (TypeError"),
        ("DROP TABLE online_exceptions", "the store is damaged (no such table"),
    ],
)
def test_a_damaged_store_is_one_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, message: str
) -> None:
    # Each of these used to end in a JSONDecodeError, TypeError, ValueError or
    # sqlite3.OperationalError traceback from `online show`.
    import sqlite3

    store = tmp_path / "models.db"
    stream = write_stream(tmp_path / "s.jsonl", 120)
    assert (
        run(capsys, "online", "replay", str(stream), "--batch", "20", "--store", str(store))[0] == 0
    )
    with sqlite3.connect(store) as connection:
        connection.execute(damage)
    status, out, err = run(capsys, "online", "show", "--store", str(store))
    assert status == 2
    assert out == ""
    assert err.startswith(f"perfcast: error: {store}: ")
    assert message in err
    assert "Traceback" not in err


def test_bytes_that_are_not_utf8_are_named_by_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the message used to name only the file ("not a text file (invalid start byte)")
    good = write_stream(tmp_path / "good.jsonl", 30)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(
        good.read_bytes() + b'{"kernel": "solve\xff", "params": {"n": 1}, "value": 1}\n'
    )
    status, out, err = run(capsys, "online", "replay", str(bad))
    assert status == 2 and out == ""
    assert err == f"perfcast: error: {bad}:31: not a text file (bytes that are not UTF-8)\n"


def test_serve_refuses_a_spool_that_is_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it used to report "0 batch file(s) modeled" and exit 0 (forever without --once)
    spool = write_stream(tmp_path / "s.jsonl", 10)
    store = tmp_path / "models.db"
    status, _, err = run(capsys, "online", "serve", "--store", str(store), "--spool", str(spool),
                         "--once")  # fmt: skip
    assert status == 2
    assert err == f"perfcast: error: {spool}: the spool is not a directory\n"
    assert not store.exists()


def test_a_negative_seed_is_one_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = write_stream(tmp_path / "s.jsonl", 10)
    with pytest.raises(SystemExit) as caught:
        main(["online", "replay", str(stream), "--seed", "-5"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "argument --seed: must be a whole number >= 0, not '-5'" in err
    assert "Traceback" not in err


def test_serve_with_cold_backoff_asks_for_skips_before_any_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from perfcast.measure.online_spool import hand_over, read_control

    spool, store = tmp_path / "spool", tmp_path / "models.db"
    line = json.dumps({"kernel": "k", "params": {"n": 64}, "metric": "time", "value": 1.0})
    for flags in ([], ["--cold-backoff"]):
        hand_over(spool, [line] * 16)  # one configuration: no model can judge it yet
        status, _, err = run(capsys, "online", "serve", "--store", str(store), "--spool",
                             str(spool), "--batch", "16", "--once", *flags)  # fmt: skip
        assert status == 0 and "1 batch file(s) modeled" in err
        judged, skip = read_control(spool, "k", "time") or (0, -1)
        assert judged == (2 if flags else 1)
        assert (skip > 0) == bool(flags) and skip < 16  # U(0, b) with hc = 0, else none
