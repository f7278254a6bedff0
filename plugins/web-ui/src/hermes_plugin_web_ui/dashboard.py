"""The dashboard's pages: every plugin's panel (``hermes_dashboard_panels``) drawn from its
typed blocks, its buttons and forms posted back to it, and its live lines polled.

A panel's ``view`` has ``web_ui.panel_seconds``, an ``act`` ``web_ui.action_seconds`` (an
install, a test call); one that fails or hangs is one line on its own page, never the
server's end. (A panel that blocks the event loop inside a coroutine stalls the server:
the contract says blocking work goes to a thread.) The
guard (login, CSRF, Host) has already run for every request that reaches here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

from aiohttp import web

from hermes_plugin_web_ui.access import VISITOR
from hermes_sdk.dashboard import Outcome, PanelError, PanelInfo, PanelView, TailingPanel

if TYPE_CHECKING:
    from hermes_plugin_web_ui.pages import Pages

__all__ = ["Dashboard"]

log = logging.getLogger("hermes.web_ui")

RESERVED_FIELDS = frozenset({"csrf", "_action", "_query"})


class Dashboard:
    def __init__(self, pages: Pages) -> None:
        self.pages = pages
        self.runtime = pages.runtime
        settings = pages.web_ui.settings
        self.view_seconds = settings.panel_seconds
        self.act_seconds = settings.action_seconds
        """An action may install a package or call a model: long, but never forever."""
        self._flash: dict[tuple[str, str], tuple[str, bool]] = {}
        """(visitor, panel) -> an action's line, shown once by the page loaded next."""
        self._typed: dict[tuple[str, str], tuple[str, dict[str, str]]] = {}
        """(visitor, panel) -> a refused form's action and values, put back in it once."""
        self._listed: list[PanelInfo] | None = None

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_get("/panels/{name}", self.show)
        router.add_post("/panels/{name}/act", self.act)
        router.add_get("/api/panels/{name}/tail", self.tail)

    @property
    def menu(self) -> list[PanelInfo]:
        """The panels the menu names (listed when the server started)."""
        return self._listed or []

    async def listed(self) -> list[PanelInfo]:
        """The panels for the menu, asked once (plugins do not come and go while serving)."""
        if self._listed is None:
            try:
                self._listed = await self.runtime.panels()
            except Exception as exc:  # noqa: BLE001 - the menu without panels, said in the log
                log.warning("web ui: the dashboard's panels cannot be listed: %s", exc)
                return []
        return self._listed

    async def _info(self, name: str) -> PanelInfo:
        for info in await self.listed():
            if info.name == name:
                return info
        raise web.HTTPNotFound(text=f"no dashboard page named {name!r}")

    async def show(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        info = await self._info(name)
        visitor = request.get(VISITOR)
        flash = self._flash.pop((visitor.sid, name), None) if visitor else None
        typed = self._typed.pop((visitor.sid, name), None) if visitor else None
        return await self._page(request, info, dict(request.query), flash=flash, typed=typed)

    async def _page(
        self,
        request: web.Request,
        info: PanelInfo,
        query: Mapping[str, str],
        *,
        flash: tuple[str, bool] | None = None,
        view: PanelView | None = None,
        typed: tuple[str, Mapping[str, str]] | None = None,
        status: int = 200,
    ) -> web.Response:
        problem = None
        if view is None:
            try:
                view = await asyncio.wait_for(self._view(info.name, query), self.view_seconds)
            except TimeoutError:
                problem = f"the {info.title} page did not answer within {self.view_seconds:g} s"
            except Exception as exc:  # noqa: BLE001 - a plugin's failure: one line on its page
                problem = f"the {info.title} page failed: {_one_line(exc)}"
                log.warning("web ui: panel %r (plugin %r) failed: %s", info.name, info.plugin, exc)
        values: dict[str, Any] = {
            "panel": info,
            "flash": flash,
            "typed": typed,
            "query": urlencode(sorted(query.items())),
        }
        try:
            return self.pages.render(
                request, "panel.html", status=status, view=view, problem=problem, **values
            )
        except Exception as exc:  # noqa: BLE001 - a view the page cannot draw: one line
            log.warning("web ui: panel %r gave a view that cannot be drawn: %s", info.name, exc)
            problem = f"the {info.title} page cannot be shown: {_one_line(exc)}"
            return self.pages.render(request, "panel.html", view=None, problem=problem, **values)

    async def _view(self, name: str, query: Mapping[str, str]) -> PanelView:
        panel = await self.runtime.panel(name)  # its building is under the deadline too
        return await panel.view(query)

    async def _act(self, name: str, action: str, values: Mapping[str, str]) -> Outcome:
        panel = await self.runtime.panel(name)
        return await panel.act(action, values)

    async def act(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        info = await self._info(name)
        form = await request.post()
        action = str(form.get("_action", ""))
        values: dict[str, str] = {}
        for key in form:  # a box ticked sends "false" (hidden) then "true": the last wins
            if key not in RESERVED_FIELDS:
                values[key] = str(form.getall(key)[-1])
        query = _query(str(form.get("_query", "")))
        typed: tuple[str, dict[str, str]] | None = None
        try:
            outcome = await asyncio.wait_for(self._act(name, action, values), self.act_seconds)
        except PanelError as exc:
            line = _one_line(exc)
            log.info("web ui: %s/%r refused: %s", name, action, line)
            outcome = Outcome(message=line, ok=False)
            typed = (action, values) if exc.keep_typed else None
        except TimeoutError:
            outcome = Outcome(
                message=f"no answer within {self.act_seconds:g} s: it may or may not have been "
                "done",
                ok=False,
            )
        except Exception as exc:  # noqa: BLE001 - a plugin's failure: said on its page
            log.warning("web ui: panel %r action %r failed: %s", name, action, exc)
            outcome = Outcome(message=f"{action} failed: {_one_line(exc)}", ok=False)
        log.info("web ui: %s/%r: %s", name, action, outcome.message)
        if outcome.view is not None:  # a preview to confirm: shown in place of the panel
            return await self._page(
                request, info, query, flash=(outcome.message, outcome.ok), view=outcome.view
            )
        # Always a redirect, the refusal too (what was typed goes back into the form): a
        # reload of the page never sends the action again.
        visitor = request.get(VISITOR)
        if visitor is not None:
            _keep(self._flash, (visitor.sid, name), (outcome.message, outcome.ok))
            if typed is not None:
                _keep(self._typed, (visitor.sid, name), typed)
        if outcome.query is not None:
            query = dict(outcome.query)
        target = f"/panels/{name}" + (f"?{urlencode(sorted(query.items()))}" if query else "")
        raise web.HTTPSeeOther(target)

    async def tail(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        await self._info(name)
        query = dict(request.query)
        cursor = query.pop("cursor", "")
        try:
            panel = await asyncio.wait_for(self.runtime.panel(name), self.view_seconds)
            if not isinstance(panel, TailingPanel):
                raise web.HTTPNotFound(text=f"the {name} page has no live lines")
            chunk = await asyncio.wait_for(panel.tail(cursor, query), self.view_seconds)
        except web.HTTPException:
            raise
        except Exception as exc:  # noqa: BLE001 - the page shows the line and keeps asking
            return web.json_response({"error": _one_line(exc)}, status=502)
        lines = [
            {"text": line.text, "level": line.level, "component": line.component}
            for line in chunk.lines
        ]
        return web.json_response({"lines": lines, "cursor": chunk.cursor})


KEPT_NOTES = 1000
"""The most one-shot notes (an action's line, a refused form's values) kept at a time: a
visitor who never comes back costs nothing for long."""

K = TypeVar("K")
V = TypeVar("V")


def _keep(notes: dict[K, V], key: K, value: V) -> None:
    notes.pop(key, None)
    notes[key] = value
    while len(notes) > KEPT_NOTES:
        notes.pop(next(iter(notes)))  # the oldest


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:500]


def _query(text: str) -> dict[str, str]:
    from urllib.parse import parse_qsl

    return dict(parse_qsl(text)) if text else {}


def block_kind(block: Any) -> str:
    """A block's type name, for the template to choose how to draw it."""
    return type(block).__name__.lower()
