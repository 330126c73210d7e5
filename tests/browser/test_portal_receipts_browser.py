"""The portal's receipts in a real headless Chromium: a memory key searches, lists the day's
receipts, opens the newest and sees the query and the remembered message it names (as text, its
markup inert); once the message is forgotten the same receipt shows it as forgotten. Screenshots
at 390x844 and 1280x800 are written to tests/browser/screenshots/."""

from __future__ import annotations

from typing import Any

import httpx
from test_portal_browser import Page, Portal, portal, sign_in_with_memory_key  # noqa: F401


def test_a_receipt_shows_the_memories_it_names_and_which_were_forgotten(portal: Portal, browser: Any) -> None:  # noqa: F811
    page = Page(browser)
    sign_in_with_memory_key(page, browser, portal)
    page.type_into("memory-q", "what is my cat called")
    page.find("memory-search").submit()
    page.until(lambda: "Biscuit" in page.text("memory-results"), "conversation memory results")

    page.find("receipt-form").submit()
    page.until(lambda: "what is my cat called" in page.text("receipt-list"), "the day's receipts")
    newest = browser.find_elements(page.by.CSS_SELECTOR, "#receipt-list .card")[0]
    receipt_id = newest.get_attribute("data-receipt")
    newest.click()
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
