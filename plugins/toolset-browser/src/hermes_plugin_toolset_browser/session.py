"""One session's browser: a context of its own (its cookies, storage and cache are nobody
else's), its guard proxy, its tabs, and what its pages said (console messages, errors,
dialogs, downloads and the guard's refusals) for ``browser_console``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_commons.ssrf import SsrfGuard
from hermes_plugin_toolset_browser.guard_proxy import GuardProxy
from hermes_plugin_toolset_browser.settings import BrowserSettings

if TYPE_CHECKING:
    from playwright.async_api import (
        Browser,
        BrowserContext,
        ConsoleMessage,
        Dialog,
        Download,
        Page,
        Request,
    )

__all__ = ["BrowserSession", "PageGone"]

log = logging.getLogger(__name__)

_NOTES_KEPT = 200
_NOTE_CHARS = 500
_IN_FLIGHT_KEPT = 1000
_LONG_REQUEST_SECONDS = 3.0


class PageGone(RuntimeError):
    """The session's page is no more (its renderer crashed, it was closed): the message
    says so, and the next navigation opens a new one."""


class BrowserSession:
    """Made by :meth:`open`; every method runs on the browser's loop."""

    def __init__(self, session_id: str, settings: BrowserSettings, downloads: Path) -> None:
        self.session_id = session_id
        self.settings = settings
        self.downloads = downloads
        self.lock = asyncio.Lock()  # one call at a time per session
        self.last_used = time.monotonic()
        self.notes: deque[str] = deque(maxlen=_NOTES_KEPT)
        self.refusals: list[str] = []  # since the last call, for its result
        self.recent_refusals: list[tuple[str, str]] = []
        """(host, line) refused since the current action began: to explain one that failed."""
        self.navigating_to: str | None = None
        """The host a navigation asked for, whose refusal explains its failure best."""
        self.context: BrowserContext | None = None
        self.proxy: GuardProxy | None = None
        self._page: Page | None = None
        self._crashed = False
        self._opened_note: str | None = None
        self._in_flight: dict[Request, float] = {}
        self._last_request = 0.0

    @classmethod
    async def open(
        cls,
        browser: Browser,
        session_id: str,
        settings: BrowserSettings,
        guard: SsrfGuard,
        downloads: Path,
    ) -> BrowserSession:
        session = cls(session_id, settings, downloads)
        session.proxy = GuardProxy(guard, session._refused, settings.timeout_seconds)
        server = await session.proxy.start()
        try:
            session.context = await browser.new_context(
                proxy={"server": server},
                accept_downloads=settings.downloads == "keep",
                # Routing would miss a service worker's requests; the proxy would not, but
                # a worker serving pages from its cache would make them stale: none here.
                service_workers="block",
                viewport={"width": 1280, "height": 900},
            )
        except BaseException:
            await session.proxy.close()
            raise
        session.context.on("request", session._request_started)
        session.context.on("requestfinished", session._request_ended)
        session.context.on("requestfailed", session._request_ended)
        session.context.set_default_timeout(settings.action_timeout_seconds * 1000)
        session.context.set_default_navigation_timeout(settings.timeout_seconds * 1000)
        return session

    # --- the network, for knowing when a page has settled -------------------------------

    def _request_started(self, request: Request) -> None:
        now = time.monotonic()
        self._in_flight[request] = now
        self._last_request = now
        if len(self._in_flight) > _IN_FLIGHT_KEPT:  # a page that never ends its requests
            for old in list(self._in_flight)[: _IN_FLIGHT_KEPT // 2]:
                del self._in_flight[old]

    def _request_ended(self, request: Request) -> None:
        self._in_flight.pop(request, None)
        self._last_request = time.monotonic()

    def quiet_for(self) -> float:
        """Seconds since a request started or ended; 0 while a recent one is in flight (a
        long poll or a stream older than a few seconds does not count)."""
        now = time.monotonic()
        if any(now - started < _LONG_REQUEST_SECONDS for started in self._in_flight.values()):
            return 0.0
        return now - self._last_request

    # --- what the pages say ------------------------------------------------------------

    def note(self, line: str) -> None:
        self.notes.append(line if len(line) <= _NOTE_CHARS else line[:_NOTE_CHARS] + " …")

    def begin_action(self, host: str | None = None) -> None:
        """A new action starts: earlier refusals explain nothing about it."""
        self.recent_refusals.clear()
        self.navigating_to = host

    def refusal_explaining(self) -> str | None:
        """The refusal that best explains a failed action: its own host's, else the newest
        (the host a redirect led to)."""
        for host, line in reversed(self.recent_refusals):
            if host == self.navigating_to:
                return line
        return self.recent_refusals[-1][1] if self.recent_refusals else None

    def _refused(self, host: str, line: str, judged: bool) -> None:
        self.recent_refusals.append((host, line))
        del self.recent_refusals[:-_NOTES_KEPT]
        if not judged:  # an unknown name: the page's news, not the guard's
            self.note(f"[network] {line}")
            return
        self.refusals.append(line)
        self.note(f"[guard] {line}")
        log.info("browser session %s: %s", self.session_id, line)

    def _console(self, message: ConsoleMessage) -> None:
        self.note(f"[{message.type}] {message.text}")

    def _page_error(self, error: Exception) -> None:
        self.note(f"[error] uncaught: {error}")

    def _crash(self, page: Page) -> None:
        if page is self._page:
            self._crashed = True
        self.note("[crash] the page's renderer died")

    async def _dialog(self, dialog: Dialog) -> None:
        self.note(f"[dialog] {dialog.type}: {dialog.message} (dismissed)")
        with contextlib.suppress(Exception):
            await dialog.dismiss()

    async def _download(self, download: Download) -> None:
        name = Path(download.suggested_filename).name or "download"
        if self.settings.downloads != "keep":
            self.note(f"[download] {name} refused (browser.downloads is refuse)")
            with contextlib.suppress(Exception):
                await download.cancel()
            return
        self.downloads.mkdir(parents=True, exist_ok=True)
        target = self.downloads / name
        try:
            await download.save_as(target)
        except Exception as exc:  # noqa: BLE001 - a failed download is the page's news, not the session's end
            self.note(f"[download] {name} failed: {exc}")
            return
        size = target.stat().st_size
        if size > self.settings.max_download_mb * 1_000_000:
            target.unlink(missing_ok=True)
            self.note(f"[download] {name} removed: {size} bytes is over browser.max_download_mb")
        else:
            self.note(f"[download] {name} kept at {target} ({size} bytes)")

    def _watch(self, page: Page) -> None:
        page.on("console", self._console)
        page.on("pageerror", self._page_error)
        page.on("crash", self._crash)
        page.on("dialog", self._dialog)
        page.on("download", self._download)
        page.on("popup", self._new_page)

    async def _new_page(self, page: Page) -> None:
        """A tab the page opened (a pop-up, a target=_blank link): it becomes the current
        page, within ``max_pages``."""
        assert self.context is not None  # pages come from an open context
        if len(self.context.pages) > self.settings.max_pages:
            self.note(f"[tab] a pop-up was closed: at most {self.settings.max_pages} tabs")
            with contextlib.suppress(Exception):
                await page.close()
            return
        self._watch(page)
        self._page = page
        self._crashed = False
        self._opened_note = "it opened a new tab, now the current page"

    # --- the current page --------------------------------------------------------------

    async def page(self, *, fresh: bool = False) -> Page:
        """The current page. A crashed or closed one raises PageGone, once: a navigation
        (``fresh``) opens a new page instead."""
        assert self.context is not None  # a session is used only once open
        current = self._page
        if current is not None and (self._crashed or current.is_closed()):
            self._page = None
            crashed = self._crashed
            self._crashed = False
            with contextlib.suppress(Exception):
                await current.close()
            if not fresh:
                what = "crashed (its renderer died)" if crashed else "was closed"
                raise PageGone(f"the page {what}; open it again with browser_navigate")
            current = None
        if current is None:
            if not fresh:
                raise PageGone("no page is open in this session: browser_navigate first")
            self._page = current = await self.context.new_page()
            self._watch(current)
        return current

    async def discard(self, page: Page) -> None:
        """Close ``page``; the next navigation opens a new one."""
        if page is self._page:
            self._page = None
        with contextlib.suppress(Exception):
            await page.close()

    def opened_tab_pending(self) -> bool:
        return self._opened_note is not None

    def opened_tab(self) -> str | None:
        """A note that the last action opened a new tab, once."""
        note, self._opened_note = self._opened_note, None
        return note

    def take_refusals(self) -> list[str]:
        taken, self.refusals = self.refusals, []
        return taken

    def take_notes(self) -> list[str]:
        taken = list(self.notes)
        self.notes.clear()
        return taken

    async def close(self) -> None:
        context, self.context = self.context, None
        if context is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(context.close(), 10)
        if self.proxy is not None:
            await self.proxy.close()
