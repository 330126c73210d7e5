"""Log lines pass the secret gate too. A server's access log prints each request's path and query
string, where a session id, a message id or a search may carry a secret (percent-escaped, so the
gate reads the text unescaped as well); ``SecretFilter`` rewrites a record's arguments before any
handler formats them, whatever the handler and its format."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from urllib.parse import unquote_plus

from memvault.core.redaction import redact

# The loggers that print what a request carried: the server's access and error logs.
SERVER_LOGGERS = ("uvicorn.access", "uvicorn.error", "uvicorn")
OWN_LOGGERS = "memvault"


def loggable(text: str) -> str:
    """``text`` with every secret replaced, read unescaped too when it is URL-escaped."""
    if "%" in text or "+" in text:
        plain = unquote_plus(text)
        if plain != text:
            unescaped = redact(plain)
            if unescaped.kinds:
                return unescaped.text
    return redact(text).text


def _gated(value: object) -> object:
    return loggable(value) if isinstance(value, str) else value


class SecretFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = loggable(record.msg)
        if isinstance(record.args, Mapping):
            record.args = {key: _gated(value) for key, value in record.args.items()}
        elif isinstance(record.args, tuple):
            record.args = tuple(_gated(value) for value in record.args)
        return True


def install_secret_filter(names: Iterable[str] = SERVER_LOGGERS) -> None:
    """Put the filter on the server's loggers and on every memvault logger (a logger's filter sees
    only the records made on it, not its children's). Installing twice adds nothing."""
    own = [name for name in logging.root.manager.loggerDict if name == OWN_LOGGERS or name.startswith(OWN_LOGGERS + ".")]
    for name in [*names, *own]:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, SecretFilter) for existing in logger.filters):
            logger.addFilter(SecretFilter())
