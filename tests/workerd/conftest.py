"""The workerd tier: memvault and the example bot in the workerd that wrangler ships, driven over
HTTP and RPC as their users drive them. One start of the main stack serves every check but the
snapshot pair (their own starts, after it has stopped); the tier prints how long each start took."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE.parent, HERE.parents[1] / "scripts", HERE.parent / "api" / "providers"):
    sys.path.insert(0, str(folder))

from tier_fakes import HeldUpstream  # noqa: E402
from tier_session import MEASURED, OWN_STARTS, SPAN, STARTS, SnapshotRuns, Tier  # noqa: E402
from tier_stack import MainStack  # noqa: E402
from workerd_runtime import WRANGLER, Runtime, find_runtime  # noqa: E402

from fake_telegram import FakeTelegram  # noqa: E402
from run_summary import summary_hooks  # noqa: E402

# What closes the tier's session fixtures once its last test is done: the same worker runs other
# folders' modules after it, which need none of its processes, and the summary's span is the tier's.
CLOSERS: list[Callable[[], None]] = []


def in_tier(item: pytest.Item) -> bool:
    return HERE in Path(str(item.path)).parents


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if not in_tier(item) or (nextitem is not None and in_tier(nextitem)):
        return
    later = item.session.items[item.session.items.index(item) + 1:]
    if any(in_tier(other) for other in later):
        return
    while CLOSERS:
        CLOSERS.pop()()


def missing_tools() -> str | None:
    if not WRANGLER.exists():
        return "node_modules/.bin/wrangler is missing: run `npm ci` (scripts/test does)"
    return None


@pytest.fixture(scope="session")
def runtime() -> Runtime:
    problem = missing_tools()
    found = find_runtime() if problem is None else problem
    if isinstance(found, str):
        pytest.skip(f"workerd tier: {found}")
    return found


@pytest.fixture(scope="session")
def tier(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tier]:
    made = Tier(tmp_path_factory.mktemp("workerd"), runtime)
    CLOSERS.append(made.close)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def stack(tier: Tier) -> MainStack:
    return tier.main()


@pytest.fixture
def upstream(tier: Tier) -> HeldUpstream:
    return tier.upstream


@pytest.fixture
def telegram(tier: Tier) -> FakeTelegram:
    return tier.telegram


@pytest.fixture(scope="session")
def snapshot_runs(tier: Tier) -> Iterator[SnapshotRuns]:
    runs = SnapshotRuns(tier)
    CLOSERS.append(runs.close)
    try:
        yield runs
    finally:
        runs.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tier = [i for i, item in enumerate(items) if in_tier(item)]
    if not tier:
        return
    ordered = sorted((items[i] for i in tier), key=lambda item: OWN_STARTS in getattr(item, "fixturenames", ()))
    for position, item in zip(tier, ordered, strict=True):
        items[position] = item


def summary_lines() -> list[str]:
    lines = []
    for name, timing in STARTS.items():
        snapshot = f", snapshot {timing['snapshot_mb']:.0f} MB" if "snapshot_mb" in timing else ""
        lines.append(
            f"workerd tier: {name}: ready {timing.get('listening_s', 0):.1f} s after `wrangler dev` started "
            f"(build, bundle, workerd and the Worker's start{snapshot}); first request "
            f"{timing.get('first_request_s', 0) * 1000:.0f} ms, next {timing.get('second_request_s', 0) * 1000:.0f} ms")
    lines.extend(f"workerd tier: {line}" for line in MEASURED)
    if "ended" in SPAN:
        lines.append(f"workerd tier: {SPAN['ended'] - SPAN['began']:.0f} s from its first build to its last process stopped")
    return lines


pytest_sessionfinish, pytest_terminal_summary = summary_hooks(summary_lines)
