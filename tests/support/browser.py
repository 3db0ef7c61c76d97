"""Chromium driven by Playwright, for the tests that look at the course in a real browser
(tests/notebooks/test_browser.py: JupyterLab; tests/book/test_book_browser.py: the web book).

The browser is the system's Chromium (Debian package ``chromium``, or ``LABS_CHROMIUM``);
Playwright comes from PyPI, never ``playwright install``. Without either, :func:`skips` skips
the module's tests with a one-line reason."""
from __future__ import annotations

import contextlib
import os
import shutil

import pytest

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

__all__ = ["CHROMIUM", "sync_playwright", "skips", "launched"]


def _chromium() -> str | None:
    for candidate in (os.environ.get("LABS_CHROMIUM"), "chromium", "chromium-browser",
                      "google-chrome"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


CHROMIUM = _chromium()


def skips(what: str) -> list:
    """The marks that skip ``what`` (e.g. "real-browser test") without Chromium or Playwright."""
    return [
        pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine "
                           f"(apt install chromium, or set LABS_CHROMIUM): {what} skipped"),
        pytest.mark.skipif(sync_playwright is None, reason="playwright is not installed "
                           f"(pip install -r requirements-dev.txt): {what} skipped"),
    ]


@contextlib.contextmanager
def launched():
    """This machine's Chromium, started by Playwright (headless) and closed afterwards."""
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()
