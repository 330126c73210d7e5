"""The portal's skill proposals in a real headless Chromium, against the real local server.

A writer's agent proposes skills over the API (one in a scope the reader cannot read, one whose
title holds markup). The reader sees the proposals of its own scopes, with their candidates, and
no controls. The writer confirms one as the next version of the skill it duplicates, after a
second step it can cancel, and rejects another with a reason; the API agrees with what the page
says. Screenshots at 390x844 and 1280x800 go to tests/browser/screenshots/."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))

from browser_support import SCREENSHOTS
from test_local_server import environment, free_port, server
from test_portal_browser import Page, digest

WRITER = {"Authorization": "Bearer tok-writer"}
MARKUP = "Feed the cat <img src=x onerror=\"window.__xss='proposal'\">"
CREDENTIALS = {
    digest("tok-writer"): {"name": "writer", "scopes": ["business", "family"], "writer": True},
    digest("tok-reader"): {"name": "reader", "scopes": ["family"], "writer": False},
}


def propose(url: str, body: dict[str, Any]) -> str:
    response = httpx.post(f"{url}/v1/brain/skills/proposals", json=body, headers=WRITER)
    assert response.status_code == 201, response.text
    return str(response.json()["proposal"]["id"])


@pytest.fixture(scope="module")
def portal_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("skills")
    env = {**environment(data), "MEMVAULT_BRAIN_CREDENTIALS": json.dumps(CREDENTIALS)}
    with server(data, free_port(), env) as url:
        registered = httpx.post(f"{url}/v1/brain/skills", headers=WRITER, json={
            "slug": "water-plants", "scope": "family", "name": "Water the plants", "content": "1. Water."})
        assert registered.status_code == 200, registered.text
        propose(url, {"title": "Water the plants weekly", "slug": "water-plants-weekly", "scope": "family",
                      "triggers": ["the plants look dry"], "steps": ["Check the soil.", "Water the ferns first."],
                      "source_trail": ["task:41"]})
        propose(url, {"title": MARKUP, "scope": "family", "triggers": ["cat is hungry"],
                      "steps": ["Two scoops at 7."], "source_trail": ["chat with Ana"]})
        propose(url, {"title": "Close the books", "scope": "business", "triggers": ["month end"],
                      "steps": ["Reconcile the bank account."], "source_trail": ["task:99"]})
        yield url


def sign_in(page: Page, url: str, token: str, pending: int) -> None:
    # A screenshot leaves the window at its size; every test starts at the desktop's.
    page.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    page.driver.get(f"{url}/portal")
    page.driver.execute_script("sessionStorage.clear()")
    page.driver.refresh()
    page.until(lambda: page.find("sign-in").is_displayed(), "the sign-in form")
    page.type_into("credential", token)
    page.find("sign-in-form").submit()
    page.until(lambda: f"{pending} pending proposals" in page.text("skill-proposals-status"), "the pending proposals")


def card(page: Page, words: str) -> Any:
    for item in page.driver.find_elements(page.by.CSS_SELECTOR, "#skill-proposals-list .proposal"):
        if words in item.text:
            return item
    raise AssertionError(f"no proposal holds {words!r}")


def button(item: Any, page: Page, text: str) -> Any:
    (found,) = [b for b in item.find_elements(page.by.TAG_NAME, "button") if b.text == text]
    return found


def test_a_reader_sees_its_scopes_proposals_without_controls(portal_url: str, browser: Any) -> None:
    page = Page(browser)
    sign_in(page, portal_url, "tok-reader", pending=2)
    section = page.text("skill-proposals")
    assert "Close the books" not in section and "Water the plants weekly" in section
    assert MARKUP in section and browser.execute_script("return window.__xss === undefined")
    assert "Skill water-plants v1: Water the plants" in card(page, "weekly").text
    assert browser.find_elements(page.by.CSS_SELECTOR, "#skill-proposals button:not(#skill-proposals-refresh)") == []
    page.screenshot(390, 844, "portal-skill-proposals-reader", showing="skill-proposals")


def test_a_writer_confirms_after_a_second_step_and_rejects_with_a_reason(portal_url: str, browser: Any) -> None:
    from selenium.webdriver.support.ui import Select

    page = Page(browser)
    sign_in(page, portal_url, "tok-writer", pending=3)
    weekly = card(page, "Water the plants weekly")
    button(weekly, page, "Confirm…").click()
    page.until(lambda: "Register this skill?" in card(page, "weekly").text, "the confirmation step")
    button(card(page, "weekly"), page, "Cancel").click()
    page.until(lambda: "Register this skill?" not in card(page, "weekly").text, "the confirmation cancelled")
    skills = httpx.get(f"{portal_url}/v1/brain/skills", headers=WRITER).json()["skills"]
    assert [(s["slug"], s["version"]) for s in skills] == [("water-plants", 1)]

    button(card(page, "weekly"), page, "Confirm…").click()
    Select(card(page, "weekly").find_element(page.by.TAG_NAME, "select")).select_by_value("water-plants")
    for width, height in ((390, 844), (1280, 800)):
        page.screenshot(width, height, "portal-skill-confirm", showing="skill-proposals")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", card(page, "weekly"))
        browser.save_screenshot(str(SCREENSHOTS / f"portal-skill-confirm-{width}x{height}.png"))
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    button(card(page, "weekly"), page, "Yes, register it").click()
    page.until(lambda: "Registered water-plants version 2 (updated)." in page.text("skill-proposals-status"),
               "the registered version")
    assert "weekly" not in page.text("skill-proposals-list")
    skill = httpx.get(f"{portal_url}/v1/brain/skills/water-plants", headers=WRITER).json()["skill"]
    assert skill["version"] == 2 and "2. Water the ferns first." in skill["content"]

    button(card(page, "Feed the cat"), page, "Reject…").click()
    cat = card(page, "Feed the cat")
    cat.find_element(page.by.TAG_NAME, "input").send_keys("the sitter has her own routine")
    button(cat, page, "Yes, reject it").click()
    page.until(lambda: page.text("skill-proposals-status") == "Rejected.", "the rejection")
    Select(page.find("skill-proposals-status-filter")).select_by_value("rejected")
    page.until(lambda: "the sitter has her own routine" in page.text("skill-proposals-list"), "the rejected list")
    assert "Close the books" not in page.text("skill-proposals-list")
    assert browser.execute_script("return window.__xss === undefined")
    # No script of the page failed (a name two scripts both declare at the top fails the later one).
    refused = [e["message"] for e in browser.get_log("browser") if "Content Security Policy" in e["message"]
               or "Trusted Type" in e["message"] or "Refused" in e["message"] or "Uncaught" in e["message"]]
    assert refused == []
