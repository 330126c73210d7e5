#!/usr/bin/env python3
"""Stage the bot's Worker bundle in build/bot/ (wrangler.toml's [build] command runs this).

    build/bot/entry.py              -> module `entry` (the Worker and the ChatAgent Durable Object)
    build/bot/telegram_bot/...      -> the bot's logic (without its local ASGI app)
    build/bot/memvault/...          -> memvault's core floor, its client and the Cloudflare adapters
                                       the bot uses, from this repository's src/

Nothing else goes in: no local-only code (SQLite files, httpx, uvicorn), no memvault server.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEMVAULT = HERE.parents[1] / "src" / "memvault"
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")
LOCAL_ONLY = ("local_app.py", "__main__.py")
CLOUDFLARE_ADAPTERS = ("__init__.py", "background.py", "convert.py", "do_sql.py", "env.py", "http_client.py", "rpc_stub.py")


def stage(out: Path) -> list[str]:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copy2(HERE / "entry.py", out / "entry.py")
    shutil.copytree(HERE / "telegram_bot", out / "telegram_bot", ignore=shutil.ignore_patterns(*LOCAL_ONLY, "__pycache__"))
    (out / "memvault" / "adapters" / "cloudflare").mkdir(parents=True)
    shutil.copy2(MEMVAULT / "__init__.py", out / "memvault" / "__init__.py")
    shutil.copy2(MEMVAULT / "adapters" / "__init__.py", out / "memvault" / "adapters" / "__init__.py")
    for name in CLOUDFLARE_ADAPTERS:
        shutil.copy2(MEMVAULT / "adapters" / "cloudflare" / name, out / "memvault" / "adapters" / "cloudflare" / name)
    for package in ("core", "client"):
        shutil.copytree(MEMVAULT / package, out / "memvault" / package, ignore=SKIP)
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())


def main() -> int:
    files = stage(HERE / "build" / "bot")
    print(f"staged {len(files)} files in build/bot")
    return 0


if __name__ == "__main__":
    sys.exit(main())
