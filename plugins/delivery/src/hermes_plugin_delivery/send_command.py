"""``hermes send --to PLATFORM:CHAT [--file F] TEXT``: a message to a chat, from a script or a
terminal. With a gateway sending for this home it goes through the delivery ledger (sent
once, kept while the platform reconnects); with none, the platform plugin sends it
directly, once."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

__all__ = ["send"]

MAX_FILE_BYTES = 256 * 1024


def _target(value: str) -> tuple[str, str]:
    platform, _, chat = value.partition(":")
    if not platform or not chat:
        raise click.BadParameter(f"{value!r} is not PLATFORM:CHAT (telegram:123456)")
    return platform.lower(), chat


def _file_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise click.ClickException(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise click.ClickException(
            f"{path} is {len(data)} bytes; --file sends text files up to {MAX_FILE_BYTES} bytes"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise click.ClickException(
            f"{path} is not UTF-8 text; --file sends text files only for now"
        ) from None
    if "\x00" in text:
        raise click.ClickException(f"{path} is binary; --file sends text files only for now")
    return text


@click.command()
@click.option("--to", "to", required=True, help="Where: PLATFORM:CHAT, such as telegram:123456.")
@click.option(
    "--file",
    "file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A text file to send, after TEXT if both are given.",
)
@click.argument("text", nargs=-1)
def send(to: str, file: Path | None, text: tuple[str, ...]) -> None:
    """Send TEXT (or - for standard input) to a chat, through the running gateway if any."""
    platform, chat = _target(to)
    words = " ".join(text)
    if words == "-":
        words = sys.stdin.read()
    parts = [words.strip(), _file_text(file).rstrip() if file is not None else ""]
    message = "\n\n".join(part for part in parts if part)
    if not message:
        raise click.ClickException("nothing to send: give TEXT, - for standard input, or --file")
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    outcome = asyncio.run(_send(context, platform, chat, message))
    click.echo(outcome)


async def _send(context: CommandContext, platform: str, chat: str, text: str) -> str:
    if await asyncio.to_thread(_something_sends, context.home):
        from hermes_sdk.runtime import DeliveryUnavailable

        if context.open_runtime is None:
            raise click.ClickException("this Hermes kernel cannot open a runtime; update it")
        async with context.open_runtime() as runtime:
            try:
                delivery = await runtime.deliver(platform, chat, text)
            except DeliveryUnavailable as exc:
                raise click.ClickException(str(exc)) from None
        return (
            f"queued for {platform}:{chat} (delivery {delivery.delivery_id}); the gateway sends it"
        )
    return await _send_directly(context, platform, chat, text)


def _something_sends(home: str) -> bool:
    """Whether a process sends from this home's delivery ledger now (the gateway)."""
    from hermes_commons.outbox import OUTBOX, Outbox
    from hermes_sdk.storage import open_store

    with open_store(home, OUTBOX) as store:
        return Outbox(store).sender() is not None


async def _send_directly(context: CommandContext, platform: str, chat: str, text: str) -> str:
    from hermes_sdk import Kind, PlatformSpec
    from hermes_sdk.platform import ChatRef, PlatformContext, PlatformNotConfigured

    specs = {
        spec.name: spec
        for spec in context.provided.of(Kind.PLATFORM)
        if isinstance(spec, PlatformSpec)
    }
    spec = specs.get(platform)
    if spec is None:
        installed = ", ".join(sorted(specs)) or "none"
        raise click.ClickException(
            f"no platform {platform!r} is installed (installed: {installed})"
        )
    section = (context.config.get("platforms") or {}).get(platform) or {}
    try:
        adapter = spec.build(
            PlatformContext(
                name=platform,
                home=context.home,
                config=section,
                secrets=context.secrets,
                root_config=context.config,
            )
        )
    except PlatformNotConfigured as exc:
        raise click.ClickException(f"{platform}: {exc}") from None
    try:
        ids = await adapter.send(ChatRef(platform, chat, "private"), text)
    except Exception as exc:  # noqa: BLE001 - one line for whatever the platform said
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise click.ClickException(f"{platform} did not take it: {first}") from None
    finally:
        await adapter.aclose()
    count = f"{len(ids)} messages" if len(ids) != 1 else "1 message"
    return f"sent to {platform}:{chat} directly ({count}; no gateway runs)"
