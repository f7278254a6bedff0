"""The Logs page (a live tail, filtered by log, level and component, redacted as read) and
the Profiles page (list, create, make one the default), on the runtime's administration
facet."""

from __future__ import annotations

from collections.abc import Mapping

from hermes_sdk.dashboard import (
    Button,
    Field,
    Form,
    LogLine,
    LogTail,
    Outcome,
    PanelContext,
    PanelError,
    PanelView,
    Row,
    Section,
    Table,
    TailChunk,
    Text,
)
from hermes_sdk.runtime import Runtime

__all__ = ["LogsPanel", "ProfilesPanel"]

LEVELS = ("debug", "info", "warning", "error")


class LogsPanel:
    def __init__(self, context: PanelContext) -> None:
        self.runtime: Runtime = context.runtime

    async def view(self, query: Mapping[str, str]) -> PanelView:
        names = self.runtime.log_names()
        chosen = query.get("log") or (names[0] if names else "agent")
        filters = (
            Field(name="log", label="Log", kind="choice", choices=tuple(names), value=chosen),
            Field(
                name="level",
                label="Level",
                kind="choice",
                choices=LEVELS,
                value=query.get("level", "info"),
            ),
            Field(
                name="component",
                label="Component",
                value=query.get("component", ""),
                placeholder="hermes.cron",
            ),
        )
        return PanelView(
            sections=(
                Section(
                    title="Live",
                    blocks=(
                        Text(
                            text="New lines appear as they are written; secrets are redacted "
                            "as in the files. hermes logs -f reads the same."
                        ),
                        LogTail(filters=filters),
                    ),
                ),
            )
        )

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        raise PanelError("the logs are read-only")

    async def tail(self, cursor: str, query: Mapping[str, str]) -> TailChunk:
        try:
            read = await self.runtime.read_log(
                query.get("log", "agent"),
                cursor,
                level=query.get("level", ""),
                component=query.get("component", ""),
            )
        except ValueError as exc:
            raise PanelError(str(exc)) from None
        return TailChunk(
            lines=tuple(
                LogLine(text=text, level=level, component=component)
                for text, level, component in read.lines
            ),
            cursor=read.cursor,
        )


class ProfilesPanel:
    def __init__(self, context: PanelContext) -> None:
        self.runtime: Runtime = context.runtime

    async def view(self, query: Mapping[str, str]) -> PanelView:
        rows = []
        for profile in await self.runtime.profiles():
            marks = [
                "used by hermes commands" if profile.active else "",
                "this server's" if profile.current else "",
            ]
            rows.append(
                Row(
                    cells=(profile.name, profile.home, ", ".join(m for m in marks if m)),
                    buttons=()
                    if profile.active
                    else (Button(action="use", label="Use", values={"name": profile.name}),),
                    level="ok" if profile.active else None,
                )
            )
        return PanelView(
            sections=(
                Section(
                    title="Profiles",
                    blocks=(
                        Text(
                            text="Each profile is a home of its own: config, .env, sessions "
                            "and plugin files. Use makes it the default of later hermes "
                            "commands; this server keeps its home until restarted."
                        ),
                        Table(columns=("name", "home", "in use"), rows=tuple(rows)),
                    ),
                ),
                Section(
                    title="New profile",
                    blocks=(
                        Form(
                            action="create",
                            submit="Create",
                            fields=(
                                Field(name="name", label="Name", placeholder="work", required=True),
                                Field(
                                    name="clone",
                                    label="Start with this home's config.yaml, .env and SOUL.md",
                                    kind="bool",
                                    value="false",
                                ),
                            ),
                        ),
                    ),
                ),
            )
        )

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        name = values.get("name", "").strip()
        try:
            if action == "create":
                return Outcome(
                    message=await self.runtime.create_profile(
                        name, clone=values.get("clone") == "true"
                    )
                )
            if action == "use":
                return Outcome(message=await self.runtime.use_profile(name))
        except ValueError as exc:
            raise PanelError(str(exc)) from None
        raise PanelError(f"no action {action!r} on this page: reload it")
