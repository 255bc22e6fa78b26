"""The report page in a real browser: headless Chromium loads it, a cell is hovered, its tooltip is
read, and screenshots at 1,400 and 2,560 px wide check that the notes are in view beside the
picture and the picture is not clipped by its box (the screenshots are written next to the test's
temporary files, ``<tmp>/report-<width>.png``).

Not part of the main suite (the file name does not match ``test_*.py``); run it by its own command
(see docs/pictures.md):

    apt-get install -y chromium chromium-driver
    .venv/bin/pip install -e ".[browser]"
    .venv/bin/python -m pytest -p no:cacheprovider tests/browser/browser_report_page.py

It skips, with one reason, when selenium, Chromium or chromedriver is missing.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[browser]')")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from linear_layout.draw import conversion_rows, html_page  # noqa: E402
from linear_layout.draw.html import CONVERSION_COLUMNS  # noqa: E402
from linear_layout.tools.report import main as report_main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "examples" / "matmul.ttgir"
ATTENTION = ROOT / "tests" / "ttgir_corpus" / "attention_fwd.sm80.ttgir"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
TRANSPOSED = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>"
ROWS = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>"
COLUMNS = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [0, 1]}>"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1600,1000"]


CELL = "g.grid > rect"


def open_all(browser) -> None:
    browser.execute_script("document.querySelectorAll('details').forEach(function (d) { d.open = true; })")


def visible_region(browser, element) -> dict:
    """The element's box in the viewport (CSS px) and the viewport's size."""
    return browser.execute_script(
        "var r = arguments[0].getBoundingClientRect();"
        "return {left: r.left, top: r.top, right: r.right, bottom: r.bottom,"
        " width: window.innerWidth, height: window.innerHeight};", element)


@pytest.fixture()
def browser(tmp_path):
    if not CHROMIUM or not DRIVER:
        pytest.skip("Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tmp_path / 'profile'}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=DRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def test_hover_reads_the_tooltip_and_the_console_is_clean(browser, tmp_path):
    page = tmp_path / "report.html"
    rows = conversion_rows([("transpose", BLOCKED, TRANSPOSED, (32, 32), 16), ("lanes", ROWS, COLUMNS, (8, 4), 32)])
    page.write_text(html_page("kernel report", CONVERSION_COLUMNS, rows), encoding="utf-8")
    browser.get(page.as_uri())
    assert browser.title == "kernel report"
    assert browser.execute_script("return document.querySelectorAll('svg').length") == 2
    open_all(browser)

    cell = browser.find_elements(By.CSS_SELECTOR, CELL)[5]  # source panel, element (0, 5)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", cell)
    ActionChains(browser).move_to_element(cell).perform()
    status = browser.find_element(By.ID, "tooltip").text
    title = browser.execute_script("return arguments[0].querySelector('title').textContent", cell)
    assert status == title == "(0, 5) T1 r1 lane 1 warp 0"

    shared_cell = browser.find_elements(By.CSS_SELECTOR, CELL)[32 * 32 + 3]  # the scratch panel
    browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", shared_cell)
    ActionChains(browser).move_to_element(shared_cell).perform()
    assert re.fullmatch(r"\(\d+, \d+\) offset 3 bank 1", browser.find_element(By.ID, "tooltip").text)

    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []


def test_report_page_of_a_real_kernel(browser, tmp_path):
    """linear-layout-report examples/matmul.ttgir --html: hover the first cell of every picture."""
    page = tmp_path / "matmul.html"
    assert report_main([str(KERNEL), "--html", str(page)]) == 0
    browser.get(page.as_uri())
    open_all(browser)
    pictures = browser.find_elements(By.CSS_SELECTOR, "div.picture svg")
    assert len(pictures) == len(browser.find_elements(By.CSS_SELECTOR, "div.box")) >= 3
    for svg in pictures:
        cell = svg.find_element(By.CSS_SELECTOR, CELL)
        browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", cell)
        ActionChains(browser).move_to_element(cell).perform()
        status = browser.find_element(By.ID, "tooltip").text
        assert status == browser.execute_script("return arguments[0].querySelector('title').textContent", cell)
        assert re.fullmatch(r"\(0, 0\) (offset 0 bank 0|T0 r0 lane 0 warp 0)|tile \(0, 0\)\.\..*", status), status
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


@pytest.mark.parametrize("width", [1400, 2560])
def test_notes_beside_the_picture_and_nothing_clipped(browser, tmp_path, width):
    """A real attention kernel's report at 1,400 and 2,560 px: each picture opened in turn, fitted
    to its box, with its notes in view beside it (screenshot of each)."""
    page = tmp_path / "attention.html"
    assert report_main([str(ATTENTION), "--html", str(page)]) == 0
    assert page.stat().st_size <= 1_000_000
    browser.set_window_size(width, 1000)
    browser.get(page.as_uri())
    sections = browser.find_elements(By.CSS_SELECTOR, "details")
    assert sections
    for number, section in enumerate(sections):
        browser.execute_script("arguments[0].open = true; arguments[0].scrollIntoView({block: 'start'})", section)
        boxes = section.find_elements(By.CSS_SELECTOR, "div.box")
        # a section without a box links to an earlier row's equal panels
        frame = visible_region(browser, boxes[0] if boxes else section.find_element(By.CSS_SELECTOR, "p.same"))
        if boxes:
            picture = visible_region(browser, boxes[0].find_element(By.CSS_SELECTOR, "svg"))
            # fitted: the whole picture inside its box, horizontally (no part hidden to the right)
            assert frame["left"] <= picture["left"] and picture["right"] <= frame["right"] + 1, (picture, frame)
            assert picture["right"] - picture["left"] > 300
        aside = section.find_element(By.CSS_SELECTOR, "aside")
        note = aside.find_element(By.CSS_SELECTOR, "p")
        region = visible_region(browser, note)
        # the first note is in the window, beside the picture (to its right)
        assert 0 <= region["top"] < region["height"] and region["left"] >= 0 and region["right"] <= region["width"]
        assert region["left"] >= frame["right"]
        shot = tmp_path / f"report-{width}-{number}.png"
        assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 0
        browser.execute_script("arguments[0].open = false", section)
    zoom_in = browser.find_elements(By.CSS_SELECTOR, "button[data-zoom='1.5']")[0]
    browser.execute_script("arguments[0].closest('details').open = true", zoom_in)
    zoom_in.click()
    svg = zoom_in.find_element(By.XPATH, "ancestor::div[@class='picture']//*[local-name()='svg']")
    box = zoom_in.find_element(By.XPATH, "ancestor::div[@class='picture']//div[contains(@class, 'box')]")
    # zoomed in: wider than the box, which now scrolls (pan) instead of shrinking the picture
    assert browser.execute_script("return arguments[0].scrollWidth > arguments[0].clientWidth", box)
    assert visible_region(browser, svg)["right"] - visible_region(browser, svg)["left"] > visible_region(
        browser, box)["right"] - visible_region(browser, box)["left"]
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
