"""Sagrada board styles: independently designed window boards beside the renderer's "classic" one.

A ``Style`` fixes a board's design: the frame (look, colour, outline shape, or none), where the
stained-glass strip sits and whether the name plate is there (real pattern cards print their name
below the grid, which tells a full window's top from its bottom, so every style keeps it there), the card's cell-to-gap
proportions and gap colour, how the pattern prints look, and the light on the art. Within a style
every render still draws its own colours, sizes and light from the seed (everything that should
not matter). ``render.draw_styled_window`` draws any style but "classic", which stays
``render.draw_window`` (so old seeds give the same pictures).

The corners are, as for "classic", the grid's outer corners: cell (r, c) spans ``[c, c + 1] x
[r, r + 1]`` pitches from the grid's top-left corner, each square centred in its pitch.

``NEVER_TRAINED`` (``HELD_OUT`` and the ``UNSEEN`` boards) are never used in training:
``TRAINING_STYLES`` lists the others, and the transfer benchmark (``models.sagrada.transfer``) reads
the held-out one, and real dice on every one, to measure boards never seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

Span = tuple[float, float]
RGBSpan = tuple[tuple[int, int, int], tuple[int, int, int]]


@dataclass(frozen=True)
class Style:
    """One board design. Sizes are in millimetres as ``(low, high)`` ranges drawn per render."""

    name: str
    pitch_mm: Span  # grid pitch: square plus gap
    gap_share: Span  # the gap as a share of the pitch
    gap_rgb: RGBSpan  # colour of the card between the squares
    frame: str  # "wood", "flat", "none"
    frame_rgb: RGBSpan
    frame_mm: Span
    outline: str  # "rect", "rounded", "arch"
    margin_mm: Span  # card around the grid
    strip: str | None  # stained glass: "top", "bottom", "left", "right", None
    plate: str | None  # pattern name and difficulty: "below", "above", None
    prints: str  # "flat", "bordered", "shaded"
    square_radius: Span  # rounded print corners, share of the square
    blank_rgb: RGBSpan  # the blank squares
    pip_rgb: RGBSpan  # the pips of a value print
    light: str  # light falling on the art: "even", "warm", "cool", "spot"
    die_share: Span  # the die's side as a share of the square
    font: int = cv2.FONT_HERSHEY_TRIPLEX


STYLES: dict[str, Style] = {
    # matte charcoal board with rounded corners, no glass, thin-gapped cells, a small name below
    "slate": Style(
        name="slate",
        pitch_mm=(19.5, 22.0),
        gap_share=(0.05, 0.09),
        gap_rgb=((5, 5, 5), (35, 35, 40)),
        frame="flat",
        frame_rgb=((25, 25, 28), (70, 70, 78)),
        frame_mm=(4.0, 9.0),
        outline="rounded",
        margin_mm=(2.0, 4.0),
        strip=None,
        plate="below",
        prints="flat",
        square_radius=(0.06, 0.16),
        blank_rgb=((185, 185, 185), (235, 235, 235)),
        pip_rgb=((30, 30, 30), (90, 90, 90)),
        light="cool",
        die_share=(0.8, 0.9),
        font=cv2.FONT_HERSHEY_DUPLEX,
    ),
    # pale wooden board, glass down the left side, wide grey-blue gaps, squares with a light border
    "ivory": Style(
        name="ivory",
        pitch_mm=(20.5, 23.5),
        gap_share=(0.14, 0.2),
        gap_rgb=((35, 40, 50), (110, 115, 125)),
        frame="wood",
        frame_rgb=((150, 120, 80), (225, 200, 160)),
        frame_mm=(7.0, 12.0),
        outline="rect",
        margin_mm=(3.0, 5.0),
        strip="left",
        plate="below",
        prints="bordered",
        square_radius=(0.0, 0.04),
        blank_rgb=((210, 205, 190), (248, 245, 235)),
        pip_rgb=((50, 45, 40), (110, 100, 90)),
        light="warm",
        die_share=(0.78, 0.88),
        font=cv2.FONT_HERSHEY_COMPLEX,
    ),
    # just the pattern card: no frame, no glass, no name; gaps anywhere from black to mid grey
    "bare": Style(
        name="bare",
        pitch_mm=(19.0, 22.0),
        gap_share=(0.06, 0.16),
        gap_rgb=((0, 0, 0), (95, 90, 90)),
        frame="none",
        frame_rgb=((0, 0, 0), (0, 0, 0)),
        frame_mm=(0.0, 0.0),
        outline="rect",
        margin_mm=(1.5, 6.0),
        strip=None,
        plate=None,
        prints="flat",
        square_radius=(0.0, 0.1),
        blank_rgb=((175, 175, 175), (240, 240, 240)),
        pip_rgb=((25, 25, 25), (100, 100, 100)),
        light="even",
        die_share=(0.8, 0.92),
    ),
    # HELD OUT: a lacquered board with an arched top, glass down the right side (no other style has
    # it there), the name in script below, wide brown gaps, shaded prints, a spotlight; never trained on
    "cathedral": Style(
        name="cathedral",
        pitch_mm=(19.0, 21.5),
        gap_share=(0.1, 0.15),
        gap_rgb=((25, 15, 8), (65, 45, 30)),
        frame="flat",
        frame_rgb=((60, 10, 20), (110, 40, 70)),
        frame_mm=(6.0, 10.0),
        outline="arch",
        margin_mm=(2.5, 4.5),
        strip="right",
        plate="below",
        prints="shaded",
        square_radius=(0.0, 0.02),
        blank_rgb=((190, 190, 200), (230, 230, 240)),
        pip_rgb=((45, 40, 60), (105, 95, 120)),
        light="spot",
        die_share=(0.8, 0.9),
        font=cv2.FONT_HERSHEY_SCRIPT_COMPLEX,
    ),
    # NEVER TRAINED ON (a second board, added 2026-12-07): a walnut organiser with wide slots, light brown
    # wood between them (lighter than any trained style's gaps), rounded cells with a light border, the glass
    # along the top, warm light, and dice small for their slots (0.7-0.8 of a square: every trained style's
    # dice are 0.78 or more). Its real-dice composites were read while choosing the board zoom
    # (``scanner.sagrada.reader.BOARD_ZOOMS``), so they no longer measure without bias.
    "walnut": Style(
        name="walnut",
        pitch_mm=(21.0, 24.0),
        gap_share=(0.16, 0.24),
        gap_rgb=((95, 75, 55), (150, 120, 90)),
        frame="wood",
        frame_rgb=((55, 32, 18), (105, 65, 38)),
        frame_mm=(10.0, 16.0),
        outline="rounded",
        margin_mm=(3.0, 6.0),
        strip="top",
        plate="below",
        prints="bordered",
        square_radius=(0.1, 0.22),
        blank_rgb=((215, 205, 185), (245, 238, 225)),
        pip_rgb=((70, 55, 45), (125, 110, 95)),
        light="warm",
        die_share=(0.7, 0.8),
        font=cv2.FONT_HERSHEY_PLAIN,
    ),
    # NEVER TRAINED ON (a third board, added 2026-12-07 and read only after every choice was made): a pewter-
    # grey metal board, small cells with thin slate-blue gaps, no glass, shaded prints, cool light, and dice
    # anywhere from small to nearly filling their squares (0.66-0.95)
    "pewter": Style(
        name="pewter",
        pitch_mm=(18.0, 20.5),
        gap_share=(0.08, 0.14),
        gap_rgb=((50, 60, 75), (95, 105, 120)),
        frame="flat",
        frame_rgb=((140, 140, 145), (200, 200, 205)),
        frame_mm=(5.0, 9.0),
        outline="rect",
        margin_mm=(2.0, 5.0),
        strip=None,
        plate="below",
        prints="shaded",
        square_radius=(0.04, 0.12),
        blank_rgb=((200, 200, 205), (245, 245, 250)),
        pip_rgb=((20, 20, 30), (80, 80, 90)),
        light="cool",
        die_share=(0.66, 0.95),
        font=cv2.FONT_HERSHEY_COMPLEX_SMALL,
    ),
    # NEVER TRAINED ON (a fourth board, added 2026-12-07 in the fourteenth session and read only after its
    # choices): a jade-green lacquered board with rounded corners, the glass along the bottom above the
    # name (no other board has it there), wide near-black gaps, flat cream prints, a spotlight, and dice
    # from small to large for their squares (0.72-0.92)
    "jade": Style(
        name="jade",
        pitch_mm=(20.0, 23.0),
        gap_share=(0.12, 0.2),
        gap_rgb=((8, 12, 10), (40, 45, 38)),
        frame="flat",
        frame_rgb=((20, 70, 50), (60, 120, 90)),
        frame_mm=(6.0, 11.0),
        outline="rounded",
        margin_mm=(2.5, 5.0),
        strip="bottom",
        plate="below",
        prints="flat",
        square_radius=(0.02, 0.1),
        blank_rgb=((205, 198, 170), (240, 234, 212)),
        pip_rgb=((55, 45, 30), (110, 95, 70)),
        light="spot",
        die_share=(0.72, 0.92),
        font=cv2.FONT_HERSHEY_SIMPLEX,
    ),
}
HELD_OUT = "cathedral"
UNSEEN = ("walnut", "pewter", "jade")  # more boards never trained on, read only by the transfer benchmark
NEVER_TRAINED = (HELD_OUT, *UNSEEN)
MIXED = "mixed"  # per render, each design choice taken from a random one of the other training styles
ALL_STYLES = ("classic", *STYLES, MIXED)
TRAINING_STYLES = tuple(name for name in ALL_STYLES if name not in NEVER_TRAINED)


def style_named(name: str, rng: np.random.Generator) -> Style:
    """The ``Style`` of ``name``; for ``MIXED`` a new one whose every field comes from a random training style.

    The mixed style never takes anything from ``NEVER_TRAINED``, so those designs stay unseen.

    Raises:
        ValueError: an unknown style (or "classic", which ``render.draw_window`` draws).
    """
    if name in STYLES:
        return STYLES[name]
    if name != MIXED:
        raise ValueError(f"style: expected one of {', '.join(ALL_STYLES)}, got {name!r}")
    donors = [style for key, style in STYLES.items() if key not in NEVER_TRAINED]
    fields = {field: getattr(donors[int(rng.integers(len(donors)))], field) for field in Style.__dataclass_fields__}
    frame = donors[int(rng.integers(len(donors)))]  # the frame's look, colour and width go together
    fields.update(frame=frame.frame, frame_rgb=frame.frame_rgb, frame_mm=frame.frame_mm, name=MIXED)
    return Style(**fields)
