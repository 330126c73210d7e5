"""The journal of routed calls: a call whose answer reached the client keeps its turn, its usage
and its receipt's usage whatever happens to the process afterwards. Each test leaves a call where
a crash would (opened, or answered, and never settled by its own process), then settles what is
left as a restarted server and the nightly pass do, and reads the result through the public
operations: the vault's messages, `/v1/usage`'s rows and the receipt."""

from __future__ import annotations

import asyncio
import gc

import pytest

from memvault.core import memory
from memvault.core.credentials.keys import create_key
from memvault.core.deps import Deps
from memvault.core.errors import StorageUnavailable, WriteRaced
from memvault.core.memory import journal, routed_calls
from memvault.core.memory.chat_calls import Conversation, MemoryOptions, PreparedMemory, Reply, Turn
from memvault.core.memory.routed_calls import RoutedCall, settle_leftovers
from memvault.core.memory.write import store_conversation
from memvault.core.models import SearchItem, SearchResult
from memvault.core.operations.maintenance import run_maintenance
from memvault.core.receipts.store import ReceiptStore
from memvault.core.usage.ledger import usage_rows
from memvault.core.usage.meter import CallUsage, Meter
from memvault.runtime.local import start_local

QUESTION = "Which platform does the night train to Inverness leave from?"
ANSWER = "It leaves from platform 2 at 21:15."
NOW = 1_790_000_000.0


def recalled() -> PreparedMemory:
    item = SearchItem("I take the night train north.", 0.8, "working", NOW - 50, NOW - 50, ["m1"], "user", 7, "vault")
    return PreparedMemory("Memory …", 1, 9, "ok", 4.0, SearchResult([item], 7), QUESTION, injected=1)


async def new_key(deps: Deps) -> str:
    key, _ = await create_key(deps.db, "journal", deps.clock())
    return key.id


async def routed(deps: Deps, key_id: str, session_id: str | None = None, text: str = QUESTION) -> RoutedCall:
    """A call opened as the router opens one, with its receipt."""
    call = RoutedCall(deps, key_id, Conversation((Turn("user", text),), model="gpt-test"),
                      MemoryOptions("auto", True, True, 400, session_id), recalled(), True, Meter())
    assert await call.open("openai", recalled()) == call.call.id
    return call


async def texts(deps: Deps, key_id: str, session_id: str | None = None) -> list[str]:
    return [m["content"] for m in await memory.read_memory(deps, key_id, session_id, 50, 0)]


async def usage(deps: Deps, key_id: str) -> dict[str, int]:
    rows = await usage_rows(deps.db, "2000-01-01", "2100-01-01", ["model"], key_id)
    return {name: sum(int(row[name]) for row in rows) for name in CallUsage().counts()}


async def leftovers(deps: Deps) -> int:
    now = deps.clock() + 1
    return len(await settle_leftovers(deps, now, now, 100))


@pytest.fixture
def deps(make_deps: object) -> Deps:
    return make_deps(clock=lambda: NOW)  # type: ignore[operator]


async def test_an_answered_call_left_by_a_crash_is_settled_once_with_its_turn_usage_and_receipt(deps: Deps) -> None:
    key_id = await new_key(deps)
    call = await routed(deps, key_id)
    await call.answer(Reply(ANSWER, 21, 9), 12.5)
    assert await texts(deps, key_id) == []  # the process died here: nothing stored yet

    assert await leftovers(deps) == 1
    assert await leftovers(deps) == 0
    await call.settle(Reply(ANSWER, 21, 9), True, 12.5)  # the live settling, arriving late, pays nothing twice

    assert sorted(await texts(deps, key_id)) == sorted([QUESTION, ANSWER])
    counted = await usage(deps, key_id)
    assert (counted["calls"], counted["input_tokens"], counted["output_tokens"]) == (1, 21, 9)
    assert (counted["memory_tokens"], counted["searches"], counted["messages_stored"]) == (9, 1, 2)
    receipt = await ReceiptStore(deps.db).get(key_id, call.call.id)
    assert receipt is not None and receipt.usage is not None
    assert (receipt.usage.input_tokens, receipt.usage.output_tokens, receipt.latency.forwarding_ms) == (21, 9, 12.5)
    assert await journal.read(deps.db, call.call.id) is None


async def test_the_live_settling_leaves_nothing_for_a_restart(deps: Deps) -> None:
    key_id = await new_key(deps)
    call = await routed(deps, key_id)
    await call.answer(Reply(ANSWER, 3, 4), 1.0)
    await call.settle(Reply(ANSWER, 3, 4), True, 1.0)
    assert await leftovers(deps) == 0
    assert (await usage(deps, key_id))["calls"] == 1
    assert sorted(await texts(deps, key_id)) == sorted([QUESTION, ANSWER])


async def test_a_call_that_died_before_its_answer_counts_the_call_and_stores_nothing(deps: Deps) -> None:
    key_id = await new_key(deps)
    call = await routed(deps, key_id)
    young = await settle_leftovers(deps, NOW + 1, call.call.created_at - 1, 100)
    assert young == []  # still within the time a stream may take: not touched
    assert await leftovers(deps) == 1
    counted = await usage(deps, key_id)
    assert (counted["calls"], counted["memory_tokens"], counted["input_tokens"], counted["messages_stored"]) == (1, 9, 0, 0)
    assert await texts(deps, key_id) == []
    receipt = await ReceiptStore(deps.db).get(key_id, call.call.id)
    assert receipt is not None and receipt.usage is None


async def test_forgetting_a_turn_still_in_the_journal_keeps_it_forgotten(deps: Deps) -> None:
    key_id = await new_key(deps)
    call = await routed(deps, key_id)
    await call.answer(Reply(ANSWER, 5, 5), 1.0)
    asked = [f"rt-{call.call.id}-u", "rt-0000-u", "elsewhere"]
    result = await memory.forget(deps, key_id, asked)
    assert result == {"forgotten": [f"rt-{call.call.id}-u"], "not_found": ["rt-0000-u", "elsewhere"]}
    await call.settle(Reply(ANSWER, 5, 5), True, 1.0)
    assert await texts(deps, key_id) == [ANSWER]
    assert (await usage(deps, key_id))["calls"] == 1


async def test_another_sessions_forget_does_not_reach_the_turn(deps: Deps) -> None:
    key_id = await new_key(deps)
    call = await routed(deps, key_id, session_id="trip")
    await call.answer(Reply(ANSWER), 1.0)
    assert (await memory.forget(deps, key_id, [f"rt-{call.call.id}-a"], "other"))["forgotten"] == []
    assert await leftovers(deps) == 1
    assert sorted(await texts(deps, key_id, "trip")) == sorted([QUESTION, ANSWER])


async def test_clearing_reaches_the_journal_and_the_usage_stays_owed(deps: Deps) -> None:
    key_id = await new_key(deps)
    kept = await routed(deps, key_id, session_id="kept", text="Keep this question about ferries.")
    cleared = await routed(deps, key_id, session_id="gone")
    for call in (kept, cleared):
        await call.answer(Reply(ANSWER, 2, 2), 1.0)
    await memory.clear_memory(deps, key_id, "gone")
    assert await leftovers(deps) == 2
    assert await texts(deps, key_id, "gone") == []
    assert sorted(await texts(deps, key_id, "kept")) == sorted(["Keep this question about ferries.", ANSWER])
    assert (await usage(deps, key_id))["calls"] == 2


async def forget_or_clear(deps: Deps, key_id: str, call: RoutedCall, how: str) -> None:
    if how == "forget":
        await memory.forget(deps, key_id, [f"rt-{call.call.id}-u", f"rt-{call.call.id}-a"])
    else:
        await memory.clear_memory(deps, key_id, "trip")


async def answered_in_trip(deps: Deps) -> tuple[str, RoutedCall]:
    """A new key's routed call in session "trip", answered (its turn in the journal's row)."""
    key_id = await new_key(deps)
    call = await routed(deps, key_id, session_id="trip")
    await call.answer(Reply(ANSWER, 5, 5), 1.0)
    return key_id, call


@pytest.mark.parametrize("how", ["forget", "clear"])
async def test_a_turn_forgotten_while_its_settling_stores_it_stays_forgotten(
        deps: Deps, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    key_id, call = await answered_in_trip(deps)

    async def forgotten_first(*args: object, **kwargs: object) -> object:
        # The settling read its row; the forget (or clear) runs before the turn reaches the vault.
        await forget_or_clear(deps, key_id, call, how)
        return await store_conversation(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(routed_calls, "store_conversation", forgotten_first)
    await call.settle(Reply(ANSWER, 5, 5), True, 1.0)
    assert await texts(deps, key_id, "trip") == []
    assert (await usage(deps, key_id))["calls"] == 1


@pytest.mark.parametrize("how", ["forget", "clear"])
async def test_a_turn_settled_between_a_forgets_steps_stays_forgotten(
        deps: Deps, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    key_id, call = await answered_in_trip(deps)
    step = "forget_turns" if how == "forget" else "clear_turns"
    reaching = getattr(journal, step)
    settled: list[bool] = []

    async def settled_first(*args: object) -> object:
        # The whole settling runs as the forget (or clear) reaches the journal.
        if not settled:
            settled.append(True)
            await call.settle(Reply(ANSWER, 5, 5), True, 1.0)
        return await reaching(*args)

    monkeypatch.setattr(journal, step, settled_first)
    await forget_or_clear(deps, key_id, call, how)
    assert settled and await texts(deps, key_id, "trip") == []
    assert await leftovers(deps) == 0


async def test_a_secret_never_reaches_the_journal_in_clear(deps: Deps) -> None:
    key_id = await new_key(deps)
    secret = "sk-proj-" + "Zq8rT2vLx9Wm4Kp7Hs3Nd6Fb" * 2
    call = await routed(deps, key_id, text=f"My OpenAI key is {secret}, keep it for me.")
    await call.answer(Reply(f"Stored: {secret}"), 1.0)
    row = await journal.read(deps.db, call.call.id)
    assert row is not None and row.turn and all(secret not in m.content for m in row.turn)
    assert await leftovers(deps) == 1
    assert all(secret not in text for text in await texts(deps, key_id))


async def test_an_answer_not_delivered_pays_its_call_and_stores_nothing(deps: Deps) -> None:
    key_id = await new_key(deps)
    call = await routed(deps, key_id)
    await call.settle(None, False, 3.0)
    assert await leftovers(deps) == 0
    assert (await usage(deps, key_id))["calls"] == 1 and await texts(deps, key_id) == []


async def test_the_nightly_pass_settles_what_a_crash_left(deps: Deps) -> None:
    key_id = await new_key(deps)
    calls = [await routed(deps, key_id, text=f"Question {n} about the harbour lamp.") for n in range(45)]
    for call in calls:
        await call.answer(Reply(f"Answer {calls.index(call)}."), 1.0)
    report = await run_maintenance(deps, now=NOW + 3600, new_pass=True)
    assert report.calls_settled == 45 and not report.errors
    counted = await usage(deps, key_id)
    assert (counted["calls"], counted["messages_stored"]) == (45, 90)
    stored = [m["content"] for m in await memory.read_memory(deps, key_id, None, 100, 0)]
    assert sorted(stored) == sorted([f"Answer {n}." for n in range(45)] + [f"Question {n} about the harbour lamp." for n in range(45)])


async def test_a_turn_too_large_for_the_journal_is_stored_and_counted_once(deps: Deps) -> None:
    key_id = await new_key(deps)
    call = await routed(deps, key_id)
    long_answer = "The ferry timetable, line by line. " * 40_000  # over the journal's 1 MB
    await call.answer(Reply(long_answer, 30, 700), 2.0)
    assert (await journal.read(deps.db, call.call.id)).answered is False  # type: ignore[union-attr]
    await call.settle(Reply(long_answer, 30, 700), True, 2.0)
    counted = await usage(deps, key_id)
    assert (counted["calls"], counted["input_tokens"], counted["output_tokens"]) == (1, 30, 700)
    assert await leftovers(deps) == 0


async def test_a_process_starting_beside_a_server_leaves_its_unanswered_calls_alone(deps: Deps) -> None:
    # `memvault mcp` may start on the folder a server is using: a call still streaming there is
    # opened and not yet answered, and settling it now would count it twice.
    key_id = await new_key(deps)
    streaming = await routed(deps, key_id)
    answered = await routed(deps, key_id, text="Where did I park at the station?")
    await answered.answer(Reply("Level 2, bay 14."), 1.0)
    deps.clock = lambda: NOW + 5  # the other process starts a moment later
    await start_local(deps)
    gc.unfreeze()  # what a starting process sets apart would stay apart for the rest of this one
    assert await journal.read(deps.db, answered.call.id) is None
    assert (await journal.read(deps.db, streaming.call.id)) is not None
    await streaming.answer(Reply(ANSWER, 1, 1), 1.0)
    await streaming.settle(Reply(ANSWER, 1, 1), True, 1.0)
    assert (await usage(deps, key_id))["calls"] == 2


class StoreGate:
    """Holds the routed turn's storing at its start until released: the turn is on its way to the
    vault and not in it yet."""

    def __init__(self) -> None:
        self.reached, self.released = asyncio.Event(), asyncio.Event()

    async def store(self, *args: object, **kwargs: object) -> object:
        self.reached.set()
        await self.released.wait()
        return await store_conversation(*args, **kwargs)  # type: ignore[arg-type]


def turn_held_in_memory(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the journal's row miss the turn the way ``how`` says; its process stores it from memory."""
    if how == "too large":
        monkeypatch.setattr(routed_calls, "MAX_JOURNALED_BYTES", 10)
    else:
        monkeypatch.setattr(journal, "answering", lambda call: ("INSERT INTO no_such_table (id) VALUES (?)", (call.id,)))


async def nothing_of_the_turn(deps: Deps, key_id: str, call: RoutedCall) -> None:
    assert await texts(deps, key_id, "trip") == []
    found = await memory.search_memory(deps, key_id, QUESTION, session_id="trip")
    assert [item.text for item in found.items] == []
    again = await memory.forget(deps, key_id, [f"rt-{call.call.id}-u", f"rt-{call.call.id}-a"], "trip")
    assert again["forgotten"] == []
    assert (await usage(deps, key_id))["calls"] == 1 and await leftovers(deps) == 0


async def answered_from_memory(deps: Deps, miss: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, RoutedCall]:
    key_id = await new_key(deps)
    call = await routed(deps, key_id, session_id="trip")
    turn_held_in_memory(miss, monkeypatch)
    await call.answer(Reply(ANSWER, 5, 5), 1.0)
    row = await journal.read(deps.db, call.call.id)
    assert row is not None and not row.answered and row.turn == [] and call.written == "open"
    return key_id, call


@pytest.mark.parametrize("how", ["forget", "clear"])
@pytest.mark.parametrize("miss", ["too large", "answer row not written"])
async def test_a_turn_stored_from_memory_forgotten_while_it_is_stored_stays_forgotten(
        deps: Deps, miss: str, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    key_id, call = await answered_from_memory(deps, miss, monkeypatch)
    gate = StoreGate()
    monkeypatch.setattr(routed_calls, "store_conversation", gate.store)
    settling = asyncio.ensure_future(call.settle(Reply(ANSWER, 5, 5), True, 1.0))
    await asyncio.wait_for(gate.reached.wait(), 30)
    await forget_or_clear(deps, key_id, call, how)
    gate.released.set()
    await asyncio.wait_for(settling, 60)
    await nothing_of_the_turn(deps, key_id, call)


@pytest.mark.parametrize("how", ["forget", "clear"])
@pytest.mark.parametrize("miss", ["too large", "answer row not written"])
async def test_a_turn_stored_from_memory_forgotten_before_it_is_stored_is_never_stored(
        deps: Deps, miss: str, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    key_id, call = await answered_from_memory(deps, miss, monkeypatch)
    if how == "forget":
        ids = [f"rt-{call.call.id}-u", f"rt-{call.call.id}-a"]
        assert await memory.forget(deps, key_id, ids) == {"forgotten": ids, "not_found": []}
    else:
        await forget_or_clear(deps, key_id, call, how)
    stored: list[object] = []

    async def watched(*args: object, **kwargs: object) -> object:
        stored.append(args)
        return await store_conversation(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(routed_calls, "store_conversation", watched)
    await call.settle(Reply(ANSWER, 5, 5), True, 1.0)
    assert stored == []  # the forgotten text never reached the vault
    await nothing_of_the_turn(deps, key_id, call)


async def test_forgetting_one_message_of_a_turn_stored_from_memory_keeps_the_other(
        deps: Deps, monkeypatch: pytest.MonkeyPatch) -> None:
    key_id, call = await answered_from_memory(deps, "too large", monkeypatch)
    assert (await memory.forget(deps, key_id, [f"rt-{call.call.id}-a"]))["forgotten"] == [f"rt-{call.call.id}-a"]
    await call.settle(Reply(ANSWER, 5, 5), True, 1.0)
    assert await texts(deps, key_id, "trip") == [QUESTION]


@pytest.mark.parametrize("how", ["forget", "clear"])
async def test_a_turn_forgotten_while_its_call_is_answered_never_enters_the_journal(deps: Deps, how: str) -> None:
    # The receipt header reaches the client with the answer's first bytes, before its row holds the turn.
    key_id = await new_key(deps)
    call = await routed(deps, key_id, session_id="trip")
    await forget_or_clear(deps, key_id, call, how)
    await call.answer(Reply(ANSWER, 5, 5), 1.0)
    row = await journal.read(deps.db, call.call.id)
    assert row is not None and row.answered and row.turn == [] and call.written == "answered"
    await call.settle(Reply(ANSWER, 5, 5), True, 1.0)
    await nothing_of_the_turn(deps, key_id, call)


async def test_a_forget_the_settling_could_not_repeat_is_repeated_by_the_next_settling(
        deps: Deps, monkeypatch: pytest.MonkeyPatch) -> None:
    key_id, call = await answered_from_memory(deps, "too large", monkeypatch)
    gate, vault_away = StoreGate(), [True]
    monkeypatch.setattr(routed_calls, "store_conversation", gate.store)
    forget_again = routed_calls.forget

    async def failing_while_away(*args: object, **kwargs: object) -> object:
        if vault_away[0]:
            raise StorageUnavailable("the vault did not answer")
        return await forget_again(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(routed_calls, "forget", failing_while_away)
    settling = asyncio.ensure_future(call.settle(Reply(ANSWER, 5, 5), True, 1.0))
    await asyncio.wait_for(gate.reached.wait(), 30)
    await forget_or_clear(deps, key_id, call, "forget")
    gate.released.set()
    await asyncio.wait_for(settling, 60)
    assert sorted(await texts(deps, key_id, "trip")) == sorted([QUESTION, ANSWER])  # stored, not forgotten again
    assert await journal.read(deps.db, call.call.id) is not None  # so its row stays

    vault_away[0] = False
    assert await leftovers(deps) == 1
    await nothing_of_the_turn(deps, key_id, call)


async def test_a_store_another_write_raced_is_planned_again_and_else_its_row_stays(
        deps: Deps, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process writing the same new vault can race the turn's store: it is tried again at
    once, and a row whose store raced twice is kept for a later settling, never dropped."""
    key_id = await new_key(deps)
    races = [1]

    async def raced(*args: object, **kwargs: object) -> object:
        if races[0] > 0:
            races[0] -= 1
            raise WriteRaced("another write changed these rows first")
        return await store_conversation(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(routed_calls, "store_conversation", raced)
    call = await routed(deps, key_id)
    await call.answer(Reply(ANSWER, 5, 5), 1.0)
    await call.settle(Reply(ANSWER, 5, 5), True, 1.0)
    assert sorted(await texts(deps, key_id)) == sorted([QUESTION, ANSWER])

    races[0] = 2
    again = await routed(deps, key_id, text="And the second question?")
    await again.answer(Reply("The second answer.", 5, 5), 1.0)
    await again.settle(Reply("The second answer.", 5, 5), True, 1.0)
    assert await journal.read(deps.db, again.call.id) is not None  # raced twice: the row stays
    assert await leftovers(deps) == 1
    assert "The second answer." in await texts(deps, key_id)
