"""A small QR code encoder (ISO/IEC 18004): byte mode, error correction L or M, versions 1-10.

Enough for the review screen's join address (an address with its LAN token, well under 200 bytes);
written here so the screen needs no new dependency. ``qr_matrix`` gives the modules, ``qr_png``
a PNG of them with the standard four-module quiet zone.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from PIL import Image

from scoring.errors import StateError

__all__ = ["qr_matrix", "qr_png"]

MAX_VERSION = 10
QUIET_ZONE = 4  # modules of light border the standard asks for
# per level: version -> (EC codewords per block, [(number of blocks, data codewords per block), ...])
BLOCKS: dict[str, dict[int, tuple[int, list[tuple[int, int]]]]] = {
    "L": {
        1: (7, [(1, 19)]),
        2: (10, [(1, 34)]),
        3: (15, [(1, 55)]),
        4: (20, [(1, 80)]),
        5: (26, [(1, 108)]),
        6: (18, [(2, 68)]),
        7: (20, [(2, 78)]),
        8: (24, [(2, 97)]),
        9: (30, [(2, 116)]),
        10: (18, [(2, 68), (2, 69)]),
    },
    "M": {
        1: (10, [(1, 16)]),
        2: (16, [(1, 28)]),
        3: (26, [(1, 44)]),
        4: (18, [(2, 32)]),
        5: (24, [(2, 43)]),
        6: (16, [(4, 27)]),
        7: (18, [(4, 31)]),
        8: (22, [(2, 38), (2, 39)]),
        9: (22, [(3, 36), (2, 37)]),
        10: (26, [(4, 43), (1, 44)]),
    },
}
LEVEL_BITS = {"L": 1, "M": 0}  # the two format bits of each error correction level
ALIGNMENT = {
    1: [],
    2: [6, 18],
    3: [6, 22],
    4: [6, 26],
    5: [6, 30],
    6: [6, 34],
    7: [6, 22, 38],
    8: [6, 24, 42],
    9: [6, 26, 46],
    10: [6, 28, 50],
}
REMAINDER_BITS = {1: 0, 2: 7, 3: 7, 4: 7, 5: 7, 6: 7, 7: 0, 8: 0, 9: 0, 10: 0}
MASKS: tuple[Callable[[int, int], bool], ...] = (
    lambda x, y: (x + y) % 2 == 0,
    lambda x, y: y % 2 == 0,
    lambda x, y: x % 3 == 0,
    lambda x, y: (x + y) % 3 == 0,
    lambda x, y: (x // 3 + y // 2) % 2 == 0,
    lambda x, y: x * y % 2 + x * y % 3 == 0,
    lambda x, y: (x * y % 2 + x * y % 3) % 2 == 0,
    lambda x, y: ((x + y) % 2 + x * y % 3) % 2 == 0,
)

# GF(256) with the QR polynomial x^8 + x^4 + x^3 + x^2 + 1
_EXP = [0] * 512
_LOG = [0] * 256
_value = 1
for _power in range(255):
    _EXP[_power] = _value
    _LOG[_value] = _power
    _value <<= 1
    if _value & 0x100:
        _value ^= 0x11D
for _power in range(255, 512):
    _EXP[_power] = _EXP[_power - 255]


def _multiply(a: int, b: int) -> int:
    return 0 if a == 0 or b == 0 else _EXP[_LOG[a] + _LOG[b]]


def _generator(degree: int) -> list[int]:
    """The Reed-Solomon generator polynomial (x - a^0)...(x - a^(degree-1)), highest power first."""
    poly = [1]
    for power in range(degree):
        nxt = [0] * (len(poly) + 1)
        for index, coefficient in enumerate(poly):
            nxt[index] ^= coefficient
            nxt[index + 1] ^= _multiply(coefficient, _EXP[power])
        poly = nxt
    return poly


def error_codewords(data: list[int], degree: int) -> list[int]:
    """Return the Reed-Solomon error correction codewords of one block.

    >>> error_codewords([32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17], 10)
    [196, 35, 39, 119, 235, 215, 231, 226, 93, 23]
    """
    generator = _generator(degree)
    remainder = list(data) + [0] * degree
    for index in range(len(data)):
        factor = remainder[index]
        if factor:
            for offset, coefficient in enumerate(generator):
                remainder[index + offset] ^= _multiply(coefficient, factor)
    return remainder[len(data) :]


def _data_capacity(version: int, level: str) -> int:
    return sum(count * size for count, size in BLOCKS[level][version][1])


def _codewords(data: bytes, version: int, level: str) -> list[int]:
    """The message in byte mode, padded, split into blocks with their EC codewords, interleaved."""
    count_bits = 8 if version < 10 else 16
    bits: list[int] = []

    def put(value: int, width: int) -> None:
        bits.extend((value >> shift) & 1 for shift in range(width - 1, -1, -1))

    put(0b0100, 4)
    put(len(data), count_bits)
    for byte in data:
        put(byte, 8)
    capacity = _data_capacity(version, level) * 8
    put(0, min(4, capacity - len(bits)))
    put(0, (8 - len(bits) % 8) % 8)
    message = [int("".join(map(str, bits[i : i + 8])), 2) for i in range(0, len(bits), 8)]
    pad = 0
    while len(message) < capacity // 8:
        message.append((0xEC, 0x11)[pad % 2])
        pad += 1
    degree, groups = BLOCKS[level][version]
    blocks, start = [], 0
    for count, size in groups:
        for _ in range(count):
            blocks.append(message[start : start + size])
            start += size
    ecc = [error_codewords(block, degree) for block in blocks]
    out = [block[i] for i in range(max(len(b) for b in blocks)) for block in blocks if i < len(block)]
    out += [code[i] for i in range(degree) for code in ecc]
    return out


def _choose_version(length: int, level: str) -> int:
    for version in range(1, MAX_VERSION + 1):
        count_bits = 8 if version < 10 else 16
        if 4 + count_bits + 8 * length <= 8 * _data_capacity(version, level):
            return version
    raise StateError(f"QR code: {length} bytes do not fit a version {MAX_VERSION} code at level {level}")


class _Grid:
    """The module grid with the function patterns drawn and marked (data never goes there)."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.size = 17 + 4 * version
        self.dark = [[False] * self.size for _ in range(self.size)]
        self.fixed = [[False] * self.size for _ in range(self.size)]
        self._draw_function_patterns()

    def set(self, x: int, y: int, dark: bool) -> None:
        self.dark[y][x] = dark
        self.fixed[y][x] = True

    def _draw_function_patterns(self) -> None:
        size = self.size
        for i in range(size):  # timing patterns
            self.set(6, i, i % 2 == 0)
            self.set(i, 6, i % 2 == 0)
        for cx, cy in ((3, 3), (size - 4, 3), (3, size - 4)):  # finders with their separators
            for dy in range(-4, 5):
                for dx in range(-4, 5):
                    x, y = cx + dx, cy + dy
                    if 0 <= x < size and 0 <= y < size:
                        ring = max(abs(dx), abs(dy))
                        self.set(x, y, ring not in (2, 4))
        centres = ALIGNMENT[self.version]
        last = len(centres) - 1
        for i, cy in enumerate(centres):
            for j, cx in enumerate(centres):
                if (i, j) in ((0, 0), (0, last), (last, 0)):
                    continue  # under a finder
                for dy in range(-2, 3):
                    for dx in range(-2, 3):
                        self.set(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1)
        self.draw_format(0)  # reserves the format areas (and the dark module); redrawn once the mask is known
        if self.version >= 7:
            remainder = self.version
            for _ in range(12):
                remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25)
            bits = self.version << 12 | remainder
            for i in range(18):
                dark = (bits >> i) & 1 == 1
                a, b = size - 11 + i % 3, i // 3
                self.set(a, b, dark)
                self.set(b, a, dark)

    def draw_format(self, bits: int) -> None:
        size = self.size
        bit = [(bits >> i) & 1 == 1 for i in range(15)]
        for i in range(6):
            self.set(8, i, bit[i])
        self.set(8, 7, bit[6])
        self.set(8, 8, bit[7])
        self.set(7, 8, bit[8])
        for i in range(9, 15):
            self.set(14 - i, 8, bit[i])
        for i in range(8):
            self.set(size - 1 - i, 8, bit[i])
        for i in range(8, 15):
            self.set(8, size - 15 + i, bit[i])
        self.set(8, size - 8, True)

    def place(self, codewords: list[int]) -> None:
        """Lay the codewords in the two-module-wide zigzag, from the bottom-right corner."""
        size, index, total = self.size, 0, len(codewords) * 8
        right = size - 1
        while right >= 1:
            if right == 6:
                right = 5  # the vertical timing column is skipped
            upward = (right + 1) & 2 == 0
            for step in range(size):
                y = size - 1 - step if upward else step
                for x in (right, right - 1):
                    if not self.fixed[y][x] and index < total:
                        self.dark[y][x] = (codewords[index >> 3] >> (7 - (index & 7))) & 1 == 1
                        index += 1
            right -= 2


def _format_bits(level: str, mask: int) -> int:
    data = LEVEL_BITS[level] << 3 | mask
    remainder = data
    for _ in range(10):
        remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537)
    return (data << 10 | remainder) ^ 0x5412


def _masked(grid: _Grid, mask: int, level: str) -> list[list[bool]]:
    test = MASKS[mask]
    size = grid.size
    modules = [[grid.dark[y][x] ^ (not grid.fixed[y][x] and test(x, y)) for x in range(size)] for y in range(size)]
    formatted = _Grid.__new__(_Grid)
    formatted.size, formatted.version, formatted.dark, formatted.fixed = size, grid.version, modules, grid.fixed
    formatted.draw_format(_format_bits(level, mask))
    return formatted.dark


def _penalty(modules: list[list[bool]]) -> int:
    """The standard's four penalty rules: runs, 2x2 blocks, finder-like patterns, dark/light balance."""
    size, score = len(modules), 0
    lines = modules + [list(column) for column in zip(*modules, strict=True)]
    pattern = [True, False, True, True, True, False, True, False, False, False, False]
    finder_like = (pattern, pattern[::-1])  # a finder's 1:1:3:1:1 with four light modules on either side
    for line in lines:
        run, previous = 0, None
        for dark in line:
            if dark == previous:
                run += 1
            else:
                if run >= 5:
                    score += run - 2
                run, previous = 1, dark
        if run >= 5:
            score += run - 2
        padded = [False] * QUIET_ZONE + line + [False] * QUIET_ZONE  # a pattern may lean on the quiet zone
        for start in range(len(padded) - 10):
            if padded[start : start + 11] in finder_like:
                score += 40
    for y in range(size - 1):
        for x in range(size - 1):
            if modules[y][x] == modules[y][x + 1] == modules[y + 1][x] == modules[y + 1][x + 1]:
                score += 3
    dark = sum(map(sum, modules))
    score += abs(dark * 20 - size * size * 10) // (size * size) * 10
    return score


def qr_matrix(text: str, level: str = "M") -> list[list[bool]]:
    """Return the QR code of ``text`` (UTF-8, byte mode) as rows of modules, True for dark.

    The smallest version that holds it is used, and the mask with the lowest penalty.

    >>> len(qr_matrix("http://192.168.1.20:8000/?token=abc"))
    29

    Raises:
        StateError: an unknown level, or text too long for a version 10 code.
    """
    if level not in BLOCKS:
        raise StateError(f"QR code: error correction level {level!r}: expected one of {', '.join(BLOCKS)}")
    data = text.encode("utf-8")
    version = _choose_version(len(data), level)
    grid = _Grid(version)
    grid.place(_codewords(data, version, level))
    candidates = [_masked(grid, mask, level) for mask in range(len(MASKS))]
    return min(candidates, key=_penalty)


def qr_png(text: str, level: str = "M", scale: int = 8) -> bytes:
    """Return a PNG of the QR code of ``text``, ``scale`` pixels per module, with the quiet zone.

    Raises:
        StateError: as ``qr_matrix``.
    """
    modules = qr_matrix(text, level)
    side = len(modules) + 2 * QUIET_ZONE
    border = [255] * QUIET_ZONE
    pixels = [255] * (side * QUIET_ZONE)
    for row in modules:
        pixels += border + [0 if dark else 255 for dark in row] + border
    pixels += [255] * (side * QUIET_ZONE)
    image = Image.new("L", (side, side))
    image.putdata(pixels)
    buffer = io.BytesIO()
    image.resize((side * scale, side * scale), Image.Resampling.NEAREST).save(buffer, format="PNG")
    return buffer.getvalue()
