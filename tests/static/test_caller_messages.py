"""Why a callee is undefined names the function that has the goto (issue 20, static34; verify20e
J16): "the call of leaf at ...: the function uses goto" read as if the callee had it."""

from __future__ import annotations

from pathlib import Path

from perfcast import api

SOURCE = Path(__file__).resolve().parent / "programs" / "goto_caller.c"


def test_the_goto_reason_names_the_caller():
    report = api.analyze_source([SOURCE], [])
    reasons = {k.name: k.undef_reason for k in report.kernels}
    assert reasons["caller:loop@14"] == "the function caller uses goto at line 17"
    assert reasons["leaf:loop@6"].endswith("the function caller uses goto at line 17")
    assert "the call of leaf at" in reasons["leaf:loop@6"]
