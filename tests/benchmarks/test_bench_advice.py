"""The advice benchmark's --first rates the first cases of a run as the full run draws them."""

from __future__ import annotations

from benchmarks.advice import main


def _table(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ") and "%" in line]


def test_first_rates_only_the_first_cases_of_the_same_draws(capsys) -> None:
    arguments = ["--cases", "2", "--tools", "random", "--budgets", "0.5"]
    assert main(arguments) == 0
    full = capsys.readouterr().out
    assert main([*arguments, "--first", "2"]) == 0
    all_first = capsys.readouterr().out
    assert main([*arguments, "--first", "1"]) == 0
    one = capsys.readouterr().out
    assert full.startswith("2 of 2 cases, seed 1") and one.startswith("1 of 2 cases, seed 1")
    assert _table(all_first) == _table(full)
    assert [row.split(" | ")[0] for row in _table(one)] == ["| start", "| grid", "| random 0.5"]
    assert _table(one) != _table(full)
