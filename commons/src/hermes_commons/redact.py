"""Keeping secrets out of what is printed or shown to a model: config dumps, log lines, tool
output and error text. The kernel redacts every tool result and log line with these rules;
a plugin that prints on its own (a ``hermes mcp test``, say) uses them too.

Redaction works three ways: by key name (``api_key: ...``), by the known shape of common
tokens, and by value (anything equal to a secret from .env). It catches mistakes; it is not
a security boundary, and the docs say so.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Iterable
from typing import Any

__all__ = [
    "REDACTED",
    "HiddenInHttpLogs",
    "is_secret_key",
    "redact_data",
    "redact_text",
    "url_without_password",
]

REDACTED = "<redacted>"

_SECRET_WORDS = frozenset(
    {
        "secret",
        "password",
        "passwd",
        "passphrase",
        "credential",
        "credentials",
        "apikey",
        "cookie",
        "bearer",
    }
)
_SECRET_PAIRS = frozenset({("api", "key"), ("private", "key"), ("access", "key")})
# A token by its shape. A label before the secret (``Bearer ``, ``token=``) is group 1 and
# stays, so the reader still sees what was there.
_TOKEN_SHAPES = re.compile(
    r"sk-[A-Za-z0-9_-]{12,}"  # "sk-" API keys, as several providers issue
    r"|\b\d{6,12}:[A-Za-z0-9_-]{30,}\b"  # chat bot tokens (NUMBER:SECRET)
    r"|\bgh[pousr]_[A-Za-z0-9]{16,}\b"  # GitHub tokens
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}\b"  # xox- tokens of a chat service
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key ids
    r"|((?i:aws_secret_access_key)\s*[=:]\s*)[A-Za-z0-9/+=]{40}"  # AWS secret keys, as written
    r"|((?i:\bbearer)\s+)[A-Za-z0-9._~+/-]{8,}=*"  # Authorization headers
    # Credentials in URLs and error text: ?token=..., api_key=..., password=...; shorter
    # values (key=1) are ordinary words.
    r"|((?i:\b(?:access_token|token|api_key|apikey|key|password|passwd|secret)=))[^\s&\"'<>]{6,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"
    # NAME=value where the name ends in a secret's word: DB_PASSWORD=..., STRIPE_SECRET: ...,
    # "api_key": "...", and the NUL-separated lines of /proc/*/environ.
    # The secret's word starts the name or follows a separator (DB_PASS, not bypass).
    r"|((?i:\b(?:[A-Za-z0-9_.-]*[_.-])?(?:password|passwd|pass|secret|token|api_?key"
    r"|private_?key|access_?key|credentials?)[\"']?(?:=|[ \t]*:[ \t]*)[\"']?))"
    r"(?![\"'\s]|\$\{|(?i:true|false|null|none|yes|no)\b)[^\s\"'&<>,;\x00]{4,}"
    # user:password@ in a URL (postgres://app:pw@db, https://u:p@host)
    r"|(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:)[^\s@/]+(?=@)"
)
_MIN_SECRET_LENGTH = 6  # shorter values would redact ordinary words


def is_secret_key(key: str) -> bool:
    """Whether a config key names a secret: ``api_key``, ``bot_token``, ``password`` ...

    ``max_tokens`` is not one, and neither is ``api_key_env``, whose value only names the
    environment variable that holds the secret.
    """
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).lower().replace("-", "_").split("_")
    words = [w for w in words if w]
    if not words or words[-1] in {"env", "var", "file", "path"}:
        return False
    pairs = set(itertools.pairwise(words))
    return words[-1] == "token" or bool(_SECRET_WORDS.intersection(words) or _SECRET_PAIRS & pairs)


def _keep_label(match: re.Match[str]) -> str:
    label = next((group for group in match.groups() if group), "")
    return label + REDACTED


def redact_text(text: str, secret_values: Iterable[str] = ()) -> str:
    """``text`` with known token shapes and the given secret values replaced by REDACTED."""
    for value in sorted(
        {v for v in secret_values if len(v) >= _MIN_SECRET_LENGTH}, key=len, reverse=True
    ):
        text = text.replace(value, REDACTED)
    return _TOKEN_SHAPES.sub(_keep_label, text)


def redact_data(data: Any, secret_values: Iterable[str] = ()) -> Any:
    """A copy of nested dicts/lists with secret-named keys and secret-looking values hidden."""
    values = [v for v in secret_values if len(v) >= _MIN_SECRET_LENGTH]

    def walk(item: Any, key: str | None) -> Any:
        if isinstance(item, dict):
            return {k: walk(v, str(k)) for k, v in item.items()}
        if isinstance(item, list):
            return [walk(v, key) for v in item]
        if key is not None and is_secret_key(key) and item not in (None, "", False):
            return REDACTED
        if isinstance(item, str):
            return redact_text(item, values)
        return item

    return walk(data, None)


def url_without_password(url: str) -> str:
    """``url`` without a password (in its user part or its query), for messages and logs."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "(a URL that cannot be read)"
    if password is not None:
        user, _, host = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=f"{user.partition(':')[0]}:***@{host}")
    if "password=" in parts.query:
        query = "&".join(
            "password=***" if item.startswith("password=") else item
            for item in parts.query.split("&")
        )
        parts = parts._replace(query=query)
    return urlunsplit(parts)


class HiddenInHttpLogs(logging.Filter):
    """A secret that travels in request URLs (a bot token in the path, a password in the
    query), kept out of the lines httpx and httpcore log for each request, whoever turns
    their logging on. Attach with :meth:`attach`, and :meth:`detach` when done."""

    LOGGERS = ("httpx", "httpcore")

    def __init__(self, secret: str, shown_as: str = REDACTED) -> None:
        from urllib.parse import quote, quote_plus

        super().__init__()
        self.shown_as = shown_as
        # As written, and as a URL carries it (httpx logs the query percent-encoded).
        forms = {secret, quote(secret, safe=""), quote_plus(secret)} if secret else set()
        self.forms = sorted(forms, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.forms:
            return True
        message = record.getMessage()
        hidden = message
        for form in self.forms:
            hidden = hidden.replace(form, self.shown_as)
        if hidden != message:
            record.msg, record.args = hidden, None
        return True

    def attach(self) -> HiddenInHttpLogs:
        for name in self.LOGGERS:
            logging.getLogger(name).addFilter(self)
        return self

    def detach(self) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).removeFilter(self)
