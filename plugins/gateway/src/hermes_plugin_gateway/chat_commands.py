"""``/NAME`` in a chat: the runtime's slash commands (the built-in ones and the plugins'),
run for the person who wrote, on their conversation's session; never seen by the model."""

from __future__ import annotations

import asyncio
import logging

from hermes_commons.supervision import one_line
from hermes_plugin_gateway.conversation import Conversation
from hermes_plugin_gateway.ledger import InboxItem, Ledger
from hermes_plugin_gateway.routing import user_scope
from hermes_sdk import SlashCommandSpec
from hermes_sdk.runtime import Runtime, SessionBusy

__all__ = ["BUSY", "ChatCommands", "command_of"]

log = logging.getLogger("hermes.gateway")

HELP_INTRO = "I am Hermes, your agent. Write to me as you would to a person."
BUSY = "another Hermes process is working in this conversation; try again in a moment"


def command_of(text: str) -> str:
    """The command a message starts with (``/new``), lower case; '' if none."""
    words = text.strip().split(maxsplit=1)
    return words[0].lower() if words and words[0].startswith("/") else ""


class ChatCommands:
    def __init__(self, runtime: Runtime, ledger: Ledger) -> None:
        self.runtime = runtime
        self.ledger = ledger
        self._commands: dict[str, SlashCommandSpec] | None = None

    async def name_of(self, item: InboxItem) -> str | None:
        """The runtime's command the message is (``/start``, what Telegram sends first, is
        ``/help``); None if it is none."""
        name = command_of(item.text)[1:]
        name = "help" if name == "start" else name
        return name if name and name in await self._loaded() else None

    async def run(
        self, conversation: Conversation, item: InboxItem, name: str
    ) -> tuple[str, str | None]:
        """Run ``/name`` for the person who wrote it: what the chat reads, and a message
        to send as theirs next (``/queue``, ``/goal``), if any. Only a command that allows
        it on platforms runs (``on_platforms``: ``/new``, ``/memory`` on that person's own
        memory ...); the others touch what everyone shares."""
        spec = (await self._loaded())[name]
        if not spec.on_platforms:
            return f"/{name} is for the terminal (hermes chat): what it changes is shared", None
        args = item.text.strip().partition(" ")[2].strip()
        session_id = item.session_id or await self.ledger.store.run(
            self.ledger.route, conversation.key
        )
        try:
            reply = await self.runtime.run_slash(
                name,
                args,
                session_id,
                user_scope=user_scope(item.chat, item.user_id, conversation.key),
            )
        except SessionBusy:
            return BUSY, None
        except Exception as exc:  # noqa: BLE001 - a command's failure is one line to the user
            log.warning("/%s failed: %s", name, exc)
            return f"/{name} failed: {one_line(exc)}", None
        if reply.new_session:  # the chat's next message opens a new session
            await self.ledger.store.run(self.ledger.drop_route, conversation.key)
        if reply.session_id is not None:  # /branch: the chat goes on in the copy
            await self.ledger.store.run(self.ledger.set_route, conversation.key, reply.session_id)
        if name == "help":
            return f"{HELP_INTRO}\n\n{reply.text}", None
        return reply.text or "(nothing to show)", reply.send

    async def _loaded(self) -> dict[str, SlashCommandSpec]:
        """The runtime's commands, loaded on the first message that starts with ``/``."""
        if self._commands is None:
            self._commands = dict(await asyncio.to_thread(self.runtime.slash_commands))
        return self._commands
