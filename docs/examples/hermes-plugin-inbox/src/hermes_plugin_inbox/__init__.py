"""A folder as a front-end: each ``NAME.txt`` dropped in is a message, ``NAME.reply.txt`` the
agent's answer; a file named ``STOP`` stops the answer in progress."""

import asyncio
from pathlib import Path

import click

from hermes_sdk import CommandSpec, ServiceSpec, hookimpl
from hermes_sdk.events import COMMAND_CONTEXT
from hermes_sdk.runtime import Runtime, SessionOptions


class Inbox:
    def __init__(self, folder: Path, poll_seconds: float = 0.1) -> None:
        self.folder = folder
        self.poll_seconds = poll_seconds

    async def run(self, runtime: Runtime) -> None:
        """Serve until cancelled: one conversation, one message at a time."""
        self.folder.mkdir(parents=True, exist_ok=True)
        session = await runtime.open_session(SessionOptions(source="inbox"))
        while True:
            for message in sorted(self.folder.glob("*.txt")):
                if not message.name.endswith(".reply.txt"):
                    await self.answer(runtime, session.session_id, message)
            await asyncio.sleep(self.poll_seconds)

    async def answer(self, runtime: Runtime, session_id: str, message: Path) -> None:
        text = message.read_text(encoding="utf-8")
        message.unlink()
        turn = runtime.start_turn(session_id, text)
        stop = self.folder / "STOP"
        while not turn.done:
            if stop.exists():
                stop.unlink()
                turn.stop()
            await asyncio.sleep(self.poll_seconds)
        ended = await turn.result()
        reply = ended.reply if ended.ok else f"{ended.reply}\n({ended.status}: {ended.error})"
        reply_path = message.with_name(f"{message.stem}.reply.txt")
        reply_path.write_text(reply, encoding="utf-8")


def folder_of(home: str, config: dict) -> Path:
    return Path(config.get("folder") or Path(home) / "inbox").expanduser()


@click.command(help="Answer the .txt files dropped into the inbox folder (Ctrl+C stops).")
def inbox_command() -> None:
    context = click.get_current_context().meta[COMMAND_CONTEXT]
    inbox = Inbox(folder_of(context.home, context.config.get("inbox") or {}))

    async def main() -> None:
        async with context.open_runtime() as runtime:
            await inbox.run(runtime)

    click.echo(f"watching {inbox.folder}", err=True)
    asyncio.run(main())


@hookimpl
def hermes_services():
    yield ServiceSpec(
        name="inbox",
        description="Answer .txt files dropped into a folder.",
        factory=lambda context: Inbox(folder_of(context.home, dict(context.config))),
    )


@hookimpl
def hermes_cli_commands():
    yield CommandSpec(
        name="inbox",
        description="Answer files dropped into a folder.",
        factory=lambda: inbox_command,
    )
