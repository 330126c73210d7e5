"""What the workerd tier starts: copies of memvault and the example bot laid out as a deploy sees
them (the build step, `python_modules/` from PyPI's Pyodide wheels, the migrations applied to local
D1, keys written where a deployed instance keeps them), and `wrangler dev` on them under real
workerd.

The main stack is two `wrangler dev` processes sharing a dev registry: memvault with the
Workers AI and Vectorize stand-ins (`stand_ins/index.js`), and the bot behind a small JavaScript
caller (`caller/index.js`), whose service bindings reach memvault's RPC methods and the bot's
webhook (a second config in one `wrangler dev` is reachable only through service bindings). The
bot's own `MEMVAULT` binding, with its props, reaches memvault across the two processes."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets as secrets_module
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
for folder in (ROOT / "scripts", ROOT / "tests", ROOT / "tests" / "api" / "providers"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from workerd_runtime import BUNDLE_NAME, Runtime, snapshot_args, vendor_python_modules  # noqa: E402
from workers_dev import (  # noqa: E402
    StatementRecorder,
    brain_key_sql,
    database_name,
    dev_command,
    memory_key_sql,
    node_env,
    prepare,
    wrangler,
)
from wrangler_dev import WranglerDev, free_port  # noqa: E402

from memvault.core.credentials.keys import create_key  # noqa: E402
from notes_questions import GRANTED_SCOPES, NOTES_WRITER_SCOPES  # noqa: E402

HERE = Path(__file__).resolve().parent
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "python_modules", ".wrangler", ".dev.vars")
MEMVAULT_NAME = "memvault"
STAND_INS_NAME = "memvault-stand-ins"
CALLER_NAME = "tier-caller"
BOT_FOLDER = Path("examples") / "telegram_bot"
BOT_TOKEN = "123456:workerd-tier"
WEBHOOK_SECRET = "workerd-tier-webhook-secret"
# Baseline snapshots of the offline Pyodide bundle, kept by what they are made from (baseline_args).
PYODIDE_BASELINE = ROOT / ".cache" / "pyodide-baseline"
# workerd's name for the snapshot it saves in its snapshot folder.
SNAPSHOT_FILE = "snapshot.bin"
# The Worker a baseline snapshot is taken with: it draws no randomness and does no I/O as it loads.
BASELINE_WORKER = """from workers import Response, WorkerEntrypoint


class Default(WorkerEntrypoint):
    async def fetch(self, request):
        return Response("baseline")
"""
# Local D1 databases freshly migrated, kept by what they are made from (workers_dev.apply_migrations):
# the main stack and the snapshot recipe start from the same one, and a later run reuses it.
MIGRATED_D1 = ROOT / ".cache" / "migrated-d1"


@dataclass(frozen=True)
class Secrets:
    """Every credential the stack's Workers know, made the way a deployed instance keeps them."""

    memory_key: str
    memory_key_id: str
    bot_key: str
    bot_key_id: str
    family_writer: str  # a brain credential in the key store: scope family, writer
    business_writer: str  # a brain credential in MEMVAULT_BRAIN_CREDENTIALS: scope business, writer
    bot_brain: str  # the bot's, in MEMVAULT_BRAIN_CREDENTIALS: scope family, writer
    notes_writer: str  # a brain credential in the key store: every scope, writer (a laptop's brain_sync)
    admin_token: str  # MEMVAULT_ADMIN_TOKEN, a secret of the Worker
    provider_key_secret: str  # MEMVAULT_PROVIDER_KEY_SECRET, a secret of the Worker

    @staticmethod
    def make() -> tuple[Secrets, list[str]]:
        """New secrets, and the statements that store the key-store ones in D1."""
        memory_sql, memory_key_id, memory_key = memory_key_sql("workerd tier")
        bot_sql, bot_key_id, bot_key = granted_memory_key_sql("telegram bot", GRANTED_SCOPES)
        family_sql, _, family = brain_key_sql("family-writer", ("family",), True)
        notes_sql, _, notes = brain_key_sql("laptop-notes", NOTES_WRITER_SCOPES, True)
        secrets = Secrets(memory_key, memory_key_id, bot_key, bot_key_id, family, "business-writer-token", "bot-brain-token",
                          notes, "workerd-tier-admin-" + secrets_module.token_hex(16),
                          base64.b64encode(secrets_module.token_bytes(32)).decode())
        return secrets, [memory_sql, bot_sql, family_sql, notes_sql]

    def brain_credentials_var(self) -> str:
        credentials = {
            hashlib.sha256(self.business_writer.encode()).hexdigest(): {"name": "business", "scopes": ["business"], "writer": True},
            hashlib.sha256(self.bot_brain.encode()).hexdigest(): {"name": "telegram-bot", "scopes": ["family"], "writer": True},
        }
        return json.dumps(credentials)


def granted_memory_key_sql(label: str, brain_scopes: tuple[str, ...]) -> tuple[str, str, str]:
    """A memory key granted ``brain_scopes`` to read, as `memvault keys create --brain-scopes`
    writes it: (statement, key id, mk_ secret)."""
    recorder = StatementRecorder()
    key, secret = asyncio.run(create_key(recorder, label, time.time(), brain_scopes=brain_scopes))  # type: ignore[arg-type]
    return recorder.statements[0], key.id, secret


def copy_project(into: Path) -> Path:
    """The files a deploy of memvault reads, in the repository's layout (the bot's too)."""
    for folder in ("src", "durable_objects", "migrations", BOT_FOLDER.as_posix()):
        shutil.copytree(ROOT / folder, into / folder, ignore=SKIP)
    (into / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "build_worker.py", into / "scripts" / "build_worker.py")
    for name in ("wrangler.toml", "pyproject.toml", ".dev.vars.example"):
        shutil.copy2(ROOT / name, into / name)
    return into


def write_dev_vars(folder: Path, values: dict[str, str]) -> None:
    # Single-quoted, so the dotenv parser keeps JSON values literal.
    (folder / ".dev.vars").write_text("".join(f"{name}='{value}'\n" for name, value in values.items()))


def tier_config(config: dict[str, Any], runtime: Runtime, **changes: Any) -> dict[str, Any]:
    """A top-level wrangler config as the tier runs it: the runtime's flags, then ``changes``."""
    tier = {key: value for key, value in config.items() if key != "env"}
    tier["compatibility_flags"] = runtime.compatibility_flags(config["compatibility_flags"])
    tier.update(changes)
    return tier


def memvault_config(project: Path, runtime: Runtime, upstream: str) -> Path:
    """memvault's own wrangler.toml, with Workers AI and Vectorize bound to the local stand-ins and
    the memory router's upstreams on 127.0.0.1."""
    config = tomllib.loads((project / "wrangler.toml").read_text())
    stand_ins = [{"binding": "AI", "service": STAND_INS_NAME, "entrypoint": "WorkersAi"},
                 {"binding": "VECTORIZE", "service": STAND_INS_NAME, "entrypoint": "Vectorize"}]
    upstreams = {f"MEMVAULT_{p}_BASE_URL": upstream for p in ("OPENAI", "ANTHROPIC", "GEMINI")}
    tier = tier_config(config, runtime, name=MEMVAULT_NAME, services=stand_ins, vars={**config["vars"], **upstreams})
    del tier["ai"], tier["vectorize"]
    path = project / "wrangler.tier.json"
    path.write_text(json.dumps(tier, indent=2))
    stand_ins_folder = project / "stand_ins"
    stand_ins_folder.mkdir()
    shutil.copy2(HERE / "stand_ins" / "index.js", stand_ins_folder / "index.js")
    (stand_ins_folder / "wrangler.json").write_text(json.dumps(
        {"name": STAND_INS_NAME, "main": "index.js", "compatibility_date": config["compatibility_date"]}))
    return path


def bot_config(project: Path, runtime: Runtime, secrets: Secrets, telegram: str) -> Path:
    """The bot's own wrangler.toml, its service binding aimed at the tier's memvault."""
    folder = project / BOT_FOLDER
    config = tomllib.loads((folder / "wrangler.toml").read_text())
    [service] = config["services"]
    binding = {**service, "service": MEMVAULT_NAME, "props": {"memoryKeyId": secrets.bot_key_id}}
    # One turn of history, so what the bot asks about earlier turns must come from memvault's recall.
    tier_vars = {**config["vars"], "TELEGRAM_API_BASE": telegram, "HISTORY_TURNS": "1"}
    tier = tier_config(config, runtime, services=[binding], vars=tier_vars)
    path = folder / "wrangler.tier.json"
    path.write_text(json.dumps(tier, indent=2))
    write_dev_vars(folder, {"TELEGRAM_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_WEBHOOK_SECRET": WEBHOOK_SECRET,
                            "MEMVAULT_KEY": secrets.bot_key, "MEMVAULT_BRAIN_TOKEN": secrets.bot_brain,
                            "LLM_API_KEY": "sk-workerd-tier"})
    return path


def caller_config(project: Path, secrets: Secrets, bot: Path, date: str) -> Path:
    """The JavaScript caller: memvault with props naming the tier's key, memvault without props,
    and the bot."""
    folder = project / "caller"
    folder.mkdir()
    shutil.copy2(HERE / "caller" / "index.js", folder / "index.js")
    bot_name = json.loads(bot.read_text())["name"]
    services = [{"binding": "MEMVAULT", "service": MEMVAULT_NAME, "props": {"memoryKeyId": secrets.memory_key_id}},
                {"binding": "MEMVAULT_UNBOUND", "service": MEMVAULT_NAME},
                {"binding": "BOT", "service": bot_name}]
    path = folder / "wrangler.json"
    path.write_text(json.dumps({"name": CALLER_NAME, "main": "index.js", "compatibility_date": date, "services": services}))
    return path


def d1_execute(config: Path, statements: list[str]) -> None:
    wrangler(["d1", "execute", database_name(config), "--local", "-c", config.name, "--command", "; ".join(statements)],
             cwd=config.parent)


def kept_apart(work: Path) -> dict[str, str]:
    """Environment that keeps the tier's wrangler processes to themselves: their own dev registry
    (the one service bindings across processes use) and log folder."""
    return {"WRANGLER_REGISTRY_PATH": str(work / "registry"), "WRANGLER_LOG_PATH": str(work / "wrangler-logs"),
            "NO_UPDATE_NOTIFIER": "1"}


@dataclass
class MainStack:
    memvault: WranglerDev
    bot: WranglerDev
    secrets: Secrets
    project: Path
    config: Path

    def api(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> httpx.Response:
        headers = {**({"Authorization": f"Bearer {token}"} if token else {}), **kwargs.pop("headers", {})}
        return httpx.request(method, self.memvault.url + path, headers=headers, timeout=120, **kwargs)

    @property
    def settings(self) -> dict[str, Any]:
        """memvault's wrangler config as the tier runs it."""
        return dict(json.loads(self.config.read_text()))

    @property
    def bot_url(self) -> str:
        return f"{self.bot.url}/bot"

    def rpc(self, method: str, *args: Any, bound: bool = True) -> dict[str, Any]:
        """An RPC call on memvault from another Worker: ``{"result": ...}`` or ``{"error": message}``."""
        binding = "MEMVAULT" if bound else "MEMVAULT_UNBOUND"
        # Encoded as JavaScript's JSON.stringify would: text holding half a surrogate pair crosses as it is.
        done = httpx.post(f"{self.bot.url}/rpc/{binding}/{method}", content=json.dumps({"args": list(args)}).encode(),
                          headers={"content-type": "application/json"}, timeout=120)
        assert done.status_code == 200, done.text
        return dict(done.json())

    def wrangler(self, args: list[str]) -> str:
        """A wrangler command on memvault's local state (its D1, R2, KV), as an operator runs one."""
        return wrangler([*args, "-c", self.config.name], cwd=self.project)


def baseline_args(work: Path, runtime: Runtime) -> list[str]:
    """workerd's arguments to start Python Workers from a baseline snapshot of the offline bundle:
    Pyodide and its standard library initialised, before any of the Worker's code runs, as workerd
    starts from the baseline snapshot published beside a released bundle (none is needed then).
    Initialising Pyodide instead costs about 10 s of CPU at each start. The snapshot is taken once
    for the bundle, the pinned wrangler (and so workerd) and the compatibility date, and kept."""
    if not runtime.offline or runtime.bundle_folder is None:
        return []
    date = tomllib.loads((ROOT / "wrangler.toml").read_text())["compatibility_date"]
    digest = hashlib.sha256((runtime.bundle_folder / BUNDLE_NAME).read_bytes())
    digest.update((ROOT / "node_modules" / "wrangler" / "package.json").read_bytes() + date.encode())
    kept = PYODIDE_BASELINE / digest.hexdigest()[:32]
    if not (kept / SNAPSHOT_FILE).is_file():
        save_baseline(work, runtime, date, kept)
    return ["--python-load-snapshot", SNAPSHOT_FILE, "--python-snapshot-dir", str(kept)]


def save_baseline(work: Path, runtime: Runtime, date: str, kept: Path) -> None:
    """Start a Worker that imports nothing with workerd saving a baseline snapshot, into ``kept``."""
    project = work / "baseline-worker"
    project.mkdir()
    (project / "entry.py").write_text(BASELINE_WORKER)
    (project / "pyproject.toml").write_text('[project]\nname = "baseline"\nversion = "0"\ndependencies = []\n')
    config = project / "wrangler.toml"
    config.write_text(f'name = "pyodide-baseline"\nmain = "entry.py"\ncompatibility_date = "{date}"\n'
                      'compatibility_flags = ["python_workers"]\n')
    vendor_python_modules(project)
    PYODIDE_BASELINE.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(dir=PYODIDE_BASELINE, prefix=".staged-"))
    command, env = dev_command(config, runtime, wrapper=work / "workerd-baseline",
                               workerd_args=["--python-save-baseline-snapshot", "--python-snapshot-dir", str(staged)])
    env.update(kept_apart(work))
    dev = WranglerDev("a Worker that imports nothing (saving the baseline snapshot)", command, project, env,
                      work / "baseline.log")
    try:
        dev.start().wait_ready("/")
    finally:
        dev.stop()
    if not (staged / SNAPSHOT_FILE).is_file():
        raise AssertionError(f"workerd saved no baseline snapshot:\n{dev.output()[-4000:]}")
    for older in PYODIDE_BASELINE.iterdir():
        if older != staged:
            shutil.rmtree(older, ignore_errors=True)
    staged.rename(kept)


def build_main_stack(work: Path, runtime: Runtime, upstream: str, telegram: str) -> MainStack:
    """Build both Workers, ready to start; the caller starts them and stops them whatever happens."""
    project = copy_project(work / "project")
    secrets, statements = Secrets.make()
    config = memvault_config(project, runtime, upstream)
    write_dev_vars(project, {"MEMVAULT_BRAIN_CREDENTIALS": secrets.brain_credentials_var(),
                             "MEMVAULT_ADMIN_TOKEN": secrets.admin_token,
                             "MEMVAULT_PROVIDER_KEY_SECRET": secrets.provider_key_secret})
    prepare(config, MIGRATED_D1)
    d1_execute(config, statements)
    bot = bot_config(project, runtime, secrets, telegram)
    vendor_python_modules(bot.parent)
    caller = caller_config(project, secrets, bot, json.loads(config.read_text())["compatibility_date"])
    wrapper = runtime.workerd_wrapper(work / "workerd", baseline_args(work, runtime))
    env = node_env(**kept_apart(work), **({"MINIFLARE_WORKERD_PATH": str(wrapper)} if wrapper else {}))
    wrangler_dev = [str(ROOT / "node_modules" / ".bin" / "wrangler"), "dev"]
    memvault = WranglerDev("memvault", [*wrangler_dev, "-c", config.name, "-c", "stand_ins/wrangler.json"], project, env,
                           work / "memvault.log")
    # Started from the project's root: the bot's build step finds its build.py from there too.
    bot_dev = WranglerDev("telegram bot (behind the caller)",
                          [*wrangler_dev, "-c", str(caller.relative_to(project)), "-c", str(bot.relative_to(project))],
                          project, env, work / "bot.log")
    return MainStack(memvault, bot_dev, secrets, project, config)


@dataclass
class SnapshotRun:
    """memvault as `scripts/workers-dev` prepares and starts it (no Workers AI or Vectorize), with
    workerd taking a deploy-style memory snapshot at start, or starting from it."""

    dev: WranglerDev
    memory_key: str
    family_writer: str

    def api(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.request(method, self.dev.url + path, headers=headers, timeout=120, **kwargs)


def prepare_recipe_project(work: Path) -> tuple[Path, str, str]:
    """A copy prepared by the recipe's own steps, with a memory key and a brain credential (its
    local D1 migrated as the main stack's was: a copy when made from the same migrations)."""
    project = copy_project(work / "recipe")
    config = project / "wrangler.toml"
    prepare(config, MIGRATED_D1)
    memory_sql, _, memory_key = memory_key_sql("Ana's laptop; snapshot run")
    brain_sql, _, family = brain_key_sql("family-writer", ("family",), True)
    d1_execute(config, [memory_sql, brain_sql])
    return config, memory_key, family


def start_snapshot_run(work: Path, runtime: Runtime, config: Path, keys: tuple[str, str], save: bool) -> SnapshotRun:
    command, env = dev_command(config, runtime, wrapper=work / ("workerd-save" if save else "workerd-load"),
                               workerd_args=snapshot_args(work / "snapshot", save), snapshot=True)
    env.update(kept_apart(work))
    dev = WranglerDev("memvault (snapshot saved at start)" if save else "memvault (started from the snapshot)",
                      command, config.parent, env, work / ("snapshot-save.log" if save else "snapshot-load.log"))
    return SnapshotRun(dev.start(), *keys)


def start_expecting_failure(work: Path, runtime: Runtime, config: Path) -> subprocess.CompletedProcess[str]:
    """`wrangler dev` on a Worker that must not start with a deploy-style snapshot; its output."""
    vendor_python_modules(config.parent)
    command, env = dev_command(config, runtime, wrapper=config.parent / "workerd-save",
                               workerd_args=snapshot_args(config.parent / "snapshot", True), snapshot=True)
    env.update(kept_apart(work))
    port = ["--ip", "127.0.0.1", "--port", str(free_port()), "--inspector-port", str(free_port()),
            "--show-interactive-dev-session=false"]
    return subprocess.run([*command, *port], cwd=config.parent, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
