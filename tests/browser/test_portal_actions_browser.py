"""The portal's actions in a real headless Chromium, against the real local server on 127.0.0.1.

A writer accepts one consolidation proposal and rejects another (the facts of each shown side by
side in the page's own confirmation dialog), retires a fact with a reason (gone from the current
search, there as of yesterday, the reason in its history) and forgets a conversation message. A
proposal decided behind the page's back is refused by the server, and the page says so. A reader
sees no action control at all; a page tampered into drawing them meets the server's refusal.
Screenshots at 390x844 and 1280x800 go to tests/browser/screenshots/."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))

from test_local_server import MEMVAULT, environment, free_port, server
from test_portal_browser import CREDENTIALS, Page

WRITER = {"Authorization": "Bearer tok-writer"}
# Each pair says one thing twice, in two sources: consolidation proposes retiring the older.
PAIRS = {
    "accept": "The recycling goes out on Tuesday evenings.",
    "reject": "The piano tuner visits every April.",
    "refused": "The smoke alarm battery was changed in March.",
}
SHED = "The garden shed key hangs behind the kitchen door."
CAT = "My cat Biscuit sleeps on the green armchair."
BIKE = "My bike lock code is in the blue notebook."


@dataclass
class Actions:
    url: str
    memory_key: str
    proposals: dict[str, str]  # PAIRS key -> proposal id


def _post(url: str, path: str, body: Any, headers: dict[str, str] = WRITER) -> Any:
    response = httpx.post(url + path, json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def seed(url: str, memory_key: str) -> dict[str, str]:
    three_days_ago = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=3)
    _post(url, "/v1/brain/facts", {"bands": False, "facts": [
        {"content": SHED, "scope": "family", "source": "notes:shed", "valid_from": three_days_ago.isoformat()},
        *({"content": text, "scope": "family", "source": f"notes:{name}"} for name, text in PAIRS.items()),
    ]})
    _post(url, "/v1/brain/facts", {"bands": False, "facts": [
        {"content": text.lower().rstrip("."), "scope": "family", "source": f"mail:{name}"} for name, text in PAIRS.items()
    ]})
    _post(url, "/v1/brain/consolidate", {"dry_run": False})
    listed = httpx.get(f"{url}/v1/brain/proposals", headers=WRITER).json()["proposals"]
    by_text = {p["facts"][0]["content"].lower().rstrip("."): p["id"] for p in listed}
    proposals = {name: by_text[text.lower().rstrip(".")] for name, text in PAIRS.items()}
    _post(url, "/v1/memory", {"messages": [{"role": "user", "content": CAT}, {"role": "user", "content": BIKE}]},
          {"Authorization": f"Bearer {memory_key}"})
    return proposals


@pytest.fixture(scope="module")
def actions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Actions]:
    data = tmp_path_factory.mktemp("portal-actions")
    env = {**environment(data), "MEMVAULT_BRAIN_CREDENTIALS": json.dumps(CREDENTIALS)}
    created = subprocess.run([str(MEMVAULT), "keys", "create", "--label", "phone"], env=env, capture_output=True,
                             text=True, check=True)
    memory_key = created.stdout.strip()
    with server(data, free_port(), env) as url:
        yield Actions(url, memory_key, seed(url, memory_key))


class ActionPage(Page):
    def sign_in(self, url: str, secret: str) -> None:
        self.driver.get(f"{url}/portal")
        self.driver.execute_script("sessionStorage.clear()")
        self.driver.refresh()
        self.until(lambda: self.find("sign-in").is_displayed(), "the sign-in form")
        self.type_into("credential", secret)
        self.find("sign-in-form").submit()

    def proposal_card(self, proposal_id: str) -> Any:
        cards = self.driver.find_elements(self.by.CSS_SELECTOR, f'#proposals .card[data-id="{proposal_id}"]')
        return cards[0] if cards else None

    def dialog_open(self) -> bool:
        return bool(self.driver.execute_script("return document.getElementById('confirm').open"))

    def press(self, card: Any, label: str) -> None:
        (button,) = [b for b in card.find_elements(self.by.CSS_SELECTOR, "button.action") if b.text == label]
        button.click()
        self.until(self.dialog_open, f"the dialog after {label}")

    def confirm(self) -> None:
        self.find("confirm-ok").click()

    def controls(self) -> list[str]:
        return [b.text for b in self.driver.find_elements(self.by.CSS_SELECTOR, "button.action") if b.is_displayed()]

    def shoot(self, name: str, showing: str = "app") -> None:
        for width, height in ((390, 844), (1280, 800)):
            self.screenshot(width, height, name, showing)
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _proposal(url: str, proposal_id: str) -> dict[str, Any]:
    listed = httpx.get(f"{url}/v1/brain/proposals", params={"status": "all"}, headers=WRITER).json()["proposals"]
    found: dict[str, Any] = next(p for p in listed if p["id"] == proposal_id)
    return found


def test_a_writer_decides_proposals_retires_a_fact_and_forgets_a_message(actions: Actions, browser: Any) -> None:
    from selenium.webdriver.common.keys import Keys

    page = ActionPage(browser)
    page.sign_in(actions.url, "tok-writer")
    page.until(lambda: "recalled" in page.text("brain-status"), "the first recall")

    page.find("tab-proposals").click()
    page.until(lambda: page.text("proposals-status") == "3 open", "three open proposals")
    page.shoot("portal-proposals")

    # Decided behind the page's back: the server refuses, and the page says why.
    httpx.post(f"{actions.url}/v1/brain/proposals/{actions.proposals['refused']}/reject", headers=WRITER)
    page.press(page.proposal_card(actions.proposals["refused"]), "Accept")
    page.confirm()
    page.until(lambda: "already rejected" in page.text("proposals-status"), "the server's refusal")
    assert "error" in page.find("proposals-status").get_attribute("class")
    page.shoot("portal-refused")

    accept = actions.proposals["accept"]
    page.press(page.proposal_card(accept), "Accept")
    sides = page.text("confirm-detail")
    assert PAIRS["accept"] in sides and PAIRS["accept"].lower().rstrip(".") in sides, sides
    assert "Retired" in sides and "Kept" in sides
    page.shoot("portal-confirm-accept", showing="confirm")
    page.confirm()
    page.until(lambda: page.text("proposals-status") == f"Accepted {accept}.", "the accepted proposal")
    assert page.proposal_card(accept) is None and not page.dialog_open()
    assert _proposal(actions.url, accept)["status"] == "accepted"

    reject = actions.proposals["reject"]
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    page.press(page.proposal_card(reject), "Reject")
    page.find("confirm-cancel").click()
    assert not page.dialog_open() and _proposal(actions.url, reject)["status"] == "open", "cancel changes nothing"
    page.press(page.proposal_card(reject), "Reject")
    page.find("confirm-cancel").send_keys(Keys.ESCAPE)
    page.until(lambda: not page.dialog_open(), "the dialog closed by Escape")
    assert _proposal(actions.url, reject)["status"] == "open", "Escape changes nothing"
    page.press(page.proposal_card(reject), "Reject")
    page.confirm()
    page.until(lambda: page.text("proposals-status") == f"Rejected {reject}.", "the rejected proposal")
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert _proposal(actions.url, reject)["status"] == "rejected"
    assert "No open proposals" in page.find("proposals-status").text or page.proposal_card(reject) is None

    page.find("tab-brain").click()
    page.search("shed key", "keyword")
    page.card("garden shed key").click()
    page.until(lambda: "Retire fact…" in page.controls(), "the retire control")
    page.find("detail-actions").find_element(page.by.CSS_SELECTOR, "button").click()
    page.until(page.dialog_open, "the retire dialog")
    page.confirm()
    page.until(lambda: "A reason is required." in page.text("confirm-error"), "a reason asked for")
    page.type_into("confirm-reason", "The shed was taken down in the autumn.")
    page.shoot("portal-confirm-retire", showing="confirm")
    page.confirm()
    page.until(lambda: "Retired." in page.text("detail-status"), "the retired fact")
    page.until(lambda: "taken down in the autumn" in page.text("detail-history"), "the reason in the history")
    page.until(lambda: "0 found" in page.text("brain-status"), "the fact gone from the current search")
    assert "Retire fact…" not in page.controls()
    page.shoot("portal-retired", showing="detail")
    yesterday = (datetime.date.today() - datetime.timedelta(days=1)).isoformat()
    browser.execute_script("const f = document.getElementById('as-of'); f.value = arguments[0];"
                           "f.dispatchEvent(new Event('change', {bubbles: true}));", yesterday)
    page.until(lambda: f"as of {yesterday}" in page.text("brain-status") and SHED in page.text("results"),
               "the fact as of yesterday")

    page.find("tab-conversations").click()
    page.type_into("memory-key", actions.memory_key)
    page.find("memory-key-form").submit()
    page.until(lambda: "memory key phone" in page.text("memory-key-state"), "the memory key taken")
    page.type_into("memory-q", "cat armchair")
    page.find("memory-search").submit()
    page.until(lambda: "Biscuit" in page.text("memory-results"), "the message found")
    (card,) = [c for c in browser.find_elements(page.by.CSS_SELECTOR, "#memory-results .card") if "Biscuit" in c.text]
    page.press(card, "Forget…")
    assert CAT in page.text("confirm-detail")
    page.shoot("portal-confirm-forget", showing="confirm")
    page.confirm()
    page.until(lambda: "Forgot 1 message." in page.text("memory-status"), "the message forgotten")
    assert "Biscuit" not in page.text("memory-results")
    held = httpx.get(f"{actions.url}/v1/memory", headers={"Authorization": f"Bearer {actions.memory_key}"}).json()
    assert [item["content"] for item in held["items"]] == [BIKE]
    refused = [e["message"] for e in browser.get_log("browser") if "Content Security Policy" in e["message"]
               or "Trusted Type" in e["message"]]
    assert refused == []


def test_a_reader_sees_no_controls_and_a_tampered_page_meets_the_servers_refusal(actions: Actions, browser: Any) -> None:
    _post(actions.url, "/v1/brain/facts", {"bands": False, "facts": [
        {"content": "The hedge is trimmed in June.", "scope": "family", "source": "notes:hedge"},
        {"content": "the hedge is trimmed in june", "scope": "family", "source": "mail:hedge"}]})
    _post(actions.url, "/v1/brain/consolidate", {"dry_run": False})
    page = ActionPage(browser)
    page.sign_in(actions.url, "tok-reader")
    page.until(lambda: "recalled" in page.text("brain-status"), "the first recall")
    page.find("tab-proposals").click()
    page.until(lambda: page.text("proposals-status") == "1 open", "the open proposal, read-only")
    assert page.controls() == []
    page.find("tab-brain").click()
    page.search("hedge trimmed", "keyword")
    page.card("hedge is trimmed").click()
    page.until(lambda: "(current)" in page.text("detail-history"), "the history")
    assert page.controls() == []
    page.shoot("portal-reader-no-controls")

    browser.execute_script("session.brain.writer = true; selectTab('proposals');")
    page.until(lambda: "Accept" in page.controls(), "controls a tampered page draws")
    (card,) = browser.find_elements(page.by.CSS_SELECTOR, "#proposals .card")
    page.press(card, "Accept")
    page.confirm()
    page.until(lambda: "may read but not write" in page.text("proposals-status"), "the server's refusal")
    assert "error" in page.find("proposals-status").get_attribute("class")
    listed = httpx.get(f"{actions.url}/v1/brain/proposals", headers=WRITER).json()["proposals"]
    assert [p["status"] for p in listed] == ["open"]
