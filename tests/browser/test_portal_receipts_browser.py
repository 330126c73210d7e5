"""The portal's receipts in a real headless Chromium: a memory key searches, lists the day's
receipts, opens the newest and sees the query and the remembered message it names (as text, its
markup inert); once the message is forgotten the same receipt shows it as forgotten. A key granted a brain
scope sees the facts its receipt names with their state now: current, then retired once a writer
retires one. Screenshots at 390x844 and 1280x800 are written to tests/browser/screenshots/."""

from __future__ import annotations

import dataclasses
import subprocess
from typing import Any

import httpx
from test_portal_browser import MEMVAULT, Page, Portal, portal, sign_in_with_memory_key  # noqa: F401


def open_newest_receipt(page: Page, browser: Any, query: str, answered: Any) -> str:
    """Search ``query`` in the portal, wait for ``answered``, list the day's receipts and open the
    newest (the search's own); its id."""
    page.type_into("memory-q", query)
    page.find("memory-search").submit()
    page.until(answered, "the search answered")
    page.find("receipt-form").submit()
    page.until(lambda: query in page.text("receipt-list"), "the day's receipts")
    newest = browser.find_elements(page.by.CSS_SELECTOR, "#receipt-list .card")[0]
    receipt_id = str(newest.get_attribute("data-receipt"))
    newest.click()
    return receipt_id


def test_a_receipt_shows_the_memories_it_names_and_which_were_forgotten(portal: Portal, browser: Any) -> None:  # noqa: F811
    page = Page(browser)
    sign_in_with_memory_key(page, browser, portal)
    receipt_id = open_newest_receipt(page, browser, "what is my cat called",
                                     lambda: "Biscuit" in page.text("memory-results"))
    page.until(lambda: "Biscuit" in page.text("receipt-detail"), "the receipt's memories")
    assert "what is my cat called" in page.text("receipt-detail")
    page.assert_walled_and_inert()
    phone = page.screenshot(390, 844, "portal-receipt", showing="receipts")
    desktop = page.screenshot(1280, 800, "portal-receipt", showing="receipts")

    view = httpx.get(f"{portal.url}/v1/memory/receipts/{receipt_id}",
                     headers={"Authorization": f"Bearer {portal.memory_key}"}).json()
    named = [i for item in view["receipt"]["items"] for i in item["ids"]]
    forgot = httpx.post(f"{portal.url}/v1/memory/forget", json={"ids": named},
                        headers={"Authorization": f"Bearer {portal.memory_key}"})
    assert forgot.json()["forgotten"] == named
    newest = browser.find_elements(page.by.CSS_SELECTOR, f'#receipt-list .card[data-receipt="{receipt_id}"]')[0]
    newest.click()
    page.until(lambda: "forgotten" in page.text("receipt-detail") and "Biscuit" not in page.text("receipt-detail"),
               "the receipt after its message was forgotten")
    page.screenshot(1280, 800, "portal-receipt-forgotten", showing="receipts")
    print(f"\nportal receipt screenshots: {phone}, {desktop}")


PINNED = "Pinned: the allotment key hangs behind the shed door. <img src=x onerror=\"window.__xss='fact'\">"


def test_a_receipt_shows_the_facts_it_names_as_they_stand_now(portal: Portal, browser: Any) -> None:  # noqa: F811
    written = httpx.post(f"{portal.url}/v1/brain/facts", headers={"Authorization": "Bearer tok-writer"},
                         json={"content": PINNED, "scope": "family", "source": "notes:allotment", "pinned": True})
    assert written.status_code == 200, written.text
    (fact_id,) = written.json()["ids"]
    made = subprocess.run([str(MEMVAULT), "keys", "create", "--label", "facts", "--brain-scopes", "family"],
                          env=portal.env, capture_output=True, text=True, check=True)
    granted = dataclasses.replace(portal, memory_key=made.stdout.strip().splitlines()[-1])
    page = Page(browser)
    sign_in_with_memory_key(page, browser, granted)
    receipt_id = open_newest_receipt(page, browser, "where does the allotment key hang",
                                     lambda: " found, " in page.text("memory-status"))
    page.until(lambda: "behind the shed door" in page.text("receipt-detail"), "the receipt's fact")
    detail = page.text("receipt-detail")
    assert "current" in detail and f"fact {fact_id}" in detail and "<img src=x" in detail  # the markup as text
    page.assert_walled_and_inert()
    page.screenshot(1280, 800, "portal-receipt-facts", showing="receipts")

    retired = httpx.post(f"{portal.url}/v1/brain/facts/{fact_id}/retire", headers={"Authorization": "Bearer tok-writer"},
                         json={"reason": "the shed was replaced"})
    assert retired.status_code == 200, retired.text
    browser.find_elements(page.by.CSS_SELECTOR, f'#receipt-list .card[data-receipt="{receipt_id}"]')[0].click()
    page.until(lambda: "retired" in page.text("receipt-detail"), "the fact shown as retired")
    assert "behind the shed door" in page.text("receipt-detail")  # the key may still read the version it was given
    page.assert_walled_and_inert()
