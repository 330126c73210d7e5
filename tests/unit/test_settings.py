"""Settings: defined once, parsed strictly, documented by a reference generated from the
definitions (common ones first), and the variables no longer read are named, never fatal."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memvault.core.errors import InvalidInput
from memvault.core.settings import PREFIX, RETIRED, SETTINGS, load_settings, retired_settings, retired_warning

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import settings_reference  # noqa: E402


def test_the_settings_reference_is_current() -> None:
    assert (ROOT / "docs" / "settings.md").read_text() == settings_reference.render(), (
        "docs/settings.md is stale: run .venv/bin/python scripts/settings_reference.py"
    )


def test_at_most_twenty_common_settings_and_they_come_first_in_the_reference() -> None:
    common = [s.name for s in SETTINGS if s.common]
    assert 0 < len(common) <= 20
    text = settings_reference.render()
    first_other = min(text.index(f"`{s.name}`") for s in SETTINGS if not s.common)
    assert all(text.index(f"`{name}`") < first_other for name in common)
    assert text.index("## Common settings") < text.index("## Other settings") < text.index("## Tuning")


def test_every_setting_has_help_and_is_in_the_reference_once() -> None:
    text = settings_reference.render()
    for setting in SETTINGS:
        assert setting.help.strip().endswith((".", ")")), setting.name
        assert sum(line.startswith(f"| `{setting.name}` |") for line in text.splitlines()) == 1, setting.name


def test_names_are_unique_and_no_retired_name_is_a_setting_again() -> None:
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    assert not set(names) & set(RETIRED)
    assert all(name.startswith(PREFIX) for name in [*names, *RETIRED])


def test_defaults_parse_and_units_convert() -> None:
    settings = load_settings({})
    assert settings.long_term_window_days == 90 * 86400
    assert settings.buffer_idle_hours == 24 * 3600
    assert load_settings({"MEMVAULT_SEARCH_LIMIT": "7"}).search_limit == 7


def test_the_default_scopes_name_no_person() -> None:
    assert load_settings({}).brain_scopes == ("business", "family", "personal", "shared")


@pytest.mark.parametrize(
    "name, value",
    [("MEMVAULT_SEARCH_LIMIT", "many"), ("MEMVAULT_CACHE_TTL_SECONDS", "0"), ("MEMVAULT_CONTEXT_LIMIT_TOKENS", "-1"),
     ("MEMVAULT_BRAIN_SCOPES", "family,Family"), ("MEMVAULT_BRAIN_SCOPES", " , ")],
)
def test_bad_values_name_the_setting(name: str, value: str) -> None:
    with pytest.raises(InvalidInput, match=name):
        load_settings({name: value})


def test_retired_variables_are_named_ignored_and_never_fatal() -> None:
    source = {"MEMVAULT_CHUNK_TOKENS": "not even a number", "MEMVAULT_HOT_WINDOW_HOURS": "2",
              "MEMVAULT_CRON_SCHEDULES": "17 3 * * *", "MEMVAULT_SEARCH_LIMIT": "7"}
    assert retired_settings(source) == ("MEMVAULT_HOT_WINDOW_HOURS", "MEMVAULT_CRON_SCHEDULES", "MEMVAULT_CHUNK_TOKENS")
    assert load_settings(source) == load_settings({"MEMVAULT_SEARCH_LIMIT": "7"})
    assert retired_settings({"MEMVAULT_SEARCH_LIMIT": "7", "MEMVAULT_CHUNK_TOKEN": "60"}) == ()
    warning = retired_warning("MEMVAULT_CRON_SCHEDULES")
    assert "MEMVAULT_CRON_SCHEDULES" in warning and "wrangler.toml" in warning and "docs/settings.md" in warning
