"""The brain's LLM judge: one prompt about an incoming fact and its closest current facts, one
strict JSON reply. A reply is trusted only as far as it checks out: an unknown decision, an id
outside the candidates, malformed JSON, an error or a timeout all fall back to keep_both, logged
(never with the facts' content)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.ports import ChatModel
from memvault.core.redaction.recall import recalled

log = logging.getLogger("memvault.brain")

DECISIONS = ("contradiction", "replace", "merge", "keep_both")
MAX_MERGED_CHARS = 4000

_FULL = (
    "You maintain a knowledge base of facts. Compare the NEW fact with the EXISTING facts. Reply with "
    "one JSON object and nothing else: {\"decision\": D, \"ids\": [...], \"text\": T}. D is one of: "
    "\"replace\" (the new fact updates or corrects the listed existing facts, which become outdated), "
    "\"merge\" (the new fact and the listed facts say parts of one thing: T is a single fact saying all "
    "of it), \"contradiction\" (the new fact conflicts with the listed facts and it is unclear which is "
    "right), \"keep_both\" (they are different facts; ids is empty). Use only ids given below; T only "
    "for merge. Keep every number, code and name exact."
)
_CONTRADICTION = (
    "You maintain a knowledge base of facts. Does the NEW fact contradict any EXISTING fact? Reply with "
    "one JSON object and nothing else: {\"contradiction\": true or false, \"ids\": [ids of the "
    "contradicted facts]}. Use only ids given below."
)
_IMPORTANCE = (
    "Rate how important each fact is to remember for its owner, from 1 (trivia) to 5 (essential). Reply "
    "with one JSON object and nothing else, mapping each id to its rating: {\"<id>\": 3, ...}."
)


@dataclass(frozen=True)
class Judgement:
    decision: str
    ids: tuple[str, ...] = ()
    text: str | None = None
    fallback: str | None = None  # why the reply was not used, when it was not


KEEP_BOTH = Judgement("keep_both")


def _listing(facts: Mapping[str, str]) -> str:
    """Facts as the model reads them: through the secret gate at recall, since a fact stored before
    a rule existed must not reach a model either."""
    return "\n".join(f"- id {fid}: {recalled(text).text}" for fid, text in facts.items())


def _prompt(new: str, candidates: Mapping[str, str]) -> str:
    return f"NEW fact:\n{recalled(new).text}\n\nEXISTING facts:\n{_listing(candidates)}"


def _json_object(reply: str) -> dict[str, Any]:
    text = reply.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("the reply is not a JSON object")
    return value


def _ids(value: Any, allowed: Sequence[str]) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError("ids must be a non-empty list of ids")
    unknown = [v for v in value if v not in allowed]
    if unknown:
        raise ValueError(f"{len(unknown)} ids are not among the candidates")
    return tuple(dict.fromkeys(value))


def read_full(reply: Mapping[str, Any], allowed: Sequence[str]) -> Judgement:
    decision = reply.get("decision")
    if decision not in DECISIONS:
        raise ValueError("unknown decision")
    if decision == "keep_both":
        return KEEP_BOTH
    ids = _ids(reply.get("ids"), allowed)
    if decision != "merge":
        return Judgement(str(decision), ids)
    text = reply.get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_MERGED_CHARS:
        raise ValueError("a merge needs its text")
    return Judgement("merge", ids, text.strip())


def read_contradiction(reply: Mapping[str, Any], allowed: Sequence[str]) -> Judgement:
    flag = reply.get("contradiction")
    if not isinstance(flag, bool):
        raise ValueError("contradiction must be true or false")
    return Judgement("contradiction", _ids(reply.get("ids"), allowed)) if flag else KEEP_BOTH


async def judge(llm: ChatModel, new: str, candidates: Mapping[str, str], full: bool, timeout: float) -> Judgement:
    """``full``: contradiction, replace, merge or keep_both (the flag band); otherwise whether the
    new fact contradicts a candidate (the candidate band)."""
    allowed = list(candidates)
    try:
        reply = await asyncio.wait_for(llm.complete(_FULL if full else _CONTRADICTION, _prompt(new, candidates)), timeout)
        parsed = _json_object(reply)
        return read_full(parsed, allowed) if full else read_contradiction(parsed, allowed)
    except Exception as exc:  # any failure of the judge keeps both facts, as if it had said so
        reason = f"{type(exc).__name__}: {exc}" if isinstance(exc, ValueError) else type(exc).__name__
        log.warning("brain judge reply not used (%s); keeping both", reason)
        return Judgement("keep_both", fallback=reason)


async def rate_importance(llm: ChatModel, facts: Mapping[str, str], timeout: float) -> dict[str, int]:
    """Ratings of ``facts`` (id -> text); a fact the reply does not rate validly is left out."""
    if not facts:
        return {}
    try:
        reply = _json_object(await asyncio.wait_for(llm.complete(_IMPORTANCE, _listing(facts)), timeout))
    except Exception as exc:  # unrated facts keep the default importance
        log.warning("brain importance reply not used: %s", type(exc).__name__)
        return {}
    return {fid: value for fid, value in reply.items()
            if fid in facts and isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 5}
