"""The kernel holds mechanisms, never capabilities: its source (code, docstrings, comments)
names no provider, platform, tool, memory or skills file, scheduler or front-end. What a
capability needs the kernel to know comes from its plugin through a contract (a spec, a
hook), so a third-party plugin can do the same as the ones we ship."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KERNEL = REPO / "kernel" / "src" / "hermes_kernel"


def _word(term: str) -> str:
    """``term`` as a word of its own: not inside a longer name (``cron`` is not in
    ``crontab``), though ``_``, ``.``, ``-`` and ``/`` may join it to others (``mcp_servers``
    names ``mcp``)."""
    return rf"(?<![a-z0-9]){term}(?![a-z0-9])"


# Each name, the capability it belongs to; matched case-insensitively, as words.
CAPABILITY_NAMES: Mapping[str, str] = {
    # the list
    "mcp_servers": _word("mcp_servers"),
    "jobs.json": _word(r"jobs\.json"),
    "cron": _word("cron"),
    "telegram": _word("telegram"),
    "MEMORY.md": _word(r"memory\.md"),
    "USER.md": _word(r"user\.md"),
    "SKILL.md": _word(r"skill\.md"),
    "skill_manage": _word("skill_manage"),
    "delegate": _word("delegat(?:e|es|ed|ing|ion|ions)"),
    "OPENAI_API_KEY": _word("openai_api_key"),
    "ANTHROPIC_API_KEY": _word("anthropic_api_key"),
    "anthropic": _word("anthropic"),
    "smollm": r"(?<![a-z0-9])smollm",  # smollm2, smollm-135m ...
    # providers, the models they serve, the servers a provider plugin talks to
    "openai": _word("openai"),
    "openrouter": _word("openrouter"),
    "claude": _word(r"claude(?!\.md)"),  # CLAUDE.md is a project's context file, read as such
    "gpt": _word(r"gpt-?\d"),
    "gemini": _word("gemini"),
    "llama": r"(?<![a-z0-9])llama",  # llama.cpp, llama-3 ...
    "ollama": _word("ollama"),
    "vllm": _word("vllm"),
    "qwen": r"(?<![a-z0-9])qwen",
    "deepseek": _word("deepseek"),
    # tools, tool sources, skills and memory
    "mcp": _word("mcp"),
    "skills": _word("skills?"),  # skill_dirs, skills_list, "the skills index" ...
    "skill_view": _word("skill_view"),
    "session_search": _word("session_search"),
    "memories": _word("memories"),  # the built-in memory's folder
    # platforms and front-ends
    "slack": _word("slack"),
    "discord": _word("discord"),
    "whatsapp": _word("whatsapp"),
    "acp": _word("acp"),
    "api-server": _word(r"api[-_ ]server"),
    # the provider ladder, the shell rules and the front-ends the kernel used to hold (issue 61)
    "ladder": _word("ladder"),
    "rung": _word("rungs?"),
    "tree-sitter": _word(r"tree[-_]sitter"),
    # the old name of compression.unattended_threshold is still read, for configs written
    # with it; nothing else may name the gateway
    "gateway": _word(r"gateway(?!_threshold)"),
    # the store engines: the kernel holds the store's contract, never an engine (issue 61)
    "postgres": _word("postgres(?:ql)?"),
    "psycopg": r"(?<![a-z0-9])psycopg",  # psycopg, psycopg_pool ...
    "apsw": _word("apsw"),
    "sqlite3": _word("sqlite3"),
    "fts5": _word("fts5"),
    "pg_trgm": _word("pg_trgm"),
    "tsvector": _word("tsvector"),
    # other tools whose homes an importer brings over (it alone knows their files)
    "hermes-agent": _word(r"hermes[-_ ]agent"),
}


def kernel_sources() -> Iterator[tuple[str, str]]:
    for path in sorted(KERNEL.rglob("*.py")):
        yield path.relative_to(KERNEL).as_posix(), path.read_text(encoding="utf-8")


def named_capabilities(relative: str, source: str) -> list[tuple[str, int, str]]:
    """(name, line number, line) for each capability ``source`` names and may not."""
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        for name, pattern in CAPABILITY_NAMES.items():
            if re.search(pattern, line, re.IGNORECASE):
                found.append((name, number, line.strip()))
    return found


def test_the_kernel_names_no_capability():
    found = [
        f"kernel/src/hermes_kernel/{relative}:{number}: {name!r} in: {line}"
        for relative, source in kernel_sources()
        for name, number, line in named_capabilities(relative, source)
    ]
    assert not found, (
        "the kernel names a capability; let its plugin tell the kernel through a spec or a "
        "hook instead (say 'a provider', 'a front-end' in prose):\n" + "\n".join(found)
    )


def test_the_check_catches_a_planted_name_and_spares_ordinary_words():
    planted = [
        'KEY = "OPENAI_API_KEY"',
        "# reads cron's jobs.json",
        "def delegated_sessions(): ...",
        "source='delegate'",
        "servers = raw.get('mcp_servers')",
        "Path(home) / 'memories' / 'MEMORY.md'",
        '"""Talks to Anthropic."""',
        "model = 'SmolLM2-135M'",
        "tools = {'skill_manage'}",
        "url = 'https://api.telegram.org'",
        "# walk the provider ladder",
        "rungs = order(plugin_rungs)",
        "import tree_sitter_bash",
        "log_to('gateway')",
        "import psycopg_pool",
        "url = 'postgresql://u@h/d'",
        "connection = apsw.Connection(path)",
        "CREATE VIRTUAL TABLE words USING fts5(content)",
    ]
    for line in planted:
        assert named_capabilities("engine/planted.py", line), line
    ordinary = [
        "if name == 'crontab' and 'r' in flags:",  # a shell command the safety rules judge
        'CONTEXT_FILES = (".hermes.md", "AGENTS.md", "CLAUDE.md")',
        "# the memory provider, an external one",
        "approach = 'an escalation path'",
        "the platform adapter and its user",
        "section.get('gateway_threshold')",  # an old config key, still read
    ]
    for line in ordinary:
        assert not named_capabilities("engine/planted.py", line), line
    assert named_capabilities("config/model.py", "delegate = True")
