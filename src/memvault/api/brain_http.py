"""How an HTTP request becomes a brain operation's plain input and its result an answer, and nothing
more: the operation's own parser (core) checks every field. A path is either a `/v1/brain` path,
named as the operation names its fields, or an older path kept for its callers, whose dialect says
how it names them (``q`` for ``query``, ``dryRun`` for ``dry_run``, ...)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from memvault.core.brain import Operation, to_plain
from memvault.core.errors import InvalidField


@dataclass(frozen=True)
class Dialect:
    """How a kept path names an operation's fields. ``renames``: its name -> the operation's;
    ``answers``: a result key -> its name; ``choices``: values a query parameter carried before it
    was a field (``bands=on|off``). Query parameters it does not know are ignored, as they were."""

    renames: Mapping[str, str] = field(default_factory=dict)
    answers: Mapping[str, str] = field(default_factory=dict)
    choices: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def theirs(self, name: str) -> str:
        return next((old for old, new in self.renames.items() if new == name), name)

    def refusal(self, error: InvalidField) -> InvalidField:
        """The parser's refusal naming the field as this path names it."""
        for ours, theirs in ((new, old) for old, new in self.renames.items()):
            if re.match(rf"{re.escape(ours)}\b", error.message):
                return InvalidField(theirs + error.message[len(ours):])
        return error


@dataclass(frozen=True)
class BrainRoute:
    method: str
    path: str
    op: Operation[Any, Any]
    dialect: Dialect | None = None  # None: a /v1 path
    # The operation a kept path runs instead when its input names this field (GET /memory/skill?slug=).
    when_given: tuple[str, Operation[Any, Any]] | None = None
    status: int = 200  # 201 where the operation stores something new for the caller to decide on

    @property
    def deprecated(self) -> bool:
        return self.dialect is not None

    @property
    def in_query(self) -> bool:
        return self.method == "GET"


def field_names(op: Operation[Any, Any]) -> list[str]:
    return [f.name for f in dataclasses.fields(op.input)]


async def _body(request: Request) -> object:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise InvalidField("the request body is not valid UTF-8") from None
    except json.JSONDecodeError as exc:
        raise InvalidField(f"the request body is not valid JSON (near character {exc.pos})") from None
    except RecursionError:
        raise InvalidField("the request body nests deeper than JSON is read here") from None
    except ValueError:  # a number of more digits than Python converts
        raise InvalidField("the request body is not valid JSON (a number too long to read)") from None


def _renamed(data: Mapping[str, Any], dialect: Dialect) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in data.items():
        ours = dialect.renames.get(name, name)
        if ours in out:
            raise InvalidField(f"give {dialect.theirs(ours)} or {ours}, not both")
        out[ours] = value
    return out


async def brain_input(request: Request, route: BrainRoute) -> tuple[Operation[Any, Any], object]:
    """The operation this request runs and its plain input."""
    query, path = dict(request.query_params), dict(request.path_params)
    body = {} if route.in_query else await _body(request)
    dialect = route.dialect
    if dialect is None:
        if query and not route.in_query:
            raise InvalidField(f"{', '.join(sorted(query))}: this operation takes its fields in the JSON body")
        return route.op, _merged(query if route.in_query else body, path)
    op = route.op
    if route.when_given is not None and route.when_given[0] in query:
        op = route.when_given[1]
    known = set(field_names(op))
    taken = {name: dialect.choices.get(name, {}).get(value, value) for name, value in _renamed(query, dialect).items()
             if name in known and (route.in_query or name in dialect.choices)}
    if route.in_query:
        return op, {**taken, **_renamed(path, dialect)}
    return op, _merged(_renamed(body, dialect) if isinstance(body, Mapping) else body, {**taken, **_renamed(path, dialect)})


def _merged(body: object, extra: Mapping[str, Any]) -> object:
    """The body (or query) with the fields the path (and a kept path's query) carry; a body that is
    not an object is left for the parser to refuse."""
    if not extra:
        return body
    if not isinstance(body, Mapping):
        return body
    clash = sorted(set(body) & set(extra))
    if clash:
        raise InvalidField(f"{', '.join(clash)}: given twice (in the path or query, and again)")
    return {**body, **extra}


def brain_answer(route: BrainRoute, result: object) -> Response:
    plain = to_plain(result)
    if route.op.name == "export_facts":
        lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in plain["facts"])
        return Response(lines, media_type="application/x-ndjson")
    if route.dialect is not None and isinstance(plain, dict):
        plain = {route.dialect.answers.get(key, key): value for key, value in plain.items()}
    return JSONResponse(plain, status_code=route.status)
