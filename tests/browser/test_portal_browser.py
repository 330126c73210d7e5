"""The portal in a real headless Chromium, against the real local server on 127.0.0.1.

A writer seeds facts in several scopes (one walled from the reader, one holding markup that would
run script if it were ever parsed as HTML, one with a long body, one superseded by a later
version) and a conversation. The reader then signs in through the page, searches, opens a body
and a history, moves "as of" back to see the older version, and searches conversation memory:
no walled row ever shows, the markup shows as literal text and runs nothing, and the
credentials stay in the tab's sessionStorage. Screenshots at 390x844 and 1280x800 are written to
tests/browser/screenshots/."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import SCREENSHOTS, WAIT_SECONDS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))

from test_local_server import MEMVAULT, environment, free_port, server

READER_SCOPES = {"family", "shared"}
XSS = "Garden shed note: <img src=x onerror=\"window.__xss='img'\"> and <script>window.__xss='script'</script> end."
WALLED = "Invoice 20028: garden landscaping paid by Okafor Ltd."
LONG_BODY = "Garden plan for spring. " + "Sow beans by the fence, then water the seedlings at dusk. " * 14 + "END OF PLAN."

def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


CREDENTIALS = {
    digest("tok-writer"): {"name": "writer", "scopes": ["business", "family", "personal", "shared"], "writer": True},
    digest("tok-reader"): {"name": "reader", "scopes": sorted(READER_SCOPES), "writer": False},
}


@dataclass
class Portal:
    url: str
    memory_key: str
    stored_reader: str
    env: dict[str, str]


def seed(url: str, memory_key: str) -> None:
    writer = {"Authorization": "Bearer tok-writer"}

    def write(payload: dict[str, Any]) -> list[str]:
        response = httpx.post(f"{url}/memory/write", json=payload, headers=writer)
        assert response.status_code == 200, response.text
        ids: list[str] = response.json()["ids"]
        return ids

    write({"source": "notes:family", "scope": "family", "facts": [{"content": XSS}, {"content": LONG_BODY}]})
    write({"source": "notes:shared", "scope": "shared", "content": "Garden party on Saturday at noon."})
    write({"source": "notes:business", "scope": "business", "content": WALLED})
    (older,) = write({"source": "notes:gate", "scope": "family", "content": "The garden gate is painted green.",
                      "valid_from": "2024-01-10T00:00:00Z"})
    write({"source": "notes:gate", "scope": "family", "content": "The garden gate is painted red.",
           "valid_from": "2025-02-01T00:00:00Z", "supersedes": older})
    stored = httpx.post(f"{url}/v1/memory", headers={"Authorization": f"Bearer {memory_key}"}, json={"messages": [
        {"role": "user", "content": "My cat is called Biscuit. <script>window.__xss='memory'</script>"},
    ]})
    assert stored.status_code == 200, stored.text


@pytest.fixture(scope="module")
def portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Portal]:
    data = tmp_path_factory.mktemp("portal")
    env = {**environment(data), "MEMVAULT_BRAIN_CREDENTIALS": json.dumps(CREDENTIALS)}
    created = subprocess.run([str(MEMVAULT), "keys", "create", "--label", "portal"], env=env, capture_output=True, text=True, check=True)
    memory_key = created.stdout.strip()
    with server(data, free_port(), env) as url:
        seed(url, memory_key)
        # Made while the server runs, as a newcomer would: no restart, no variable to edit.
        made = subprocess.run([str(MEMVAULT), "brain-token", "create", "--scopes", "family", "--name", "family-reader"],
                              env=env, capture_output=True, text=True, check=True)
        yield Portal(url, memory_key, made.stdout.splitlines()[-1], env)


class Page:
    """The portal as the reader sees it, with the checks every step repeats."""

    def __init__(self, driver: Any) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver, self.by = driver, By
        self.wait = WebDriverWait(driver, WAIT_SECONDS)

    def find(self, element_id: str) -> Any:
        return self.driver.find_element(self.by.ID, element_id)

    def until(self, condition: Callable[[], Any], what: str) -> None:
        self.wait.until(lambda _: condition(), message=what)

    def text(self, element_id: str) -> str:
        return str(self.find(element_id).text)

    def type_into(self, element_id: str, text: str) -> None:
        field = self.find(element_id)
        field.clear()
        field.send_keys(text)

    def search(self, query: str, mode: str) -> None:
        from selenium.webdriver.support.ui import Select

        self.type_into("q", query)
        Select(self.find("mode")).select_by_value(mode)
        self.find("brain-search").find_element(self.by.CSS_SELECTOR, "button[type=submit]").click()
        self.until(lambda: "found" in self.text("brain-status") and query.split()[0] in self.text("results").lower(),
                   f"{mode} results for {query!r}")

    def card(self, words: str) -> Any:
        for card in self.driver.find_elements(self.by.CSS_SELECTOR, "#results .card"):
            if words in card.text:
                return card
        raise AssertionError(f"no result card holds {words!r}")

    def badges(self, card: Any) -> dict[str, str]:
        badges = card.find_elements(self.by.CSS_SELECTOR, ".badge:not([data-kind=flag])")
        return {badge.get_attribute("data-kind"): badge.text for badge in badges}

    def scopes_shown(self) -> set[str]:
        badges = self.driver.find_elements(self.by.CSS_SELECTOR, '.badge[data-kind="scope"]')
        return {badge.get_attribute("data-value") for badge in badges}

    def assert_walled_and_inert(self) -> None:
        assert self.scopes_shown() <= READER_SCOPES, self.scopes_shown()
        assert "20028" not in self.driver.find_element(self.by.TAG_NAME, "body").text
        assert self.driver.find_elements(self.by.CSS_SELECTOR, "main img, main script") == []
        assert self.driver.execute_script("return window.__xss === undefined")

    def screenshot(self, width: int, height: int, name: str, showing: str = "app") -> Path:
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
        self.driver.execute_script("document.getElementById(arguments[0]).scrollIntoView({block: 'start'})", showing)
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{name}-{width}x{height}.png"
        self.driver.save_screenshot(str(path))
        return path


def test_a_reader_uses_the_portal_and_sees_only_its_own_scopes_as_text(portal: Portal, browser: Any) -> None:
    page = Page(browser)
    browser.get(f"{portal.url}/portal")
    page.until(lambda: page.find("sign-in").is_displayed(), "the sign-in form")

    page.type_into("credential", "tok-nobody")
    page.find("sign-in-form").submit()
    page.until(lambda: "not accepted" in page.text("sign-in-error"), "a refused credential")
    assert browser.execute_script("return sessionStorage.length") == 0

    page.type_into("credential", "tok-reader")
    page.find("sign-in-form").submit()
    page.until(lambda: "recalled" in page.text("brain-status"), "the first recall after signing in")
    assert page.text("who") == "reader · family, shared · brain credential"
    page.assert_walled_and_inert()

    for mode in ("keyword", "hybrid"):
        page.search("garden", mode)
        page.assert_walled_and_inert()
    xss_card = page.card("Garden shed note")
    assert XSS in xss_card.text  # the markup reads as the characters that were stored
    assert page.badges(xss_card) == {"scope": "family", "type": "fact"}
    assert page.badges(page.card("Garden party")) == {"scope": "shared", "type": "fact"}
    phone, desktop = page.screenshot(390, 844, "portal-search"), page.screenshot(1280, 800, "portal-search")

    page.card("Garden plan for spring").click()
    page.until(lambda: "END OF PLAN." in page.text("detail-body"), "the full body")
    assert "END OF PLAN" not in page.card("Garden plan for spring").text  # the card holds the hook only

    page.search("garden gate painted", "keyword")
    assert "painted red" in page.text("results") and "painted green" not in page.text("results")
    page.card("painted red").click()
    page.until(lambda: "painted green" in page.text("detail-history"), "the history chain")
    versions = [item.text for item in browser.find_elements(page.by.CSS_SELECTOR, "#detail-history .version")]
    assert [("green" in v, "red" in v) for v in versions] == [(True, False), (False, True)], versions
    assert "until 2025-02-01" in versions[0] and "(current)" in versions[1]
    page.screenshot(390, 844, "portal-history", showing="detail")
    page.screenshot(1280, 800, "portal-history")

    browser.execute_script("const f = document.getElementById('as-of'); f.value = '2024-06-01';"
                           "f.dispatchEvent(new Event('change', {bubbles: true}));")
    page.until(lambda: "as of 2024-06-01" in page.text("brain-status"), "results as of 2024-06-01")
    assert "painted green" in page.text("results") and "painted red" not in page.text("results")
    page.assert_walled_and_inert()

    page.find("tab-conversations").click()
    page.type_into("memory-key", portal.memory_key)
    page.find("memory-key-form").submit()
    page.type_into("memory-q", "what is my cat called")
    page.find("memory-search").submit()
    page.until(lambda: "Biscuit" in page.text("memory-results"), "conversation memory results")
    assert "<script>window.__xss='memory'</script>" in page.text("memory-results")
    page.assert_walled_and_inert()

    stored = browser.execute_script("return [sessionStorage.getItem('memvault.brainToken'), "
                                    "sessionStorage.getItem('memvault.memoryKey'), localStorage.length, document.cookie]")
    assert stored == ["tok-reader", portal.memory_key, 0, ""]
    assert browser.current_url == f"{portal.url}/portal"
    refused = [e["message"] for e in browser.get_log("browser") if "Content Security Policy" in e["message"]
               or "Trusted Type" in e["message"] or "Refused" in e["message"]]
    assert refused == []

    page.find("sign-out").click()
    page.until(lambda: page.find("sign-in").is_displayed(), "the sign-in form after signing out")
    assert browser.execute_script("return sessionStorage.length") == 0
    print(f"\nportal screenshots: {phone}, {desktop} and the history pair in {SCREENSHOTS}")


def sign_in_with_memory_key(page: Page, browser: Any, portal: Portal) -> None:
    """A fresh tab signed in with the memory key alone, on its conversations tab."""
    browser.get(f"{portal.url}/portal")
    browser.execute_script("sessionStorage.clear()")
    browser.refresh()
    page.until(lambda: page.find("sign-in").is_displayed(), "the sign-in form")
    page.type_into("credential", portal.memory_key)
    page.find("sign-in-form").submit()
    page.until(lambda: page.find("conversations-view").is_displayed(), "the conversations tab")


def test_a_memory_key_alone_opens_the_conversations_tab(portal: Portal, browser: Any) -> None:
    page = Page(browser)
    sign_in_with_memory_key(page, browser, portal)
    assert page.text("who") == "memory key portal"
    assert not page.find("memory-key-form").is_displayed()
    page.type_into("memory-q", "what is my cat called")
    page.find("memory-search").submit()
    page.until(lambda: "Biscuit" in page.text("memory-results"), "conversation memory results")
    page.assert_walled_and_inert()

    page.find("tab-brain").click()
    assert page.find("brain-locked").is_displayed() and not page.find("brain-search").is_displayed()
    assert page.text("results") == ""
    page.type_into("brain-credential", portal.memory_key)
    page.find("brain-credential-form").submit()
    page.until(lambda: "is a memory key" in page.text("brain-credential-error"), "a memory key refused for the brain")

    page.type_into("brain-credential", portal.stored_reader)
    page.find("brain-credential-form").submit()
    page.until(lambda: "recalled" in page.text("brain-status"), "the brain opened by a stored credential")
    assert page.text("who") == "family-reader · family · brain credential · memory key portal"
    page.search("garden", "keyword")
    assert page.scopes_shown() == {"family"}
    page.assert_walled_and_inert()

    browser.refresh()  # both stay signed in for the tab's life
    page.until(lambda: "recalled" in page.text("brain-status"), "the brain after a reload")
    assert "memory key portal" in page.text("who")
    page.find("sign-out").click()
    page.until(lambda: page.find("sign-in").is_displayed(), "the sign-in form after signing out")
    assert browser.execute_script("return sessionStorage.length") == 0
