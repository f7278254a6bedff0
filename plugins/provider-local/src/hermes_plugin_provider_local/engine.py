"""Run a GGUF model in-process with xllamacpp (llama.cpp's server code), as a ModelProvider.

Generation is blocking C code, so it runs in a worker thread; streamed pieces are handed to
the event loop as they come. One model is loaded per file and context size and shared
(loading is cheap, but memory is not), and a lock keeps one generation at a time per model.

Tool calls: a request that names the tool (``tool_choice``) gets a call constrained by a
grammar built from the tool's schema, which even a tiny model gets right. With ``tool_choice``
auto, a model whose chat template knows tools gets them natively (llama.cpp parses its calls);
any other model finds them described in its system prompt. Small models often write a call
as plain text instead (``<tool_call>{...}</tool_call>`` or a bare JSON object); such text is
parsed into a real call rather than shown to the user.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from hermes_plugin_provider_local.models import TOOLS_OFFERED, ModelNotFound, resolve_model
from hermes_plugin_provider_local.prefix_cache import PrefixCache, cache_folder
from hermes_plugin_provider_local.server import LoadedModel, ServerSettings
from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelRequest,
    ModelResponse,
    ModelUsage,
    ProviderError,
    ProviderSettings,
    ToolCallRequest,
    ToolSchema,
)

DEFAULT_CONTEXT = 4096
DEFAULT_MAX_TOKENS = 512  # a small model rambles; a turn can always ask for more
TINY_MAX_TOKENS = 192
"""A tiny model's replies, unless the request says: past this it is paraphrasing itself."""
DRY_MULTIPLIER = 0.8  # the strength llama.cpp's documentation suggests
DRY_LAST_N = 128
TINY_MODEL_BYTES = 300 * 1_048_576
"""Below this a model gets no tool schemas unless told to call one (see _offers_tools)."""
DEFAULT_PREFIX_CACHE_MB = 512
"""HERMES_HOME/cache/embedded holds at most this much evaluated prompt state (0: none)."""


class _Model:
    """A loaded model, its lock (one generation at a time) and its prompt-state cache."""

    def __init__(self, loaded: LoadedModel, cache: PrefixCache | None) -> None:
        self.loaded = loaded
        self.lock = threading.Lock()
        self.cache = cache
        try:
            self.tiny = loaded.path.stat().st_size < TINY_MODEL_BYTES
        except OSError:
            self.tiny = False


_loaded: dict[tuple[str, int], _Model] = {}
_loading = threading.Lock()


def _load(
    path: Path, n_ctx: int, threads: int | None, cache: tuple[Path, int] | None = None
) -> _Model:
    """The loaded model; ``cache`` is (HERMES_HOME, bytes) for the prefix cache that carries
    the evaluated prompt over to the next process."""
    key = (str(path), n_ctx)
    with _loading:
        if key not in _loaded:
            prefix: PrefixCache | None = None
            if cache is not None and cache[1] > 0:
                home, capacity = cache
                prefix = PrefixCache(cache_folder(home, path, n_ctx), capacity)
            settings = ServerSettings(
                n_ctx=n_ctx,
                threads=threads or os.cpu_count() or 2,
                slot_folder=prefix.folder if prefix is not None else None,
            )
            loaded = LoadedModel(path, settings)
            if prefix is not None:
                prefix.restore(loaded)
            if not _loaded:
                atexit.register(_close_all)
            _loaded[key] = _Model(loaded, prefix)
        return _loaded[key]


def _close_all() -> None:
    """Free models before interpreter teardown, when llama.cpp's threads can still stop."""
    with _loading:
        for model in _loaded.values():
            # A generation still running in an abandoned worker thread keeps its model.
            if model.lock.acquire(timeout=1.0):
                model.loaded.close()
        _loaded.clear()


CallStyle = Literal["native", "tagged", "told"]
"""How earlier tool calls reach the model: as ``tool_calls`` (a template that knows tools),
written as ``<tool_call>`` text (a model that was told that format), or told in words (a
model that sees no tools: shown the tagged form, a tiny one copies it instead of answering)."""


def _wire_messages(messages: Sequence[ChatMessage], style: CallStyle) -> list[dict[str, Any]]:
    """OpenAI-style dicts, with earlier calls in ``style``."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        content = message.content or ""
        item: dict[str, Any] = {"role": message.role}
        if message.tool_calls and style == "native":
            item["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments or "{}"},
                }
                for c in message.tool_calls
            ]
        elif message.tool_calls:
            written = "\n".join(
                _written_call(c.name, c.arguments)
                if style == "tagged"
                else f"(I called {c.name} with {c.arguments or '{}'}.)"
                for c in message.tool_calls
            )
            content = f"{content}\n{written}".strip()
        item["content"] = content
        if message.role == "tool":
            item["tool_call_id"] = message.tool_call_id or ""
        wire.append(item)
    return wire


def _written_call(name: str, arguments: str | None) -> str:
    call = f'{{"name": {json.dumps(name)}, "arguments": {arguments or "{}"}}}'
    return f"<tool_call>{call}</tool_call>"


def _wire_tools(tools: Sequence[ToolSchema]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": dict(t.parameters),
            },
        }
        for t in tools
    ]


_TAGGED = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


def calls_in_text(text: str, tools: Sequence[ToolSchema]) -> tuple[ToolCallRequest, ...]:
    """Tool calls a model wrote as text: ``<tool_call>{"name": .., "arguments": ..}</tool_call>``
    or the whole reply being such a JSON object. Only names of offered tools count."""
    names = {t.name for t in tools}
    if not names:
        return ()
    stripped = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    candidates = _TAGGED.findall(text) or [stripped.strip()]
    calls: list[ToolCallRequest] = []
    for index, candidate in enumerate(candidates):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if not isinstance(data, dict) or data.get("name") not in names:
            continue
        arguments = data.get("arguments", data.get("parameters", {}))
        if isinstance(arguments, str):
            raw = arguments
        else:
            raw = json.dumps(arguments if isinstance(arguments, dict) else {})
        calls.append(ToolCallRequest(f"call_text_{index}", str(data["name"]), raw))
    return tuple(calls)


LOOP_REPEATS = 6
LOOP_SPAN = 48
LOOP_LINES = 3


def looping(text: str) -> bool:
    """Whether ``text`` ends in one short piece repeated :data:`LOOP_REPEATS` times over at
    least :data:`LOOP_SPAN` characters ("- Hello - Hello - ..."), or in a line it has written
    :data:`LOOP_LINES` times: a tiny model that starts such a loop rarely leaves it before
    the token limit, seconds later."""
    lines = [line.strip() for line in text.split("\n")[:-1] if line.strip()]  # finished
    if lines and len(lines[-1]) >= 8 and lines.count(lines[-1]) >= LOOP_LINES:
        return True  # the same line again and again ("## Authorship", between paraphrases)
    longest = 48
    tail = text[-LOOP_REPEATS * longest :]
    for period in range(2, longest + 1):
        span = period * LOOP_REPEATS
        if span > len(tail):
            return False
        unit = tail[-period:]
        words = any(ch.isalnum() for ch in unit)  # not a rule of ==== or a table's |---|
        if span >= LOOP_SPAN and words and tail[-span:] == unit * LOOP_REPEATS:
            return True
    return False


def _whole(options: Any, key: str, default: int) -> int:
    """An ``embedded_model:`` number; a wrong one is a one-line error naming the key."""
    value = options.get(key, default)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ProviderError(
            ErrorKind.BAD_REQUEST,
            f"embedded_model.{key} must be a whole number, not {value!r}: fix config.yaml",
        ) from None


def _described(messages: list[dict[str, Any]], tools: Sequence[ToolSchema]) -> None:
    """Tell a model whose template knows no tools what it may call, and how, in its system
    message (the format ``calls_in_text`` reads back)."""
    lines = [
        "You can call these tools. To call one, answer with only "
        '<tool_call>{"name": NAME, "arguments": {...}}</tool_call>; otherwise answer normally.'
    ]
    lines += [
        f"- {t.name}: {t.description} Arguments (JSON schema): {json.dumps(dict(t.parameters))}"
        for t in tools
    ]
    note = "\n".join(lines)
    if messages and messages[0]["role"] == "system":
        messages[0] = dict(messages[0], content=f"{messages[0]['content']}\n\n{note}")
    else:
        messages.insert(0, {"role": "system", "content": note})


def _call_schema(tools: Sequence[ToolSchema]) -> dict[str, Any]:
    """The JSON a forced call must be: one of ``tools`` by name, with its arguments."""
    shapes = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": dict(t.parameters)},
            "required": ["name", "arguments"],
        }
        for t in tools
    ]
    return shapes[0] if len(shapes) == 1 else {"anyOf": shapes}


def _usage(answer: dict[str, Any]) -> ModelUsage:
    raw = answer.get("usage") or {}
    return ModelUsage(
        input_tokens=max(1, int(raw.get("prompt_tokens") or 1)),
        output_tokens=max(1, int(raw.get("completion_tokens") or 1)),
    )


class EmbeddedProvider:
    """A :class:`hermes_sdk.models.ModelProvider` over xllamacpp (llama.cpp)."""

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        options = settings.options
        default_dir = Path(settings.home) / "models" if settings.home else Path("models")
        self._models_dir = Path(str(options.get("models_dir", default_dir))).expanduser()
        self._n_ctx = _whole(options, "context_size", DEFAULT_CONTEXT)
        threads = options.get("threads")
        self._threads = _whole(options, "threads", 0) if threads else None
        megabytes = _whole(options, "prefix_cache_mb", DEFAULT_PREFIX_CACHE_MB)
        self._cache = (Path(settings.home), megabytes * 1_048_576) if settings.home else None
        seed = options.get("seed")
        self._seed = _whole(options, "seed", 0) if seed is not None else None

    async def aclose(self) -> None:
        pass  # loaded models are shared across providers and live as long as the process

    async def context_window(self, model: str) -> int | None:
        """The context this provider loads its model with: its window, in tokens."""
        return self._n_ctx

    async def complete(
        self, request: ModelRequest, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        try:
            path = resolve_model(request.model, self._models_dir)
        except ModelNotFound as exc:
            raise ProviderError(ErrorKind.BAD_REQUEST, str(exc)) from None
        loop = asyncio.get_running_loop()
        stop = threading.Event()

        def deliver(piece: str) -> None:
            if on_text is not None:
                loop.call_soon_threadsafe(on_text, piece)

        try:
            return await asyncio.to_thread(self._generate, path, request, deliver, stop)
        finally:
            stop.set()  # a cancelled turn stops generation at the next token

    # --- in the worker thread --------------------------------------------------------------

    def _generate(
        self,
        path: Path,
        request: ModelRequest,
        deliver: Callable[[str], None],
        stop: threading.Event,
    ) -> ModelResponse:
        model = _load(path, self._n_ctx, self._threads, self._cache)
        offered = request.tools if self._offers_tools(path, request) else ()
        with_tools = bool(offered) and request.tool_choice != "none"
        style: CallStyle = (
            "native" if model.loaded.native_tools else "tagged" if with_tools else "told"
        )
        body: dict[str, Any] = {
            "messages": _wire_messages(request.messages, style),
            "max_tokens": request.max_tokens
            or (TINY_MAX_TOKENS if model.tiny else DEFAULT_MAX_TOKENS),
            "temperature": 0.2 if request.temperature is None else request.temperature,
            "cache_prompt": True,
            # A small model falls into loops ("Hello - Hello - ..."), to max_tokens: llama.cpp's
            # DRY sampler penalises extending a repeated sequence. (A repeat penalty would also
            # keep it from quoting a tool's result.)
            "dry_multiplier": DRY_MULTIPLIER,
            # Over the last tokens only: the whole context costs ~50 ms before the first
            # token, and a loop is in what was just written.
            "dry_penalty_last_n": DRY_LAST_N,
        }
        if self._seed is not None:  # sampling starts from this seed on every call
            body["seed"] = self._seed
        with model.lock:
            try:
                if with_tools:
                    return self._with_tools(model, request, body, deliver, stop)
                return self._streamed(model, body, deliver, stop)
            except ProviderError:
                raise
            except (KeyError, TypeError, IndexError, ValueError) as exc:
                raise ProviderError(
                    ErrorKind.BAD_RESPONSE, f"the embedded model answered oddly: {exc!r}"
                ) from None

    def _offers_tools(self, path: Path, request: ModelRequest) -> bool:
        """Whether the model sees the tool schemas. A tiny model (the bundled 135M one, or
        any file under TINY_MODEL_BYTES) cannot choose among a dozen tools: their schemas
        are most of its prompt (seconds of evaluation) and it calls them at random, so by
        default it gets only a tool it is told to call, and answers from a tool's result
        without the schemas. ``tools: true`` in the provider's
        options offers them anyway, ``false`` never."""
        setting = self._settings.options.get("tools", TOOLS_OFFERED)
        if isinstance(request.tool_choice, str) and request.tool_choice not in (
            "auto",
            "none",
            "required",
        ):
            return setting is not False  # a named tool: a grammar makes even a tiny model right
        if setting == "auto":
            # Not even after a tool result: shown the tools again, a tiny model calls the same
            # one again and again instead of answering from the result.
            try:
                return path.stat().st_size >= TINY_MODEL_BYTES
            except OSError:
                return True
        return bool(setting)

    def _streamed(
        self,
        model: _Model,
        body: dict[str, Any],
        deliver: Callable[[str], None],
        stop: threading.Event,
    ) -> ModelResponse:
        pieces: list[str] = []
        finish: list[str] = []
        final: dict[str, Any] = {}
        tail = ""  # the reply's last KB, for the loop check

        def receive(chunk: dict[str, Any]) -> bool:
            nonlocal tail
            if chunk.get("usage"):
                final.update(chunk)
            for choice in chunk.get("choices") or ():
                piece = (choice.get("delta") or {}).get("content") or ""
                if piece:
                    pieces.append(piece)
                    deliver(piece)
                    tail = (tail + piece)[-1024:]
                if choice.get("finish_reason"):
                    finish.append(choice["finish_reason"])
            if stop.is_set():
                finish.append("stop")
                return True
            if model.tiny and looping(tail):
                finish.append("stop")  # a loop: the rest would be more of the same
                return True
            return False

        model.loaded.stream(body, receive)
        if final:
            self._remember(model, final)
        elif model.cache is not None:  # cut short: no timings came, so keep what it holds
            model.cache.after(model.loaded, reused=0, evaluated=1)
        return ModelResponse(
            content="".join(pieces),
            finish_reason=finish[-1] if finish else "stop",
            usage=_usage(final) if final else ModelUsage(1, max(1, len(pieces))),
        )

    def _with_tools(
        self,
        model: _Model,
        request: ModelRequest,
        body: dict[str, Any],
        deliver: Callable[[str], None],
        stop: threading.Event,
    ) -> ModelResponse:
        choice = request.tool_choice
        named = [t for t in request.tools if t.name == choice]
        if choice == "required" and not model.loaded.native_tools:
            named = list(request.tools)  # any of them, but one of them
        if named:
            return self._forced(model, named, body, deliver, stop)
        if model.loaded.native_tools:
            body = dict(body, tools=_wire_tools(request.tools), tool_choice=choice or "auto")
            answer = model.loaded.chat(body)
            self._remember(model, answer)
            return self._answer(answer, request.tools, deliver)
        messages = list(body["messages"])
        _described(messages, request.tools)
        return self._held_back(model, dict(body, messages=messages), request.tools, deliver, stop)

    def _held_back(
        self,
        model: _Model,
        body: dict[str, Any],
        tools: Sequence[ToolSchema],
        deliver: Callable[[str], None],
        stop: threading.Event,
    ) -> ModelResponse:
        """A completion whose text may be a call: held back until known, then shown if it is
        not one."""
        streamed = self._streamed(model, body, lambda _piece: None, stop)
        calls = calls_in_text(streamed.content, tools)
        if calls:
            return replace(streamed, content="", tool_calls=calls, finish_reason="tool_calls")
        if streamed.content:
            deliver(streamed.content)
        return streamed

    def _forced(
        self,
        model: _Model,
        tools: Sequence[ToolSchema],
        body: dict[str, Any],
        deliver: Callable[[str], None],
        stop: threading.Event,
    ) -> ModelResponse:
        """A call the model must make: its JSON is constrained to one of ``tools``."""
        messages = list(body["messages"])
        _described(messages, tools)
        schema = _call_schema(tools)
        constrained = dict(
            body,
            messages=messages,
            response_format={"type": "json_schema", "json_schema": {"schema": schema}},
        )
        try:
            answer = model.loaded.chat(constrained)
        except ProviderError as refused:
            if refused.kind is not ErrorKind.BAD_REQUEST:
                raise
            # A schema llama.cpp cannot turn into a grammar: let the model write the call.
            return self._held_back(model, dict(body, messages=messages), tools, deliver, stop)
        self._remember(model, answer)
        text = answer["choices"][0]["message"].get("content") or ""
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict) or "name" not in data:
            raise ProviderError(
                ErrorKind.BAD_RESPONSE, f"the embedded model's forced call is not JSON: {text!r}"
            )
        call = ToolCallRequest("call_0", str(data["name"]), json.dumps(data.get("arguments", {})))
        return ModelResponse(
            content="", tool_calls=(call,), finish_reason="tool_calls", usage=_usage(answer)
        )

    def _answer(
        self,
        answer: dict[str, Any],
        tools: Sequence[ToolSchema],
        deliver: Callable[[str], None],
    ) -> ModelResponse:
        message = answer["choices"][0]["message"]
        text = message.get("content") or ""
        calls = tuple(
            ToolCallRequest(
                call.get("id") or f"call_{index}",
                call["function"]["name"],
                call["function"].get("arguments") or "{}",
            )
            for index, call in enumerate(message.get("tool_calls") or [])
        ) or calls_in_text(text, tools)
        if calls:
            text = ""  # a call written as text is not a reply to show
        elif text:
            deliver(text)
        finish = "tool_calls" if calls else answer["choices"][0].get("finish_reason") or "stop"
        return ModelResponse(
            content=text, tool_calls=calls, finish_reason=finish, usage=_usage(answer)
        )

    @staticmethod
    def _remember(model: _Model, answer: dict[str, Any]) -> None:
        """Offer the evaluated prompt to the prefix cache, with what llama.cpp reused."""
        timings = answer.get("timings") or {}
        if model.cache is not None and timings:
            reused = int(timings.get("cache_n") or 0)
            evaluated = int(timings.get("prompt_n") or 0)
            model.cache.after(model.loaded, reused, evaluated)
