"""The report page in a real browser: headless Chromium loads it, a cell is hovered, its tooltip is read.

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

KERNEL = Path(__file__).resolve().parents[2] / "examples" / "matmul.ttgir"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
TRANSPOSED = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>"
ROWS = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>"
COLUMNS = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [0, 1]}>"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1600,1000"]


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

    cell = browser.find_elements(By.CSS_SELECTOR, "rect.cell")[5]  # source panel, element (0, 5)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", cell)
    ActionChains(browser).move_to_element(cell).perform()
    status = browser.find_element(By.ID, "tooltip").text
    title = browser.execute_script("return arguments[0].querySelector('title').textContent", cell)
    assert status == title == "(0, 5) T1 r1 lane 1 warp 0"

    shared_cell = browser.find_elements(By.CSS_SELECTOR, "rect.cell")[32 * 32 + 3]  # the scratch panel
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
    pictures = browser.find_elements(By.CSS_SELECTOR, "div.picture svg")
    assert len(pictures) == 5
    for svg in pictures:
        cell = svg.find_element(By.CSS_SELECTOR, "rect.cell")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", cell)
        ActionChains(browser).move_to_element(cell).perform()
        status = browser.find_element(By.ID, "tooltip").text
        assert status == browser.execute_script("return arguments[0].querySelector('title').textContent", cell)
        assert re.fullmatch(r"\(0, 0\) (offset 0 bank 0|T0 r0 lane 0 warp 0)|tile \(0, 0\)\.\..*", status), status
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
