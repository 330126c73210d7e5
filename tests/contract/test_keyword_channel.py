"""The keyword channel ranks every row holding a query term while that is cheap, and bounds its
work on common terms: the rarest terms are kept, and a term past the budget alone is ranked over
its newest rows."""

from __future__ import annotations

from pathlib import Path

from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.core.memory.store import VaultLimits, VaultStore
from memvault.core.models import Message, SearchQuery
from memvault.core.tuning import Tuning


def store_with(tmp_path: Path, postings: int = Tuning().keyword_postings) -> VaultStore:
    """200 messages that all mention Lisbon; every tenth also an orchid, one a comet. The keyword
    channel ranks at most ``postings`` rows."""
    tuning = Tuning(chunk_tokens=10_000, chunk_overlap_tokens=0, keyword_postings=postings)
    store = VaultStore(SqliteSql(tmp_path / "v.sqlite3"), VaultLimits(0, tuning))
    messages = [
        Message("user", f"Note {i} from Lisbon" + (" about an orchid" if i % 10 == 0 else "") + (" and a comet" if i == 123 else ""),
                1000.0 + i, f"n{i}")
        for i in range(200)
    ]
    store.append(messages)
    store.flush()
    return store


def keyword_hits(store: VaultStore, text: str) -> list[str]:
    found = store.search(SearchQuery(text=text, vector=None, depth=500))
    return [c.row.text for c in found if c.channel == "keyword" and c.row.kind == "message"]


def test_within_the_budget_every_term_ranks(tmp_path: Path) -> None:
    store = store_with(tmp_path)
    hits = keyword_hits(store, "lisbon orchid comet")
    assert len(hits) == 200 and hits[0] == "Note 123 from Lisbon and a comet"
    assert all("orchid" in text for text in hits[1:21])


def test_past_the_budget_common_terms_are_left_out(tmp_path: Path) -> None:
    store = store_with(tmp_path, postings=50)
    hits = keyword_hits(store, "lisbon orchid comet")
    orchids = [f"Note {i} from Lisbon about an orchid" for i in range(0, 200, 10)]
    assert hits[0] == "Note 123 from Lisbon and a comet" and sorted(hits[1:]) == sorted(orchids)


def test_a_term_past_the_budget_alone_ranks_its_newest_rows(tmp_path: Path) -> None:
    store = store_with(tmp_path, postings=30)
    hits = keyword_hits(store, "what about Lisbon?")
    assert sorted(hits) == sorted(
        f"Note {i} from Lisbon" + (" about an orchid" if i % 10 == 0 else "") + (" and a comet" if i == 123 else "")
        for i in range(170, 200)
    )
