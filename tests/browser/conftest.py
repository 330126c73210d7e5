"""Headless Chromium (Debian's `chromium` and `chromedriver`, driven by selenium) for the browser
tier; every test here skips, saying why, where they are not installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import CHROMEDRIVER, CHROMIUM, OFFLINE


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if CHROMIUM is None or CHROMEDRIVER is None:
        skip = pytest.mark.skip(
            reason="chromium and chromedriver are not installed (scripts/test installs them with apt-get where it can)"
        )
        for item in items:
            if Path(str(item.fspath)).parent == Path(__file__).parent:
                item.add_marker(skip)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
                     "--disable-extensions", "--lang=en-US", "--window-size=1280,800", OFFLINE):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
