"""The gateway end to end: the real Telegram plugin against the SDK's fake Bot API on
loopback, the scripted model server, a fresh HERMES_HOME. The gateway runs in a thread of
the test process (``running_gateway``) or as a real ``hermes gateway run`` process
(``gateway_process``, for kill -9)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from hermes_plugin_platform_telegram.testing.telegram_server import DEFAULT_TOKEN, FakeTelegram

if TYPE_CHECKING:
    from hermes_plugin_gateway.gateway import Gateway

OWNER = 42


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    with FakeTelegram() as server:
        yield server


def gateway_config(
    telegram: FakeTelegram,
    model_url: str,
    extra: str = "",
    gateway: str = "",
    model: str = "",
    top: str = "",
) -> str:
    """config.yaml for a test: ``gateway`` lines go under ``gateway:``, ``extra`` under
    ``platforms.telegram``, ``model`` under ``model:``, and ``top`` at the end, at the top
    level."""
    return (
        f"model:\n  base_url: {model_url}\n  default: test-model\n{model}"
        "learning:\n  review: false\n  nudge_every_turns: 0\n"
        "gateway:\n  stream_interval_seconds: 0.1\n  restart_backoff_seconds: 0.2\n"
        "  restart_backoff_max_seconds: 1\n  drain_seconds: 5\n  approval_timeout_seconds: 10\n"
        f"{gateway}"
        "platforms:\n  telegram:\n"
        f"    api_url: {telegram.api_url}\n    poll_timeout_seconds: 1\n"
        f"    allowed_users: [{OWNER}]\n"
        f"{extra}{top}"
    )


@pytest.fixture
def gateway_home(hermes, telegram, openai_server, tmp_path, monkeypatch) -> Callable[..., Path]:
    """Write config.yaml (see gateway_config) and .env with the bot token."""
    monkeypatch.chdir(tmp_path)

    def write(
        extra: str = "",
        gateway: str = "",
        token: str = DEFAULT_TOKEN,
        model: str = "",
        top: str = "",
    ) -> Path:
        hermes.config(gateway_config(telegram, openai_server.base_url, extra, gateway, model, top))
        hermes.dotenv(f"TELEGRAM_BOT_TOKEN={token}\n")
        return hermes.home

    return write


def unfenced(text: str) -> str:
    """A user message's own words: what a group chat, an email or a webhook sends is fenced
    as untrusted data (``<untrusted>...</untrusted>``, issue 62)."""
    if "\n<untrusted>\n" not in text:
        return text
    return text.split("\n<untrusted>\n", 1)[1].rsplit("\n</untrusted>", 1)[0]


def user_texts(openai_server: Any) -> list[list[str]]:
    """The user messages of each model request, in order (their own words, unfenced)."""
    return [
        [unfenced(str(m["content"])) for m in request.json["messages"] if m["role"] == "user"]
        for request in openai_server.requests
    ]


T = TypeVar("T")


def first_sent(sent: Callable[[], Iterable[T]], text: str, timeout: float = 30) -> T:
    """The first of what a fake recorded as sent (``sent()``: items with a ``text``) whose
    text holds ``text``, once there is one."""
    found: list[T] = []
    wait_until(
        lambda: found.extend(m for m in sent() if text in str(getattr(m, "text", ""))) or found,
        timeout,
    )
    return found[0]


def wait_until(condition: Callable[[], object], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        time.sleep(0.02)


def polling(telegram: FakeTelegram, timeout: float = 20.0) -> None:
    """Wait until the bot polls for updates (it is connected)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(method == "getUpdates" for method, _ in list(telegram.calls)):
            return
        time.sleep(0.02)
    raise TimeoutError("the gateway never polled the fake Bot API")


class RunningGateway:
    """The gateway plugin's gateway on a runtime of the kernel, in a thread of this process
    (signals stay the test's): what ``hermes gateway run`` serves."""

    def __init__(self, home: Path) -> None:
        from hermes_kernel.app import App
        from hermes_kernel.cli.main import command_context
        from hermes_kernel.config.settings import Flags

        self.home = home
        self.app = App(Flags(home=home))
        self.context = command_context(self.app)
        self.gateway: Gateway | None = None
        self.built = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.stop_event: asyncio.Event | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True, name="gateway")

    def _run(self) -> None:
        from hermes_plugin_gateway.gateway import open_gateway
        from hermes_plugin_gateway.settings import gateway_settings

        async def main() -> None:
            self.stop_event = asyncio.Event()
            async with open_gateway(self.context, gateway_settings(self.context.config)) as gw:
                self.gateway = gw
                self.built.set()
                await gw.run(self.stop_event)

        try:
            self.loop.run_until_complete(main())
        except BaseException as exc:  # noqa: BLE001 - reported by stop()
            self.error = exc
        finally:
            self.built.set()
            self.app.close()

    def start(self) -> RunningGateway:
        self.thread.start()
        assert self.built.wait(60), "the gateway was not built"
        if self.error is not None:
            raise self.error
        return self

    def sessions(self, source: str) -> list[Any]:
        """The stored sessions of ``source``, newest first (read on a connection of the test's)."""
        from hermes_kernel.runtime.home_store import open_home_store

        store = open_home_store(self.home)  # state.db, or the PostgreSQL store.url names
        try:
            return store.sessions.recent(source=source)
        finally:
            store.close()

    def compactions(self, session_id: str) -> list[Any]:
        from hermes_plugin_store_sqlite import state_db_path
        from hermes_plugin_store_sqlite.database import Database

        from hermes_kernel.store.state import StateStore

        store = StateStore(Database(state_db_path(self.home)))
        try:
            return store.compactions.of_session(session_id)
        finally:
            store.close()

    def call(self, function: Callable[[], object]) -> None:
        self.loop.call_soon_threadsafe(function)

    def _where_it_is(self) -> str:
        """The gateway thread's stack and its loop's tasks: what a stop that hangs waits on."""
        import io
        import traceback

        out = io.StringIO()
        frame = sys._current_frames().get(self.thread.ident or 0)
        if frame is not None:
            out.writelines(traceback.format_stack(frame))
        for task in asyncio.all_tasks(self.loop):  # read from outside the loop: a diagnosis
            out.write(f"{task!r} awaits, innermost last:\n")
            awaited: Any = task.get_coro()
            while awaited is not None:  # print_stack shows only a suspended task's top frame
                frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
                if frame is None:
                    out.write(f"    -> {awaited!r}\n")  # a future: what it waits on
                    break
                out.write(
                    f"    {frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}\n"
                )
                awaited = getattr(awaited, "cr_await", None) or getattr(
                    awaited, "gi_yieldfrom", None
                )
        return out.getvalue()

    def stop(self) -> None:
        if self.stop_event is not None:
            self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(60)
        assert not self.thread.is_alive(), f"the gateway did not stop:\n{self._where_it_is()}"
        if self.error is not None:
            raise self.error


@pytest.fixture
def running_gateway(gateway_home, telegram) -> Iterator[Callable[..., RunningGateway]]:
    started: list[RunningGateway] = []

    def start(extra: str = "", wait: bool = True, **options: str) -> RunningGateway:
        home = gateway_home(extra, **options)
        gateway = RunningGateway(home).start()
        started.append(gateway)
        if wait:
            polling(telegram)
        return gateway

    yield start
    for gateway in started:
        gateway.stop()


@pytest.fixture
def one_platform_gateway(
    hermes, openai_server, tmp_path, monkeypatch
) -> Iterator[Callable[..., RunningGateway]]:
    """Start the gateway with Telegram off and one other platform: ``section`` is its
    config (under ``platforms:``, indented two spaces), ``dotenv`` its secrets, and
    ``gateway`` more lines under ``gateway:``."""
    monkeypatch.chdir(tmp_path)
    started: list[RunningGateway] = []

    def start(section: str, dotenv: str, gateway: str = "  stream: false\n") -> RunningGateway:
        hermes.config(
            f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
            "learning:\n  review: false\n  nudge_every_turns: 0\n"
            "gateway:\n  restart_backoff_seconds: 0.2\n  restart_backoff_max_seconds: 1\n"
            f"  drain_seconds: 5\n  approval_timeout_seconds: 60\n{gateway}"
            f"platforms:\n  telegram:\n    enabled: false\n{section}"
        )
        hermes.dotenv(dotenv)
        gateway_ = RunningGateway(hermes.home).start()
        started.append(gateway_)
        return gateway_

    yield start
    for gateway_ in started:
        if gateway_.thread.is_alive():
            gateway_.stop()


class GatewayProcess:
    def __init__(self, home: Path, log: Path) -> None:
        env = {**os.environ, "HERMES_HOME": str(home), "PYTHONUNBUFFERED": "1"}
        self.log = log
        self._handle = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hermes_kernel.cli.main", "gateway", "run"],
            env=env,
            stdout=self._handle,
            stderr=subprocess.STDOUT,
        )

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(10)
        self._handle.close()

    def terminate(self, timeout: float = 30) -> int:
        self.process.terminate()
        code = self.process.wait(timeout)
        self._handle.close()
        return code


@pytest.fixture
def platform_process(
    hermes, openai_server, tmp_path, monkeypatch
) -> Iterator[Callable[..., GatewayProcess]]:
    """Start a real ``hermes gateway run`` with Telegram off and one other platform:
    ``section`` is its config (under ``platforms:``, indented two spaces), ``dotenv`` its
    secrets, ``model``/``gateway`` more lines under those keys, ``top`` more top-level
    config; returns once ``ready()`` holds. ``write=False`` keeps the config as it was (a
    restart). Processes still running at the end are stopped."""
    monkeypatch.chdir(tmp_path)
    started: list[GatewayProcess] = []

    def start(
        section: str = "",
        *,
        ready: Callable[[], object],
        dotenv: str = "",
        top: str = "",
        model: str = "",
        gateway: str = "",
        write: bool = True,
    ) -> GatewayProcess:
        if write:
            hermes.config(
                f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n{model}"
                "learning:\n  review: false\n  nudge_every_turns: 0\n"
                "gateway:\n  stream: false\n  drain_seconds: 5\n  approval_timeout_seconds: 60\n"
                f"{gateway}platforms:\n  telegram:\n    enabled: false\n{section}{top}"
            )
            hermes.dotenv(dotenv)
        process = GatewayProcess(hermes.home, tmp_path / "gateway.log")
        started.append(process)
        wait_until(ready, timeout=60)
        return process

    yield start
    for process in started:
        if process.process.poll() is None:
            process.terminate()


@pytest.fixture
def gateway_process(gateway_home, tmp_path) -> Iterator[Callable[..., GatewayProcess]]:
    started: list[GatewayProcess] = []

    def start(extra: str = "", **options: str) -> GatewayProcess:
        home = gateway_home(extra, **options)
        process = GatewayProcess(home, tmp_path / "gateway.log")
        started.append(process)
        return process

    yield start
    for process in started:
        if process.process.poll() is None:
            process.kill()
