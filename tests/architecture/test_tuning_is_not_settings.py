"""ARCHITECTURE.md section 5: tuning constants measured by benchmarks are not settings. No field of
``Settings`` is a tuning constant (by name or by what it tunes), ``Tuning`` reads nothing from the
environment, and a variable named after a tuning constant changes nothing a composition root builds."""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace

import pytest

from memvault.adapters.cloudflare.env import env_settings
from memvault.core.settings import PREFIX, RETIRED, Settings, load_settings
from memvault.core.tuning import Tuning
from memvault.runtime.local import build_local_deps, close_local_deps

SRC = Path(__file__).resolve().parents[2] / "src" / "memvault"
# What a benchmark measures and a user has no reason to set: ranking weights, similarity
# thresholds, depths, half-lives, the shape of chunks and windows, head starts, work per batch.
TUNING_WORDS = re.compile(
    r"weight|similarity|threshold|depth|half_life|rerank|chunk|overlap|head_start|postings|working_window|"
    r"hot_window|page_rows|hook_chars|(?<!max)_batch$"
)


def test_no_setting_is_named_like_a_tuning_constant() -> None:
    tuned = {f.name for f in fields(Tuning)}
    for setting in fields(Settings):
        assert setting.name not in tuned, setting.name
        assert not TUNING_WORDS.search(setting.name), f"{setting.name} reads like a tuning constant: put it in Tuning"
        assert PREFIX + setting.name.upper() not in RETIRED


def test_every_tuning_constant_has_a_meaning_and_no_variable() -> None:
    variables = {PREFIX + f.name.upper() for f in fields(Settings)}
    for constant in fields(Tuning):
        assert constant.metadata["help"].endswith("."), constant.name
        assert PREFIX + constant.name.upper() not in variables


def test_tuning_imports_nothing_that_could_read_the_environment() -> None:
    tree = ast.parse((SRC / "core" / "tuning.py").read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "dataclasses", "typing"}


ENVIRONMENT_READERS = {"environ", "environb", "getenv", "getenvb"}


def test_no_core_module_reads_the_environment() -> None:
    # Read from the code, not its text: the secret gate's rules name `os.environ` and `getenv` in
    # patterns and docstrings, as what a pasted snippet may show.
    for path in (SRC / "core").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                assert node.attr not in ENVIRONMENT_READERS, (path, node.lineno)
            elif isinstance(node, ast.ImportFrom) and node.module == "os":
                assert not {alias.name for alias in node.names} & ENVIRONMENT_READERS, (path, node.lineno)


def would_be_variables() -> dict[str, str]:
    """A variable for every tuning constant, each set to a value that differs from its default
    (and for the retired ones, their old spelling)."""
    values = {PREFIX + f.name.upper(): "7" for f in fields(Tuning)}
    return values | {name: "7" for name in RETIRED}


async def test_the_local_root_builds_the_products_tuning_whatever_the_environment_says(tmp_path: Path) -> None:
    environ = {"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash", **would_be_variables()}
    deps = build_local_deps(load_settings(environ))
    try:
        assert deps.tuning == Tuning()
    finally:
        await close_local_deps(deps)


def test_the_workers_env_cannot_reach_tuning_either() -> None:
    env = SimpleNamespace(**would_be_variables())
    assert env_settings(env) == load_settings({})


def test_a_tuning_is_checked_when_it_is_made() -> None:
    for bad in ({"chunk_tokens": 0}, {"chunk_overlap_tokens": 300}, {"recency_weight": -0.1},
                {"brain_flag_similarity": 0.99}, {"brain_half_life_seconds": (("fact", 0.0),)}):
        with pytest.raises(ValueError, match="Tuning"):
            Tuning().replace(**bad)


BENCHMARKS = sorted((SRC.parents[1] / "scripts").glob("bench_*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_benchmarks_measure_the_products_tuning_unless_they_say_they_sweep(script: Path) -> None:
    """A benchmark passes no tuning the product's own callers do not use: it sets no retired
    variable (which would now be ignored), and it builds another ``Tuning`` only as a sweep its
    docstring announces (the sweep prints the values it tried)."""
    text = script.read_text()
    tree = ast.parse(text)
    assert not {name for name in re.findall(r"MEMVAULT_[A-Z_]+", text)} & set(RETIRED), script.name
    replaced = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.keywords
                and isinstance(node.func, ast.Name) and node.func.id == "Tuning"]
    if replaced:
        assert "sweep" in (ast.get_docstring(tree) or ""), f"{script.name} replaces Tuning without saying it sweeps"
