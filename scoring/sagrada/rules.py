"""Sagrada rule checks over a whole game: every player's placement-rule breaks."""

from __future__ import annotations

from scoring.issue import Issue
from scoring.sagrada.state import SAMPLE, SagradaState  # noqa: F401  (SAMPLE: the doctests' game)
from scoring.sagrada.window import window_violations

__all__ = ["validate"]


def validate(state: SagradaState) -> list[Issue]:
    """Return every player's placement-rule breaks (``Issue.player`` is the player's index).

    >>> validate(SagradaState.from_json(SAMPLE))
    []
    """
    issues = []
    for index, player in enumerate(state.players):
        for issue in window_violations(player.window, player.pattern):
            issues.append(Issue(issue.rule, issue.detail, issue.cells, index, issue.explained_by))
    return issues

