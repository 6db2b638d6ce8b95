"""Reference Sagrada games as data: tests/scoring/cases/sagrada/*.json, each with a source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.sagrada import SagradaState, score

CASES = sorted((Path(__file__).parent / "cases" / "sagrada").glob("*.json"))


def test_cases_are_present():
    assert len(CASES) >= 5


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_reference_case(path):
    case = json.loads(path.read_text(encoding="utf-8"))
    assert case["source"].strip()
    state = SagradaState.from_json(case["state"])
    assert state.to_json() == case["state"]
    report = score(state).to_json()
    expected = case["expected"]
    assert report["ranking"] == expected["ranking"]
    assert report["winner"] == expected["winner"]
    assert report.get("solo") == expected.get("solo")
    assert [p["name"] for p in report["players"]] == [p["name"] for p in expected["players"]]
    for got, want in zip(report["players"], expected["players"]):
        assert got["breakdown"] == want["breakdown"], got["name"]
        assert got["total"] == want["total"], got["name"]
        assert [[v["rule"], v["cells"]] for v in got["violations"]] == [w[:2] for w in want["violations"]]
        for violation, wanted in zip(got["violations"], want["violations"]):
            if len(wanted) > 2:
                assert violation["explained_by"] == wanted[2]
