"""Run a GGUF model in-process with llama-cpp-python, as a ModelProvider.

Generation is blocking C code, so it runs in a worker thread; streamed pieces are handed to
the event loop as they come. One model is loaded per file and shared (loading is cheap, but
memory is not), and a lock keeps one generation at a time per model: llama.cpp contexts are
not thread-safe.

Tool calls: a request that names the tool (``tool_choice``) gets a grammar-constrained call,
which even a tiny model gets right; with ``tool_choice`` auto the chatml-function-calling
format lets the model choose. Small models often write a call as plain text instead
(``<tool_call>{...}</tool_call>`` or a bare JSON object); such text is parsed into a real call
rather than shown to the user.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from hermes_plugin_provider_local.models import ModelNotFound, resolve_model
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
TINY_MODEL_BYTES = 300 * 1_048_576
"""Below this a model gets no tool schemas unless told to call one (see _offers_tools)."""
DEFAULT_PREFIX_CACHE_MB = 512
"""HERMES_HOME/cache/embedded holds at most this much evaluated prompt state (0: none)."""
_loaded: dict[tuple[str, int], tuple[Any, threading.Lock]] = {}
_loading = threading.Lock()


def _load(
    path: Path, n_ctx: int, threads: int | None, cache: tuple[Path, int] | None = None
) -> tuple[Any, threading.Lock]:
    """The loaded model (with its lock); ``cache`` is (HERMES_HOME, bytes) for the prefix
    cache that carries the evaluated prompt over to the next process."""
    key = (str(path), n_ctx)
    with _loading:
        if key not in _loaded:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise ProviderError(
                    ErrorKind.BAD_REQUEST,
                    "llama-cpp-python is not installed: `pip install hermes-plugin-provider-local`",
                ) from None
            try:
                model = Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_threads=threads or os.cpu_count() or 2,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ProviderError(
                    ErrorKind.BAD_REQUEST, f"cannot load {path.name}: {exc}"
                ) from None
            if cache is not None and cache[1] > 0:
                from hermes_plugin_provider_local.prefix_cache import PrefixCache, cache_folder

                home, capacity = cache
                folder = cache_folder(home, path, n_ctx)
                model.set_cache(PrefixCache(folder, n_ctx, model.n_vocab(), capacity))
            if not _loaded:
                atexit.register(_close_all)
            _loaded[key] = (model, threading.Lock())
        return _loaded[key]


def _close_all() -> None:
    """Free models before interpreter teardown: llama-cpp-python's own finalizer runs too
    late then, and prints a traceback on every exit."""
    with _loading:
        for model, lock in _loaded.values():
            # A generation still running in an abandoned worker thread keeps its model.
            if lock.acquire(timeout=1.0):
                close = getattr(model, "close", None)
                if close is not None:
                    close()
        _loaded.clear()


def _wire_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """OpenAI-style dicts. Chat templates of small models ignore ``tool_calls``, so earlier
    calls are also written into the content, where the model can see them."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        content = message.content or ""
        if message.tool_calls:
            written = "\n".join(
                f'<tool_call>{{"name": {json.dumps(c.name)}, "arguments": {c.arguments or "{}"}}}'
                "</tool_call>"
                for c in message.tool_calls
            )
            content = f"{content}\n{written}".strip()
        item: dict[str, Any] = {"role": message.role, "content": content}
        if message.role == "tool":
            item["tool_call_id"] = message.tool_call_id or ""
        wire.append(item)
    return wire


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


def _in_tool_round(messages: Sequence[ChatMessage]) -> bool:
    """Whether a tool result came after the user's last message (the turn is in a round)."""
    for message in reversed(messages):
        if message.role == "tool":
            return True
        if message.role == "user":
            return False
    return False


def _classify(exc: Exception, n_ctx: int | None = None) -> ProviderError:
    """What llama.cpp raised, classified; an overflow states the context the model was
    loaded with, ``n_ctx``."""
    text = str(exc)
    if type(exc).__module__.startswith("jinja2"):  # the model's chat template refused
        return ProviderError(ErrorKind.BAD_REQUEST, f"the model's chat template refused: {text}")
    if "context window" in text or "exceed context" in text:
        return ProviderError(
            ErrorKind.CONTEXT_OVERFLOW,
            f"the conversation is too long for the embedded model ({text})",
            stated_window=n_ctx,
        )
    return ProviderError(ErrorKind.SERVER, f"the embedded model failed: {text}")


class EmbeddedProvider:
    """A :class:`hermes_sdk.models.ModelProvider` over llama-cpp-python."""

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
        model, lock = _load(path, self._n_ctx, self._threads, self._cache)
        arguments: dict[str, Any] = {
            "messages": _wire_messages(request.messages),
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "temperature": 0.2 if request.temperature is None else request.temperature,
        }
        if self._seed is not None:  # sampling starts from this seed on every call
            arguments["seed"] = self._seed
        offered = request.tools if self._offers_tools(path, request) else ()
        with lock:
            try:
                if offered and request.tool_choice != "none":
                    answer = self._with_tools(model, request, arguments, deliver)
                    if answer.content or answer.tool_calls:
                        return answer
                    # chatml-function-calling sometimes says nothing at all (after a tool
                    # result, typically): ask again in the model's own template.
                    # With tools offered the text may be a call: hold it back until known.
                    streamed = self._streamed(model, arguments, lambda _piece: None, stop)
                    calls = calls_in_text(streamed.content, request.tools)
                    if calls:
                        return replace(
                            streamed, content="", tool_calls=calls, finish_reason="tool_calls"
                        )
                    if streamed.content:
                        deliver(streamed.content)
                    return streamed
                return self._streamed(model, arguments, deliver, stop)
            except ProviderError:
                raise
            except (ValueError, RuntimeError) as exc:
                raise _classify(exc, self._n_ctx) from None
            except (KeyError, TypeError, IndexError) as exc:
                raise ProviderError(
                    ErrorKind.BAD_RESPONSE, f"the embedded model answered oddly: {exc!r}"
                ) from None
            except Exception as exc:
                if type(exc).__module__.startswith("jinja2"):  # a chat template's own error
                    raise _classify(exc) from None
                raise

    def _offers_tools(self, path: Path, request: ModelRequest) -> bool:
        """Whether the model sees the tool schemas. A tiny model (the bundled 135M one, or
        any file under TINY_MODEL_BYTES) cannot choose among a dozen tools: their schemas
        are most of its prompt (seconds of evaluation) and it calls them at random, so by
        default it gets only a tool it is told to call. ``tools: true`` in the provider's
        options offers them anyway, ``false`` never."""
        setting = self._settings.options.get("tools", "auto")
        if isinstance(request.tool_choice, str) and request.tool_choice not in (
            "auto",
            "none",
            "required",
        ):
            return setting is not False  # a named tool: a grammar makes even a tiny model right
        if setting == "auto":
            if _in_tool_round(request.messages):
                return True  # it was told to call one: let it answer from the result as before
            try:
                return path.stat().st_size >= TINY_MODEL_BYTES
            except OSError:
                return True
        return bool(setting)

    def _streamed(
        self,
        model: Any,
        arguments: dict[str, Any],
        deliver: Callable[[str], None],
        stop: threading.Event,
    ) -> ModelResponse:
        pieces: list[str] = []
        finish: str | None = None
        chunks: Iterator[dict[str, Any]] = model.create_chat_completion(**arguments, stream=True)
        try:
            for chunk in chunks:
                choice = chunk["choices"][0]
                piece = (choice.get("delta") or {}).get("content") or ""
                if piece:
                    pieces.append(piece)
                    deliver(piece)
                finish = choice.get("finish_reason") or finish
                if stop.is_set():
                    finish = "stop"
                    break
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        output = len(pieces)
        total = int(getattr(model, "n_tokens", 0) or 0)
        usage = ModelUsage(input_tokens=max(1, total - output), output_tokens=max(1, output))
        return ModelResponse(content="".join(pieces), finish_reason=finish or "stop", usage=usage)

    def _with_tools(
        self,
        model: Any,
        request: ModelRequest,
        arguments: dict[str, Any],
        deliver: Callable[[str], None],
    ) -> ModelResponse:
        tools = _wire_tools(request.tools)
        choice = request.tool_choice
        if choice == "required" and len(request.tools) == 1:
            choice = request.tools[0].name  # one tool to call: force it, grammar and all
        if choice in (None, "auto", "required"):
            from llama_cpp import llama_chat_format

            handler = llama_chat_format.get_chat_completion_handler("chatml-function-calling")
            # Not streamed, so one response comes back (the handler's type allows a stream
            # too); the tools are llama-cpp's TypedDicts, built as plain dicts.
            result = cast(
                dict[str, Any],
                handler(llama=model, tools=cast(list[Any], tools), tool_choice="auto", **arguments),
            )
        else:
            forced = {"type": "function", "function": {"name": choice}}
            result = model.create_chat_completion(tools=tools, tool_choice=forced, **arguments)
        message = result["choices"][0]["message"]
        text = message.get("content") or ""
        calls = tuple(
            ToolCallRequest(
                call.get("id") or f"call_{index}",
                call["function"]["name"],
                call["function"].get("arguments") or "{}",
            )
            for index, call in enumerate(message.get("tool_calls") or [])
        ) or calls_in_text(text, request.tools)
        if calls:
            text = ""  # a call written as text is not a reply to show
        elif text:
            deliver(text)
        raw_usage = result.get("usage") or {}
        usage = ModelUsage(
            input_tokens=int(raw_usage.get("prompt_tokens") or 1),
            output_tokens=int(raw_usage.get("completion_tokens") or 1),
        )
        finish = "tool_calls" if calls else result["choices"][0].get("finish_reason") or "stop"
        return ModelResponse(content=text, tool_calls=calls, finish_reason=finish, usage=usage)
