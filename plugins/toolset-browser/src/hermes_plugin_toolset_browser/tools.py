"""The browser tools' handlers. Each runs its Playwright calls on the browser's loop (see
:mod:`loop_thread`) and answers in text: what the page is now, and anything the guard
refused on the way."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from hermes_commons.scan import as_untrusted
from hermes_plugin_toolset_browser.browser import browsers
from hermes_plugin_toolset_browser.session import BrowserSession
from hermes_plugin_toolset_browser.settings import settings_from
from hermes_plugin_toolset_browser.snapshot import bounded, compact, ref_of
from hermes_sdk.media import MediaCache
from hermes_sdk.tooling import ToolContext

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page, Response

__all__ = [
    "back",
    "click",
    "close",
    "console",
    "get_images",
    "navigate",
    "press",
    "scroll",
    "snapshot",
    "type_text",
    "vision",
]

T = TypeVar("T")

_SCHEMES_REFUSED = ("file", "chrome", "data", "javascript", "about", "view-source", "blob")
_SETTLE_SECONDS = 2.0
_QUIET_SECONDS = 0.1  # no request started or ended for this long: the page has settled
_ACTION_SECONDS = 0.15  # after a click or a key, for a tab it opens
_IMAGES_LISTED = 50

_IMAGES_SCRIPT = """els => els.slice(0, 200).map(e => ({src: e.currentSrc || e.src,
  alt: e.alt || "", width: e.naturalWidth, height: e.naturalHeight}))"""


async def _in_browser(context: ToolContext, action: Callable[[BrowserSession], Awaitable[T]]) -> T:
    settings = settings_from(context.config)
    manager = await asyncio.to_thread(browsers)
    return await manager.thread.run(
        manager.use(context.session_id, context.home, settings, _plain_errors(action))
    )


def _plain_errors(
    action: Callable[[BrowserSession], Awaitable[T]],
) -> Callable[[BrowserSession], Awaitable[T]]:
    """Playwright's errors as one line for the model (its call logs stay out)."""

    async def run(session: BrowserSession) -> T:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        session.begin_action()
        try:
            return await action(session)
        except PlaywrightTimeout as exc:
            raise RuntimeError(f"timed out: {_first_line(exc)}") from None
        except PlaywrightError as exc:
            raise RuntimeError(_explained(session, _first_line(exc))) from None

    return run


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _explained(session: BrowserSession, message: str) -> str:
    """Chromium says only that the proxy refused: the guard's own line says why."""
    session.take_refusals()
    refused = session.refusal_explaining()
    session.begin_action()
    if "ERR_SOCKS_CONNECTION_FAILED" in message and refused:
        return refused
    if "ERR_SOCKS_CONNECTION_FAILED" in message:
        return f"{message} (the page's host could not be reached)"
    return message


async def _view(session: BrowserSession, page: Page, headline: str = "") -> str:
    """The page now: title, URL, a snapshot, and what was refused or opened on the way."""
    limit = session.settings.snapshot_chars
    lines = [headline] if headline else []
    if note := session.opened_tab():  # the action opened a tab: it is the page now
        lines.append(note)
        page = await session.page()
        await _settle(session, page)
    try:
        tree = compact(
            await page.aria_snapshot(
                mode="ai", timeout=session.settings.action_timeout_seconds * 1000
            )
        )
    except Exception as exc:  # noqa: BLE001 - a page that will not describe itself is still news
        tree = f"(no snapshot: {_first_line(exc)})"
    title = await _title(page)
    lines.append(f"Page: {title} ({page.url})" if title else f"Page: {page.url}")
    refused = Counter(session.take_refusals())  # in the order first refused
    if refused:
        shown = [f"- {line}" + (f" ({n} times)" if n > 1 else "") for line, n in refused.items()]
        more = [f"- … and {len(shown) - 10} more"] if len(shown) > 10 else []
        total = sum(refused.values())
        lines.append(f"The guard refused {total} request(s) of this page:")
        lines.extend(shown[:10] + more)
    # The page is anyone's text (hidden white text included): data, scanned, never orders.
    lines.append(as_untrusted(bounded(tree, limit), f"the web page {page.url}"))
    return "\n".join(lines)


async def _title(page: Page) -> str:
    try:
        return (await asyncio.wait_for(page.title(), 5)).strip()
    except Exception:  # noqa: BLE001 - a title is a nicety; a busy or dead page has none
        return ""


async def _settle(session: BrowserSession, page: Page, least: float = 0.0) -> None:
    """Give scripts a moment to build the page: until it has loaded and the session's
    requests have been quiet for a moment, ``least`` seconds at least (a tab an action opens
    comes a moment later), and never longer than a few seconds (a page that keeps talking is
    not waited for: the snapshot says what is there)."""
    from playwright.async_api import Error as PlaywrightError

    started = time.monotonic()
    with contextlib.suppress(PlaywrightError):
        await page.wait_for_load_state("load", timeout=_SETTLE_SECONDS * 1000)
    while time.monotonic() - started < _SETTLE_SECONDS and not session.opened_tab_pending():
        waited = time.monotonic() - started
        if waited >= least and session.quiet_for() >= _QUIET_SECONDS:
            return
        await asyncio.sleep(0.02)


def _checked_url(url: str) -> str:
    url = url.strip()
    if not url:
        raise ValueError("url is empty: give an http(s) address")
    scheme = urlsplit(url).scheme.lower()
    if scheme in _SCHEMES_REFUSED:
        raise ValueError(f"{scheme}: addresses are refused: the browser opens http(s) pages only")
    if not scheme or "." in scheme:  # "example.org/path", "localhost:8080"
        url = f"https://{url}"
        scheme = "https"
    if scheme not in ("http", "https"):
        raise ValueError(f"{scheme}: addresses are refused: the browser opens http(s) pages only")
    return url


async def _element(page: Page, ref: str) -> Locator:
    """The element ``ref`` names, at once: a ref that is gone fails now, not at a timeout."""
    element = page.get_by_ref(ref)
    if await element.count() == 0:
        raise RuntimeError(
            f"no element [{ref}] on the page now: take a new browser_snapshot and use its refs"
        )
    return element


async def navigate(url: str, *, context: ToolContext) -> str:
    address = _checked_url(url)

    async def go(session: BrowserSession) -> str:
        page = await session.page(fresh=True)
        session.begin_action(urlsplit(address).hostname)
        response = await _goto(session, page, address)
        await _settle(session, page)
        status = f"HTTP {response.status}" if response is not None else "no response"
        return await _view(session, page, headline=f"Opened {page.url} ({status})")

    return await _in_browser(context, go)


async def _goto(session: BrowserSession, page: Page, address: str) -> Response | None:
    """Open ``address``. A failed load leaves Chromium busy with its error page, which would
    cut short the next navigation in that tab: the tab is closed, and the next navigation
    opens a new one."""
    try:
        return await page.goto(address, wait_until="domcontentloaded")
    except BaseException:
        await session.discard(page)
        raise


async def snapshot(*, context: ToolContext) -> str:
    async def look(session: BrowserSession) -> str:
        return await _view(session, await session.page())

    return await _in_browser(context, look)


async def click(ref: str, *, context: ToolContext) -> str:
    target = ref_of(ref)

    async def press_on(session: BrowserSession) -> str:
        page = await session.page()
        await (await _element(page, target)).click()
        await _settle(session, page, _ACTION_SECONDS)
        return await _view(session, (await session.page()), headline=f"Clicked [{target}]")

    return await _in_browser(context, press_on)


async def type_text(ref: str, text: str, submit: bool = False, *, context: ToolContext) -> str:
    target = ref_of(ref)

    async def fill(session: BrowserSession) -> str:
        page = await session.page()
        field = await _element(page, target)
        await field.fill(text)
        if submit:
            await field.press("Enter")
            await _settle(session, page, _ACTION_SECONDS)
        done = f"Typed into [{target}]" + (" and pressed Enter" if submit else "")
        return await _view(session, await session.page(), headline=done)

    return await _in_browser(context, fill)


async def press(key: str, *, context: ToolContext) -> str:
    key = key.strip()
    if not key:
        raise ValueError("key is empty: give a key such as Enter, Escape, ArrowDown or Control+A")

    async def key_down(session: BrowserSession) -> str:
        page = await session.page()
        await page.keyboard.press(key)
        await _settle(session, page, _ACTION_SECONDS)
        return await _view(session, await session.page(), headline=f"Pressed {key}")

    return await _in_browser(context, key_down)


async def scroll(direction: str = "down", *, context: ToolContext) -> str:
    way = direction.strip().lower()
    if way not in ("up", "down"):
        raise ValueError(f"direction {direction!r}: give up or down")

    async def move(session: BrowserSession) -> str:
        page = await session.page()
        size = page.viewport_size or {"height": 900}
        step = int(size["height"] * 0.8) * (1 if way == "down" else -1)
        await page.mouse.wheel(0, step)
        await page.wait_for_timeout(300)  # smooth scrolling and lazy content
        return await _view(session, page, headline=f"Scrolled {way}")

    return await _in_browser(context, move)


async def back(*, context: ToolContext) -> str:
    async def go_back(session: BrowserSession) -> str:
        page = await session.page()
        response = await page.go_back(wait_until="domcontentloaded")
        if response is None and page.url in ("", "about:blank"):
            raise RuntimeError("there is no earlier page in this tab")
        await _settle(session, page)
        return await _view(session, page, headline="Went back")

    return await _in_browser(context, go_back)


async def get_images(*, context: ToolContext) -> str:
    async def listed(session: BrowserSession) -> str:
        page = await session.page()
        found: list[dict[str, Any]] = await page.eval_on_selector_all("img", _IMAGES_SCRIPT)
        shown = [i for i in found if str(i.get("src", "")).startswith(("http://", "https://"))]
        if not shown:
            return f"no images with an http(s) address on {page.url}"
        lines = [f"{len(shown)} image(s) on {page.url}:"]
        for image in shown[:_IMAGES_LISTED]:
            alt = f' "{image["alt"]}"' if image.get("alt") else ""
            lines.append(f"- {image['src']}{alt} ({image['width']}x{image['height']})")
        if len(shown) > _IMAGES_LISTED:
            lines.append(f"- … and {len(shown) - _IMAGES_LISTED} more")
        return "\n".join(lines)

    return await _in_browser(context, listed)


async def console(clear: bool = True, *, context: ToolContext) -> str:
    async def read(session: BrowserSession) -> str:
        notes = session.take_notes() if clear else list(session.notes)
        session.take_refusals()  # shown here; not again with the next page
        if not notes:
            return "nothing was logged since the last look"
        return "\n".join(notes)

    return await _in_browser(context, read)


async def vision(question: str, send_to_user: bool = False, *, context: ToolContext) -> str:
    if not question.strip():
        raise ValueError("question is empty: say what to find out from the page's screenshot")

    async def shoot(session: BrowserSession) -> bytes:
        page = await session.page()
        return await page.screenshot(type="png")

    image = await _in_browser(context, shoot)
    cache = MediaCache.of_home(context.home, context.config)
    kept = await asyncio.to_thread(cache.ingest, image, name="screenshot.png", expect="image")
    answer = await asyncio.to_thread(context.ask_model_about_images, question, [kept])
    if send_to_user:
        context.send_file(kept)
    return f"{answer}\n(screenshot kept at {kept.path})"


async def close(*, context: ToolContext) -> str:
    manager = await asyncio.to_thread(browsers)
    closed = await manager.thread.run(manager.close_session(context.session_id))
    return "closed this session's pages and cookies" if closed else "no browser was open"
