"""Which of the 24 pattern cards lies under a window: the scanner's card identification.

Each cell of the observation is evidence about the card's print there:

- ``None``: nothing known (not read); no evidence.
- a ``Die``: a die sits there. A die on a matching colour or value print is more likely than
  on a blank cell (it had fewer legal options), and a die breaking the print is unlikely but
  possible (a tool card or a misread): probability ``TOOL_RATE`` relative to a legal one.
- a print string for an EMPTY cell: ``"."`` (nothing printed), a colour letter or a digit.
  It matches the card's print with probability ``1 - PRINT_ERROR``.
- a dict of soft evidence ``{state: probability}`` where a state is a print (``"."``,
  ``"R"``, ``"3"``) meaning the cell is empty with that print, or a die name (``"B4"``)
  meaning that die sits there; probabilities are normalised. This lets the scanner pass its
  classifier's top guesses, including "empty or a die?" doubts.

The score of a card is its posterior probability under a uniform prior over the 24 cards.
"""

from __future__ import annotations

import math
from typing import Any

from scoring.errors import StateError
from scoring.sagrada.cards import PATTERNS, Pattern
from scoring.sagrada.window import COLORS, COLS, PRINTS, ROWS, Die, cell_problem, parse_cell

TOOL_RATE = 0.05
PRINT_ERROR = 0.02
EMPTY_SHARE = 0.1
_DIE_KINDS = 30


def _die_likelihood(die: Die, mark: str) -> float:
    """P(this die | the print), for a die placed legally or, rarely, by a tool or misread."""
    if mark == ".":
        return 1 / _DIE_KINDS
    if mark in COLORS:
        return 1 / 6 if die.color == mark else TOOL_RATE / _DIE_KINDS
    return 1 / 5 if str(die.value) == mark else TOOL_RATE / _DIE_KINDS


def _print_likelihood(seen: str, mark: str) -> float:
    """P(reading print ``seen`` | the card's print ``mark``)."""
    return 1 - PRINT_ERROR if seen == mark else PRINT_ERROR / (len(PRINTS) - 1)


def _soft_likelihood(evidence: dict[str, float], mark: str) -> float:
    total = sum(evidence.values())
    likelihood = 0.0
    for state, weight in evidence.items():
        if state in PRINTS:
            likelihood += weight / total * EMPTY_SHARE * _print_likelihood(state, mark)
        elif (die := parse_cell(state)) is not None:  # "." is a print, so every other state is a die
            likelihood += weight / total * (1 - EMPTY_SHARE) * _die_likelihood(die, mark)
    return likelihood


def _check_entry(entry: Any, path: str) -> Any:
    if entry is None or isinstance(entry, Die):
        return entry
    if isinstance(entry, str):
        if entry not in PRINTS:
            raise StateError(f"{path}: expected a print ({' '.join(PRINTS)}), got {entry!r}")
        return entry
    if isinstance(entry, dict):
        for state, weight in entry.items():
            if not isinstance(state, str) or (state not in PRINTS and cell_problem(state) is not None):
                raise StateError(f"{path}: soft evidence key {state!r} is neither a print nor a die like 'B4'")
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight >= 0:
                raise StateError(f"{path}[{state!r}]: expected a probability >= 0, got {weight!r}")
        if not sum(entry.values()) > 0:
            raise StateError(f"{path}: soft evidence has no positive probability")
        return entry
    raise StateError(f"{path}: expected a Die, None, a print string or a dict, got {type(entry).__name__}")


def pattern_log_likelihood(observed: Any, pattern: Pattern) -> float:
    """Return log P(observation | ``pattern``) under the module's evidence model.

    >>> from scoring.sagrada.cards import PATTERNS
    >>> blank = [[None] * 5 for _ in range(4)]
    >>> pattern_log_likelihood(blank, PATTERNS["Virtus"])
    0.0

    Raises:
        StateError: when ``observed`` is not a 4x5 grid of supported entries.
    """
    grid = _check_grid(observed)
    log_likelihood = 0.0
    for r in range(ROWS):
        for c in range(COLS):
            entry = grid[r][c]
            mark = pattern.grid[r][c]
            if entry is None:
                continue
            if isinstance(entry, Die):
                likelihood = _die_likelihood(entry, mark)
            elif isinstance(entry, str):
                likelihood = _print_likelihood(entry, mark)
            else:
                likelihood = _soft_likelihood(entry, mark)
            log_likelihood += math.log(likelihood)
    return log_likelihood


def identify_patterns(observed: Any) -> list[tuple[str, float]]:
    """Return every pattern card with its posterior probability, best first.

    ``observed`` is a 4x5 grid (rows top first) of ``None``, ``Die``, print strings or soft
    evidence dicts (see the module docstring). Probabilities sum to 1.

    >>> from scoring.sagrada.cards import PATTERNS
    >>> observed = [list(row) for row in PATTERNS["Virtus"].grid]  # an empty window, prints read
    >>> best, probability = identify_patterns(observed)[0]
    >>> best, probability > 0.999
    ('Virtus', True)

    Raises:
        StateError: when ``observed`` is not a 4x5 grid of supported entries.
    """
    grid = _check_grid(observed)
    scored = [(pattern_log_likelihood(grid, pattern), index, pattern.name) for index, pattern in enumerate(PATTERNS.values())]
    best = max(log for log, _, _ in scored)
    weights = [(math.exp(log - best), index, name) for log, index, name in scored]
    total = sum(weight for weight, _, _ in weights)
    ranked = sorted(weights, key=lambda item: (-item[0], item[1]))
    return [(name, weight / total) for weight, _, name in ranked]


def _check_grid(observed: Any) -> list[list[Any]]:
    if not isinstance(observed, (list, tuple)) or len(observed) != ROWS:
        raise StateError(f"observed: expected {ROWS} rows, got {type(observed).__name__}")
    grid = []
    for r, row in enumerate(observed):
        if isinstance(row, str) or not isinstance(row, (list, tuple)) or len(row) != COLS:
            raise StateError(f"observed[{r}]: expected {COLS} entries, got {row!r}")
        grid.append([_check_entry(entry, f"observed[{r}][{c}]") for c, entry in enumerate(row)])
    return grid
