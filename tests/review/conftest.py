"""Fixtures for the review screen: an app over a fresh database, and a live server for the browser."""

from __future__ import annotations

import shutil
import socket
import threading
import time
import warnings
from pathlib import Path

import cv2
import numpy as np
import pytest

with warnings.catch_warnings():  # starlette 1.x nudges towards httpx2; httpx is what the test extra ships
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from tablescan.review.app import create_app

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


def qr_text(png: bytes) -> str:
    """The text OpenCV reads from a PNG of a QR code. Its classic finder search misses the odd code (about
    one join address in three hundred, by the port in it) that its ArUco-based search finds, the same
    decoder then reading it; a phone's reader has no such gap, so both are asked."""
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_GRAYSCALE)
    text = cv2.QRCodeDetector().detectAndDecode(image)[0]
    if not text and hasattr(cv2, "QRCodeDetectorAruco"):
        text = cv2.QRCodeDetectorAruco().detectAndDecode(image)[0]
    return text


@pytest.fixture
def read_qr():
    """The QR reader the tests use: ``read_qr(png) -> text`` ("" when nothing is read)."""
    return qr_text


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "review.sqlite3"


@pytest.fixture
def client(db_path: Path) -> TestClient:
    with TestClient(create_app(db_path)) as test_client:
        yield test_client


def chromium_path() -> str | None:
    """Return the system Chromium binary, or None when none is installed."""
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    return shutil.which("chromium")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def live_server(db_path: Path):
    """Serve the app with uvicorn on 127.0.0.1 and a free port, in a thread; yield its base URL."""
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(db_path), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("review server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=5)


@pytest.fixture(scope="module")
def chromium():
    """Launch the system's headless Chromium once per test module (skip when there is none)."""
    executable = chromium_path()
    if executable is None:
        pytest.skip("no chromium binary (apt-get install chromium); .ci/run installs it")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def browser_page(chromium):
    """Yield a fresh page, phone-sized, in its own browser context."""
    context = chromium.new_context(viewport={"width": 412, "height": 900}, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()
