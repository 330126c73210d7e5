"""The portal's usage charts in a real headless Chromium, against `memvault serve` on 127.0.0.1 in
front of a fake provider. A memory key makes routed calls today (one naming a model that holds
markup) and has earlier days in its ledger; the page draws calls, provider tokens and memory tokens
per UTC day, its table of numbers matches `GET /v1/usage` day by day, the bars' heights follow the
numbers, a span of one day draws one bar, the per-model view shows the model's name as text, and a
key with no calls says so. Screenshots at 390x844 and 1280x800 go to tests/browser/screenshots/."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api" / "providers"))
from fake_upstream import FakeUpstream, ServerThread
from test_local_server import MEMVAULT, environment, free_port, server
from test_portal_browser import Page, sign_in_with_memory_key

from memvault.core.usage.ledger import usage_statement
from memvault.core.usage.meter import CallUsage
from memvault.runtime.local import DATABASE_FILE

MODEL = "gpt-chart"
MARKUP_MODEL = "<img src=x onerror=\"window.__xss='model'\">gpt"
CALLS_TODAY = 3
# Earlier days of the key, as its routed calls left them: days back -> (model, counts).
HISTORY = {
    2: ("gpt-chart", CallUsage(calls=5, input_tokens=500, output_tokens=250, memory_tokens=120)),
    6: ("claude-chart", CallUsage(calls=2, input_tokens=40, output_tokens=20)),
    40: ("gpt-chart", CallUsage(calls=7, input_tokens=70, output_tokens=35, memory_tokens=9)),
}
SHOWN = ("calls", "input_tokens", "output_tokens", "memory_tokens")


@dataclass
class Site:
    url: str
    memory_key: str
    idle_key: str


def day(back: int) -> str:
    return (datetime.now(UTC) - timedelta(days=back)).date().isoformat()


def usage(site: Site, **query: str) -> dict[str, Any]:
    answer = httpx.get(f"{site.url}/v1/usage", params=query, headers={"X-Memory-Key": site.memory_key})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def new_key(env: dict[str, str], label: str) -> str:
    made = subprocess.run([str(MEMVAULT), "keys", "create", "--label", label], env=env, capture_output=True, text=True,
                          check=True)
    return made.stdout.strip()


def write_history(data: Path, key_id: str) -> None:
    now = time.time()
    with sqlite3.connect(data / DATABASE_FILE) as db:
        for back, (model, counts) in HISTORY.items():
            db.execute(*usage_statement(key_id, now - back * 86_400, model, counts))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    data = tmp_path_factory.mktemp("portal-usage")
    with ServerThread(FakeUpstream()) as fake:
        env = {**environment(data), "MEMVAULT_OPENAI_BASE_URL": fake.url}
        memory_key, idle_key = new_key(env, "charted"), new_key(env, "idle")
        with server(data, free_port(), env) as url:
            made = Site(url, memory_key, idle_key)
            headers = {"X-Memory-Key": memory_key, "Authorization": "Bearer sk-test"}
            for i, model in enumerate([MODEL] * (CALLS_TODAY - 1) + [MARKUP_MODEL]):
                body = {"model": model, "messages": [{"role": "user", "content": f"My bike number {i} is {1000 + i}."}]}
                assert httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers, timeout=30).status_code == 200
            # Accounting follows each answer; the turns are stored after it.
            deadline = time.monotonic() + 60
            while (total := usage(made)["total"])["calls"] < CALLS_TODAY or total["messages_stored"] < 2 * CALLS_TODAY:
                assert time.monotonic() < deadline, f"the calls were not accounted: {total}"
                time.sleep(0.05)
            me = httpx.get(f"{url}/portal/me", headers={"Authorization": f"Bearer {memory_key}"}).json()
            write_history(data, me["id"])
            yield made


def table(page: Page) -> dict[str, list[int]]:
    """The numbers the page shows, per day or model, from its table (opened as a reader would)."""
    numbers = page.driver.find_element(page.by.CSS_SELECTOR, "#usage-charts details")
    if not numbers.get_attribute("open"):
        numbers.find_element(page.by.TAG_NAME, "summary").click()
    rows = page.driver.find_elements(page.by.CSS_SELECTOR, "#usage-charts tbody tr")
    return {row.find_element(page.by.TAG_NAME, "th").text: [int(cell.text.replace(",", "")) for cell in
                                                           row.find_elements(page.by.TAG_NAME, "td")] for row in rows}


def bar_heights(page: Page, chart: int) -> dict[str, float]:
    """Each bar's drawn height (its segments stacked) in the chart at ``chart``, by group."""
    bars = page.driver.find_elements(page.by.CSS_SELECTOR, f"#usage-charts figure:nth-of-type({chart + 1}) g.usage-bar")
    return {bar.get_attribute("data-group"): sum(float(rect.get_attribute("height")) for rect in
                                                bar.find_elements(page.by.TAG_NAME, "rect")) for bar in bars}


def choose(page: Page, select_id: str, value: str, status: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(page.find(select_id)).select_by_value(value)
    page.until(lambda: status in page.text("usage-status"), f"usage after choosing {value}")


def fits(page: Page, width: int) -> None:
    page.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600})
    chart_fits = ("const box = document.getElementById('usage-charts'); const svg = box.querySelector('svg');"
                  "return svg !== null && Number(svg.getAttribute('width')) === box.clientWidth;")
    page.until(lambda: page.driver.execute_script(chart_fits), f"the charts redrawn {width} px wide")
    assert page.driver.execute_script("return document.documentElement.scrollWidth") <= width


def test_the_portal_draws_a_keys_usage_per_day_and_per_model(site: Site, browser: Any) -> None:
    page = Page(browser)
    sign_in_with_memory_key(page, browser, site)  # type: ignore[arg-type]
    week = usage(site, **{"from": day(6), "to": day(0)})
    total = week["total"]
    assert total["calls"] == CALLS_TODAY + 5 + 2
    page.until(lambda: f"{total['calls']} calls" in page.text("usage-status"), "the last 7 days' usage")
    assert f"{total['memory_tokens']:,} memory tokens injected {day(6)} to {day(0)} (UTC)" in page.text("usage-status")

    per_day = {row["day"]: [row[name] for name in SHOWN] for row in week["rows"]}
    shown = table(page)
    assert list(shown) == [day(back) for back in range(6, -1, -1)]
    assert shown == {d: per_day.get(d, [0, 0, 0, 0]) for d in shown}
    assert shown[day(0)][:2] == [CALLS_TODAY, CALLS_TODAY * 11] and shown[day(2)] == [5, 500, 250, 120]
    calls = bar_heights(page, 0)
    assert len(calls) == 7 and calls[day(1)] == 0
    assert calls[day(0)] / calls[day(2)] == pytest.approx(CALLS_TODAY / 5)
    provider = bar_heights(page, 1)
    assert provider[day(6)] / provider[day(2)] == pytest.approx(60 / 750)
    titles = [t.get_attribute("textContent") for t in browser.find_elements(page.by.CSS_SELECTOR, "#usage-charts svg > title")]
    assert titles[0] == f"Calls: {total['calls']} calls in all; the most, 5, on {day(2)}."
    bar = browser.find_element(page.by.CSS_SELECTOR, f'#usage-charts figure:nth-of-type(2) g[data-group="{day(2)}"] title')
    assert bar.get_attribute("textContent") == f"{day(2)}: 500 in, 250 out provider tokens"

    fits(page, 390)
    phone = page.screenshot(390, 844, "portal-usage", showing="usage")
    fits(page, 1280)
    desktop = page.screenshot(1280, 800, "portal-usage", showing="usage")

    choose(page, "usage-range", "1", f"on {day(0)} (UTC)")
    assert list(table(page)) == [day(0)] and len(bar_heights(page, 0)) == 1
    choose(page, "usage-range", "90", f"{day(89)} to {day(0)}")
    assert table(page)[day(40)] == [7, 70, 35, 9]

    choose(page, "usage-group", "model", f"{day(89)} to {day(0)}")
    models = table(page)
    assert models[MODEL][0] == CALLS_TODAY - 1 + 5 + 7 and models["claude-chart"][0] == 2
    assert models[MARKUP_MODEL] == [1, 11, 3, models[MARKUP_MODEL][3]]  # the name shows as the characters sent
    page.assert_walled_and_inert()
    page.screenshot(1280, 800, "portal-usage-models", showing="usage")
    refused = [e["message"] for e in browser.get_log("browser") if "Content Security Policy" in e["message"]
               or "Trusted Type" in e["message"] or "Refused" in e["message"]]
    assert refused == []
    print(f"\nportal usage screenshots: {phone}, {desktop}")


def test_a_key_without_calls_is_told_so_and_drawn_nothing(site: Site, browser: Any) -> None:
    page = Page(browser)
    idle = Site(site.url, site.idle_key, site.idle_key)
    sign_in_with_memory_key(page, browser, idle)  # type: ignore[arg-type]
    page.until(lambda: "No calls yet" in page.text("usage-status"), "the empty state")
    assert page.text("usage-status") == f"No calls yet {day(6)} to {day(0)} (UTC)."
    assert browser.find_elements(page.by.CSS_SELECTOR, "#usage-charts *") == []
    choose(page, "usage-range", "1", "No calls yet on")
    page.screenshot(390, 844, "portal-usage-empty", showing="usage")
