"""`/docs` and `/redoc` of the real local server in headless Chromium that can reach nothing but
127.0.0.1: the pages render every operation from the server's own assets, Authorize opens with
memvault's security schemes, a memory key given there makes "Try it out" answer 200, and the
example bodies are realistic."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import SCREENSHOTS, WAIT_SECONDS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))

from test_local_server import MEMVAULT, environment, free_port, server


@dataclass
class Served:
    url: str
    memory_key: str
    operations: int


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data = tmp_path_factory.mktemp("docs")
    env = environment(data)
    created = subprocess.run([str(MEMVAULT), "keys", "create", "--label", "docs"], env=env, capture_output=True,
                             text=True, check=True)
    with server(data, free_port(), env) as url:
        document = httpx.get(f"{url}/openapi.json").json()
        operations = sum(len(methods) for methods in document["paths"].values())
        yield Served(url, created.stdout.strip(), operations)


def wait_for(browser: Any, condition: Any, what: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, WAIT_SECONDS).until(lambda _: condition(), message=what)


def css(browser: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(browser.find_elements(By.CSS_SELECTOR, selector))


def loaded_from_elsewhere(browser: Any, origin: str, but_images: bool = False) -> list[str]:
    """What the page asked of any other origin (with ``but_images``: any but images)."""
    entries = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => [e.name, e.initiatorType])")
    return [url for url, kind in entries if not url.startswith(origin + "/") and not (but_images and kind == "img")]


def test_docs_render_offline_and_authorize_works(served: Served, browser: Any) -> None:
    browser.get(f"{served.url}/docs")
    wait_for(browser, lambda: len(css(browser, ".opblock")) == served.operations, "every operation listed")
    tags = {tag.get_attribute("data-tag") for tag in css(browser, ".opblock-tag")}
    assert tags == {"memory", "memory router", "brain", "admin", "health"}
    assert loaded_from_elsewhere(browser, served.url) == []

    css(browser, "button.authorize")[0].click()
    wait_for(browser, lambda: css(browser, ".modal-ux .auth-container"), "the Authorize dialog")
    boxes = {box.find_element("css selector", "h4").text.split()[0]: box for box in css(browser, ".modal-ux .auth-container")}
    assert set(boxes) == {"memoryKey", "memoryKeyHeader", "sessionId", "brainCredential", "brainCredentialHeader",
                          "cloudflareAccess", "adminToken"}
    SCREENSHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "docs-authorize-1280x800.png"))
    memory_key_box = boxes["memoryKey"]
    memory_key_box.find_element("css selector", "input").send_keys(served.memory_key)
    memory_key_box.find_element("css selector", "button.authorize").click()
    css(browser, ".modal-ux button.btn-done")[0].click()

    stats = css(browser, "#operations-memory-stats_v1_memory_stats_get")[0]
    stats.find_element("css selector", ".opblock-summary-control").click()
    wait_for(browser, lambda: stats.find_elements("css selector", ".try-out__btn"), "the stats operation opened")
    stats.find_element("css selector", ".try-out__btn").click()
    wait_for(browser, lambda: stats.find_elements("css selector", "button.execute"), "Try it out")
    stats.find_element("css selector", "button.execute").click()
    wait_for(browser, lambda: stats.find_elements("css selector", ".live-responses-table tbody .response-col_status"),
             "the live response")
    status = stats.find_element("css selector", ".live-responses-table tbody .response-col_status").text
    assert status.startswith("200"), status

    search = css(browser, "#operations-memory-search_v1_memory_search_post")[0]
    search.find_element("css selector", ".opblock-summary-control").click()
    wait_for(browser, lambda: search.find_elements("css selector", ".try-out__btn"), "the search operation opened")
    search.find_element("css selector", ".try-out__btn").click()
    wait_for(browser, lambda: search.find_elements("css selector", "textarea.body-param__text"), "the example body")
    body = search.find_element("css selector", "textarea.body-param__text").get_attribute("value")
    assert "what is my cat called?" in body and '"now"' not in body, body


def test_redoc_renders_offline(served: Served, browser: Any) -> None:
    browser.get(f"{served.url}/redoc")
    wait_for(browser, lambda: "Hybrid search" in browser.find_element("css selector", "body").text,
             "ReDoc's rendering of the operations")
    # ReDoc's footer asks its vendor for a logo image, which offline stays blank; nothing else.
    assert loaded_from_elsewhere(browser, served.url, but_images=True) == []
