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


def test_per_case_figures_are_the_tables_and_do_not_depend_on_the_other_tools(
    capsys, tmp_path
) -> None:
    # Extra-P's rows are taken in a run of their own (`--tools extrap,random`) and set beside
    # the advice's of another run: both must rate the same functions under the same noise.
    import json

    import numpy as np

    arguments = ["--cases", "3", "--first", "2", "--budgets", "0.5", "--seed", "7"]
    alone, together = tmp_path / "random.json", tmp_path / "both.json"
    assert main([*arguments, "--tools", "random", "--per-case", str(alone)]) == 0
    capsys.readouterr()
    assert main([*arguments, "--tools", "advise,random", "--per-case", str(together)]) == 0
    table = capsys.readouterr().out
    first, second = (json.loads(path.read_text()) for path in (alone, together))
    assert first["seed"] == second["seed"] == 7

    def rows(document, strategy):
        return [c for c in document["cases"] if c["strategy"] == strategy]

    for strategy in ("start", "grid", "random 0.5"):
        assert rows(first, strategy) == rows(second, strategy)
        assert [c["case"] for c in rows(second, strategy)] == [0, 1]
    advised = rows(second, "advise 0.5")
    assert len(advised) == 2 and all(c["points"] for c in advised)
    median = 100 * np.median([c["error"] for c in advised])
    assert f"| advise 0.5 | {median:.1f} % |" in table


def test_the_loop_and_the_plan_bought_in_order_stay_within_the_budget_in_truth(
    capsys, tmp_path
) -> None:
    import json

    per_case = tmp_path / "loop.json"
    arguments = ["--cases", "2", "--budgets", "0.25", "--seed", "4"]
    assert main([*arguments, "--tools", "advise,ordered,loop", "--per-case", str(per_case)]) == 0
    table = capsys.readouterr().out
    document = json.loads(per_case.read_text())["cases"]

    def rows(strategy: str) -> list[dict]:
        return [c for c in document if c["strategy"] == strategy]

    # Every point fitted what was left at its upper price; measured, it took less.
    for strategy in ("loop 0.25", "ordered 0.25"):
        assert len(rows(strategy)) == 2 and all(c["points"] for c in rows(strategy))
        assert all(0 < c["cost_share"] <= 0.25 for c in rows(strategy))
        assert f"| {strategy} |" in table
        assert [line for line in table.splitlines() if line.startswith(f"| {strategy} |")][
            0
        ].endswith("| 0 % |")
    # The plan bought in order is the advice's plan, cut before the first point that may not fit.
    for plan, bought in zip(rows("advise 0.25"), rows("ordered 0.25"), strict=True):
        assert bought["points"] == [p for p in plan["points"] if p in bought["points"]]
        assert len(bought["points"]) <= len(plan["points"])


def test_saved_extrap_suggestions_are_rated_for_the_cases_they_cover(capsys, tmp_path) -> None:
    import json

    # The Extra-P driver's output of a stopped run: one case of two, two budgets. Extra-P
    # counts a start point's five repetitions in its suggestion; only the added ones are bought.
    saved = tmp_path / "extrap.json"
    saved.write_text(
        json.dumps(
            {
                "seconds": 1.0,
                "cases": [
                    [
                        [[[128.0, 10.0], 2], [[4.0, 10.0], 7]],
                        [[[16.0, 200.0], 5]],
                    ]
                ],
            }
        )
    )
    per_case = tmp_path / "cases.json"
    arguments = ["--cases", "2", "--budgets", "0.25,0.5", "--tools", "random"]
    assert main([*arguments, "--extrap-plans", str(saved), "--per-case", str(per_case)]) == 0
    table = capsys.readouterr().out
    assert table.startswith("1 of 2 cases, seed 1")
    rows = {c["strategy"]: c for c in json.loads(per_case.read_text())["cases"]}
    assert rows["extrap 0.25"]["points"] == [[4.0, 10.0, 2], [128.0, 10.0, 2]]
    assert rows["extrap 0.5"]["points"] == [[16.0, 200.0, 5]]
    assert "| extrap 0.25 |" in table and "| random 0.5 |" in table


def test_the_probing_loop_stays_within_the_budget_in_truth(capsys, tmp_path) -> None:
    import json

    # --loop-price probe-first: a round's point is run once at one run's upper price, its other
    # runs one by one while each fits at the upper price of a new run from those taken there.
    per_case = tmp_path / "probe.json"
    arguments = ["--cases", "2", "--budgets", "0.25,1", "--seed", "4", "--tools", "loop"]
    assert main([*arguments, "--loop-price", "probe-first", "--per-case", str(per_case)]) == 0
    table = capsys.readouterr().out
    for case in json.loads(per_case.read_text())["cases"]:
        if case["strategy"].startswith("loop"):
            share = float(case["strategy"].split()[1])
            assert case["points"] and 0 < case["cost_share"] <= share
            assert all(1 <= runs <= 5 for _, _, runs in case["points"])
    assert "| loop 0.25 |" in table and "| loop 1 |" in table
