"""Build a session's system prompt once, from tiers: identity (SOUL.md), what plugins add
(a memory snapshot, an index ...), and the project context file. It is stored with the session and
reused on resume, so provider prompt caches hold."""

from __future__ import annotations

import logging
from pathlib import Path

from hermes_commons.scan import scan_text, without_flagged
from hermes_sdk import PromptSection

log = logging.getLogger("hermes.prompt")

DEFAULT_IDENTITY = (
    "You are Hermes, a personal AI agent. You act through tools; use them when they help, "
    "say plainly what you did, and ask before doing anything irreversible."
)
CONTEXT_FILES = (".hermes.md", "AGENTS.md", "CLAUDE.md")
CONTEXT_LIMIT = 20_000
"""Characters of the project context file kept in the prompt."""


def identity(home: Path) -> PromptSection:
    soul = home / "SOUL.md"
    try:
        text = soul.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    return PromptSection(title="Identity", text=text or DEFAULT_IDENTITY, tier=0)


def project_context(cwd: Path | None) -> PromptSection | None:
    """The first context file found in ``cwd`` or a parent up to the repository root."""
    if cwd is None:
        return None
    for folder in [cwd, *cwd.parents]:
        for name in CONTEXT_FILES:
            candidate = folder / name
            if candidate.is_file():
                try:
                    text = candidate.read_text(encoding="utf-8", errors="replace").strip()
                except OSError:
                    continue
                findings = scan_text(text)
                if findings:
                    # A cloned repository is not trusted: a context file that tries to take
                    # over the agent is left out, and the prompt says why.
                    reasons = "; ".join(str(finding) for finding in findings[:3])
                    log.warning("left %s out of the prompt: %s", candidate, reasons)
                    text = f"[{candidate.name} was left out because a scan flagged it: {reasons}]"
                if len(text) > CONTEXT_LIMIT:
                    text = text[:CONTEXT_LIMIT] + f"\n[… cut at {CONTEXT_LIMIT} characters]"
                return PromptSection(title=f"Project context ({candidate})", text=text, tier=40)
        if (folder / ".git").exists():
            break
    return None


def _scanned(section: PromptSection) -> PromptSection:
    """SOUL.md and every part a plugin adds (memory, an index ...), scanned as the prompt is built,
    however the text got there (a file tool, an editor, an import): what a scan flags is
    left out with one line in the log. A flagged identity falls back to the default."""
    text, reasons = without_flagged(section.text)
    if not reasons:
        return section
    log.warning("left part of %s out of the prompt: %s", section.title, "; ".join(reasons[:3]))
    if section.tier == 0:
        text = DEFAULT_IDENTITY + "\n\n[SOUL.md was left out because a scan flagged it]"
    return PromptSection(title=section.title, text=text, tier=section.tier)


def build_system_prompt(home: Path, cwd: Path | None, plugin_sections: list[PromptSection]) -> str:
    sections = [_scanned(section) for section in (identity(home), *plugin_sections)]
    context = project_context(cwd)
    if context is not None:
        sections.append(context)
    ordered = sorted(enumerate(sections), key=lambda item: (item[1].tier, item[0]))
    blocks = []
    for _, section in ordered:
        blocks.append(
            section.text if section.tier == 0 else f"## {section.title}\n\n{section.text}"
        )
    return "\n\n".join(blocks)
