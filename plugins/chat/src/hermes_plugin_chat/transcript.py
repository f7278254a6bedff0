"""A conversation as the terminal hands it on: Markdown (``/save``), the last reply on the
clipboard (``/copy``)."""

from __future__ import annotations

import base64
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from hermes_commons.transcripts import write_export
from hermes_sdk.runtime import SessionMessage, SessionSummary

__all__ = ["copy_to_clipboard", "osc52", "save_markdown"]

CLIPBOARD_TOOLS = (("wl-copy",), ("xclip", "-selection", "clipboard"), ("pbcopy",))


def save_markdown(
    session: SessionSummary, messages: Sequence[SessionMessage], path: str | None
) -> Path:
    """Write the conversation to ``path`` (a folder: a file named after it inside; None: in
    the working directory); returns where. OSError when it cannot be written."""
    name = f"hermes-{session.session_id}-{time.strftime('%Y%m%d-%H%M%S')}.md"
    target = Path(path).expanduser() if path else Path.cwd() / name
    if target.is_dir():
        target = target / name
    with target.open("w", encoding="utf-8") as out:  # as `hermes sessions export --format md`
        write_export(out, "md", session, list(messages))
    return target.resolve()


def osc52(text: str) -> str:
    """The escape that puts ``text`` on the clipboard through the terminal (OSC 52: most
    terminals take it, over SSH too)."""
    return f"\x1b]52;c;{base64.b64encode(text.encode('utf-8')).decode('ascii')}\x07"


def copy_to_clipboard(text: str) -> str:
    """Put ``text`` on the clipboard with a clipboard tool when one is installed (blocks:
    run it in a thread); one line saying how, with the terminal's way as the fallback."""
    for tool in CLIPBOARD_TOOLS:
        if shutil.which(tool[0]) is None:
            continue
        try:
            subprocess.run(list(tool), input=text.encode("utf-8"), timeout=5, check=True)
        except (OSError, subprocess.SubprocessError):
            continue
        return f"copied the last reply ({len(text):,} characters) with {tool[0]}"
    return f"copied the last reply ({len(text):,} characters) through the terminal (OSC 52)"
