"""Settings: defined once, parsed strictly, and every one documented in the README."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.core.errors import InvalidInput
from memvault.core.settings import SETTINGS, load_settings

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_setting_is_documented_in_the_readme() -> None:
    text = README.read_text()
    missing = [s.name for s in SETTINGS if f"`{s.name}`" not in text]
    assert missing == []


def test_names_are_unique() -> None:
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))


def test_defaults_parse_and_units_convert() -> None:
    settings = load_settings({})
    assert settings.hot_window_hours == 4 * 3600
    assert settings.long_term_window_days == 90 * 86400
    assert settings.recency_weight == 0.25
    assert load_settings({"MEMVAULT_CHUNK_TOKENS": "120"}).chunk_tokens == 120


@pytest.mark.parametrize(
    "name, value", [("MEMVAULT_CHUNK_TOKENS", "many"), ("MEMVAULT_RECENCY_WEIGHT", "-1"), ("MEMVAULT_RECENCY_WEIGHT", "lots")]
)
def test_bad_values_name_the_setting(name: str, value: str) -> None:
    with pytest.raises(InvalidInput, match=name):
        load_settings({name: value})


def test_the_readme_layout_names_every_package() -> None:
    text = README.read_text()
    layout = text[text.index("## Layout") :]
    layout = layout[: layout.index("```", layout.index("```") + 3)]
    src = README.parent / "src" / "memvault"
    packages = sorted(p.parent.relative_to(src).as_posix() for p in src.rglob("__init__.py") if p.parent != src)
    missing = [p for p in packages if f"{p.rsplit('/', 1)[-1]}/" not in layout]
    assert packages and missing == []
