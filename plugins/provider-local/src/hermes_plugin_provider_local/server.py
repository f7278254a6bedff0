"""One GGUF model loaded by xllamacpp (llama.cpp's own server code, in-process).

Chat completions are in-process calls that answer in the OpenAI wire format. The few things
that only llama.cpp's HTTP routes offer (the chat template's abilities, saving and restoring
the evaluated prompt) go over the server's listener, which here is a Unix socket in a fresh
0700 folder with a random key: no other local user can reach the model through it. Nothing
here imports xllamacpp until a model is loaded.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_sdk.models import ErrorKind, ProviderError

__all__ = ["LoadedModel", "ServerSettings"]

RAM_CACHE_MIB = 256
"""llama.cpp's in-memory cache of earlier prompts (its default, 8 GiB, is a server's)."""


@dataclass(frozen=True)
class ServerSettings:
    """How a model is loaded: its context, threads and the folder for saved prompt state."""

    n_ctx: int
    threads: int
    slot_folder: Path | None


class LoadedModel:
    """A loaded model and its private listener; ``close`` frees both."""

    def __init__(self, path: Path, settings: ServerSettings) -> None:
        try:
            import xllamacpp
        except ImportError:
            raise ProviderError(
                ErrorKind.BAD_REQUEST,
                "xllamacpp is not installed: `pip install hermes-plugin-provider-local`",
            ) from None
        self.path = path
        self.settings = settings
        self._folder = Path(tempfile.mkdtemp(prefix="hermes-llm-"))  # mode 0700
        self._socket = str(self._folder / "llama.sock")
        self._key = secrets.token_urlsafe(24)
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = settings.n_ctx
        params.n_parallel = 1  # one conversation at a time; requests queue in llama.cpp
        params.cpuparams.n_threads = settings.threads
        params.cpuparams_batch.n_threads = settings.threads
        params.n_threads_http = 1
        params.warmup = False  # a warm-up run costs more than it saves for one answer
        params.fit_params = False  # fitting to free memory loads the model twice
        params.verbosity = -1  # llama.cpp logs to stderr, under the user's chat
        params.cache_ram_mib = RAM_CACHE_MIB
        _listen_on(params, self._socket)
        params.api_keys = [self._key]
        if settings.slot_folder is not None:
            params.slot_save_path = f"{settings.slot_folder}{os.sep}"
        try:
            self._server: Any = xllamacpp.Server(params)
        except (RuntimeError, ValueError, OSError) as exc:
            shutil.rmtree(self._folder, ignore_errors=True)
            raise ProviderError(ErrorKind.BAD_REQUEST, f"cannot load {path.name}: {exc}") from None
        self.native_tools = self._template_supports_tools()

    # --- completions ----------------------------------------------------------------------

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """One whole chat completion; an error answer is raised as a ProviderError."""
        answer = self._server.handle_chat_completions(dict(body, stream=False))
        if not isinstance(answer, dict):
            raise ProviderError(ErrorKind.BAD_RESPONSE, f"the embedded model answered {answer!r}")
        _raise_for(answer, self.settings.n_ctx)
        return answer

    def stream(self, body: dict[str, Any], on_chunk: Callable[[dict[str, Any]], bool]) -> None:
        """Stream a completion: ``on_chunk`` gets each chunk and returns True to stop."""
        failure: list[dict[str, Any]] = []

        def receive(chunk: Any) -> bool:
            if isinstance(chunk, dict) and "error" in chunk:
                failure.append(chunk)
                return True
            return bool(on_chunk(chunk)) if isinstance(chunk, dict) else False

        body = dict(body, stream=True, stream_options={"include_usage": True})
        self._server.handle_chat_completions(body, receive)
        if failure:
            _raise_for(failure[0], self.settings.n_ctx)

    # --- saved prompt state ---------------------------------------------------------------

    def save_slot(self, filename: str) -> bool:
        status, _answer = self._call("POST", "/slots/0?action=save", {"filename": filename})
        return status == 200

    def restore_slot(self, filename: str) -> int:
        """How many tokens the saved state put back (0: none, for any reason)."""
        status, answer = self._call("POST", "/slots/0?action=restore", {"filename": filename})
        if status != 200 or not isinstance(answer, dict):
            return 0
        return int(answer.get("n_restored") or 0)

    def close(self) -> None:
        server, self._server = self._server, None
        del server  # llama.cpp stops its loop and frees the model here
        shutil.rmtree(self._folder, ignore_errors=True)

    # --- the private listener -------------------------------------------------------------

    def _template_supports_tools(self) -> bool:
        """Whether the model's chat template renders tool schemas (llama.cpp then parses the
        calls); if not, the tools are described in the prompt instead."""
        status, props = self._call("GET", "/props", None)
        if status != 200 or not isinstance(props, dict):
            return False
        caps = props.get("chat_template_caps") or {}
        return bool(caps.get("supports_tools")) and bool(caps.get("supports_tool_calls"))

    def _call(self, method: str, url: str, body: dict[str, Any] | None) -> tuple[int, Any]:
        import httpx  # the SDK's HTTP client; it speaks HTTP over a Unix socket too

        transport = httpx.HTTPTransport(uds=self._socket)
        headers = {"Authorization": f"Bearer {self._key}"}
        try:
            with httpx.Client(transport=transport, timeout=60.0) as client:
                response = client.request(method, f"http://llama{url}", json=body, headers=headers)
        except httpx.HTTPError:
            return 0, None
        with contextlib.suppress(ValueError):
            return response.status_code, response.json() if response.content else None
        return response.status_code, None


def _listen_on(params: Any, address: str) -> None:
    """Point llama.cpp's listener at ``address`` (a path ending in .sock: a Unix socket).
    xllamacpp renamed the field when the server learned to listen on several addresses."""
    if hasattr(params, "hostnames"):
        params.hostnames = [address]
    else:
        params.hostname = address


def _raise_for(answer: dict[str, Any], n_ctx: int) -> None:
    """An error answer of llama.cpp's server, as the ProviderError it means."""
    error = answer.get("error") if "error" in answer else None
    if error is None and answer.get("type") != "server_error":
        return
    detail = error if isinstance(error, dict) else answer
    message = str(detail.get("message") or detail)
    if detail.get("type") == "exceed_context_size_error" or "context size" in message:
        raise ProviderError(
            ErrorKind.CONTEXT_OVERFLOW,
            f"the conversation is too long for the embedded model ({message})",
            stated_window=int(detail.get("n_ctx") or n_ctx),
        )
    if detail.get("code") == 400 or detail.get("type") == "invalid_request_error":
        raise ProviderError(ErrorKind.BAD_REQUEST, f"the embedded model refused: {message}")
    raise ProviderError(ErrorKind.SERVER, f"the embedded model failed: {message}")
