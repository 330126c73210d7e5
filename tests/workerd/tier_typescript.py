"""The TypeScript side of the workerd tier: the example TypeScript bot (`examples/typescript_bot/`,
which uses the package in `clients/typescript/`) bound to the tier's memvault over a real service
binding with props, and a second copy of it whose binding goes through a slow link
(`slow_link/index.js`, each call delayed) to the same memvault. One more `wrangler dev` process,
sharing the main stack's dev registry, with the tier's JavaScript caller in front of both bots."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from tier_stack import MEMVAULT_NAME, ROOT, MainStack, kept_apart
from workers_dev import node_env
from wrangler_dev import WranglerDev

HERE = Path(__file__).resolve().parent
BOT_FOLDER = Path("examples") / "typescript_bot"
SLOW_BOT_NAME = "memvault-typescript-bot-slow"
SLOW_LINK_NAME = "tier-slow-link"
SLOW_SECONDS = 4
# How soon the bot's agents try queued saves again (the example's default is 30 s).
RETRY_SECONDS = "1"


def read_jsonc(path: Path) -> dict[str, Any]:
    """A wrangler.jsonc whose comments are whole lines, as the example's are."""
    return dict(json.loads(re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.MULTILINE)))


def _write(path: Path, config: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2))
    return path


def build_typescript_bots(work: Path, stack: MainStack) -> WranglerDev:
    """The example TypeScript bot (straight to memvault) and its slow twin, behind the caller;
    ready to start. Both bind memvault with props naming the tier's memory key."""
    project = work / "typescript"
    shutil.copytree(ROOT / BOT_FOLDER, project / BOT_FOLDER, ignore=shutil.ignore_patterns("node_modules", ".wrangler"))
    shutil.copytree(ROOT / "clients" / "typescript" / "src", project / "clients" / "typescript" / "src")
    props = {"memoryKeyId": stack.secrets.memory_key_id}
    example = read_jsonc(project / BOT_FOLDER / "wrangler.jsonc")
    date = example["compatibility_date"]
    bot = _write(project / BOT_FOLDER / "wrangler.tier.json", {
        **example, "vars": {"MEMVAULT_RETRY_SECONDS": RETRY_SECONDS},
        "services": [{"binding": "MEMVAULT", "service": MEMVAULT_NAME, "props": props}]})
    slow_bot = _write(project / BOT_FOLDER / "wrangler.slow.json", {
        **example, "name": SLOW_BOT_NAME, "vars": {"MEMVAULT_RETRY_SECONDS": RETRY_SECONDS},
        "services": [{"binding": "MEMVAULT", "service": SLOW_LINK_NAME}]})
    shutil.copytree(HERE / "slow_link", project / "slow_link")
    link = _write(project / "slow_link" / "wrangler.json", {
        "name": SLOW_LINK_NAME, "main": "index.js", "compatibility_date": date, "vars": {"DELAY_SECONDS": str(SLOW_SECONDS)},
        "services": [{"binding": "MEMVAULT", "service": MEMVAULT_NAME, "props": props}]})
    shutil.copytree(HERE / "caller", project / "caller")
    caller = _write(project / "caller" / "wrangler.json", {
        "name": "tier-typescript-caller", "main": "index.js", "compatibility_date": date,
        "services": [{"binding": "TS_BOT", "service": example["name"]}, {"binding": "TS_BOT_SLOW", "service": SLOW_BOT_NAME}]})
    configs = [str(path.relative_to(project)) for path in (caller, bot, slow_bot, link)]
    command = [str(ROOT / "node_modules" / ".bin" / "wrangler"), "dev", *(arg for c in configs for arg in ("-c", c))]
    return WranglerDev("typescript bots (behind the caller)", command, project, node_env(**kept_apart(work)),
                       work / "typescript-bots.log")
