"""Contract of ``VaultClient``: an in-process local vault, and the Vault Durable Object's logic."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from memvault.core.errors import InvalidInput
from memvault.core.memory.buffer_channel import is_pending
from memvault.core.memory.vault_table import VAULT_OPERATIONS
from memvault.core.models import EmbeddingModel, Message, SearchQuery
from memvault.core.tokens import estimate_tokens

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()


def conversation(count: int, start: float = 1_000_000.0, prefix: str = "m") -> list[Message]:
    return [
        Message(
            role="user" if i % 2 == 0 else "assistant",
            content=f"Turn {i} of {prefix} talks about {WORDS[i % len(WORDS)]} and {WORDS[(i * 7) % len(WORDS)]}. " * 3,
            timestamp=start + i * 60,
            id=f"{prefix}{i}",
        )
        for i in range(count)
    ]


async def short_message_stays_pending(vault: Any) -> None:
    result = await vault.append([Message(role="user", content="hello there", timestamp=1.0, id="a")])
    assert result.rows == ()
    assert [m.id for m in result.buffer] == ["a"]
    assert result.buffered_tokens == estimate_tokens("hello there")
    assert [m.id for m in await vault.pending()] == ["a"]


async def enough_text_becomes_chunks_and_messages(vault: Any) -> None:
    messages = conversation(40)
    result = await vault.append(messages)
    chunks = [r for r in result.rows if r.kind == "chunk"]
    stored = [r for r in result.rows if r.kind == "message"]
    assert chunks and all(c.token_count <= 360 for c in chunks)
    pending_ids = {m.id for m in result.buffer}
    assert {s for r in stored for s in r.source_ids} | pending_ids == {m.id for m in messages}
    assert sum(r.token_count for r in stored) + result.buffered_tokens == sum(estimate_tokens(m.content) for m in messages)
    for chunk in chunks:
        covered = [m for m in messages if m.id in chunk.source_ids]
        assert chunk.ts_start == min(m.timestamp for m in covered) and chunk.ts_end == max(m.timestamp for m in covered)


async def same_messages_twice_store_once(vault: Any) -> None:
    messages = conversation(30)
    await vault.append(messages)
    again = await vault.append(messages)
    assert again.rows == () and again.accepted == 0
    stats = await vault.stats()
    assert stats.messages + stats.buffered_messages == 30


async def keyword_search_finds_exact_tokens(vault: Any) -> None:
    special = Message(role="user", content="The invoice number is 20028 for Zanzibar shipping.", timestamp=5.0, id="inv")
    await vault.append([*conversation(30), special, *conversation(20, start=2e6, prefix="n")])
    found = await vault.search(SearchQuery(text="invoice 20028", vector=None, depth=10))
    assert any(c.channel == "keyword" and "20028" in c.row.text for c in found)


async def a_prepared_search_finds_what_a_search_alone_finds(vault: Any) -> None:
    special = Message(role="user", content="Invoice 20028 went to Zanzibar.", timestamp=5.0, id="inv")
    await vault.append([*conversation(30), special, *conversation(20, start=2e6, prefix="n")])
    query = SearchQuery(text="invoice 20028 kilo", vector=None, depth=10)
    alone = await vault.search(query)
    await vault.prepare_search(query.text, query.depth)
    assert await vault.search(query) == alone
    await vault.prepare_search(query.text, query.depth + 1)  # another depth is another search
    await vault.prepare_search("another query", query.depth)
    assert await vault.search(query) == alone


async def a_write_after_preparing_reaches_the_search(vault: Any) -> None:
    await vault.append(conversation(30))
    await vault.prepare_search("invoice 20028", 10)
    await vault.append([Message(role="user", content="Invoice 20028 went to Zanzibar.", timestamp=9e6, id="inv")])
    await vault.flush()
    found = await vault.search(SearchQuery(text="invoice 20028", vector=None, depth=10))
    assert any(c.channel == "keyword" and "20028" in c.row.text for c in found)


def basis(i: int) -> list[float]:
    return [1.0 if j == i else 0.0 for j in range(4)]


async def vectors_attach_and_rank(vault: Any) -> None:
    result = await vault.append(conversation(40))
    rows = list(result.rows)
    target = rows[0].id
    vectors = {r.id: ([1.0, 0.0, 0.0, 0.0] if r.id == target else [0.0, 1.0, 0.0, 0.0]) for r in rows}
    pending = {job.id: [0.0, 0.0, 1.0, 0.0] for job in result.to_embed if job.pending}
    assert pending and set(pending) == {m.id for m in result.buffer}
    assert await vault.attach_embeddings("test-4d", vectors, pending) == len(rows) + len(pending)
    found = await vault.search(SearchQuery(text="zzzz", vector=(0.9, 0.1, 0.0, 0.0), depth=3))
    vector_hits = [c for c in found if c.channel == "vector"]
    assert vector_hits[0].row.id == target and vector_hits[0].rank == 1
    assert (await vault.unembedded(10)) == []


async def a_pending_message_is_handed_out_once_and_its_row_keeps_the_vector(vault: Any) -> None:
    said = [Message("user", f"A short fact number {i} about {WORDS[i]}.", 1.0 + i, f"f{i}") for i in range(3)]
    appended = await vault.append(said)
    assert appended.rows == ()
    assert sorted((job.id, job.pending) for job in appended.to_embed) == [("f0", True), ("f1", True), ("f2", True)]
    assert await vault.attach_embeddings("test-4d", {}, {m.id: basis(i) for i, m in enumerate(said)}) == 3
    assert await vault.unembedded(10) == [] and (await vault.stats()).unembedded == 0
    found = await vault.search(SearchQuery(text="zzzz", vector=(0.0, 1.0, 0.0, 0.0), depth=5))
    best = next(c for c in found if c.channel == "vector")
    assert best.row.source_ids == ("f1",) and best.rank == 1 and best.score > 0.99
    assert {v.id: list(v.embedding) for v in (await vault.changes(0, 0, 0)).buffer.vectors} == {
        m.id: basis(i) for i, m in enumerate(said)
    }
    cut = await vault.append(conversation(40))
    earlier = {m.id for m in said}
    assert earlier <= {r.source_ids[0] for r in cut.rows if r.kind == "message"}
    assert {job.id for job in cut.to_embed if not job.pending} == {
        r.id for r in cut.rows if r.kind == "message" and r.source_ids[0] not in earlier
    }
    messages = {r.source_ids[0]: r for r in await vault.rows(None, 10_000) if r.kind == "message"}
    assert all(messages[m.id].embedding == tuple(basis(i)) for i, m in enumerate(said))
    await vault.attach_embeddings("test-4d", {j.id: basis(3) for j in cut.to_embed if not j.pending},
                                  {j.id: basis(3) for j in cut.to_embed if j.pending})
    assert await vault.unembedded(100) == []
    rows = await vault.rows(None, 10_000)
    for chunk in (r for r in rows if r.kind == "chunk"):
        members = [r.embedding for r in rows if r.parent_id == chunk.id]
        assert chunk.embedding is not None and members
        total = [sum(values) for values in zip(*members, strict=True)]  # the normalised mean, no model call
        norm = sum(x * x for x in total) ** 0.5
        assert all(abs(a - b / norm) < 1e-6 for a, b in zip(chunk.embedding, total, strict=True))


async def a_message_another_write_cut_is_embedded_by_the_write_that_took_it(vault: Any) -> None:
    first = await vault.append([Message("user", "Remember the red bicycle.", 1.0, "p1")])
    assert [job.id for job in first.to_embed] == ["p1"]
    cut = await vault.append(conversation(40, start=10.0))  # cuts p1 before its vector is attached
    row = next(r for r in cut.rows if r.kind == "message" and r.source_ids == ("p1",))
    assert row.id not in {job.id for job in cut.to_embed}  # not embedded twice
    await vault.attach_embeddings("test-4d", {j.id: basis(0) for j in cut.to_embed if not j.pending},
                                  {j.id: basis(0) for j in cut.to_embed if j.pending})
    assert await vault.attach_embeddings("test-4d", {}, {"p1": basis(2)}) == 1  # the first write's vector ...
    rows = await vault.rows(None, 10_000)
    stored = next(r for r in rows if r.id == row.id)
    assert stored.embedding == tuple(basis(2))  # ... lands on the row, and its chunk gets its mean
    assert next(r for r in rows if r.id == row.parent_id).embedding is not None
    assert await vault.unembedded(100) == []


async def a_message_whose_embedding_failed_is_found_by_keyword_and_waits(vault: Any) -> None:
    await vault.append([Message("user", "The spare key is under the blue flowerpot.", 1.0, "k1")])
    found = await vault.search(SearchQuery(text="flowerpot", vector=(1.0, 0.0, 0.0, 0.0), depth=5))
    assert any(c.row.source_ids == ("k1",) and c.channel == "terms" for c in found)
    assert not any(c.channel == "vector" for c in found)
    assert [(job.id, job.pending) for job in await vault.unembedded(10)] == [("k1", True)]
    assert (await vault.stats()).unembedded == 1
    flushed = await vault.flush()
    [row] = [r for r in flushed.rows if r.kind == "message"]
    assert [(job.id, job.pending) for job in await vault.unembedded(10)] == [(row.id, False)]  # for the nightly run


async def resends_repeats_and_forget_keep_pending_vectors_right(vault: Any) -> None:
    locker = Message("user", "My locker code is 4417.", 1.0, "x1")
    assert [job.id for job in (await vault.append([locker])).to_embed] == ["x1"]
    await vault.attach_embeddings("test-4d", {}, {"x1": basis(0)})
    again = await vault.append([locker])
    assert again.accepted == 0 and again.to_embed == ()
    said_again = await vault.append([Message("user", "my locker code is 4417!", 5.0, "x2")])
    assert said_again.accepted == 0 and said_again.to_embed == ()
    parking = await vault.append([Message("user", "I park on level three.", 6.0, "x3")])
    await vault.attach_embeddings("test-4d", {}, {job.id: basis(1) for job in parking.to_embed})
    assert (await vault.forget(["x2"])).forgotten == ("x1", "x2")  # another name of the same text
    found = await vault.search(SearchQuery(text="zzzz", vector=tuple(basis(0)), depth=5))
    assert [c.row.source_ids for c in found if c.channel == "vector" and c.row.kind == "message"] == [("x3",)]
    assert [v.id for v in (await vault.changes(0, 0, 0)).buffer.vectors] == ["x3"]
    back = await vault.append([locker])  # forgotten, then said anew: a new message, embedded anew
    assert back.accepted == 1 and [job.id for job in back.to_embed] == ["x1"]


async def other_dimension_is_refused_until_reset(vault: Any) -> None:
    appended = await vault.append(conversation(40))
    rows, waiting = appended.rows, [m.id for m in appended.buffer]
    await vault.attach_embeddings("test-4d", {rows[0].id: [1.0, 0.0, 0.0, 0.0]})
    for attempt in ({rows[1].id: [1.0, 0.0, 0.0]}, {}):
        try:
            await vault.attach_embeddings("test-3d", attempt, {} if attempt else {waiting[0]: [1.0, 0.0, 0.0]})
        except InvalidInput:
            pass
        else:
            raise AssertionError("a second dimension must be refused, for rows and pending messages alike")
    assert (await vault.changes(0, 0, 0)).buffer.vectors == ()
    await vault.clear(True)
    rows = (await vault.append(conversation(40))).rows
    assert await vault.attach_embeddings("test-3d", {rows[0].id: [1.0, 0.0, 0.0]}) == 1


async def clear_leaves_nothing(vault: Any) -> None:
    appended = await vault.append(conversation(45))
    await vault.attach_embeddings("test-4d", {}, {job.id: basis(0) for job in appended.to_embed if job.pending})
    assert (await vault.changes(0, 0, 0)).buffer.vectors
    await vault.clear(False)
    assert (await vault.changes(0, 0, 0)).buffer.vectors == ()
    stats = await vault.stats()
    assert (stats.messages, stats.chunks, stats.buffered_messages) == (0, 0, 0)
    assert await vault.search(SearchQuery(text="alpha bravo", vector=None, depth=10)) == []


async def delete_older_than_removes_old_rows_only(vault: Any) -> None:
    await vault.append(conversation(30, start=1000.0, prefix="old"))
    await vault.flush()
    await vault.append(conversation(30, start=9_000_000.0, prefix="new"))
    deleted = await vault.delete_older_than(5_000_000.0)
    assert deleted
    remaining = await vault.rows(None, 1000)
    assert remaining and all(r.ts_end >= 5_000_000.0 for r in remaining)


async def flush_turns_the_buffer_into_a_chunk(vault: Any) -> None:
    await vault.append([Message(role="user", content="remember the blue door", timestamp=1.0, id="b")])
    result = await vault.flush()
    assert [r.kind for r in result.rows] == ["chunk", "message"] and result.buffer == ()
    assert result.buffer_version > 0


async def forget_removes_a_message_from_rows_chunks_and_buffer(vault: Any) -> None:
    messages = conversation(40)
    marked = [Message(m.role, f"{m.content} Secret word quokka{i}.", m.timestamp, m.id) for i, m in enumerate(messages)]
    await vault.append(marked)
    pending = {m.id for m in await vault.pending()}
    stored_id = next(m.id for m in marked if m.id not in pending)
    pending_id = next(iter(pending))
    result = await vault.forget([stored_id, pending_id, "no-such-id"])
    assert sorted(result.forgotten) == sorted([stored_id, pending_id])
    assert result.removed and all(r.kind == "chunk" for r in result.state.rows)
    gone = {f"quokka{marked.index(m)}." for m in marked if m.id in {stored_id, pending_id}}
    rows = await vault.rows(None, 10_000)
    texts = [r.text for r in rows] + [m.content for m in await vault.pending()]
    assert not any(word in text for text in texts for word in gone)
    kept = [m for m in marked if m.id not in {stored_id, pending_id}]
    assert all(any(f"quokka{marked.index(m)}." in t for t in texts) for m in kept)
    found = await vault.search(SearchQuery(text=" ".join(sorted(w.rstrip(".") for w in gone)), vector=None, depth=20))
    assert not any(word in c.row.text for c in found for word in gone)
    assert (await vault.forget([stored_id])).forgotten == ()


async def every_change_to_the_pending_buffer_reaches_the_next_search(vault: Any) -> None:
    """A vault keeps what its searches read of its buffer between writes: each kind of write to it
    shows in the very next search, prepared or not."""
    query = SearchQuery(text="lighthouse", vector=tuple(basis(0)), depth=5)

    async def pending_found(prepared: bool = False) -> dict[str, set[str]]:
        if prepared:
            await vault.prepare_search(query.text, query.depth)
        channels: dict[str, set[str]] = {}
        for c in await vault.search(query):
            if is_pending(c.row):
                channels.setdefault(c.row.source_ids[0], set()).add(c.channel)
        return channels

    def said(number: int) -> Message:
        return Message("user", f"The lighthouse log, entry {number}.", 100.0 * number, f"l{number}")

    assert await pending_found() == {}
    await vault.append([said(1)])
    assert await pending_found() == {"l1": {"terms"}}
    await vault.attach_embeddings("test-4d", {}, {"l1": basis(0)})
    assert await pending_found(prepared=True) == {"l1": {"terms", "vector"}}
    await vault.append([said(2), said(3)])
    await vault.attach_embeddings("test-4d", {}, {"l2": basis(1), "l3": basis(0)})
    assert await pending_found() == {"l1": {"terms", "vector"}, "l2": {"terms", "vector"}, "l3": {"terms", "vector"}}
    await vault.forget(["l1"])
    assert set(await pending_found(prepared=True)) == {"l2", "l3"}
    await vault.delete_older_than(250.0)
    assert set(await pending_found()) == {"l3"}
    await vault.flush()
    assert await pending_found() == {}
    await vault.append([said(4)])
    assert set(await pending_found()) == {"l4"}
    await vault.clear(False)
    assert await pending_found(prepared=True) == {}
    await vault.clear(True)
    await vault.append([said(5)])
    await vault.attach_embeddings("test-3d", {}, {"l5": [1.0, 0.0, 0.0]})
    assert await pending_found() == {"l5": {"terms"}}  # a 4-d query meets no 3-d vector
    query = SearchQuery(text="lighthouse", vector=(1.0, 0.0, 0.0), depth=5)
    assert await pending_found() == {"l5": {"terms", "vector"}}


async def messages_are_listed_in_the_order_taken_with_repeats_and_the_buffer_last(vault: Any) -> None:
    said = conversation(40)
    tagged = [Message(m.role, m.content, m.timestamp, m.id, metadata=f'{{"n":{i}}}') for i, m in enumerate(said)]
    await vault.append(tagged)
    # The same text again under another id is one more occurrence of the first message.
    await vault.append([Message(said[3].role, said[3].content, said[3].timestamp + 500, "again-3")])
    pending = await vault.pending()
    await vault.append([Message(pending[0].role, pending[0].content, pending[0].timestamp + 9, "again-p")])
    rows, buffer, again, after, pages = [], [], {}, 0, 0
    while True:
        page = await vault.messages(after, 7)
        pages += 1
        assert page.pending == () or page.complete
        rows += page.rows
        buffer += page.pending
        again.update(page.said_again)
        if page.complete:
            break
        assert page.after > after
        after = page.after
    assert pages > 2 and all(r.kind == "message" and r.embedding is None for r in rows)
    listed = [r.source_ids[0] for r in rows] + [m.id for m in buffer]
    assert listed == [m.id for m in said]
    assert [m.id for m in buffer] == [m.id for m in await vault.pending()]
    assert [r.metadata for r in rows] == [m.metadata for m in tagged[: len(rows)]]
    assert again == {said[3].id: ["again-3"], pending[0].id: ["again-p"]}
    third = rows[3]
    assert (third.ts_start, third.ts_end) == (said[3].timestamp, said[3].timestamp + 500)
    empty = await vault.messages(page.after, 7)
    assert empty.rows == () and empty.complete and empty.after == page.after


async def every_mutation_moves_the_generation_and_reads_do_not(vault: Any) -> None:
    seen = [await vault.generation()]

    async def moved() -> bool:
        seen.append(await vault.generation())
        return seen[-1] > seen[-2]

    await vault.append(conversation(3))
    assert await moved()
    await vault.search(SearchQuery(text="alpha", vector=None, depth=5))
    await vault.pending()
    await vault.recent_messages(10, 0)
    await vault.messages(0, 10)
    await vault.stats()
    assert not await moved()
    await vault.forget(["m1"])
    assert await moved()
    await vault.flush()
    assert await moved()
    await vault.clear(False)
    assert await moved()


async def every_operation_of_the_vault_table_answers(vault: Any) -> None:
    """Each operation once, through this client: one the client or the Durable Object does not
    reach, or whose answer does not come back as its model, fails here."""
    said = [Message("user", "The boat is moored at pier nine.", 1.0, "w1"),
            Message("assistant", "Pier nine, noted.", 100.0, "w2")]
    calls: dict[str, Callable[[], Awaitable[Any]]] = {
        "append": lambda: vault.append(said, EmbeddingModel("test-4d", 4)),
        "attach_embeddings": lambda: vault.attach_embeddings("test-4d", {}, {"w1": basis(0), "w2": basis(1)}),
        "pending": lambda: vault.pending(),
        "flush": lambda: vault.flush(),
        "unembedded": lambda: vault.unembedded(10),
        "prepare_search": lambda: vault.prepare_search("zzzz", 5),
        "search": lambda: vault.search(SearchQuery(text="zzzz", vector=tuple(basis(0)), depth=5)),
        "rows": lambda: vault.rows(None, 10),
        "messages": lambda: vault.messages(0, 10),
        "recent_messages": lambda: vault.recent_messages(10, 0),
        "changes": lambda: vault.changes(0, 10, 10),
        "trim": lambda: vault.trim(2),
        "generation": lambda: vault.generation(),
        "stats": lambda: vault.stats(),
        "forget": lambda: vault.forget(["w1"]),
        "delete_older_than": lambda: vault.delete_older_than(200.0),
        "clear": lambda: vault.clear(False),
    }
    assert sorted(calls) == sorted(VAULT_OPERATIONS), "a call for every operation of the table"
    answer = {}
    for name, call in calls.items():
        answer[name] = await call()
    assert [m.id for m in answer["append"].buffer] == ["w1", "w2"] and answer["attach_embeddings"] == 2
    assert [m.id for m in answer["pending"]] == ["w1", "w2"]
    assert [r.kind for r in answer["flush"].rows] == ["chunk", "message", "message"] and answer["unembedded"] == []
    assert answer["prepare_search"] is None
    assert next(c for c in answer["search"] if c.channel == "vector").row.source_ids == ("w1",)
    assert {r.embedding for r in answer["rows"] if r.kind == "message"} == {tuple(basis(0)), tuple(basis(1))}
    assert [r.source_ids for r in answer["messages"].rows] == [("w1",), ("w2",)] and answer["messages"].complete
    assert [r.source_ids for r in answer["recent_messages"]] == [("w2",), ("w1",)]
    assert answer["changes"].head >= 2 and answer["trim"] is None
    assert answer["generation"] == answer["changes"].head and (await vault.changes(0, 0, 0)).floor == 2
    assert (answer["stats"].messages, answer["stats"].chunks, answer["stats"].dimension) == (2, 1, 4)
    assert answer["forget"].forgotten == ("w1",) and answer["forget"].state.rows
    w2_row = next(r.id for r in answer["rows"] if r.source_ids == ("w2",))
    assert w2_row in answer["delete_older_than"] and await vault.rows(None, 10) == []
    assert answer["clear"] is None and (await vault.stats()).dimension == 4


CHECKS: list[Callable[[Any], Awaitable[None]]] = [
    a_prepared_search_finds_what_a_search_alone_finds,
    a_write_after_preparing_reaches_the_search,
    short_message_stays_pending,
    enough_text_becomes_chunks_and_messages,
    same_messages_twice_store_once,
    keyword_search_finds_exact_tokens,
    vectors_attach_and_rank,
    a_pending_message_is_handed_out_once_and_its_row_keeps_the_vector,
    a_message_another_write_cut_is_embedded_by_the_write_that_took_it,
    a_message_whose_embedding_failed_is_found_by_keyword_and_waits,
    resends_repeats_and_forget_keep_pending_vectors_right,
    other_dimension_is_refused_until_reset,
    clear_leaves_nothing,
    delete_older_than_removes_old_rows_only,
    flush_turns_the_buffer_into_a_chunk,
    forget_removes_a_message_from_rows_chunks_and_buffer,
    every_change_to_the_pending_buffer_reaches_the_next_search,
    messages_are_listed_in_the_order_taken_with_repeats_and_the_buffer_last,
    every_mutation_moves_the_generation_and_reads_do_not,
    every_operation_of_the_vault_table_answers,
]
