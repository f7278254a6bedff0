"""The Gateway page of the dashboard: whether the gateway runs and how each platform is
doing (its status file), start / stop / restart, pairing requests to approve, paired users
to revoke, each platform's allowlist, and the delivery ledger's recent entries with their
attempts. Chat access is the gateway's, so its page is here; the allowlists are changed
through the runtime's checked config change, as ``hermes config set`` would."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_commons.outbox import Outbox
from hermes_commons.running import hermes_command
from hermes_commons.text import one_line
from hermes_plugin_gateway.pairing import PairingError, Pairings
from hermes_plugin_gateway.schema import SCHEMA
from hermes_plugin_gateway.status import installed_service, read_status, running_pid
from hermes_sdk import Kind
from hermes_sdk.dashboard import (
    Actions,
    Button,
    Facts,
    Field,
    Form,
    Level,
    Outcome,
    PanelContext,
    PanelError,
    PanelView,
    Row,
    Section,
    Table,
    Text,
)

__all__ = ["GatewayPanel"]

LEDGER_SHOWN = 30
PLATFORM_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
STOP_SECONDS = 60.0
STATE_LEVELS: dict[str, Level] = {"running": "ok", "failed": "error", "starting": "warn"}
DELIVERY_LEVELS: dict[str, Level] = {"delivered": "ok", "abandoned": "error", "attempting": "warn"}


def _when(moment: Any) -> str:
    if not moment:
        return "-"
    return datetime.fromtimestamp(float(moment)).strftime("%Y-%m-%d %H:%M:%S")


class GatewayPanel:
    def __init__(self, context: PanelContext) -> None:
        self.home = Path(context.home)
        self.runtime = context.runtime
        self.store = context.runtime.plugin_store(SCHEMA)

    # --- the page ---------------------------------------------------------------------------

    async def view(self, query: Mapping[str, str]) -> PanelView:
        pid = await asyncio.to_thread(running_pid, self.home)
        report = await asyncio.to_thread(read_status, self.home) or {}
        service = await asyncio.to_thread(installed_service, self.home)
        pairings = Pairings(self.store)
        waiting = await asyncio.to_thread(pairings.pending)
        paired = await asyncio.to_thread(pairings.paired)
        ledger = await asyncio.to_thread(Outbox(self.store).recent, LEDGER_SHOWN)
        platforms = await self._configured()
        return PanelView(
            sections=(
                self._state(pid, report, service),
                self._platforms(report if pid else {}, platforms),
                self._pairing(waiting, paired),
                self._allowlists(platforms),
                self._ledger(ledger),
            )
        )

    async def _configured(self) -> dict[str, dict[str, Any]]:
        """``platforms:`` as config.yaml has it now (read again: this page changes it)."""
        try:
            section = (await self.runtime.read_config()).get("platforms")
        except ValueError as exc:
            raise PanelError(str(exc)) from None
        if not isinstance(section, Mapping):
            return {}
        return {str(k): dict(v) for k, v in section.items() if isinstance(v, Mapping)}

    def _state(
        self, pid: int | None, report: Mapping[str, Any], service: Mapping[str, str] | None
    ) -> Section:
        if pid is None:
            facts: list[tuple[str, str]] = [("state", "not running")]
            start = Actions(buttons=(Button(action="start", label="Start the gateway"),))
            blocks: tuple[Any, ...] = (Facts(items=tuple(facts)), start)
        else:
            here = pid == os.getpid()
            facts = [
                ("state", f"running (pid {pid}{', this server' if here else ''})"),
                ("since", _when(report.get("started_at"))),
                ("turns running", str(report.get("turns_running", 0))),
                ("messages waiting", str(report.get("inbox_queued", 0))),
                (
                    "replies to deliver",
                    str(
                        int(report.get("outbox_pending", 0))
                        + int(report.get("outbox_attempting", 0))
                    ),
                ),
                ("abandoned (last week)", str(report.get("outbox_abandoned", 0))),
            ]
            stop_note = (
                "This page is served by the gateway: stopping it ends the page too. Stop it?"
                if here
                else "Stop the gateway? Running turns finish first; the rest resume at the "
                "next start."
            )
            buttons = Actions(
                buttons=(
                    Button(action="stop", label="Stop", confirm=stop_note, danger=True),
                    *(
                        ()
                        if here
                        else (
                            Button(
                                action="restart",
                                label="Restart",
                                confirm="Restart the gateway? Running turns finish first.",
                            ),
                        )
                    ),
                ),
            )
            blocks = (Facts(items=tuple(facts)), buttons)
        if service is not None:
            blocks = (
                *blocks,
                Text(text=f"service: {service.get('name')} ({service.get('kind', 'service')})"),
            )
        return Section(title="Gateway", blocks=blocks)

    def _platforms(
        self, report: Mapping[str, Any], configured: Mapping[str, Mapping[str, Any]]
    ) -> Section:
        states = report.get("platforms") or {}
        idle = sorted(
            name
            for name, state in states.items()
            if state.get("state") == "not configured" and name not in configured
        )
        names = sorted({*states, *configured} - set(idle))
        rows = []
        for name in names:
            state = states.get(name) or {}
            shown = str(state.get("state") or ("configured" if name in configured else "-"))
            rows.append(
                Row(
                    cells=(
                        name,
                        shown,
                        str(state.get("error") or ""),
                        str(state.get("restarts") or 0),
                    ),
                    level=STATE_LEVELS.get(shown),
                )
            )
        return Section(
            title="Platforms",
            blocks=(
                Table(
                    columns=("platform", "state", "error", "restarts"),
                    rows=tuple(rows),
                    empty="no platform is configured: add one under platforms: in Settings",
                ),
                *(
                    [
                        Text(
                            text="Installed, not configured: "
                            + ", ".join(idle)
                            + " (each says what it needs in hermes gateway status)"
                        )
                    ]
                    if idle
                    else []
                ),
            ),
        )

    def _pairing(self, waiting: list[Any], paired: list[Any]) -> Section:
        requests = tuple(
            Row(
                cells=(
                    request.platform,
                    one_line(request.user_id, 60),
                    one_line(request.user_name, 60),
                    request.code,
                    _when(request.created_at),
                ),
                buttons=(
                    Button(
                        action="approve",
                        label="Approve",
                        values={"platform": request.platform, "code": request.code},
                        confirm=f"Let {one_line(request.user_name, 40)} "
                        f"({one_line(request.user_id, 40)}) use the agent on {request.platform}?",
                    ),
                ),
            )
            for request in waiting
        )
        users = tuple(
            Row(
                cells=(
                    user.platform,
                    one_line(user.user_id, 60),
                    one_line(user.user_name or "", 60),
                    _when(user.approved_at),
                ),
                buttons=(
                    Button(
                        action="revoke",
                        label="Revoke",
                        values={"platform": user.platform, "user_id": user.user_id},
                        confirm=f"Revoke {one_line(user.user_id, 40)} on {user.platform}?",
                        danger=True,
                    ),
                ),
            )
            for user in paired
        )
        return Section(
            title="Pairing",
            blocks=(
                Text(
                    text="Compare the code with the one the person was sent before approving: "
                    "an approved user can use the agent, its tools and this machine."
                ),
                Table(
                    columns=("platform", "user id", "name", "code", "asked"),
                    rows=requests,
                    empty="no pairing requests waiting",
                ),
                Table(
                    columns=("platform", "user id", "name", "approved"),
                    rows=users,
                    empty="nobody is paired",
                ),
            ),
        )

    def _allowlists(self, configured: Mapping[str, Mapping[str, Any]]) -> Section:
        rows = []
        for name, section in sorted(configured.items()):
            allowed = [str(user) for user in section.get("allowed_users") or []]
            for user in allowed:
                rows.append(
                    Row(
                        cells=(name, user),
                        buttons=(
                            Button(
                                action="disallow",
                                label="Remove",
                                values={"platform": name, "user_id": user},
                                confirm=f"Remove {user} from the allowlist of {name}?",
                                danger=True,
                            ),
                        ),
                    )
                )
            if section.get("allow_all"):
                rows.append(Row(cells=(name, "everyone (allow_all)"), level="warn"))
        choices = tuple(sorted(configured)) or ("telegram",)
        return Section(
            title="Allowlists",
            blocks=(
                Table(
                    columns=("platform", "user id"), rows=tuple(rows), empty="no allowlist entries"
                ),
                Form(
                    action="allow",
                    submit="Allow",
                    fields=(
                        Field(name="platform", label="Platform", kind="choice", choices=choices),
                        Field(
                            name="user_id",
                            label="User id",
                            required=True,
                            help="The platform's id for the person (a number on Telegram), "
                            "not a @name.",
                        ),
                    ),
                ),
            ),
        )

    def _ledger(self, entries: list[Any]) -> Section:
        rows = tuple(
            Row(
                cells=(
                    str(entry.id),
                    f"{entry.chat.platform}:{entry.chat.chat_id}",
                    entry.state,
                    str(entry.attempts),
                    _when(entry.updated_at),
                    one_line(entry.last_error or "", 120),
                ),
                detail=entry.text[:2000],
                level=DELIVERY_LEVELS.get(entry.state),
            )
            for entry in entries
        )
        return Section(
            title="Delivery ledger",
            blocks=(
                Table(
                    columns=("#", "chat", "state", "attempts", "updated", "last error"),
                    rows=rows,
                    empty="nothing was sent yet",
                ),
            ),
        )

    # --- the buttons ------------------------------------------------------------------------

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        platform = values.get("platform", "").strip()
        if action == "approve":
            try:
                user = await asyncio.to_thread(
                    Pairings(self.store).approve, platform, values.get("code", "")
                )
            except PairingError as exc:
                raise PanelError(str(exc)) from None
            return Outcome(message=f"approved {one_line(user.user_id, 60)} on {user.platform}")
        if action == "revoke":
            user_id = values.get("user_id", "")
            removed = await asyncio.to_thread(Pairings(self.store).revoke, platform, user_id)
            shown = one_line(user_id, 60)
            if not removed:
                raise PanelError(f"{shown} is not paired on {platform}")
            return Outcome(message=f"revoked {shown} on {platform}")
        if action in ("allow", "disallow"):
            return await self._change_allowlist(
                platform, values.get("user_id", "").strip(), action == "allow"
            )
        if action in ("start", "restart"):
            service = await asyncio.to_thread(installed_service, self.home)
            if service is not None:
                verb = action
                raise PanelError(
                    f"the gateway runs as the service {service.get('name')}: {verb} it with "
                    f"hermes gateway {verb} (its service manager keeps it running)"
                )
        if action == "start":
            return await asyncio.to_thread(self._start)
        if action == "stop":
            return await asyncio.to_thread(self._stop, await self._drain_wait())
        if action == "restart":
            stopped = await asyncio.to_thread(self._stop, await self._drain_wait())
            if not stopped.ok:
                return stopped
            return await asyncio.to_thread(self._start)
        raise PanelError(f"no action {action!r} on this page: reload it")

    async def _change_allowlist(self, platform: str, user_id: str, allow: bool) -> Outcome:
        if not platform or not user_id:
            raise PanelError("give the platform and the user's id")
        configured = await self._configured()
        installed = {p.name for p in self.runtime.provided(Kind.PLATFORM)}
        if not PLATFORM_NAME.fullmatch(platform) or platform not in {*configured, *installed}:
            known = ", ".join(sorted({*configured, *installed})) or "none"
            raise PanelError(f"no platform named {platform!r} (platforms: {known})")
        if "\n" in user_id or len(user_id) > 200:
            raise PanelError("a user id is one short line: the platform's id for the person")
        section = configured.get(platform, {})
        allowed = [str(user) for user in section.get("allowed_users") or []]
        if allow and user_id in allowed:
            raise PanelError(f"{user_id} is already allowed on {platform}")
        if not allow and user_id not in allowed:
            raise PanelError(f"{user_id} is not on the allowlist of {platform}")
        changed = [*allowed, user_id] if allow else [u for u in allowed if u != user_id]
        key = f"platforms.{platform}.allowed_users"
        try:
            await self.runtime.change_config({key: json.dumps(changed)}, save=True)
        except ValueError as exc:
            raise PanelError(str(exc)) from None
        verb = "allowed" if allow else "removed from the allowlist:"
        return Outcome(
            message=f"{verb} {user_id} on {platform}; the gateway applies it when restarted"
        )

    def _start(self) -> Outcome:
        if running_pid(self.home) is not None:
            raise PanelError("the gateway already runs")
        command = _hermes()
        subprocess.Popen(
            [*command, "--home", str(self.home), "gateway", "run"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # it outlives this page
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if running_pid(self.home) is not None:
                return Outcome(message="started the gateway")
            time.sleep(0.2)
        return Outcome(
            message="asked the gateway to start; it has not taken its lock yet: see the Logs page",
            ok=False,
        )

    async def _drain_wait(self) -> float:
        """As long as ``hermes gateway stop`` waits: its drain, twice, and half a minute."""
        from hermes_plugin_gateway.settings import gateway_settings

        try:
            return 2 * gateway_settings(await self.runtime.read_config()).drain_seconds + 30
        except ValueError:
            return STOP_SECONDS

    def _stop(self, wait: float) -> Outcome:
        pid = running_pid(self.home)
        if pid is None:
            raise PanelError("the gateway is not running")
        os.kill(pid, signal.SIGTERM)
        if pid == os.getpid():  # this page's own server: it ends with the gateway
            return Outcome(message="stopping the gateway, and this page with it")
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if running_pid(self.home) is None:
                return Outcome(message=f"stopped the gateway (pid {pid})")
            time.sleep(0.2)
        return Outcome(
            message=f"the gateway (pid {pid}) is still draining after {wait:.0f} s; "
            "interrupted turns resume at the next start",
            ok=False,
        )


def _hermes() -> list[str]:
    """The ``hermes`` command of this installation."""
    found = hermes_command()
    if found is None:
        raise PanelError("cannot find the hermes command to start the gateway with")
    return [found]
