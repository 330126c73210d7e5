"""Packaging proof of the example bot: `wrangler deploy --dry-run` (offline) on its own
wrangler.toml, started from the repository root (its build step finds build.py from any folder),
builds the bundle Cloudflare would receive — the entry with the ChatAgent Durable Object, the
bot's logic, the parts of memvault a bot needs, all importable by their names, and the runtime SDK
vendored beside the bot's own pyproject.toml — and names the service binding to memvault and the
Durable Object binding."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from test_bundle import ROOT, WRANGLER, bundled_files, unresolved_imports
from workerd_runtime import vendor_python_modules

from node_tools import node_env

BOT = ROOT / "examples" / "telegram_bot"


@pytest.fixture(scope="module")
def bot_bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    if not WRANGLER.exists():
        pytest.skip("node_modules/.bin/wrangler is missing: run `npm ci` (scripts/test does)")
    project = tmp_path_factory.mktemp("repo")
    shutil.copytree(ROOT / "src" / "memvault", project / "src" / "memvault", ignore=shutil.ignore_patterns("__pycache__"))
    bot = project / "examples" / "telegram_bot"
    shutil.copytree(BOT, bot, ignore=shutil.ignore_patterns("__pycache__", "build", "python_modules", ".wrangler"))
    vendor_python_modules(bot)
    out = project / "dist"
    done = subprocess.run(
        [str(WRANGLER), "deploy", "--dry-run", "--outdir", str(out), "-c", "examples/telegram_bot/wrangler.toml"],
        cwd=project, capture_output=True, text=True, timeout=180, env=node_env(WRANGLER_SEND_METRICS="false"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout


def test_bot_bundle_holds_entry_logic_and_client(bot_bundle: tuple[Path, str]) -> None:
    files = bundled_files(bot_bundle[0])
    assert {"entry.py", "telegram_bot/agent.py", "telegram_bot/telegram.py", "telegram_bot/chat_model.py",
            "memvault/client/lazy.py", "memvault/client/transports.py", "memvault/core/retry.py",
            "memvault/adapters/cloudflare/rpc_stub.py", "memvault/adapters/cloudflare/do_sql.py"} <= files
    assert "telegram_bot/local_app.py" not in files
    assert {"telegram_bot/deliveries.py", "python_modules/workers/__init__.py", "python_modules/workers/entrypoints.py"} <= files
    assert not [f for f in files if f.startswith(("memvault/api/", "memvault/runtime/", "memvault/adapters/local/"))]


def test_the_bot_vendors_only_the_runtime_sdk(bot_bundle: tuple[Path, str]) -> None:
    vendored = {f.split("/")[1] for f in bundled_files(bot_bundle[0]) if f.startswith("python_modules/")}
    assert {name for name in vendored if not name.startswith("_") and not name.endswith((".dist-info", ".py", ".pth"))} == {"workers"}


def test_every_import_of_the_bot_resolves_inside_its_bundle_or_on_the_platform(bot_bundle: tuple[Path, str]) -> None:
    assert unresolved_imports(bot_bundle[0], {"memvault", "telegram_bot", "entry"}) == []


def test_bot_binds_memvault_with_props_and_its_chat_agents(bot_bundle: tuple[Path, str]) -> None:
    log = bot_bundle[1]
    assert "env.MEMVAULT (memvault-production)" in log
    assert "env.CHAT_AGENT (ChatAgent)" in log
    config = tomllib.loads((BOT / "wrangler.toml").read_text())
    [service] = config["services"]
    assert service["binding"] == "MEMVAULT" and set(service["props"]) == {"memoryKeyId"}
    assert config["migrations"][0]["new_sqlite_classes"] == ["ChatAgent"]
