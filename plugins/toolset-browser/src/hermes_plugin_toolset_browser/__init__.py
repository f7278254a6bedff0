"""The browser tools: pages that need JavaScript, forms and clicks, in a headless Chromium
driven by Playwright, every connection through the web tools' SSRF guard.

Importing this is cheap: Playwright loads, and the browser starts, on the first tool call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import (
    ConfigSectionSpec,
    Finding,
    HealthContext,
    SessionInfo,
    StatusLine,
    ToolsetSpec,
    ToolSpec,
    hookimpl,
)

TOOLSET = "browser"
_TIMEOUT = 120.0  # above a page load and a snapshot (browser.timeout_seconds, at most 300)

_REF = {"type": "string", "description": "an element's ref from the latest snapshot, e.g. e12"}
_NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}


async def _navigate(url: str, *, context: Any) -> str:
    from hermes_plugin_toolset_browser.tools import navigate

    return await navigate(url, context=context)


async def _snapshot(*, context: Any) -> str:
    from hermes_plugin_toolset_browser.tools import snapshot

    return await snapshot(context=context)


async def _click(ref: str, *, context: Any) -> str:
    from hermes_plugin_toolset_browser.tools import click

    return await click(ref, context=context)


async def _type(ref: str, text: str, submit: bool = False, *, context: Any) -> str:
    from hermes_plugin_toolset_browser.tools import type_text

    return await type_text(ref, text, submit, context=context)


async def _press(key: str, *, context: Any) -> str:
    from hermes_plugin_toolset_browser.tools import press

    return await press(key, context=context)


async def _scroll(direction: str = "down", *, context: Any) -> str:
    from hermes_plugin_toolset_browser.tools import scroll

    return await scroll(direction, context=context)


async def _back(*, context: Any) -> str:
    from hermes_plugin_toolset_browser.tools import back

    return await back(context=context)


async def _images(*, context: Any) -> str:
    from hermes_plugin_toolset_browser.tools import get_images

    return await get_images(context=context)


async def _console(clear: bool = True, *, context: Any) -> str:
    from hermes_plugin_toolset_browser.tools import console

    return await console(clear, context=context)


async def _vision(question: str, send_to_user: bool = False, *, context: Any) -> str:
    from hermes_plugin_toolset_browser.tools import vision

    return await vision(question, send_to_user, context=context)


async def _close(*, context: Any) -> str:
    from hermes_plugin_toolset_browser.tools import close

    return await close(context=context)


def _tool(name: str, description: str, handler: Any, parameters: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        handler=handler,
        parameters=parameters,
        toolset=TOOLSET,
        takes_context=True,
        timeout_seconds=_TIMEOUT,
    )


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(name=TOOLSET, description="browse pages that need JavaScript: click, type")


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield _tool(
        "browser_navigate",
        "Open a web page in a real browser (JavaScript runs) and get its snapshot: the "
        "page's text and elements, each element to act on marked with a ref like [e12]. "
        "For reading a page as served, web_extract is cheaper.",
        _navigate,
        _object({"url": {"type": "string", "description": "an http(s) address"}}, ["url"]),
    )
    yield _tool(
        "browser_snapshot",
        "The current page's snapshot again (after it changed by itself).",
        _snapshot,
        _NO_ARGUMENTS,
    )
    yield _tool(
        "browser_click",
        "Click an element by its ref from the latest snapshot; returns the new snapshot.",
        _click,
        _object({"ref": _REF}, ["ref"]),
    )
    yield _tool(
        "browser_type",
        "Type text into a field by its ref (what was in it is replaced); submit presses "
        "Enter after. Returns the new snapshot.",
        _type,
        _object(
            {
                "ref": _REF,
                "text": {"type": "string", "description": "what to type"},
                "submit": {"type": "boolean", "description": "press Enter after (default no)"},
            },
            ["ref", "text"],
        ),
    )
    yield _tool(
        "browser_press",
        "Press a key on the page: Enter, Escape, Tab, ArrowDown, PageDown, Control+A ...",
        _press,
        _object(
            {"key": {"type": "string", "description": "the key, as Playwright names it"}}, ["key"]
        ),
    )
    yield _tool(
        "browser_scroll",
        "Scroll the page up or down by most of a screen; returns the new snapshot.",
        _scroll,
        _object(
            {"direction": {"type": "string", "enum": ["up", "down"], "description": "which way"}},
            ["direction"],
        ),
    )
    yield _tool("browser_back", "Go back to the previous page.", _back, _NO_ARGUMENTS)
    yield _tool(
        "browser_get_images",
        "List the current page's images: address, alt text and size.",
        _images,
        _NO_ARGUMENTS,
    )
    yield _tool(
        "browser_console",
        "What the page logged: console messages, script errors, dialogs, downloads, and "
        "requests the guard refused.",
        _console,
        _object(
            {"clear": {"type": "boolean", "description": "forget what was shown (default yes)"}},
            [],
        ),
    )
    yield _tool(
        "browser_vision",
        "Take a screenshot of the page and ask a model that sees about it (layout, charts, "
        "images, CAPTCHAs); send_to_user also sends the screenshot to the user.",
        _vision,
        _object(
            {
                "question": {"type": "string", "description": "what to find out"},
                "send_to_user": {"type": "boolean", "description": "send the screenshot too"},
            },
            ["question"],
        ),
    )
    yield _tool(
        "browser_close",
        "Close this session's browser pages and forget its cookies.",
        _close,
        _NO_ARGUMENTS,
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="browser",
        description="The browser tools",
        model="hermes_plugin_toolset_browser.settings:BrowserSettings",
    )


_cleaned_homes: set[str] = set()


@hookimpl
def hermes_on_session_start(session: SessionInfo) -> None:
    """The first session of a process ends what a killed Hermes's browser left behind."""
    home = getattr(session, "home", None)
    if not home or home in _cleaned_homes:
        return
    _cleaned_homes.add(home)
    import os

    if not os.path.isdir(os.path.join(home, "browser", "owners")):
        return  # no browser was ever started from this home: nothing to import or clean
    from hermes_plugin_toolset_browser.processes import clean_leftovers

    clean_leftovers(home)


@hookimpl
def hermes_on_session_end(session: SessionInfo, reason: str) -> None:
    import sys

    if "hermes_plugin_toolset_browser.browser" not in sys.modules:
        return  # no browser was started in this process
    from hermes_plugin_toolset_browser.browser import close_session

    close_session(session.session_id)


@hookimpl
def hermes_status_lines(context: HealthContext) -> Iterator[StatusLine]:
    from hermes_plugin_toolset_browser.health import status_lines

    yield from status_lines(context)


@hookimpl
def hermes_doctor_checks(context: HealthContext) -> Iterator[Finding]:
    from hermes_plugin_toolset_browser.health import findings

    yield from findings(context)
