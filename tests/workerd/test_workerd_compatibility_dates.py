"""Every Worker's compatibility date is one the pinned workerd knows: for a later date `wrangler
dev` (and this tier) would quietly run the binary's newest date instead, so what is tested would
not be what the date names. The limit is read from the binary itself."""

from __future__ import annotations

import tomllib

import pytest
from tier_stack import BOT_FOLDER, ROOT
from tier_typescript import read_jsonc
from workerd_runtime import max_compatibility_date, workerd_binary

CONFIGS = {"memvault": ROOT / "wrangler.toml", "telegram bot": ROOT / BOT_FOLDER / "wrangler.toml",
           "typescript bot": ROOT / "examples" / "typescript_bot" / "wrangler.jsonc",
           "typescript client tests": ROOT / "clients" / "typescript" / "test" / "wrangler.jsonc"}


@pytest.fixture(scope="module")
def newest() -> str:
    try:
        binary = workerd_binary()
    except FileNotFoundError as missing:
        pytest.skip(str(missing))
    return max_compatibility_date(binary)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_compatibility_date_is_one_the_pinned_workerd_supports(name: str, newest: str) -> None:
    path = CONFIGS[name]
    config = tomllib.loads(path.read_text()) if path.suffix == ".toml" else read_jsonc(path)
    assert config["compatibility_date"] <= newest, f"{name}: {config['compatibility_date']} is after workerd's {newest}"
    for section in config.get("env", {}).values():
        assert section.get("compatibility_date", config["compatibility_date"]) <= newest


def test_the_limit_is_the_binarys_own(newest: str) -> None:
    # The binary's answer is a date, and no earlier than the one its npm package recommends.
    assert len(newest) == 10 and newest >= "2026-10-23"
