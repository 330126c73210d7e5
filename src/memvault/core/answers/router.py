"""The memory router's recall for a key granted brain scopes: the joint recall rendered as one
context block, the facts labelled as facts above the conversation memory, both within the call's
context limit. A key without a grant (or a call with ``X-Memory-Brain: off``) recalls conversation
memory alone, with no brain read."""

from __future__ import annotations

from collections.abc import Sequence

from memvault.core.answers.grants import credential_of
from memvault.core.answers.joint import Query, search_answers
from memvault.core.answers.results import SearchResult
from memvault.core.credentials.keys import MemoryKey
from memvault.core.deps import Deps
from memvault.core.memory.chat_calls import Conversation, MemoryOptions, PreparedMemory, Recall, render_context
from memvault.core.memory.chat_calls import prepare as prepare_memory
from memvault.core.models import SearchResult as MemoryResult
from memvault.core.tokens import clip_to_tokens, estimate_tokens

FACTS_HEADING = "Facts from the user's own notes (current; these outrank older conversation):"


async def prepare(deps: Deps, key: MemoryKey, conversation: Conversation, options: MemoryOptions) -> PreparedMemory:
    """Recall for the caller's last message (``chat_calls.prepare``: fails open, reports ``degraded``)."""
    credential = credential_of(key, deps.settings) if options.brain else None
    if credential is None:
        return await prepare_memory(deps, key.id, conversation, options)

    async def joint(query: str, exclude: Sequence[str]) -> Recall:
        found = await search_answers(deps, key.id, credential, Query(
            query, budget_tokens=options.context_limit, session_id=options.session_id, exclude=exclude))
        return render_answers(found, options.context_limit)

    return await prepare_memory(deps, key.id, conversation, options, joint)


def render_answers(found: SearchResult, limit_tokens: int) -> Recall:
    """The block and what it holds: the facts under their own heading, a line each, then the
    conversation memory as ``render_context`` shows it, in what the facts left."""
    lines: list[str] = []
    used = estimate_tokens(FACTS_HEADING) if found.facts else 0
    for fact in found.facts:
        line = " ".join(f"- {fact.text}".split())
        cost = estimate_tokens(line)
        if used + cost > limit_tokens:
            line = clip_to_tokens(line, limit_tokens - used) if limit_tokens - used > 0 else ""
            if line:
                lines.append(line)
            break
        lines.append(line)
        used += cost
    facts_block = "\n".join([FACTS_HEADING, *lines]) if lines else ""
    memory_block, count = render_context(found.items, limit_tokens - used) if limit_tokens > used else ("", 0)
    context = "\n\n".join(block for block in (facts_block, memory_block) if block)
    searched = MemoryResult(found.items, found.tokens, found.metrics)
    return Recall(context, len(lines) + count, searched, count, tuple(found.facts[:len(lines)]))
