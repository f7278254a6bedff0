"""Model servers already running on this machine: Ollama, LM Studio, vLLM and llama.cpp's
server, found on their usual loopback ports when nothing else is configured.

The ladder asks only after every configured endpoint and API key has been passed over, and
before the embedded model. Each place is tried with a TCP connect on loopback (refused at
once where nothing listens), then ``GET /v1/models``, which all four serve: something else
on the port (a web server on 8000) answers no model list and is passed over. Standard
library only, and ``http.client`` only once a port answers, so the ladder imports nothing
heavy to ask.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from hermes_sdk.ladder import Endpoint, LadderChoice, LadderContext, RungResult

SECTION = "local_servers"
PROBE_SECONDS = 0.3
"""How long a port that accepted the connection has to list its models."""


@dataclass(frozen=True)
class Place:
    name: str
    label: str
    url: str


USUAL_PLACES = (
    Place("ollama", "Ollama", "http://127.0.0.1:11434"),
    Place("lmstudio", "LM Studio", "http://127.0.0.1:1234"),
    Place("vllm", "vLLM", "http://127.0.0.1:8000"),
    Place("llamacpp", "llama.cpp's server", "http://127.0.0.1:8080"),
)


def places(config: Mapping[str, Any]) -> tuple[Place, ...] | None:
    """Where to look (``local_servers.servers``, else the usual places); None when
    ``local_servers.discover`` is false."""
    section = config.get(SECTION)
    if not isinstance(section, Mapping):
        return USUAL_PLACES
    if section.get("discover") is False:
        return None
    given: Sequence[Mapping[str, Any]] = section.get("servers") or ()
    if not given:
        return USUAL_PLACES
    return tuple(
        Place(str(item["name"]), str(item.get("label") or item["name"]), str(item["url"]))
        for item in given
    )


def models_at(url: str, timeout: float = PROBE_SECONDS) -> list[str] | None:
    """The models a server at ``url`` lists, or None when no model server answers there."""
    parts = urlsplit(url)
    secure = parts.scheme == "https"
    host, port = parts.hostname or "127.0.0.1", parts.port or (443 if secure else 80)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError:
        return None
    import http.client  # only where something listens: it costs a start-up 15 ms

    kind = http.client.HTTPSConnection if secure else http.client.HTTPConnection
    connection = kind(host, port, timeout=timeout)
    try:
        connection.request("GET", f"{parts.path.rstrip('/')}/v1/models")
        response = connection.getresponse()
        if response.status != 200:
            return None
        listing = json.loads(response.read(1_000_000))
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        connection.close()
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return None
    return [str(item["id"]) for item in data if isinstance(item, dict) and item.get("id")]


def _chat_model(models: Sequence[str]) -> str:
    """The first listed model that can chat: Ollama lists the latest pulled first, which
    may be an embedding model."""
    return next((m for m in models if "embed" not in m.lower()), models[0] if models else "")


def endpoint_of(place: Place, models: Sequence[str]) -> Endpoint:
    base = f"{place.url.rstrip('/')}/v1"
    return Endpoint(
        name=place.name,
        provider="openai",
        base_url=base,
        default_model=_chat_model(models),
        models=tuple(models),
        notice=(
            f"Using {place.label} found at {base} (no API key or model server is configured); "
            "choose another with hermes model, or set local_servers.discover: false"
        ),
    )


def resolve(context: LadderContext) -> RungResult:
    looked = places(context.config)
    if looked is None:
        return RungResult.skip("local_servers.discover is false")
    wanted = [p for p in looked if context.provider in (None, p.name)]
    if not wanted:
        return RungResult.skip(f"provider {context.provider!r} asked for")
    for place in wanted:
        models = models_at(place.url)
        if models is None:
            continue
        if context.model and models and context.model not in models:
            continue  # it does not serve the model asked for
        if not models and not context.model:
            continue  # a server with nothing loaded cannot answer
        endpoint = endpoint_of(place, models)
        model = context.model or endpoint.default_model
        choice = LadderChoice(endpoint, model, source=f"{place.label} answering at {place.url}")
        return RungResult.match(choice, f"{place.label} answers at {place.url}")
    names = ", ".join(f"{p.label} ({urlsplit(p.url).port})" for p in wanted)
    return RungResult.skip(f"no model server answers on loopback: {names}")


def section_model() -> Any:
    from pydantic import BaseModel, ConfigDict, Field

    class LocalServer(BaseModel):
        model_config = ConfigDict(extra="forbid")
        name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,63}$", description="Its endpoint name.")
        url: str = Field(pattern=r"^https?://", description="Where it listens (no /v1).")
        label: str | None = Field(default=None, description="How Hermes names it to you.")

    class LocalServersSection(BaseModel):
        """Model servers running on this machine, found when nothing else is configured."""

        model_config = ConfigDict(extra="forbid")
        discover: bool = Field(
            default=True,
            description="Look for Ollama, LM Studio, vLLM and llama.cpp's server on loopback "
            "before using the embedded model.",
        )
        servers: list[LocalServer] = Field(
            default_factory=list,
            description="Where to look, in order; empty: the four on their usual ports.",
        )

    return LocalServersSection
