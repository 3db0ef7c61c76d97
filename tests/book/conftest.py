"""The built web book for the book tests (marker ``book``): ``LABS_BOOK`` (``make test-book``
passes ``BOOK``, default ``book``), built first into a temporary folder when it holds no site."""
from __future__ import annotations

import functools
import http.server
import os
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site's folder (``zh/``, ``en/``, ``index.html``)."""
    chosen = Path(os.environ.get("LABS_BOOK", "book"))
    chosen = chosen if chosen.is_absolute() else ROOT / chosen
    if (chosen / "zh" / "index.html").is_file() and (chosen / "en" / "index.html").is_file():
        return chosen
    pytest.importorskip("sphinx", reason="the book's tools are not installed (make book)")
    from tools.book.build import build
    out = tmp_path_factory.mktemp("book") / "site"
    build(out, out.parent / "work", log=lambda line: None)
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="session")
def served(site):
    """The site served over HTTP on 127.0.0.1 (as GitHub Pages serves it): its base URL."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
