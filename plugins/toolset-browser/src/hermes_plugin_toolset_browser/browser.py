"""One browser per Hermes process, one context per session.

The browser starts on the first call, with a record of its owner (:mod:`processes`), and
closes when its last session has been idle ``browser.idle_seconds``, when Hermes exits, or
when the settings change. A session's context closes when it ends, when it idles, or when
``browser.max_sessions`` others were used more recently. A browser that dies (killed,
crashed) is replaced on the next call, and each session it held is told so once.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from hermes_commons.environment import safe_environment
from hermes_commons.ssrf import SsrfGuard
from hermes_plugin_toolset_browser.loop_thread import LoopThread
from hermes_plugin_toolset_browser.processes import (
    MARKER,
    OwnerRecord,
    clean_leftovers,
    end_own_browsers,
    forget,
    owner_tag,
    remember,
)
from hermes_plugin_toolset_browser.session import BrowserSession
from hermes_plugin_toolset_browser.settings import Settings, find_chromium

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = ["Browsers", "browsers", "close_session", "shut_down"]

log = logging.getLogger(__name__)

T = TypeVar("T")

_WINDOW_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS")
_LAUNCH_SECONDS = 60.0  # a loaded machine starts Chromium slowly; a page's timeout is not this

_ARGUMENTS = (
    # WebRTC may use UDP, which no proxy carries: none that bypasses the guard.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-quic",  # QUIC is UDP too: every connection is TCP through the guard's proxy
    "--disable-background-networking",
    "--disable-dev-shm-usage",  # containers give /dev/shm 64 MB, too little for pages
    "--disable-breakpad",
)


class Browsers:
    """Lives on the browser's loop (:class:`LoopThread`); :func:`browsers` is the one."""

    def __init__(self, thread: LoopThread) -> None:
        self.thread = thread
        self.settings: Settings | None = None
        self.home: Path | None = None
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._record: OwnerRecord | None = None
        self._sessions: dict[str, BrowserSession] = {}
        self._lost: set[str] = set()  # sessions whose browser died under them
        self._starting = asyncio.Lock()
        self._reaper: asyncio.Task[None] | None = None
        self._cleaned = False

    # --- sessions --------------------------------------------------------------------------

    async def use(
        self,
        session_id: str,
        home: str,
        settings: Settings,
        action: Callable[[BrowserSession], Awaitable[T]],
    ) -> T:
        """Run ``action`` on the session's browser, one action per session at a time."""
        session = await self._session(session_id, Path(home), settings)
        try:
            async with session.lock:
                session.last_used = time.monotonic()
                try:
                    return await action(session)
                finally:
                    session.last_used = time.monotonic()
        finally:
            # The cap yields while every session is busy (a burst of calls); once a call
            # ends, the sessions past it that are idle again are closed, oldest first.
            cap = settings.browser.max_sessions
            if len(self._sessions) > cap:
                async with self._starting:
                    await self._make_room(cap)

    async def _session(self, session_id: str, home: Path, settings: Settings) -> BrowserSession:
        async with self._starting:
            if self.settings is not None and settings != self.settings:
                log.info("the browser settings changed: the browser starts again")
                await self.close_all()
            browser = await self._running(home, settings)
            session = self._sessions.get(session_id)
            if session is not None:
                return session
            await self._make_room(settings.browser.max_sessions - 1)
            downloads = home / "browser" / "downloads" / _safe(session_id)
            guard = SsrfGuard(settings.allow_private_hosts)
            session = await BrowserSession.open(
                browser, session_id, settings.browser, guard, downloads
            )
            self._sessions[session_id] = session
            if session_id in self._lost:
                self._lost.discard(session_id)
                session.note("[browser] the browser had stopped; this is a new one")
            return session

    async def _make_room(self, keep: int) -> None:
        while len(self._sessions) > keep:
            idle = [s for s in self._sessions.values() if not s.lock.locked()]
            if not idle:
                return  # every session is busy: the cap yields rather than cut a call
            oldest = min(idle, key=lambda s: s.last_used)
            log.info("browser: session %s closed to make room", oldest.session_id)
            await self.close_session(oldest.session_id)

    async def close_session(self, session_id: str) -> bool:
        session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        await session.close()
        return True

    def session_count(self) -> int:
        return len(self._sessions)

    # --- the browser -----------------------------------------------------------------------

    async def _running(self, home: Path, settings: Settings) -> Browser:
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        if self._browser is not None:
            log.warning("the browser stopped answering; a new one starts")
            await self._lose_browser()
        if not self._cleaned:
            self._cleaned = True
            await asyncio.to_thread(clean_leftovers, home)
        self.home, self.settings = home, settings
        from playwright.async_api import async_playwright

        if self._playwright is None:
            self._playwright = await async_playwright().start()
        chromium = self._playwright.chromium
        section = settings.browser
        if section.cdp_url:
            self._browser = await chromium.connect_over_cdp(
                section.cdp_url, timeout=section.timeout_seconds * 1000
            )
        else:
            executable = find_chromium(section)
            self._record = await asyncio.to_thread(remember, home, _driver_pid())
            arguments = [*_ARGUMENTS, f"{MARKER}{owner_tag()}"]
            if os.name == "posix" and os.geteuid() == 0:
                # Chromium's sandbox refuses root. The OS account, not this, is the boundary.
                arguments.append("--no-sandbox")
            # Pages run in Chromium: it holds none of the keys Hermes may have.
            environment: dict[str, str | float | bool] = {**safe_environment(_WINDOW_VARIABLES)}
            try:
                self._browser = await chromium.launch(
                    executable_path=executable,
                    headless=section.headless,
                    args=arguments,
                    env=environment,
                    timeout=_LAUNCH_SECONDS * 1000,
                    handle_sigint=False,  # Hermes decides when Ctrl-C ends the browser
                    handle_sigterm=False,
                    handle_sighup=False,
                )
            except BaseException:
                await asyncio.to_thread(end_own_browsers)  # a half-started one is not left
                raise
        self._browser.on("disconnected", lambda _browser: log.info("the browser is gone"))
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap())
        log.info(
            "browser started: %s",
            section.cdp_url or ("headless" if section.headless else "windowed"),
        )
        return self._browser

    async def _lose_browser(self) -> None:
        """The browser died (or its connection did): its sessions are gone, each is told on
        its next call, and whatever is left of it is ended before the next one starts."""
        self._lost |= set(self._sessions)
        for session in list(self._sessions.values()):
            await session.close()
        self._sessions.clear()
        self._browser = None
        await asyncio.to_thread(end_own_browsers)

    async def _reap(self) -> None:
        """Close idle sessions, and the browser once none is left."""
        while True:
            settings = self.settings
            if settings is None:
                return
            idle = settings.browser.idle_seconds
            await asyncio.sleep(min(max(idle / 4, 0.05), 30))
            now = time.monotonic()
            async with self._starting:
                for session in list(self._sessions.values()):
                    if now - session.last_used >= idle and not session.lock.locked():
                        log.info("browser: session %s idle, closed", session.session_id)
                        await self.close_session(session.session_id)
                if not self._sessions and self._browser is not None:
                    log.info("browser: no session uses it, closed")
                    await self.close_all()
                    return

    async def close_all(self) -> None:
        reaper, self._reaper = self._reaper, None
        if reaper is not None and reaper is not asyncio.current_task():
            reaper.cancel()  # the next browser's reaper reads the next settings
        for session_id in list(self._sessions):
            await self.close_session(session_id)
        browser, self._browser = self._browser, None
        if browser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(browser.close(), 10)
        playwright, self._playwright = self._playwright, None
        if playwright is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(playwright.stop(), 10)
        if self._record is not None and self.home is not None:
            forget(self.home, self._record)
            self._record = None
        self.settings = None


def _driver_pid() -> int | None:
    """The Playwright driver just started by this process (a child running node), for the
    owner record: killed with this process, it is ended at the next start too."""
    import psutil

    for child in psutil.Process().children():
        try:
            if "run-driver" in " ".join(child.cmdline()):
                return int(child.pid)
        except psutil.Error:
            continue
    return None


def _safe(session_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:100] or "session"


_thread = LoopThread("hermes-browser")
_browsers: Browsers | None = None


_making = threading.Lock()


def browsers() -> Browsers:
    """The process's one manager (made by the first of however many threads ask at once)."""
    global _browsers  # noqa: PLW0603 - one browser manager per process
    with _making:
        if _browsers is None:
            _browsers = _thread.call(_make(), timeout=10)
            atexit.register(shut_down)
        return _browsers


async def _make() -> Browsers:
    return Browsers(_thread)


def close_session(session_id: str) -> None:
    """A session ended: close its context (nothing to do when no browser was started)."""
    if _browsers is not None and _thread.running():
        with contextlib.suppress(Exception):
            _thread.call(_browsers.close_session(session_id), timeout=15)


def shut_down() -> None:
    """Hermes exits: close every context and the browser, so no Chromium outlives it."""
    if _browsers is not None and _thread.running():
        with contextlib.suppress(Exception):
            _thread.call(_browsers.close_all(), timeout=20)
