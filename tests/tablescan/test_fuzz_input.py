"""Fuzzing the command line: arbitrary bytes and JSON to ``score``, arbitrary small images to ``scan``.

Whatever comes in, the answer is exit 0, or exit 2 with exactly one ``tablescan: ...`` line on stderr:
never a traceback, never another exit code.
"""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablescan.cli import cli

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)
GAME_KEYS = st.sampled_from(["game", "players", "window", "palace", "cards", "public_objectives", "private_objective", "scoring_round"])
GAME_LIKE = st.fixed_dictionaries(
    {
        "game": st.sampled_from(["sagrada", "alhambra", "splendor"]),
        "players": st.lists(st.dictionaries(GAME_KEYS, JSON_VALUES, max_size=4), max_size=3),
    },
    optional={"public_objectives": JSON_VALUES, "scoring_round": JSON_VALUES},
)


def assert_clean_answer(result) -> None:
    """Exit 0, or exit 2 with one stderr line; a Python exception escaping the command fails."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 2), (result.exit_code, result.output)
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("tablescan: "), result.stderr


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400) | st.text(max_size=200).map(lambda text: text.encode("utf-8", "surrogatepass")))
def test_score_on_arbitrary_bytes(data: bytes) -> None:
    assert_clean_answer(CliRunner().invoke(cli, ["score", "-"], input=data))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_VALUES | GAME_LIKE, st.sampled_from(["json", "text"]))
def test_score_on_arbitrary_json(value, fmt: str) -> None:
    assert_clean_answer(CliRunner().invoke(cli, ["score", "-", "--format", fmt], input=json.dumps(value)))


@pytest.fixture(scope="module")
def photo_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_photos")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    width=st.integers(200, 520),
    height=st.integers(200, 520),
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["noise", "flat", "blocks"]),
    suffix=st.sampled_from([".png", ".jpg"]),
    game=st.sampled_from(["sagrada", "alhambra"]),
)
def test_scan_on_arbitrary_small_images(photo_dir, width, height, seed, kind, suffix, game) -> None:
    rng = np.random.default_rng(seed)
    if kind == "noise":
        image = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    elif kind == "flat":
        image = np.full((height, width, 3), rng.integers(0, 256, 3), dtype=np.uint8)
    else:
        blocks = rng.integers(0, 256, (max(1, height // 40), max(1, width // 40), 3), dtype=np.uint8)
        image = cv2.resize(blocks, (width, height), interpolation=cv2.INTER_NEAREST)
    ok, encoded = cv2.imencode(suffix, image)
    assert ok
    path = photo_dir / f"photo{suffix}"
    path.write_bytes(encoded.tobytes())
    assert_clean_answer(CliRunner().invoke(cli, ["scan", str(path), "--game", game]))


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=2000), st.sampled_from([b"", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff\xe0", b"RIFF\x00\x00\x00\x00WEBP"]))
def test_scan_on_arbitrary_bytes(data: bytes, magic: bytes) -> None:
    assert_clean_answer(CliRunner().invoke(cli, ["scan", "-", "--game", "sagrada"], input=magic + data))
