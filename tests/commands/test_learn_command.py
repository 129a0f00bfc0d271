"""``perfcast learn`` and ``perfcast predict --runs`` through the real command line."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from perfcast.cli import main
from perfcast.io.run_table import from_columns, write_run_table


@pytest.fixture
def tables(tmp_path):
    rng = np.random.default_rng(1)
    runs = 120
    n = np.exp(rng.uniform(np.log(100), np.log(1e4), runs)).round()
    algorithm = rng.choice(["direct", "tree"], runs)
    time = np.where(algorithm == "direct", 1e-6 * n**2, 2e-5 * n * np.log2(n))
    time = time * rng.lognormal(0, 0.02, runs)
    columns = {"n": n, "alg": algorithm, "time": time, "instructions": time * 3e9}
    write_run_table(from_columns({k: v[:100] for k, v in columns.items()}), tmp_path / "t.csv")
    new = {"extra": np.zeros(20), "alg": algorithm[100:], "n": n[100:]}
    write_run_table(from_columns(new), tmp_path / "new.csv")
    return tmp_path, time[100:]


def test_learn_then_predict_every_run(tables, capsys):
    folder, truth = tables
    model = folder / "model.json"
    status = main(["learn", str(folder / "t.csv"), "--exclude", "instructions",
                   "--trees", "40", "-o", str(model)])  # fmt: skip
    assert status == 0
    summary = capsys.readouterr().out
    assert "learned log(time) with extra-trees from 100 runs" in summary
    assert "instructions" not in summary
    assert main(["predict", str(model), "--runs", str(folder / "new.csv"), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document) == ["predictions"]
    rows = document["predictions"]
    assert [r["row"] for r in rows] == list(range(20))
    # a row has "warnings" only when it has some (here: n outside the training range)
    keys = (["row", "prediction", "interval"], ["row", "prediction", "interval", "warnings"])
    assert all(list(r) in keys for r in rows)
    assert all(r["warnings"] for r in rows if "warnings" in r)
    assert "warnings" not in document
    predicted = np.array([r["prediction"] for r in rows])
    assert np.mean(np.abs(predicted - truth) / truth) < 0.1
    assert main(["predict", str(model), "--runs", str(folder / "new.csv"), "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert float(table[3]["prediction"]) == pytest.approx(rows[3]["prediction"])
    assert float(table[3]["lower"]) <= float(table[3]["prediction"]) <= float(table[3]["upper"])


def test_bad_input_exits_2_naming_the_file(tables, capsys):
    folder, _ = tables
    bad = folder / "bad.csv"
    bad.write_text("n,time\n1,2\nmany,3\n")
    assert main(["learn", str(bad), "-o", str(folder / "m.json")]) == 2
    assert f"{bad}:3: numeric column 'n': value is 'many'" in capsys.readouterr().err
    assert main(["learn", str(folder / "t.csv"), "--target", "memory", "-o", "m.json"]) == 2
    assert "t.csv: no target column 'memory'" in capsys.readouterr().err
    assert main(["learn", str(folder / "t.csv"), "--reduce", "time=5", "-o", "m.json"]) == 2
    assert "reduction time=5" in capsys.readouterr().err
    model = folder / "model.json"
    assert main(["learn", str(folder / "t.csv"), "--trees", "20", "-o", str(model)]) == 0
    capsys.readouterr()
    lacking = folder / "lacking.csv"
    lacking.write_text("n\n100\n")
    assert main(["predict", str(model), "--runs", str(lacking)]) == 2
    assert f"{lacking}: the model uses the feature column(s) 'alg'" in capsys.readouterr().err
    document = json.loads(model.read_text())
    document["sklearn"] = "0.1"
    old = folder / "old.json"
    old.write_text(json.dumps(document))
    assert main(["predict", str(old), "--runs", str(folder / "new.csv")]) == 2
    err = capsys.readouterr().err
    assert f"{old}: written by scikit-learn 0.1, incompatible" in err
    assert "Traceback" not in err
    assert main(["predict", str(model)]) == 2
    assert "nothing to predict" in capsys.readouterr().err


def test_a_feature_beyond_single_precision_is_a_message_not_a_traceback(tables, capsys):
    # Forests hold features as float32: 1e39 used to end in scikit-learn's ValueError
    # (a traceback from predict --runs, a message without the file from learn).
    folder, _ = tables
    model = folder / "model.json"
    assert main(["learn", str(folder / "t.csv"), "--exclude", "instructions",
                 "--trees", "10", "-o", str(model)]) == 0  # fmt: skip
    capsys.readouterr()
    runs = folder / "huge.csv"
    runs.write_text("extra,alg,n\n0,tree,100\n0,tree,1e39\n")
    assert main(["predict", str(model), "--runs", str(runs)]) == 2
    err = capsys.readouterr().err
    assert f"{runs}: run 2: feature 'n' is 1e+39, beyond the largest magnitude" in err
    assert "Traceback" not in err
    table = folder / "t.csv"
    lines = table.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[3].split(",")
    cells[header.index("n")] = "1e300"
    lines[3] = ",".join(cells)
    table.write_text("\n".join(lines) + "\n")
    assert main(["learn", str(table), "--trees", "10", "-o", str(folder / "m2.json")]) == 2
    assert f"{table}: run 3: feature 'n' is 1e+300" in capsys.readouterr().err


@pytest.mark.parametrize("level", ["1.5", "nan", "0", "x"])
def test_a_level_outside_zero_one_is_a_usage_error(tables, capsys, level):
    # predict --runs --level 1.5 used to end in a ValueError traceback
    folder, _ = tables
    with pytest.raises(SystemExit) as caught:
        main(["predict", str(folder / "model.json"), "--runs", str(folder / "new.csv"),
              "--level", level])  # fmt: skip
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --level: must be a number strictly between 0 and 1, not '{level}'" in err


def test_a_transfer_source_model_without_the_features_is_named(tables, capsys):
    # the message used to be "perfcast: error: the source model has no feature 'extra'", no file
    folder, _ = tables
    model = folder / "model.json"
    assert main(["learn", str(folder / "t.csv"), "--exclude", "instructions",
                 "--trees", "10", "-o", str(model)]) == 0  # fmt: skip
    capsys.readouterr()
    few = folder / "few.csv"
    few.write_text("extra,time\n" + "".join(f"{i},{i + 1}\n" for i in range(8)))
    status = main(["learn", str(few), "--transfer-from", str(model), "--trees", "10",
                   "-o", str(folder / "m2.json")])  # fmt: skip
    assert status == 2
    assert capsys.readouterr().err == (
        f"perfcast: error: {model}: the source model has no feature 'extra'\n"
    )


def test_predictions_of_an_untrustworthy_model_say_so_in_text_and_json(tmp_path, capsys):
    # the model's "do not trust these predictions" was shown only by learn; predict --runs
    # printed its predictions without it, and JSON carried no warning at all
    rng = np.random.default_rng(3)
    noise = {"n": rng.uniform(1, 100, 40), "time": rng.lognormal(0, 2, 40)}
    write_run_table(from_columns(noise), tmp_path / "noise.csv")
    model = tmp_path / "model.json"
    assert main(["learn", str(tmp_path / "noise.csv"), "--trees", "10", "-o", str(model)]) == 0
    assert "do not trust these predictions" in capsys.readouterr().out
    runs = tmp_path / "runs.csv"
    runs.write_text("n\n50\n500\n")
    assert main(["predict", str(model), "--runs", str(runs)]) == 0
    text = capsys.readouterr().out
    assert "! model: cross-validated mean relative error" in text
    assert main(["predict", str(model), "--runs", str(runs), "--format", "json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert any("do not trust" in w for w in document["warnings"])
    assert "warnings" not in document["predictions"][0]
    assert "outside the training range" in document["predictions"][1]["warnings"][0]
    assert "perfcast: warning: model: cross-validated" in captured.err


@pytest.mark.parametrize(
    "table", ["alg,time\na,1\nb,2\na,1.1\nb,2.1\na,1\nb,2\n", "n,time\n-1,1\n-2,2\n-3,3\n-4,4\n"]
)
def test_pmnf_without_a_positive_numeric_feature_is_named(tmp_path, capsys, table):
    # it used to print numpy's "matmul: Input operand 1 has a mismatch in its core dimension"
    path = tmp_path / "t.csv"
    path.write_text(table)
    assert main(["learn", str(path), "--method", "pmnf", "-o", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"perfcast: error: {path}: the pmnf method models numeric features")
    assert not (tmp_path / "m.json").exists()
