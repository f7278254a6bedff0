"""@-references in a message (``@src/app.py``, ``@docs/``, ``@https://...``, ``@diff``,
``@staged``, ``@git:HEAD~3``), resolved before the turn: each one's content is attached
below the user's words, so the model reads it and the stored message keeps what was sent.

    resolved = await resolve("fix the bug in @app.py", cwd, allow_private_hosts=())
    resolved.text       # the message with an <attached> block per reference
    resolved.attached   # what was attached, to show ("@app.py: 120 lines, 3.4 kB")
    resolved.problems   # one line per reference that could not be attached

A word is a reference only when it starts with ``@`` and names a kind (``diff``,
``staged``, ``git:``, a URL) or an existing path, or looks like one (a slash or a dot in
it): ``@alice`` stays text, and so does ``me@example.com``. Files are capped and binary
ones refused; URLs go through the SSRF guard (``web.allow_private_hosts`` opens loopback
hosts); git runs with no pager, no prompt and no external diff.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "KEYWORDS",
    "Attached",
    "Resolved",
    "home_guard",
    "references_in",
    "resolve",
    "web_hosts",
]

FILE_CHARS = 100_000
"""A file's text is cut here (a note says so)."""
TOTAL_CHARS = 300_000
"""All references of one message together; the ones past it are refused."""
GIT_CHARS = 100_000
FOLDER_ENTRIES = 300
URL_BYTES = 2_000_000
URL_SECONDS = 20.0
GIT_SECONDS = 15.0
LOCAL_SECONDS = 20.0
"""A file, a folder or git that takes longer than this is given up (a FIFO, a slow mount)."""
SYSTEM_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))
"""Files there are not text on a disk (some block forever when read): never attached."""
SKIPPED_FOLDERS = frozenset(
    {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".ruff_cache"}
)
KEYWORDS = ("diff", "staged", "git:")
"""What completes after ``@`` besides paths."""
_TRAILING = ".,;:!?)]\"'"
_WORD = re.compile(r"(?<![\w@/.])@(\S+)")

Kind = Literal["file", "folder", "url", "git"]


@dataclass(frozen=True)
class Attached:
    """One reference attached: its word as typed, its kind and what to show of it."""

    token: str
    kind: Kind
    summary: str
    content: str

    def block(self) -> str:
        # The content never closes its own block (a page that says </attached> stays inside).
        content = self.content.replace("</attached", "<\\/attached")
        token = self.token.replace('"', "%22")
        return f'<attached ref="{token}" kind="{self.kind}">\n{content}\n</attached>'


@dataclass
class Resolved:
    text: str
    attached: list[Attached] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def said(self) -> list[tuple[bool, str]]:
        """What to show, one line each: (is it a problem, the line)."""
        return [
            *((False, f"attached {item.token} ({item.summary})") for item in self.attached),
            *((True, f"not attached: {problem}") for problem in self.problems),
        ]


def home_guard(home: str | Path, config: Mapping[str, Any]) -> dict[str, Any]:
    """What :func:`resolve` needs to keep a home's secrets in (``resolve(..., **guard)``):
    its .env values to redact, its secret files to refuse, and the web tools' private
    hosts."""
    from hermes_commons.dotenv import DotenvError, read_dotenv

    folder = Path(home)
    try:
        values = [value for value in read_dotenv(folder / ".env").values() if len(value) >= 6]
    except (DotenvError, OSError):
        values = []
    return {
        "allow_private_hosts": web_hosts(config),
        "secret_values": values,
        "private": (folder / ".env", folder / "auth.json"),
    }


def web_hosts(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The private hosts the web tools may reach (``web.allow_private_hosts``): a URL
    reference passes the same guard."""
    web = config.get("web") or {}
    return tuple(str(host) for host in web.get("allow_private_hosts") or ())


def references_in(text: str, cwd: Path) -> list[str]:
    """The references in ``text`` (as typed, with their ``@``), in order, each once."""
    found: list[str] = []
    for match in _WORD.finditer(text):
        word = _trimmed(match.group(1), cwd)
        if word is not None and f"@{word}" not in found:
            found.append(f"@{word}")
    return found


def _trimmed(word: str, cwd: Path) -> str | None:
    """``word`` without trailing punctuation, if it is a reference at all."""
    if word.startswith(("http://", "https://")):
        return word.rstrip(_TRAILING) or None
    if word.startswith("git:"):
        return word.rstrip(_TRAILING)
    bare = word.rstrip(_TRAILING)
    if bare in ("diff", "staged"):
        return bare
    for candidate in (word, bare):
        try:
            if candidate and _path(candidate, cwd).exists():
                return candidate
        except OSError:  # not ours to look at (permissions): taken as a path, said later
            return candidate
    looks_like_path = "/" in bare or "." in bare.strip(".") or bare.startswith("~")
    return bare if looks_like_path and bare else None


def _path(word: str, cwd: Path) -> Path:
    path = Path(os.path.expanduser(word))
    return path if path.is_absolute() else cwd / path


async def resolve(
    text: str,
    cwd: Path,
    *,
    allow_private_hosts: tuple[str, ...] = (),
    secret_values: Collection[str] = (),
    private: Collection[Path] = (),
) -> Resolved:
    """``text`` with every reference's content attached below it; a reference that cannot
    be attached stays as typed, with one line in ``problems`` saying why. ``secret_values``
    are redacted from what is attached (as from a tool's output); ``private`` files are
    refused (the home's .env: the model never reads the secrets it holds)."""
    resolved = Resolved(text=text)
    used = 0
    refused = {_real(path) for path in private}
    for token in references_in(text, cwd):
        word = token[1:]
        try:
            if word.startswith(("http://", "https://")):
                attached = await _url(token, word, allow_private_hosts)
            else:
                attached = await asyncio.wait_for(
                    asyncio.to_thread(_local, token, word, cwd, refused), LOCAL_SECONDS
                )
        except ReferenceProblem as exc:
            resolved.problems.append(f"{token}: {exc}")
            continue
        except TimeoutError:
            resolved.problems.append(f"{token}: reading it took longer than {LOCAL_SECONDS:.0f} s")
            continue
        except Exception as exc:  # noqa: BLE001 - whatever a path or URL does: one line
            resolved.problems.append(f"{token}: not attached ({type(exc).__name__}: {exc})")
            continue
        if secret_values:
            from hermes_commons.redact import redact_text

            attached = replace(attached, content=redact_text(attached.content, secret_values))
        if used + len(attached.content) > TOTAL_CHARS:
            resolved.problems.append(
                f"{token}: left out: the references of one message are capped at "
                f"{TOTAL_CHARS:,} characters"
            )
            continue
        used += len(attached.content)
        resolved.attached.append(attached)
    if resolved.attached:
        blocks = "\n\n".join(item.block() for item in resolved.attached)
        resolved.text = f"{text}\n\n{blocks}"
    return resolved


class ReferenceProblem(Exception):
    """One line: why a reference was not attached."""


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def _local(token: str, word: str, cwd: Path, refused: set[Path]) -> Attached:
    if word == "diff":
        return _git(token, cwd, ["diff"], "unstaged changes")
    if word == "staged":
        return _git(token, cwd, ["diff", "--staged"], "staged changes")
    if word.startswith("git:"):
        ref = word[4:]
        if not ref or ref.startswith("-") or not re.fullmatch(r"[\w./~^@{}:-]+", ref):
            raise ReferenceProblem("name a commit, branch or tag after git: (@git:HEAD~1)")
        return _git(token, cwd, ["show", "--stat", "--patch", ref, "--"], f"commit {ref}")
    path = _path(word, cwd)
    real = _real(path)
    if real in refused:
        raise ReferenceProblem("Hermes's own secrets file: never sent to the model")
    if any(real.is_relative_to(folder) for folder in SYSTEM_FOLDERS):
        raise ReferenceProblem("a system file (/proc, /sys, /dev): not attached")
    if path.is_dir():
        return _folder(token, path)
    if path.is_file():
        return _file(token, path)
    if path.exists():
        raise ReferenceProblem("not a regular file or folder")
    raise ReferenceProblem("no such file or folder")


def _file(token: str, path: Path) -> Attached:
    try:
        with path.open("rb") as handle:
            data = handle.read(FILE_CHARS * 4 + 1)
    except OSError as exc:
        raise ReferenceProblem(f"cannot be read ({exc.strerror or exc})") from None
    if b"\x00" in data[:8192]:
        raise ReferenceProblem("a binary file: not attached as text (send an image with /image)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="ignore")
        if len(text) < len(data) * 0.9:
            raise ReferenceProblem("not UTF-8 text: not attached") from None
    size = path.stat().st_size
    cut = len(text) > FILE_CHARS or size > len(data)
    if cut:
        text = text[:FILE_CHARS] + f"\n[… cut at {FILE_CHARS:,} characters of {size:,} bytes]"
    lines = text.count("\n") + 1
    return Attached(token, "file", f"{lines} lines, {_size(size)}{', cut' if cut else ''}", text)


def _folder(token: str, root: Path) -> Attached:
    entries: list[str] = []
    more = 0
    problems: list[OSError] = []
    for folder, names, files in os.walk(root, onerror=problems.append):
        if len(entries) >= FOLDER_ENTRIES:  # the rest is counted by name, not walked
            more += len(names) + len(files)
            names[:] = []
            continue
        names[:] = sorted(name for name in names if name not in SKIPPED_FOLDERS)
        depth = len(Path(folder).relative_to(root).parts)
        if depth >= 4:
            names[:] = []
        for name in [*(f"{n}/" for n in names), *sorted(files)]:
            if len(entries) >= FOLDER_ENTRIES:
                more += 1
                continue
            entries.append(f"{'  ' * depth}{name}")
    if not entries and problems:
        raise ReferenceProblem(f"cannot be read ({problems[0].strerror or problems[0]})")
    if more:
        entries.append(f"[… {more} or more entries not listed]")
    shown = "\n".join(entries) or "(empty)"
    return Attached(token, "folder", f"a listing of {len(entries)} entries", shown)


def _git(token: str, cwd: Path, args: list[str], what: str) -> Attached:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            [
                "git",
                "--no-pager",
                "-c",
                "core.quotepath=off",
                *args[:1],
                "--no-color",
                "--no-ext-diff",
                *args[1:],
            ],
            cwd=cwd,
            capture_output=True,
            timeout=GIT_SECONDS,
            stdin=subprocess.DEVNULL,
            env=env,
            check=False,
        )
    except FileNotFoundError:
        raise ReferenceProblem("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise ReferenceProblem(f"git took longer than {GIT_SECONDS:.0f} s") from None
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ReferenceProblem(why[0] if why else f"git failed ({done.returncode})")
    text = done.stdout.decode("utf-8", "replace")
    if not text.strip():
        raise ReferenceProblem(f"no {what}: nothing to attach")
    cut = len(text) > GIT_CHARS
    if cut:
        text = text[:GIT_CHARS] + f"\n[… cut at {GIT_CHARS:,} characters]"
    lines = text.count("\n")
    return Attached(token, "git", f"{what}, {lines} lines{', cut' if cut else ''}", text)


async def _url(token: str, url: str, allow_private_hosts: tuple[str, ...]) -> Attached:
    import httpx

    from hermes_commons.ssrf import Refused, SsrfGuard
    from hermes_commons.ssrf_http import fetch, guarded_client

    guard = SsrfGuard(list(allow_private_hosts))
    try:
        async with guarded_client(guard, URL_SECONDS) as client:
            fetched = await fetch(client, guard, url, URL_BYTES)
    except Refused as exc:
        raise ReferenceProblem(str(exc)) from None
    except (httpx.HTTPError, OSError) as exc:  # the connection, the protocol: one line
        raise ReferenceProblem(f"could not be fetched ({type(exc).__name__}: {exc})") from None
    if fetched.status >= 400:
        raise ReferenceProblem(f"the server answered {fetched.status}")
    text = await asyncio.to_thread(_page_text, fetched.body, fetched.content_type, fetched.url)
    if text is None:
        raise ReferenceProblem(f"{fetched.content_type or 'unknown'} content: not text")
    cut = len(text) > FILE_CHARS or fetched.truncated
    if len(text) > FILE_CHARS:
        text = text[:FILE_CHARS] + f"\n[… cut at {FILE_CHARS:,} characters]"
    from hermes_commons.scan import as_untrusted

    text = as_untrusted(text, f"the web page {url}")  # its words are data, not instructions
    return Attached(token, "url", f"{_size(len(fetched.body))} page{', cut' if cut else ''}", text)


def _page_text(body: bytes, kind: str, url: str) -> str | None:
    """HTML as its main text, text as it is. The main text is trafilatura's (the field's
    extractor, installed with the web tools); without it, the page's text with scripts,
    styles, menus, headers and footers left out (a lean install keeps its size)."""
    decoded = body.decode("utf-8", "replace")
    if kind in ("text/html", "application/xhtml+xml") or (not kind and b"<html" in body[:2000]):
        try:
            import trafilatura
        except ImportError:
            return _visible_text(decoded)
        return trafilatura.extract(decoded, url=url, output_format="markdown") or ""
    if kind.startswith("text/") or kind.endswith(("json", "xml", "yaml")):
        return decoded
    return None


def _visible_text(html: str) -> str:
    from html.parser import HTMLParser

    skipped = {"script", "style", "nav", "header", "footer", "noscript", "template", "svg"}
    blocks = {"p", "div", "li", "br", "h1", "h2", "h3", "h4", "tr", "section", "article"}

    class Reader(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []
            self.hidden = 0

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag in skipped:
                self.hidden += 1
            elif tag in blocks:
                self.parts.append("\n")

        def handle_endtag(self, tag: str) -> None:
            if tag in skipped and self.hidden:
                self.hidden -= 1

        def handle_data(self, data: str) -> None:
            if not self.hidden:
                self.parts.append(data)

    reader = Reader()
    reader.feed(html)
    lines = (" ".join(line.split()) for line in "".join(reader.parts).splitlines())
    return "\n".join(line for line in lines if line)


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} kB"
    return f"{size / 1024 / 1024:.1f} MB"
