"""Forget: a forgotten message leaves no trace on any read path (vault, mirror fallback, pending
buffer, chunks, overlaps, keyword index), while everything else stays findable."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
from memory_support import Memvault
from test_memory_api import DAY, NOW, search, store
from test_vault_and_mirror import BrokenVaults

from memvault.adapters.local.vaults import vault_filename
from memvault.core import memory
from memvault.runtime import rpc

WORDS = "harbour lantern copper meadow violin glacier pepper saddle orchid tunnel falcon ember quartz willow".split()


def chat(count: int, start: float = NOW - DAY, prefix: str = "t") -> list[dict[str, object]]:
    """Messages of ~40 tokens, each with one word found nowhere else (``marker<i>``), several sentences long."""
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Note {i} about the {WORDS[i % len(WORDS)]}. The code word is marker{prefix}{i}x. "
            f"It sits beside the {WORDS[(i * 3) % len(WORDS)]} and the {WORDS[(i * 5) % len(WORDS)]}.",
            "timestamp": start + i,
            "id": f"{prefix}{i}",
        }
        for i in range(count)
    ]


def stored_text(memvault: Memvault, data_dir: Path) -> str:
    """Every text the key's files hold: vault rows, buffer and carry, mirror rows and buffers."""
    texts = []
    for path in (data_dir / "vaults").glob("*.sqlite3"):
        with sqlite3.connect(path) as conn:
            texts += [r[0] for r in conn.execute("SELECT text FROM rows")]
            texts += [r[0] for r in conn.execute("SELECT content FROM buffer")]
            texts += [r[0] for r in conn.execute("SELECT value FROM meta")]
    with sqlite3.connect(data_dir / "memvault.sqlite3") as conn:
        texts += [r[0] for r in conn.execute("SELECT text FROM mirror_rows")]
        texts += [r[0] for r in conn.execute("SELECT messages FROM mirror_buffers")]
    return "\n".join(texts)


def keyword_hits(data_dir: Path, term: str) -> int:
    hits = 0
    for path in (data_dir / "vaults").glob("*.sqlite3"):
        with sqlite3.connect(path) as conn:
            hits += conn.execute("SELECT COUNT(*) FROM rows_fts WHERE rows_fts MATCH ?", (f'"{term}"',)).fetchone()[0]
    with sqlite3.connect(data_dir / "memvault.sqlite3") as conn:
        hits += conn.execute("SELECT COUNT(*) FROM mirror_rows_fts WHERE mirror_rows_fts MATCH ?", (f'"{term}"',)).fetchone()[0]
    return hits


async def every_read(memvault: Memvault, query: str) -> str:
    """What every read path returns for the key: search (vault, then mirror only), the page of
    messages other Workers read, and the export."""
    found = [i["text"] for i in (await search(memvault, query, limit=200, budget_tokens=50_000))["items"]]
    page = await memory.read_memory(memvault.deps, memvault.key_id, None, 500, 0)
    exported = [json.dumps(r) async for r in memory.export_memory(memvault.deps, memvault.key_id)]
    vaults = memvault.deps.vaults
    memvault.deps.vaults = BrokenVaults()
    try:
        mirrored = [i["text"] for i in (await search(memvault, query, limit=200, budget_tokens=50_000))["items"]]
    finally:
        memvault.deps.vaults = vaults
    return "\n".join([*found, *mirrored, *(json.dumps(p) for p in page), *exported])


def data_dir_of(memvault: Memvault) -> Path:
    return Path(memvault.deps.settings.data_dir)


async def test_forgetting_a_stored_message_removes_it_everywhere(memvault: Memvault) -> None:
    await store(memvault, chat(40))
    response = await memvault.client.delete("/v1/memory/t17", headers=memvault.auth)
    assert response.status_code == 200
    assert response.json() == {"forgotten": ["t17"], "not_found": []}
    assert "markert17x" not in await every_read(memvault, "code word markert17x")
    assert "markert17x" not in stored_text(memvault, data_dir_of(memvault))
    assert keyword_hits(data_dir_of(memvault), "markert17x") == 0
    # Its neighbours are still found, by the vault and by the mirror alike.
    reads = await every_read(memvault, "code word markert16x markert18x")
    assert "markert16x" in reads and "markert18x" in reads


async def test_wherever_a_message_sits_nothing_of_it_survives_and_nothing_else_is_lost(memvault: Memvault) -> None:
    messages = chat(60)
    await store(memvault, messages)
    stats = await memvault.deps.vaults.vault(f"{memvault.key_id}:core").stats()
    assert stats.chunks >= 4 and stats.buffered_messages > 0
    order = list(range(60))
    random.Random(7).shuffle(order)
    forgotten: set[int] = set()
    for index in order[:12]:
        result = await memory.forget(memvault.deps, memvault.key_id, [f"t{index}"])
        assert result == {"forgotten": [f"t{index}"], "not_found": []}
        forgotten.add(index)
        everything = stored_text(memvault, data_dir_of(memvault))
        for i in range(60):
            assert (f"markert{i}x" in everything) == (i not in forgotten), (index, i)
    reads = await every_read(memvault, " ".join(f"markert{i}x" for i in range(60)))
    assert all((f"markert{i}x" in reads) == (i not in forgotten) for i in range(60))
    stats = await memvault.deps.vaults.vault(f"{memvault.key_id}:core").stats()
    assert stats.unembedded == 0  # chunks cut again were embedded


async def test_a_pending_message_is_forgotten_from_the_buffer_and_its_mirror(memvault: Memvault) -> None:
    await store(memvault, chat(2))
    result = (await memvault.client.delete("/v1/memory/t1", headers=memvault.auth)).json()
    assert result == {"forgotten": ["t1"], "not_found": []}
    assert "markert1x" not in stored_text(memvault, data_dir_of(memvault))
    assert "markert0x" in await every_read(memvault, "markert0x")


async def test_without_a_session_every_vault_of_the_key_is_covered(memvault: Memvault) -> None:
    await store(memvault, chat(30))
    await store(memvault, chat(30, prefix="s"), session="s1")
    result = await rpc.forget_memory(memvault.deps, memvault.key, ["t3", "s4", "nope"])
    assert result == {"forgotten": ["t3", "s4"], "not_found": ["nope"]}
    text = stored_text(memvault, data_dir_of(memvault))
    assert "markert3x" not in text and "markers4x" not in text and "markers5x" in text


async def test_a_session_forget_stays_in_its_session(memvault: Memvault) -> None:
    await store(memvault, chat(30))
    await store(memvault, chat(30), session="s1")
    response = await memvault.client.delete("/v1/memory/t5", params={"session_id": "s1"}, headers=memvault.auth)
    assert response.json() == {"forgotten": ["t5"], "not_found": []}
    core = memvault.deps.vaults.vault(f"{memvault.key_id}:core")
    assert any("markert5x" in r.text for r in await core.rows(None, 1000)) or any(
        "markert5x" in m.content for m in await core.pending()
    )
    session_file = data_dir_of(memvault) / "vaults" / vault_filename(f"{memvault.key_id}:session:s1")
    with sqlite3.connect(session_file) as conn:
        assert not any("markert5x" in r[0] for r in conn.execute("SELECT text FROM rows"))


async def test_unknown_ids_and_other_keys_are_untouched(memvault: Memvault) -> None:
    await store(memvault, chat(30))
    response = await memvault.client.delete("/v1/memory/t999", headers=memvault.auth)
    assert response.status_code == 200 and response.json() == {"forgotten": [], "not_found": ["t999"]}
    other = await memvault.client.delete("/v1/memory/t3", headers={"Authorization": "Bearer mk_nobody"})
    assert other.status_code == 401
    assert "markert3x" in stored_text(memvault, data_dir_of(memvault))


@pytest.mark.parametrize("raw_id", ["t3%0A", "t%0A3", "%0A", "t%013", "a/b%0Dc"])
async def test_an_id_with_a_control_character_is_refused_by_the_id_rule(memvault: Memvault, raw_id: str) -> None:
    await store(memvault, chat(30))
    response = await memvault.client.delete(f"/v1/memory/{raw_id}", headers=memvault.auth)
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_request"
    assert "markert3x" in stored_text(memvault, data_dir_of(memvault))


async def test_an_id_with_slashes_reaches_its_message(memvault: Memvault) -> None:
    await store(memvault, [{"role": "user", "content": "The slash id holds markerslashx.", "id": "chat/7/a"}])
    response = await memvault.client.delete("/v1/memory/chat/7/a", headers=memvault.auth)
    assert response.json() == {"forgotten": ["chat/7/a"], "not_found": []}


async def test_a_forgotten_message_can_be_stored_again(memvault: Memvault) -> None:
    await store(memvault, chat(30))
    await memory.forget(memvault.deps, memvault.key_id, ["t8"])
    await store(memvault, [chat(30)[8]])
    assert "markert8x" in await every_read(memvault, "markert8x")


def test_cli_forget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from memvault import cli

    monkeypatch.setenv("MEMVAULT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "hash")
    assert cli.main(["keys", "create"]) == 0
    key = capsys.readouterr().out.strip()
    source = tmp_path / "chat.jsonl"
    source.write_text("\n".join(json.dumps(m) for m in chat(30)) + "\n")
    assert cli.main(["import", str(source), "--key", key]) == 0
    capsys.readouterr()
    assert cli.main(["forget", "t2", "t99", "--key", key]) == 0
    assert json.loads(capsys.readouterr().out) == {"forgotten": ["t2"], "not_found": ["t99"]}
    assert cli.main(["export", "--key", key]) == 0
    assert "markert2x" not in capsys.readouterr().out


async def test_a_chunk_cut_again_still_takes_its_overlap_out_of_the_chunk_after_it(memvault: Memvault) -> None:
    await store(memvault, chat(60))
    path = next((data_dir_of(memvault) / "vaults").glob("*.sqlite3"))
    with sqlite3.connect(path) as conn:
        first = json.loads(conn.execute("SELECT source_ids FROM rows WHERE kind = 'chunk' ORDER BY rowid").fetchone()[0])
    # The first chunk is cut again, as a new row: it now comes after the chunk that carries its tail.
    await memory.forget(memvault.deps, memvault.key_id, [first[0]])
    await memory.forget(memvault.deps, memvault.key_id, [first[-1]])
    marker = f"marker{first[-1]}x"
    assert marker not in stored_text(memvault, data_dir_of(memvault))
    assert marker not in await every_read(memvault, f"code word {marker}")
