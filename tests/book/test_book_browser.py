"""The web book in a real browser (Chromium driven by Playwright, as tests/notebooks/test_browser.py
drives JupyterLab; issue 41), both editions, served over HTTP from 127.0.0.1:

- every page loads with no console error, no failed request and no image that did not load, and
  where a page has math, MathJax (served by the site) rendered every formula without an error;
- the language switch, opened at a section in the middle of a page, lands on the same section of
  the other edition's page (the same heading level and number);
- every notebook page's first errata link lands on its row of the errata page;
- the search finds "1F1B" (the pipeline page) in both editions, and "流水线" in the Chinese one.

The browser is the system's Chromium (never ``playwright install``); without it, or without
Playwright, the tests are skipped with a one-line reason. Set ``LABS_CHROMIUM`` for another one.
"""
from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tests.support.browser import launched, skips
from tools.book.texts import EDITIONS, OTHER

pytestmark = [pytest.mark.book, pytest.mark.slow, *skips("book browser test")]
SECTION = re.compile(r'<section id="([^"]+)">\s*<span id="s-(\d+)"></span>')
HEADING = re.compile(r'<span id="s-(\d+)"></span><h(\d)>(.*?)</h\d>', re.S)
MATH_DONE_JS = """async () => {
  if (!document.querySelector('.math')) return {math: 0, rendered: 0, errors: 0};
  await MathJax.startup.promise;
  return {math: document.querySelectorAll('.math').length,
          rendered: document.querySelectorAll('.math mjx-container').length,
          errors: document.querySelectorAll('mjx-merror').length};
}"""
IMAGES_JS = """() => [...document.querySelectorAll('img')]
  .filter(img => !(img.complete && img.naturalWidth > 0)).map(img => img.src)"""


@pytest.fixture(scope="module")
def browser():
    with launched() as chromium:
        yield chromium


@pytest.fixture
def page(browser):
    """A page that records console errors, uncaught errors and failed or refused requests."""
    # reduced motion: anchors are reached at once, not by the theme's smooth scrolling
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  reduced_motion="reduce")
    tab = context.new_page()
    tab.problems = []
    tab.on("console", lambda m: m.type == "error" and tab.problems.append(f"console: {m.text}"))
    tab.on("pageerror", lambda e: tab.problems.append(f"page error: {e}"))
    tab.on("requestfailed", lambda r: r.failure != "net::ERR_ABORTED"  # left by navigating on
           and tab.problems.append(f"failed: {r.url} ({r.failure})"))
    tab.on("response", lambda r: r.status >= 400 and tab.problems.append(f"{r.status}: {r.url}"))
    yield tab
    context.close()


def settle(page) -> None:
    """Wait until the window stops scrolling (the theme scrolls smoothly to an anchor)."""
    last = None
    for _ in range(60):
        now = page.evaluate("window.scrollY")
        if now == last:
            return
        last = now
        page.wait_for_timeout(150)


def _pages(site: Path) -> list[str]:
    return ["index.html"] + [f"{edition}/{p.name}" for edition in EDITIONS
                             for p in sorted((site / edition).glob("*.html"))]


def heading_of(site: Path, relative: str, k: int) -> tuple[str, str | None]:
    """(heading level, leading number such as "2.3" or "#14") of section ``s-k`` of a page."""
    for anchor, level, title in HEADING.findall((site / relative).read_text(encoding="utf-8")):
        if int(anchor) == k:
            number = re.match(r"\s*(#?\d+(?:\.\d+)*)", html.unescape(re.sub(r"<[^>]+>", "", title)))
            return level, number.group(1) if number else None
    raise AssertionError(f"{relative} has no section s-{k}")


def test_every_page_loads_cleanly_with_its_images_and_math(site, served, page):
    math_pages = 0
    for relative in _pages(site):
        page.problems.clear()
        page.goto(f"{served}/{relative}", wait_until="load")
        math = page.evaluate(MATH_DONE_JS)
        assert math["rendered"] == math["math"] and math["errors"] == 0, (relative, math)
        math_pages += math["math"] > 0
        assert page.evaluate(IMAGES_JS) == [], f"{relative}: images that did not load"
        assert page.problems == [], f"{relative}: {page.problems}"
    assert math_pages >= 6, "MathJax rendered on too few pages"


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_language_switch_lands_on_the_same_section(site, served, page, edition):
    other = OTHER[edition]
    names = sorted(p.name for p in (site / edition).glob("2.*.html")) + ["errata.html"]
    for name in names:
        native = dict((int(k), section) for section, k in
                      SECTION.findall((site / edition / name).read_text(encoding="utf-8")))
        for k in sorted({len(native) // 3, len(native) // 2}):
            page.goto(f"{served}/{edition}/{name}#{native[k]}", wait_until="load")
            settle(page)
            with page.expect_navigation():
                page.click("a.book-lang-switch-link")
            assert page.url == f"{served}/{other}/{name}#s-{k}", (name, k, page.url)
            settle(page)
            top = page.evaluate(f"document.getElementById('s-{k}').getBoundingClientRect().top")
            assert -5 <= top <= 150, f"{other}/{name}: section s-{k} is not in view ({top} px)"
            assert heading_of(site, f"{edition}/{name}", k) == heading_of(site, f"{other}/{name}", k)
    assert page.problems == []


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_errata_links_land_on_their_rows(site, served, page, edition):
    clicked = 0
    for path in sorted((site / edition).glob("2.*.html")):
        page.goto(f"{served}/{edition}/{path.name}", wait_until="load")
        links = page.locator("a.errata-link")
        if not links.count():
            continue
        row = links.first.get_attribute("href").split("#")[1]
        with page.expect_navigation():
            links.first.click()
        assert page.url == f"{served}/{edition}/errata.html#{row}"
        settle(page)
        title = page.evaluate(f"""() => {{
            const anchor = document.getElementById({row!r});
            const next = [...document.querySelectorAll('h3')].find(
                h => anchor.compareDocumentPosition(h) & Node.DOCUMENT_POSITION_FOLLOWING);
            return [anchor.getBoundingClientRect().top, next.textContent];
        }}""")
        assert -5 <= title[0] <= 150 and title[1].startswith(f"#{row} "), (path.name, row, title)
        clicked += 1
    assert clicked >= 4 and page.problems == []


@pytest.mark.parametrize("edition,words", [("zh", "1F1B"), ("en", "1F1B"), ("zh", "流水线")])
def test_the_search_finds_the_pipeline_page(served, page, edition, words):
    """"1F1B" in both editions; a Chinese word (split by jieba when the site was built)."""
    page.goto(f"{served}/{edition}/search.html?q={words}", wait_until="load")
    page.wait_for_function(
        "() => document.querySelectorAll('#search-results ul.search li').length > 0",
        timeout=30_000)
    found = page.eval_on_selector_all("#search-results ul.search li a",
                                      "links => links.map(a => a.getAttribute('href'))")
    assert any(href.startswith("2.3_pipeline_parallel.html") for href in found), found
    assert page.problems == []
