"""A game's results to take away: a CSV of the standings and each category, and a PNG to share.

Both are made from the game page's view (``tablescan.review.view.game_view``), so they say exactly
what the screen says: no ranking while a deciding value is not set, the same scores and categories.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from scoring.errors import TableError
from tablescan.games import GAMES

__all__ = ["column_name", "results_csv", "results_filename", "results_png", "results_rows"]

SKIPPED = ("name", "total", "violations")  # a report entry's keys that are not categories
MONO_FONTS = ("DejaVuSansMono.ttf", "LiberationMono-Regular.ttf", "Menlo.ttc", "consola.ttf")
TEXT_PX = 18
MARGIN_PX = 24
INK, MUTED, PAPER, GOLD = (28, 28, 36), (100, 100, 112), (250, 248, 242), (150, 105, 0)


def column_name(group: str, key: str) -> str:
    """Return a breakdown column's name as people read it.

    >>> column_name("breakdown", "favor_tokens")
    'Favor tokens'
    >>> column_name("public", "row-color-variety")
    'Public: Row color variety'
    """
    words = re.sub(r"[-_]+", " ", key).strip()
    words = words[:1].upper() + words[1:]
    if not group or group == "breakdown":
        return words
    return f"{column_name('', group)}: {words}"


def _categories(entry: dict, score_key: str, group: str = "") -> list[tuple[str, str, Any]]:
    """(id, column name, value) of each number in a player's report entry, in report order."""
    found: list[tuple[str, str, Any]] = []
    for key, value in entry.items():
        if not group and key in (*SKIPPED, score_key):
            continue
        ident = f"{group}.{key}" if group else key
        if isinstance(value, bool):
            continue
        shown = [part for part in group.split(".") if part and part != "breakdown"]  # the innermost group names the column
        if isinstance(value, (int, float)):
            found.append((ident, column_name(shown[-1] if shown else "", key), value))
        elif isinstance(value, dict):
            found.extend(_categories(value, score_key, ident))
        elif isinstance(value, list) and key == "cards":
            found.append((ident, column_name(shown[-1] if shown else "", "cards"), len(value)))
    return found


def results_rows(view: dict) -> list[list[Any]]:
    """Return the results table, header first: place, player, score, each category, and a note.

    Players come in standings order; while the score is incomplete (or does not score) they come in
    turn order with no place, and the note says what is missing.
    """
    score_key = view["form"]["score_key"]
    entries = {entry.get("name"): entry for entry in (view.get("report") or {}).get("players") or []}
    columns: dict[str, str] = {}
    values: dict[str, dict[str, Any]] = {}
    for name, entry in entries.items():
        values[name] = {}
        for ident, title, value in _categories(entry, score_key):
            columns.setdefault(ident, title)
            values[name][ident] = value
    places = {row["name"]: row for row in view.get("standings") or []}
    order = [row["name"] for row in view.get("standings") or []] or [p["name"] for p in view["players"]]
    missing = {p["name"]: [item for item in view.get("incomplete") or [] if item.startswith(p["name"] + "'s ")] for p in view["players"]}
    rows: list[list[Any]] = [["Place", "Player", "Score", *columns.values(), "Note"]]
    for name in order:
        standing = places.get(name)
        entry = entries.get(name, {})
        if standing is not None:
            note = standing["note"]
        elif view.get("error"):
            note = "cannot score yet: " + view["error"]
        elif missing.get(name):
            note = "incomplete: " + "; ".join(missing[name])
        else:
            note = "incomplete: no places until every player's values are set"
        rows.append(
            [
                standing["place"] if standing else "",
                name,
                entry.get(score_key, ""),
                *(values.get(name, {}).get(ident, "") for ident in columns),
                note,
            ]
        )
    return rows


def results_csv(view: dict) -> str:
    """Return the results table as CSV text (see ``results_rows``)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(results_rows(view))
    return buffer.getvalue()


def results_filename(view: dict, suffix: str) -> str:
    """Return a download name for a game's results.

    >>> results_filename({"id": 3, "name": "Friday: Sagrada!"}, ".csv")
    'friday-sagrada-3.csv'
    """
    slug = re.sub(r"[^a-z0-9]+", "-", str(view["name"]).lower()).strip("-")[:40] or "game"
    return f"{slug}-{view['id']}{suffix}"


def _font(size: int) -> Any:
    for name in MONO_FONTS:
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    try:
        return ImageFont.load_default(size)
    except TypeError:  # Pillow before 10.1 has one fixed-size default font
        return ImageFont.load_default()


def _boards_text(view: dict) -> str:
    """Every player's board as the scoring core draws it in text (its ``str``), or why there is none."""
    try:
        rules = GAMES[view["game"]].rules
        return str(rules.parse(view["document"]))
    except TableError as error:
        return f"(the boards cannot be drawn: {error})"


def _draw_marked(draw: Any, at: tuple[int, int], text: str, font: Any, marks: list, height: int) -> None:
    """Draw one line of a board's text, each token a mark matches on its fill (the rest plain)."""
    x, y = at
    for part in re.finditer(r"\S+|\s+", text):
        token = part.group()
        left = x + int(draw.textlength(text[: part.start()], font=font))
        mark = next(((fill, ink) for pattern, fill, ink in marks if pattern.match(token)), None)
        if mark is None:
            draw.text((left, y), token, font=font, fill=INK)
            continue
        right = x + int(draw.textlength(text[: part.end()], font=font))
        draw.rounded_rectangle((left - 3, y - 1, right + 3, y + height - 4), radius=4, fill=mark[0])
        draw.text((left, y), token, font=font, fill=mark[1])


def results_png(view: dict) -> bytes:
    """Return a PNG of the game: its name, the standings (or what is missing) and every board."""
    font, big = _font(TEXT_PX), _font(TEXT_PX + 8)
    lines: list[tuple[str, Any, tuple[int, int, int]]] = [
        (view["name"], big, INK),
        (f"{view['title']}, {len(view['players'])} players", font, MUTED),
    ]
    lines.append(("", font, INK))
    winners = set([] if view.get("incomplete") else [row["name"] for row in view.get("standings") or [] if row["place"] == 1])
    if view.get("error"):
        lines.append(("Cannot score yet: " + view["error"], font, INK))
    elif view.get("incomplete"):
        lines.append(("Incomplete: no ranking until these are entered:", font, INK))
        lines.extend(("  " + item, font, MUTED) for item in view["incomplete"])
    for row in view.get("standings") or []:
        star = " *" if row["name"] in winners else ""
        text = f"{row['place']:>2}. {row['name']:<20} {row['score']:>4}{star}" + (f"   ({row['note']})" if row["note"] else "")
        lines.append((text, font, GOLD if winners and row["name"] in winners else INK))
    lines.append(("", font, INK))
    boards_from = len(lines)
    lines.extend((line, font, INK) for line in _boards_text(view).splitlines())
    marks = [(re.compile(pattern), fill, ink) for pattern, fill, ink in GAMES[view["game"]].form.image_marks()]
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    # one height per font, so the boards' text lines stay on a grid
    heights = [int(max(TEXT_PX, probe.textbbox((0, 0), "Ag|_", font=face)[3])) + 6 for _, face, _ in lines]
    width = int(max(probe.textbbox((0, 0), text or " ", font=face)[2] for text, face, _ in lines)) + 2 * MARGIN_PX
    image = Image.new("RGB", (max(width, 480), sum(heights) + 2 * MARGIN_PX), PAPER)
    draw = ImageDraw.Draw(image)
    y = MARGIN_PX
    for index, ((text, face, colour), height) in enumerate(zip(lines, heights, strict=True)):
        if index >= boards_from and marks:
            _draw_marked(draw, (MARGIN_PX, y), text, face, marks, height)
        else:
            draw.text((MARGIN_PX, y), text, font=face, fill=colour)
        y += height
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
