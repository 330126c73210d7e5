"""Log lines pass the secret gate too. A server's access log prints each request's path and query
string, where a session id, a message id or a search may carry a secret (percent-escaped, so the
gate reads the text unescaped as well); an error may carry one in its message or traceback.

``install_log_redaction`` makes every log record of the process gated as it is made, whichever
logger makes it and whichever handlers and formats the logging configuration gives: its message,
each of its arguments, the message they format into, and its traceback."""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import unquote, unquote_plus

from memvault.core.redaction import breadcrumb, redact, redact_field
from memvault.core.redaction.labels import API_KEY, TOKEN

# Loggers whose formatter reads the record's arguments by position (uvicorn's access log: client,
# method, path with query, version, status), so their arguments are gated one by one and kept as
# arguments.
POSITIONAL_LOGGERS = frozenset({"uvicorn.access"})
_INSTALLED = "_memvault_redacts_secrets"
# A URL's query parameters and path segments are each a field of their own: a value is judged
# under its parameter's name and apart from the rest of the line (a `.pgpass` line or a card as a
# session id reads as one only on its own).
_QUERY_VALUE = re.compile(r"(?P<lead>[?&;])(?P<name>[^=&;?#\s\"']{1,200})=(?P<value>[^&;#\s\"']{1,8000})")
# The query parameters that carry an API key where a service takes one in the URL (Gemini's and
# Google's other APIs' `?key=`): in a log line such a value goes whole, whatever it looks like.
_KEY_PARAMETERS = frozenset({"key", "api_key", "apikey"})
_PATH_SEGMENT = re.compile(r"(?<=/)[^/?#\s\"']{1,8000}")
# Most log arguments repeat (a route's path, a method, a status): lines the gate found nothing in
# are remembered, so each is read once. Only clean lines are kept: a secret is never held here.
CLEAN_LINES_KEPT = 2048
CLEAN_LINE_CHARS = 512
_clean_lines: OrderedDict[str, None] = OrderedDict()
# The deployment's own secrets (the values of its secret settings: the admin token, the sealing
# secrets…). They may have any shape (`openssl rand -hex 32` reads like a digest, which the
# gate's rules keep), so the gate cannot know them by their look; it knows them by their value.
_OWN_SECRET_CHARS = 16
_own_secrets: set[str] = set()


def _url_parts(text: str) -> str:
    def value(match: re.Match[str]) -> str:
        name = unquote_plus(match.group("name"))
        if name.lower() in _KEY_PARAMETERS:
            return f"{match.group('lead')}{match.group('name')}={breadcrumb(API_KEY)}"
        gate = redact_field(name, unquote_plus(match.group("value")))
        return f"{match.group('lead')}{match.group('name')}={gate.text}" if gate.kinds else match.group(0)

    def segment(match: re.Match[str]) -> str:
        gate = redact(unquote(match.group(0)))
        return gate.text if gate.kinds else match.group(0)

    if "?" in text:
        text = _QUERY_VALUE.sub(value, text)
    return _PATH_SEGMENT.sub(segment, text) if "/" in text else text


def loggable(text: str) -> str:
    """``text`` with every secret replaced: the deployment's own, then each URL query value and
    path segment on its own, then the whole line, read unescaped too when it is URL-escaped."""
    text = _without_own_secrets(text)
    if text in _clean_lines:
        return text
    gated = _gated_line(text)
    if gated == text and len(text) <= CLEAN_LINE_CHARS:
        _clean_lines[text] = None
        if len(_clean_lines) > CLEAN_LINES_KEPT:
            _clean_lines.popitem(last=False)
    return gated


def _without_own_secrets(text: str) -> str:
    if not _own_secrets:
        return text
    plain = unquote_plus(text) if "%" in text or "+" in text else text
    found = [secret for secret in _own_secrets if secret in text or secret in plain]
    if not found:
        return text
    if not any(secret in text for secret in found):
        text = plain  # escaped in a URL
    for secret in sorted(found, key=len, reverse=True):
        text = text.replace(secret, breadcrumb(TOKEN))
    return text


def _gated_line(text: str) -> str:
    text = _url_parts(text)
    if "%" in text or "+" in text:
        plain = unquote_plus(text)
        if plain != text:
            unescaped = redact(plain)
            if unescaped.kinds:
                return unescaped.text
    return redact(text).text


def _gated(value: object) -> object:
    return loggable(value) if isinstance(value, str) else value


def redact_record(record: logging.LogRecord) -> None:
    """Each text argument gated on its own (a value may read as a secret only alone), then the
    message they make (a label in the message, its value in an argument, a card as a number): when
    that holds a secret, the record carries the gated message in place of its format and arguments."""
    if isinstance(record.msg, str):
        record.msg = loggable(record.msg)
    if isinstance(record.args, Mapping):
        record.args = {key: _gated(value) for key, value in record.args.items()}
    elif isinstance(record.args, tuple):
        record.args = tuple(_gated(value) for value in record.args)
    if record.name not in POSITIONAL_LOGGERS:
        try:
            message = record.getMessage()
        except Exception:
            # A broken call is reported by the handler, which prints the arguments as they are.
            if isinstance(record.args, tuple):
                record.args = tuple(loggable(str(value)) for value in record.args)
        else:
            if (cleaned := loggable(message)) != message:
                record.msg, record.args = cleaned, ()
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        record.exc_text = loggable(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = loggable(record.stack_info)


def install_log_redaction(own_secrets: Iterable[str] = ()) -> None:
    """Gate every log record of the process from now on, the values ``own_secrets`` names among
    the secrets (each app of the process adds its settings' own). Installing twice adds nothing
    else; a record factory installed before is kept and runs first."""
    added = {secret for secret in own_secrets if len(secret) >= _OWN_SECRET_CHARS} - _own_secrets
    if added:
        _own_secrets.update(added)
        _clean_lines.clear()  # a line judged clean before may hold one of them
    current: Callable[..., logging.LogRecord] = logging.getLogRecordFactory()
    if getattr(current, _INSTALLED, False):
        return

    def gated_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = current(*args, **kwargs)
        redact_record(record)
        return record

    setattr(gated_record, _INSTALLED, True)
    logging.setLogRecordFactory(gated_record)
