"""The secret gate end to end: the whole secret corpus written through the API leaves no secret
anywhere memvault stores things (every table, FTS index, blobs, vector metadata, event log), and
the benign look-alikes come back verbatim."""

from __future__ import annotations

import sys
from pathlib import Path

from brain_env import Brain, brain_fixture  # noqa: F401

from memvault.core.brain.facts import hook_of

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit"))

from test_redaction import BENIGN, SECRETS


async def _everything_stored(brain: Brain) -> str:
    dump = []
    tables = await brain.deps.db.query("SELECT name FROM sqlite_master WHERE type = 'table'")
    for table in tables:
        rows = await brain.deps.db.query(f'SELECT * FROM "{table["name"]}"')
        # A table's numbers are its row ids, sequence numbers, sizes and times: with a thousand
        # facts written, they count through every short secret (a card's code "731").
        dump.append(repr([{name: value for name, value in row.items() if not isinstance(value, int | float)} for row in rows]))
    blobs = Path(brain.deps.settings.data_dir) / "blobs"
    dump += [p.read_text(errors="replace") for p in blobs.rglob("*") if p.is_file()]
    vectors = Path(brain.deps.settings.data_dir) / "vectors.sqlite3"
    dump.append(vectors.read_bytes().decode("latin-1"))
    return "\n".join(dump)


async def test_no_secret_is_stored_anywhere(brain: Brain) -> None:
    padding = " context" * 120  # long enough that some facts keep their body in the blob store
    facts = [{"content": text + (padding if n % 2 else ""), "source": f"s{n}"} for n, (text, _, _) in enumerate(SECRETS)]
    # Redacted, several of these say the same thing, which the bands would keep once.
    result = await brain.write({"scope": "family", "facts": facts}, bands="off")
    assert result["written"] == len(SECRETS)
    assert {k for r in result["redacted"] for k in r["kinds"]} == {kind for _, kind, _ in SECRETS}
    assert len(result["redacted"]) == len(SECRETS)
    stored = await _everything_stored(brain)
    for _, _, secret in SECRETS:
        assert secret not in stored
        assert secret not in str(result)
    skill = await brain.client.post("/memory/skill", headers=brain.headers("writer"), json={
        "slug": "deploy", "scope": "family", "content": "export KEY=AKIAVQJXXVBOTHD0WTFL then run"})
    assert skill.json()["redacted"] == ["api_key"]
    assert "AKIAVQJXXVBOTHD0WTFL" not in await _everything_stored(brain)


async def test_benign_look_alikes_are_stored_verbatim(brain: Brain) -> None:
    facts = [{"content": text, "source": f"b{n}"} for n, text in enumerate(BENIGN)]
    result = await brain.write({"scope": "business", "facts": facts})
    assert result["redacted"] == []
    rows = await brain.deps.db.query("SELECT content FROM memory")
    assert sorted(r["content"] for r in rows) == sorted(text.strip() for text in BENIGN)
    found = (await brain.get("/memory/search", "business", q="invoice 20028")).json()["results"]
    assert found and "#20028" in found[0]["content"]
    assert (await brain.get("/memory/search", "business", q="4242")).json()["results"]


sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from secret_corpus import HARMLESS as CORPUS_HARMLESS  # noqa: E402
from secret_corpus import SECRETS as CORPUS_SECRETS  # noqa: E402
from secret_corpus import gated, leaks, sample  # noqa: E402


async def test_no_secret_of_the_corpus_sample_is_stored_by_a_brain_write(brain: Brain) -> None:
    cases = sample(gated(CORPUS_SECRETS))
    # A source's number runs on from its word: a PIN or a card's code counts as leaked where it
    # stands alone, as "731" would in "corpus-731".
    facts = [{"content": case.text, "source": f"corpus{n}"} for n, case in enumerate(cases)]
    # In writes of the size the API takes (at most 500 facts each).
    results = [await brain.write({"scope": "family", "facts": facts[start:start + 250]}, bands="off")
               for start in range(0, len(facts), 250)]
    assert sum(result["written"] for result in results) == len(cases)
    assert sum(len(result["redacted"]) for result in results) == len(cases)
    assert leaks(cases, await _everything_stored(brain)) == []
    assert leaks(cases, str(results)) == []


async def test_the_corpus_look_alikes_are_stored_verbatim_by_a_brain_write(brain: Brain) -> None:
    texts = sorted({case.text.strip() for case in sample(CORPUS_HARMLESS)})
    facts = [{"content": t, "source": f"k{n}"} for n, t in enumerate(texts)]
    results = [await brain.write({"scope": "business", "facts": facts[start:start + 250]}, bands="off")
               for start in range(0, len(facts), 250)]
    assert [result["redacted"] for result in results] == [[]] * len(results)
    rows = await brain.deps.db.query("SELECT content FROM memory")
    # A long fact keeps its hook inline (its body is kept beside it).
    assert sorted(r["content"] for r in rows) == sorted(hook_of(t, brain.deps.tuning.brain_hook_chars) for t in texts)
