"""Every way a file can be wrong gives one InputError naming the file and the line or record."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from perfcast.core.errors import InputError
from perfcast.io import read_experiment

TEXT_HEAD = "PARAMETER p\nPOINTS ( 2 ) ( 4 ) ( 8 )\nREGION main\nMETRIC time\n"


def _error(tmp_path: Path, name: str, content: str, input_format: str | None = None) -> InputError:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_experiment(path, input_format)
    assert caught.value.source == str(path)
    return caught.value


# (file name, content, expected line, words the message must contain)
CASES = {
    "text-malformed-line": (
        "a.txt",
        TEXT_HEAD + "DATA 1 2\nDATUM 3 4\n",
        6,
        "unknown keyword 'DATUM'",
    ),
    "text-missing-value": (
        "a.txt",
        TEXT_HEAD + "DATA 1 2\nDATA\nDATA 3\n",
        6,
        "DATA line without values",
    ),
    "text-nan": ("a.txt", TEXT_HEAD + "DATA 1 2\nDATA nan 3\nDATA 3\n", 6, "'nan', not a finite"),
    "text-inf": ("a.txt", TEXT_HEAD + "DATA 1 2\nDATA 2 -inf\nDATA 3\n", 6, "'-inf', not a finite"),
    "text-non-numeric-value": ("a.txt", TEXT_HEAD + "DATA 1 2x\n", 5, "'2x', not a number"),
    "text-non-numeric-parameter": (
        "a.txt",
        "PARAMETER p\nPOINTS ( 2 ) ( four )\n",
        2,
        "parameter 'p' is 'four', not a number",
    ),
    "text-wrong-coordinates": (
        "a.txt",
        "PARAMETER p n\nPOINTS ( 2 10 ) ( 4 )\n",
        2,
        "point ( 4 ) has 1 coordinates, but there are 2 parameters",
    ),
    "text-region-without-data": (
        "a.txt",
        TEXT_HEAD + "DATA 1\nDATA 2\nDATA 3\nREGION idle\n",
        8,
        "region 'idle' has no DATA",
    ),
    "text-metric-without-data": (
        "a.txt",
        TEXT_HEAD + "DATA 1\nDATA 2\nDATA 3\nMETRIC flops\n",
        8,
        "metric 'flops' has no DATA",
    ),
    "text-too-few-data-lines": (
        "a.txt",
        TEXT_HEAD + "DATA 1\nDATA 2\nREGION other\nDATA 1\nDATA 2\nDATA 3\n",
        5,
        "has 2 DATA lines for 3 points",
    ),
    "text-too-many-data-lines": (
        "a.txt",
        TEXT_HEAD + "DATA 1\nDATA 2\nDATA 3\nDATA 4\n",
        8,
        "more DATA lines than the 3 points",
    ),
    "text-block-twice": (
        "a.txt",
        TEXT_HEAD + "DATA 1\nDATA 2\nDATA 3\nREGION main\nDATA 1\nDATA 2\nDATA 3\n",
        9,
        "already given in line 5",
    ),
    "text-duplicate-point": ("a.txt", "PARAMETER p\nPOINTS ( 2 ) ( 2 )\n", 2, "already declared"),
    "text-data-before-points": ("a.txt", "PARAMETER p\nDATA 1\n", 2, "DATA before any POINTS"),
    "jsonl-malformed-line": (
        "a.jsonl",
        '{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2}, "value": \n',
        2,
        "malformed record",
    ),
    "jsonl-missing-value": (
        "a.jsonl",
        '{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2}}\n',
        2,
        "no 'value'",
    ),
    "jsonl-null-value": (
        "a.jsonl",
        '{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2}, "value": null}\n',
        2,
        "value is missing",
    ),
    "jsonl-nan": (
        "a.jsonl",
        '{"params": {"p": 1}, "value": 1}\n\n{"params": {"p": 2}, "value": NaN}\n',
        3,
        "not a finite number",
    ),
    "jsonl-infinity-in-list": (
        "a.jsonl",
        '{"params": {"p": 1}, "value": [1, Infinity]}\n',
        1,
        "not a finite number",
    ),
    "jsonl-string-value": (
        "a.jsonl",
        '{"params": {"p": 1}, "value": "fast"}\n',
        1,
        "'fast', not a number",
    ),
    "jsonl-non-numeric-parameter": (
        "a.jsonl",
        '{"params": {"p": 1}, "value": 1}\n{"params": {"p": "many"}, "value": 1}\n',
        2,
        "parameter 'p' is 'many', not a number",
    ),
    "jsonl-inconsistent-parameters": (
        "a.jsonl",
        '{"params": {"p": 1, "n": 2}, "value": 1}\n{"params": {"p": 2}, "value": 1}\n',
        2,
        "inconsistent parameters",
    ),
    "jsonl-no-repetitions": (
        "a.jsonl",
        '{"params": {"p": 1}, "value": []}\n',
        1,
        "empty list",
    ),
    "jsonl-unknown-key": (
        "a.jsonl",
        '{"params": {"p": 1}, "value": 1, "unit": "s"}\n',
        1,
        "unknown key 'unit'",
    ),
    "talpas-missing-metric": (
        "a.txt",
        '{"parameters":{"x":20};"callpath":"c";"value":1}\n',
        1,
        "names no metric",
    ),
    "csv-malformed-row": (
        "a.csv",
        "kernel,metric,p,value\nmain,time,2,1.0\nmain,time,4,2.0,7\n",
        3,
        "malformed CSV row",
    ),
    "csv-missing-value": (
        "a.csv",
        "kernel,metric,p,value\nmain,time,2,1.0\nmain,time,4,\n",
        3,
        "value is missing",
    ),
    "csv-nan": ("a.csv", "kernel,metric,p,value\nmain,time,2,NaN\n", 2, "'NaN', not a finite"),
    "csv-non-numeric-parameter": (
        "a.csv",
        "# perfcast {}\nkernel,metric,p,value\nmain,time,2,1\nmain,time,x4,1\n",
        4,
        "p is 'x4', not a number",
    ),
    "json-malformed": ("a.json", '{"parameters": ["x"],\n "measurements": {\n', 3, "malformed"),
    "jsonl-repeated-key": (
        "a.jsonl",
        '{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2, "p": 4}, "value": 2}\n',
        2,
        "the key 'p' appears twice",
    ),
    "json-repeated-key": (
        "a.json",
        '{"parameters": ["x"],\n "measurements": {"s": {"time": [\n'
        '  {"point": [4], "values": [1]},\n  {"point": [8], "values": [2], "point": [16]}]}}}\n',
        4,
        "the key 'point' appears twice",
    ),
    "csv-header-repeated-key": (
        "a.csv",
        '# perfcast {"metadata": {}, "metadata": {}}\nkernel,metric,p,value\nmain,time,2,1\n',
        1,
        "the key 'metadata' appears twice",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_line_is_named(tmp_path, case):
    name, content, line, words = CASES[case]
    error = _error(tmp_path, name, content)
    assert error.line == line, str(error)
    assert words in error.message, str(error)


# (file name, content, words naming the record)
RECORD_CASES = {
    "new-json-wrong-coordinates": (
        '{"parameters": ["x", "y"], "measurements": {"s": {"time": '
        '[{"point": [4, 10], "values": [1]}, {"point": [8], "values": [2]}]}}}',
        "measurements['s']['time'][1] has a point with 1 coordinates, but there are 2",
    ),
    "new-json-no-values": (
        '{"parameters": ["x"], "measurements": {"s": {"time": [{"point": [4], "values": []}]}}}',
        "measurements['s']['time'][0]: a point without values",
    ),
    "new-json-nan": (
        '{"parameters": ["x"], "measurements": {"s": {"time": '
        '[{"point": [4], "values": [1, NaN]}]}}}',
        "measurements['s']['time'][0]: value is",
    ),
    "new-json-kernel-without-data": (
        '{"parameters": ["x"], "measurements": {"s": {}}}',
        "call path 's' has no data",
    ),
    "legacy-json-unknown-callpath": (
        '{"parameters": [{"id": 1, "name": "x"}], "callpaths": [{"id": 1, "name": "a"}], '
        '"metrics": [{"id": 1, "name": "time"}], "coordinates": [{"id": 1, '
        '"parameter_value_pairs": [{"parameter_id": 1, "parameter_value": 4}]}], '
        '"measurements": [{"coordinate_id": 1, "callpath_id": 7, "metric_id": 1, "value": 1}]}',
        "measurements[0]: unknown callpath_id 7",
    ),
    "legacy-json-region-without-data": (
        '{"parameters": [{"id": 1, "name": "x"}], '
        '"callpaths": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}], '
        '"metrics": [{"id": 1, "name": "time"}], "coordinates": [{"id": 1, '
        '"parameter_value_pairs": [{"parameter_id": 1, "parameter_value": 4}]}], '
        '"measurements": [{"coordinate_id": 1, "callpath_id": 1, "metric_id": 1, "value": 1}]}',
        "callpath b (id 2) has no measurements",
    ),
}


@pytest.mark.parametrize("case", sorted(RECORD_CASES))
def test_bad_record_is_named(tmp_path, case):
    content, words = RECORD_CASES[case]
    error = _error(tmp_path, "a.json", content)
    assert words in error.message, str(error)


def test_missing_file(tmp_path):
    with pytest.raises(InputError) as caught:
        read_experiment(tmp_path / "nothing.txt")
    assert str(caught.value) == f"{tmp_path / 'nothing.txt'}: no such file or directory"


def test_missing_file_with_forced_format(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_experiment(tmp_path / "nothing.txt", "extrap-text")


@pytest.mark.parametrize("content", ["", "\n\n   \n"])
def test_empty_file(tmp_path, content):
    error = _error(tmp_path, "empty.txt", content)
    assert error.message == "the file is empty"


@pytest.mark.parametrize("input_format", ["extrap-text", "extrap-jsonlines", "table"])
def test_empty_file_with_forced_format(tmp_path, input_format):
    error = _error(tmp_path, "empty.dat", "", input_format)
    assert "empty" in error.message


def test_unknown_content(tmp_path):
    error = _error(tmp_path, "notes.md", "# Results\nall fine\n")
    assert "cannot tell the format" in error.message
    assert "extrap-text" in error.message  # the formats it is not
    assert (error.reason, error.value) == ("unknown-input-format", str(tmp_path / "notes.md"))


def test_unknown_format_name(tmp_path):
    error = _error(tmp_path, "a.txt", TEXT_HEAD, input_format="nope")
    assert error.message == "unknown input format 'nope'"


def test_binary_file(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"PARAMETER p\n\xff\xfe\x00")
    with pytest.raises(InputError, match="not a text file"):
        read_experiment(path)


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        read_experiment(tmp_path, "extrap-text")


def test_wrong_forced_format_is_an_input_error(extrap_data):
    error = None
    with pytest.raises(InputError) as caught:
        read_experiment(extrap_data / "text/one_parameter_1.txt", "extrap-jsonlines")
    error = caught.value
    assert error.line == 1
    assert "malformed record" in error.message


def test_parameter_named_like_a_column(tmp_path):
    error = _error(tmp_path, "a.jsonl", '{"params": {"value": 1}, "value": 1}\n')
    assert error.message == "a parameter may not be named 'value'"


def test_corrupt_parquet(tmp_path):
    path = tmp_path / "a.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 64)
    with pytest.raises(InputError, match="not a readable Parquet file"):
        read_experiment(path)


def test_parquet_cell_names_the_row(tmp_path):
    path = tmp_path / "a.parquet"
    frame = pd.DataFrame({"kernel": ["a", "a"], "metric": ["t", "t"], "p": [1.0, float("nan")]})
    frame.assign(value=[1.0, 2.0]).to_parquet(path)
    error = _error_from(path)
    assert error.message == "row 2: p is missing"


def test_csv_header_must_match_columns(tmp_path):
    content = '# perfcast {"parameters": [{"name": "q", "role": null}]}\n'
    content += "kernel,metric,p,value\na,t,1,1\n"
    error = _error(tmp_path, "a.csv", content)
    assert "the header lists parameters ['q'], the table has columns ['p']" in error.message


def _error_from(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        read_experiment(path)
    return caught.value


def test_byte_order_mark_and_crlf_are_accepted(tmp_path):
    path = tmp_path / "windows.txt"
    path.write_bytes(
        ("\ufeff" + TEXT_HEAD + "DATA 1\nDATA 2\nDATA 3\n").replace("\n", "\r\n").encode()
    )
    experiment = read_experiment(path)
    assert experiment.frame["value"].tolist() == [1.0, 2.0, 3.0]
    assert experiment.kernels == ["main"]


LEGACY = (
    '{"parameters": [{"id": 1, "name": "x"}], "callpaths": [{"id": 1, "name": "a"}], '
    '"metrics": [{"id": 1, "name": "time"}], "coordinates": [{"id": 1, '
    '"parameter_value_pairs": [{"parameter_id": PID, "parameter_value": 4}]}], '
    '"measurements": [{"coordinate_id": 1, "callpath_id": CID, "metric_id": 1, "value": 1}]}'
)


@pytest.mark.parametrize(
    ("pid", "cid", "words"),
    [
        ("[1]", "1", "coordinate with id 1: id [1] is not an integer"),
        ("2", "1", "coordinate with id 1 has an unknown parameter_id 2"),
        ("1", "{}", "measurements[0]: id {} is not an integer"),
    ],
)
def test_legacy_json_bad_ids(tmp_path, pid, cid, words):
    error = _error(tmp_path, "a.json", LEGACY.replace("PID", pid).replace("CID", cid))
    assert error.message == words


def test_legacy_json_ids_given_as_text(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(LEGACY.replace("PID", '"1"').replace("CID", '"1"'))
    assert read_experiment(path).frame["value"].tolist() == [1.0]


def test_csv_missing_kernel_name(tmp_path):
    error = _error(tmp_path, "a.csv", "kernel,metric,p,value\nmain,time,2,1.0\n,time,4,2.0\n")
    assert str(error) == f"{tmp_path / 'a.csv'}:3: missing kernel name"


def test_csv_fractional_repetition(tmp_path):
    error = _error(tmp_path, "a.csv", "kernel,metric,p,repetition,value\nmain,time,2,0.5,1.0\n")
    assert (error.line, error.message) == (2, "repetition is '0.5', not an integer")


@pytest.mark.parametrize(
    ("header", "words"),
    [
        (",kernel,metric,p,value", "column 1 of the header has no name"),
        ("kernel,metric,p,p,value", "column 'p' appears twice in the header"),
    ],
)
def test_csv_header_problems(tmp_path, header, words):
    error = _error(tmp_path, "a.csv", f"{header}\n0,a,t,1,1\n")
    assert (error.line, error.message) == (1, words)
