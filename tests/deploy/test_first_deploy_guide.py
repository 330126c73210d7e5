"""docs/cloudflare.md's first deploy from zero creates every binding wrangler.toml declares, in
every environment: its commands, with `ENV` set as the guide says, create each D1 database, R2
bucket, KV namespace and Vectorize index (with a metadata index for each property brain searches
filter on), apply the migrations, deploy the Durable Object's class, and put every required
secret; and it never deploys with bare wrangler."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "cloudflare.md"
CONFIG = tomllib.loads((ROOT / "wrangler.toml").read_text())
# What wrangler.toml binds that nothing creates beforehand.
NOTHING_TO_CREATE = {"ai", "version_metadata"}
BINDING_KEYS = {"d1_databases", "r2_buckets", "kv_namespaces", "vectorize", "durable_objects", *NOTHING_TO_CREATE}


def guide_commands() -> list[str]:
    text = GUIDE.read_text()
    section = text[text.index("### A first deploy from zero"): text.index("### Keys and credentials")]
    blocks = re.findall(r"```sh(?: cloudflare)?\n(.*?)```", section, re.DOTALL)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


def commands_for(env: str) -> list[str]:
    return [command.replace("$ENV", env) for command in guide_commands()]


def filtered_properties() -> set[str]:
    """The metadata keys memvault's vector queries filter on, read from core's source."""
    found: set[str] = set()
    for path in (ROOT / "src" / "memvault" / "core").rglob("*.py"):
        text = path.read_text()
        found |= set(re.findall(r'metadata_filter\["(\w+)"\]', text))
        for literal in re.findall(r"metadata_filter(?::[^=]*)?=\s*(\{.*?\})\s*$", text, re.MULTILINE):
            found |= set(re.findall(r'"(\w+)":\s*\{"\$', literal))
    return found


def test_the_guide_reads_its_environment_from_one_variable() -> None:
    assert "ENV=production" in guide_commands()
    assert set(CONFIG["env"]) == {"staging", "production"}


def test_the_one_resource_wrangler_dev_reaches_remotely_is_created_with_its_metadata_indexes() -> None:
    """The top level runs under `wrangler dev`: everything there is simulated but Vectorize (and
    Workers AI, which needs nothing made)."""
    remote = {key for key, value in CONFIG.items() if key in BINDING_KEYS
              and any(isinstance(item, dict) and item.get("remote") for item in (value if isinstance(value, list) else [value]))}
    assert remote == {"vectorize", "ai"}
    commands = commands_for("dev")
    for index in CONFIG["vectorize"]:
        assert f"uv run pywrangler vectorize create {index['index_name']} --dimensions=768 --metric=cosine" in commands
        for prop in filtered_properties():
            assert (f"uv run pywrangler vectorize create-metadata-index {index['index_name']} --property-name={prop} "
                    "--type=string") in commands


@pytest.mark.parametrize("env", sorted(CONFIG["env"]))
def test_every_binding_of_the_environment_is_created_by_a_step(env: str) -> None:
    section, commands = CONFIG["env"][env], commands_for(env)
    declared = {key for key in section if key in BINDING_KEYS}
    assert declared >= {"d1_databases", "r2_buckets", "kv_namespaces", "vectorize", "durable_objects"}, declared

    def ran(pattern: str) -> bool:
        return any(re.fullmatch(pattern, command) for command in commands)

    for database in section["d1_databases"]:
        name = re.escape(database["database_name"])
        assert ran(rf"uv run pywrangler d1 create {name}"), (env, database)
        assert ran(rf"uv run pywrangler d1 migrations apply {name} --env \S+ --remote"), (env, database)
    for bucket in section["r2_buckets"]:
        assert ran(rf"uv run pywrangler r2 bucket create {re.escape(bucket['bucket_name'])}"), (env, bucket)
    for _namespace in section["kv_namespaces"]:
        assert ran(rf"uv run pywrangler kv namespace create memvault-{env}-cache"), env
    properties = filtered_properties()
    assert properties == {"scope", "entry_type"}
    for index in section["vectorize"]:
        name = re.escape(index["index_name"])
        assert ran(rf"uv run pywrangler vectorize create {name} --dimensions=768 --metric=cosine"), (env, index)
        for prop in properties:
            assert ran(rf"uv run pywrangler vectorize create-metadata-index {name} --property-name={prop} --type=string")
    # The Durable Object's class comes with the first `pywrangler deploy` (its [[migrations]] entry).
    assert section["durable_objects"]["bindings"] and CONFIG["migrations"]
    assert ran(r"uv run pywrangler deploy --env \S+")
    required = [n.strip() for n in section["vars"]["MEMVAULT_REQUIRED_SECRETS"].split(",") if n.strip()]
    for name in [*required, "MEMVAULT_ADMIN_TOKEN"]:
        assert ran(rf"uv run pywrangler secret put {name} --env \S+"), (env, name)
    assert ran(r"python3 scripts/safe_deploy.py --env \S+ --url \S+")


def test_no_step_deploys_with_bare_wrangler() -> None:
    for command in guide_commands():
        assert not re.match(r"(npx )?wrangler (deploy|versions)", command), command
