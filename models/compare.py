"""Compare two runs of a transfer benchmark over the same photos, with paired 95% intervals of the change.

``python -m models.compare BEFORE.json AFTER.json`` reads two results files of
``models.sagrada.transfer`` or ``models.alhambra.transfer`` (one before a change, one after) and,
for every set both ran over the same photos, prints the items (cells, tiles) and boards (windows,
palaces) right before and after, the change with its interval, the photos read better and worse,
and the wrong readings at >= 90% confidence. Each photo's two readings are drawn together
(``models.metrics.paired_change``): two runs' own intervals overlap long after the same photos
say which run reads better. Where both runs name the real dice of their composites (``by_die``),
it also names the dice read wrong more or less often.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from models.cli import CommandParser
from models.metrics import BOOTSTRAP_DRAWS, paired_change, share_text
from scanner.sagrada.cells import COLS, ROWS


class CompareError(ValueError):
    """Results that cannot be compared; the message names the file or set and what was expected."""


def photo_counts(figures: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """Each photo's items right and compared, from a set's figures; None when they were not recorded."""
    if "per_photo" in figures:
        counts = np.asarray(figures["per_photo"], np.int64).reshape(-1, 2)
        return counts[:, 0], counts[:, 1]
    if "wrong_per_photo" in figures:
        wrong = np.asarray(figures["wrong_per_photo"], np.int64)
        return ROWS * COLS - wrong, np.full(wrong.shape, ROWS * COLS)  # Sagrada records each photo's wrong cells
    return None


def _photos(figures: dict[str, Any]) -> str:
    """Which photos a set read: its seeds and count."""
    first = figures.get("first_seed", figures.get("seeds"))
    return f"seeds {first}{'+' if 'first_seed' in figures else ''}, {figures.get('photos')} photos"


def _words(figures: dict[str, Any]) -> tuple[str, str, str]:
    """The set's items, boards and its count of wrong readings at >= 90% (Alhambra's or Sagrada's names)."""
    if "tiles_right" in figures:
        return "tiles", "palaces", "wrong_confident"
    return "cells", "windows", "wrong_cells_sure"


def load(path: Path) -> dict[str, dict[str, Any]]:
    """The sets of one results file, by name.

    Raises:
        CompareError: the file is missing, not JSON, or holds no benchmark sets.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise CompareError(f"{path}: cannot be read ({error.strerror or error})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CompareError(f"{path}: not a JSON file ({error})") from None
    sets = (
        {name: figures for name, figures in data.items() if isinstance(figures, dict) and "photos" in figures}
        if isinstance(data, dict)
        else {}
    )
    if not sets:
        raise CompareError(f"{path}: no benchmark sets (expected the JSON of models.sagrada.transfer or models.alhambra.transfer)")
    return sets


def compare(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], draws: int = BOOTSTRAP_DRAWS) -> dict[str, dict[str, Any]]:
    """The paired change of every set both runs read, by name.

    Raises:
        CompareError: a set read other photos in the two runs, or no set can be compared.
    """
    changes = {}
    for name in sorted(before.keys() & after.keys()):
        a, b = before[name], after[name]
        if _photos(a) != _photos(b):
            raise CompareError(f"set {name}: before read {_photos(a)}, after {_photos(b)}; expected the same photos")
        faces_a, faces_b = a.get("missing_faces"), b.get("missing_faces")  # recorded since 2026-12-05 (Alhambra)
        if faces_a is not None and faces_b is not None and sorted(faces_a) != sorted(faces_b):
            raise CompareError(
                f"set {name}: before was drawn without the digit faces [{', '.join(faces_a)}], after without "
                f"[{', '.join(faces_b)}]; expected the same faces (the same seeds drew other photos)"
            )
        try:
            counts_a, counts_b = photo_counts(a), photo_counts(b)
            if counts_a is None or counts_b is None:
                continue
            change = paired_change(counts_a, counts_b, draws)
        except (TypeError, ValueError) as error:
            raise CompareError(f"set {name}: each photo's counts: {error}; expected one count a photo, {_photos(a)}") from None
        items, boards, sure = _words(a)
        right_a, compared_a = counts_a
        right_b, compared_b = counts_b
        change.update(
            words=(items, boards),
            items_before=(int(right_a.sum()), int(compared_a.sum())),
            items_after=(int(right_b.sum()), int(compared_b.sum())),
            boards_before=int((right_a == compared_a).sum()),
            boards_after=int((right_b == compared_b).sum()),
            sure=(a.get(sure), b.get(sure)),
            dice=die_changes(a, b),
        )
        changes[name] = change
    if not changes:
        raise CompareError(
            f"no set read by both runs has each photo's counts (sets before: {', '.join(sorted(before))}; after: {', '.join(sorted(after))})"
        )
    return changes


def die_changes(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str, int, int, int]] | None:
    """The real dice a set read differently: (source, die, wrong before, wrong after, shown), most changed first.

    None when either run did not record its real dice (``by_die``: the Sagrada composites since 2026-12-06).
    """
    a, b = before.get("by_die"), after.get("by_die")
    if not isinstance(a, dict) or not isinstance(b, dict):
        return None
    moved = []
    for source in sorted(a.keys() | b.keys()):
        was, now = a.get(source, {}), b.get(source, {})
        if was.get("wrong", 0) != now.get("wrong", 0):
            shown = max(was.get("shown", 0), now.get("shown", 0))
            moved.append((source, str(now.get("die", was.get("die", "?"))), int(was.get("wrong", 0)), int(now.get("wrong", 0)), int(shown)))
    return sorted(moved, key=lambda die: (-abs(die[3] - die[2]), die[0]))


def dice_text(name: str, moved: list[tuple[str, str, int, int, int]], named: int = 5) -> str:
    """One line on the real dice set ``name`` read differently, the most changed ``named`` by name.

    >>> dice_text("composites", [("board1/r2c4", "Y2", 34, 20, 67), ("tray/8", "B6", 5, 6, 52)])
    'composites: 2 real dice read differently (wrong before -> after, of shown): Y2 board1/r2c4 34 -> 20 of 67; B6 tray/8 5 -> 6 of 52.'
    """
    if not moved:
        return f"{name}: every real die read as often wrong as before."
    listed = "; ".join(f"{die} {source} {was} -> {now} of {shown}" for source, die, was, now, shown in moved[:named])
    more = f"; {len(moved) - named} more" if len(moved) > named else ""
    return f"{name}: {len(moved)} real {'die' if len(moved) == 1 else 'dice'} read differently (wrong before -> after, of shown): {listed}{more}."


def _points(change: list[float]) -> str:
    """``+0.4 points (95%: -0.1 to +0.9)``: a change of shares, in percentage points."""
    point, low, high = (100 * value for value in change)
    return f"{point:+.1f} points (95%: {low:+.1f} to {high:+.1f})"


def verdict(change: list[float]) -> str:
    """Whether the interval of a change lies above zero, below it, or holds it."""
    _point, low, high = change
    return "better" if low > 0 else "worse" if high < 0 else "not told apart"


def table(changes: dict[str, dict[str, Any]]) -> list[str]:
    """The comparison as markdown lines."""
    lines = [
        "| set | photos | items right: before -> after, change | boards entirely right | photos better / worse | wrong at >= 90% |",
        "|---|---|---|---|---|---|",
    ]
    for name, c in changes.items():
        items, boards = c["words"]
        (right_a, whole_a), (right_b, whole_b) = c["items_before"], c["items_after"]
        photos = c["photos"]
        lines.append(
            f"| {name} | {photos} | {items}: {share_text(right_a, whole_a)} -> {share_text(right_b, whole_b)}, {_points(c['items'])}, "
            f"{verdict(c['items'])} | {boards}: {c['boards_before']} -> {c['boards_after']} of {photos}, {_points(c['boards'])}, "
            f"{verdict(c['boards'])} | {c['better']} / {c['worse']} | {' -> '.join('n/a' if n is None else str(n) for n in c['sure'])} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Command line: print the comparison; exit 2 with one line when the files cannot be compared."""
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="results of the run before the change (a transfer benchmark's JSON)")
    parser.add_argument("after", type=Path, help="results of the run after it, over the same photos")
    args = parser.parse_args(argv)
    try:
        changes = compare(load(args.before), load(args.after))
    except CompareError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(
        f"{args.before} -> {args.after}: each interval draws the photos with both their readings ({BOOTSTRAP_DRAWS:,} draws); "
        "'better' or 'worse' where it lies clear of zero."
    )
    print("\n".join(table(changes)))
    for name, change in changes.items():
        if change.get("dice") is not None:
            print(dice_text(name, change["dice"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
