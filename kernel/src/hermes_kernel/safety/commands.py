"""Classify a shell command: harmless, dangerous (ask the user) or hardline (never run).

Matching happens on a normalized form, so that obvious disguises do not slip through:
quotes and backslash escapes are removed (``r\\m -r'f' "/"``), ``$(...)`` and backticks are
checked as commands of their own, ``sh -c``/``bash -c``/``eval`` wrappers are unwrapped, and
prefixes that do not change what runs (``sudo``, ``env A=B``, ``VAR=x``, ``nohup``,
``timeout 5``, ``/usr/bin/``) are dropped. None of this makes a shell parser: a determined
adversary gets past it, and the docs say so. What it catches is a model's (or a person's)
mistake.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import IntEnum

__all__ = ["Level", "Verdict", "classify", "normalize", "segments"]


class Level(IntEnum):
    ALLOW = 0
    ASK = 1
    BLOCK = 2


@dataclass(frozen=True)
class Verdict:
    level: Level
    rule: str = ""
    reason: str = ""


ALLOWED = Verdict(Level.ALLOW)

# --- normalizing -------------------------------------------------------------------------

_SUBSTITUTION = re.compile(r"\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)|`([^`]*)`|<\(([^()]*)\)")
_SEPARATORS = re.compile(r"\|\||&&|[;|&\n]")
_WRAPPER = re.compile(r"^(?:ba|z|da|k|fi)?sh\s+(?:-\w+\s+)*-\w*c\w*\s+|^eval\s+")
_PREFIX = re.compile(
    r"^(?:sudo(?:\s+-[a-z]+(?:\s+[a-z0-9_.-]+)?)*|doas|env(?:\s+-i)?|nohup|command|exec|"
    r"builtin|time|nice(?:\s+-n\s*-?\d+|\s+-\d+)?|ionice(?:\s+-c\s*\d)?|stdbuf(?:\s+-\S+)*|"
    r"timeout(?:\s+-\S+)*\s+\d+[smhd]?|busybox|xargs(?:\s+-\S+)*|[a-z_][a-z0-9_]*=\S*)\s+"
)
_PATH_OF_COMMAND = re.compile(r"^(?:/[\w.-]+)*/(?=\w)")


def normalize(command: str) -> str:
    """The command as matched: NFKC, no quotes or escapes, lower-case, single spaces."""
    text = unicodedata.normalize("NFKC", command)
    text = "".join(
        ch for ch in text if unicodedata.category(ch) not in ("Cf", "Cc") or ch in "\n\t"
    )
    text = text.replace("\\\n", "")  # line continuations
    text = re.sub(r"\$\{?ifs\}?", " ", text, flags=re.IGNORECASE)
    text = re.sub(r"\\(.)", r"\1", text)  # \r\m -> rm
    text = text.replace("'", "").replace('"', "")
    text = re.sub(r"\$\{?HOME\}?", "~", text)
    return re.sub(r"[ \t]+", " ", text).strip().lower()


def _strip_prefixes(segment: str) -> str:
    previous = None
    while segment != previous:
        previous = segment
        segment = _WRAPPER.sub("", segment)
        segment = _PREFIX.sub("", segment)
        segment = _PATH_OF_COMMAND.sub("", segment)
    return segment.strip()


def segments(normalized: str) -> list[str]:
    """Every simple command in ``normalized``: split on ; && || | & and newlines, with the
    insides of ``$(...)``, backticks and ``<(...)`` as commands of their own."""
    found: list[str] = []
    pending = [normalized]
    while pending:
        text = pending.pop()
        for match in _SUBSTITUTION.finditer(text):
            pending.append(next(group for group in match.groups() if group is not None))
        text = _SUBSTITUTION.sub(" ", text)
        for raw in _SEPARATORS.split(text):
            part = _strip_prefixes(raw.strip().strip("(){} ").strip())
            if part:
                found.append(part)
    return found


# --- rules ---------------------------------------------------------------------------------

_SYSTEM_DIRS = frozenset(
    {"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc"}
    | {"root", "sbin", "srv", "sys", "usr", "var", "system", "library", "applications"}
    | {"users", "private"}
)
_HOME_TARGETS = {"~", "~/", "~/*", "~/.", "/home/*", "/users/*"}


def _protected_target(target: str) -> bool:
    target = target.rstrip("/") or "/"
    if target in {"/", "/*", "/.", "/.."} or target in _HOME_TARGETS:
        return True
    if target.endswith("/*"):
        target = target[:-2] or "/"
    parts = [part for part in target.split("/") if part and part != "."]
    if target.startswith("/") and len(parts) == 1 and parts[0] in _SYSTEM_DIRS:
        return True
    # /home/alice, /Users/alice: someone's home directory
    return target.startswith("/") and len(parts) == 2 and parts[0] in {"home", "users"}


def _flags(words: list[str]) -> tuple[set[str], list[str]]:
    letters: set[str] = set()
    targets: list[str] = []
    options_done = False
    for word in words:
        if word == "--":
            options_done = True
        elif word.startswith("--") and not options_done:
            letters.add(word)
        elif word.startswith("-") and len(word) > 1 and not options_done:
            letters.update(word[1:])
        else:
            targets.append(word)
    return letters, targets


def _recursive(letters: set[str]) -> bool:
    return bool(letters & {"r", "R", "--recursive"})


def _check_rm(words: list[str]) -> Verdict | None:
    letters, targets = _flags(words[1:])
    if not _recursive(letters):
        return None
    if any(_protected_target(target) for target in targets) or "--no-preserve-root" in letters:
        return Verdict(
            Level.BLOCK,
            "recursive-delete-system",
            "recursively deletes / or a system or home directory",
        )
    if any(t.startswith(("/", "~", "..")) or t in {"*", ".", ".*"} for t in targets):
        return Verdict(
            Level.ASK, "recursive-delete", "recursively deletes files outside the project"
        )
    return None


def _check_permissions(words: list[str]) -> Verdict | None:
    letters, targets = _flags(words[1:])
    recursive = _recursive(letters)
    if recursive and any(_protected_target(target) for target in targets[1:] or targets):
        return Verdict(
            Level.BLOCK, "recursive-chmod-system", f"{words[0]} -R on / or a system directory"
        )
    world = {"777", "0777", "a+rwx", "ugo+rwx", "o+w", "a+w"}
    outside = any(t.startswith(("/", "~")) for t in targets[1:])
    if words[0] == "chmod" and any(t in world for t in targets) and (recursive or outside):
        return Verdict(Level.ASK, "world-writable", "makes files writable by everyone")
    if words[0] == "chown" and recursive:
        return Verdict(Level.ASK, "recursive-chown", "changes the owner of a whole tree")
    return None


def _check_kill(words: list[str]) -> Verdict | None:
    _, targets = _flags(words[1:])
    if words[0] == "kill" and "-1" in words[1:]:
        return Verdict(Level.BLOCK, "kill-all", "kills every process")
    if words[0] == "killall5" or (words[0] in {"pkill", "killall"} and targets in ([], ["."])):
        return Verdict(Level.BLOCK, "kill-all", "kills every process")
    if words[0] in {"pkill", "killall"}:
        return Verdict(Level.ASK, "kill-by-name", "kills processes by name")
    return None


_WORD_CHECKS = {
    "rm": _check_rm,
    "chmod": _check_permissions,
    "chown": _check_permissions,
    "chgrp": _check_permissions,
    "kill": _check_kill,
    "pkill": _check_kill,
    "killall": _check_kill,
    "killall5": _check_kill,
}

_BLOCK_PATTERNS: list[tuple[str, re.Pattern[str], str]] = [
    ("mkfs", re.compile(r"^(mkfs(\.\w+)?|mke2fs|mkswap|wipefs|mkdosfs)\b"), "formats a filesystem"),
    (
        "block-device-write",
        re.compile(r"^dd\b.*\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b|tty\b|shm/)"),
        "writes raw data onto a device",
    ),
    (
        "block-device-write",
        re.compile(r"^(shred|blkdiscard)\b.*\s/dev/"),
        "destroys the data on a device",
    ),
    ("shutdown", re.compile(r"^(shutdown|reboot|halt|poweroff)\b"), "shuts the machine down"),
    ("shutdown", re.compile(r"^(init|telinit) [06]\b"), "shuts the machine down"),
    (
        "shutdown",
        re.compile(r"^systemctl (?:\S+ )*(poweroff|reboot|halt|kexec|suspend|hibernate)\b"),
        "shuts the machine down",
    ),
    (
        "move-system",
        re.compile(r"^mv (?:-\S+ )*(/|/\*|~|~/|/etc|/usr|/bin|/home) "),
        "moves / or a system directory",
    ),
]
_BLOCK_ANYWHERE: list[tuple[str, re.Pattern[str], str]] = [
    ("fork-bomb", re.compile(r"(\S+)\s*\(\)\s*\{.*\1\s*\|\s*\1\s*&"), "a fork bomb"),
    (
        "block-device-write",
        re.compile(r">\s*/dev/(sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d|mapper/)"),
        "writes onto a block device",
    ),
]
_SHELLS = r"(?:ba|z|da|k|fi)?sh|python[23]?|perl|ruby|node|php"
_ASK_ANYWHERE: list[tuple[str, re.Pattern[str], str]] = [
    (
        "pipe-to-shell",
        re.compile(rf"\b(curl|wget|fetch)\b[^|]*\|\s*(sudo\s+)?(\S*/)?({_SHELLS})\b"),
        "runs a script downloaded from the network",
    ),
    (
        "pipe-to-shell",
        re.compile(rf"\b({_SHELLS})\s+(-\S+\s+)*<\s*\(\s*(curl|wget)\b"),
        "runs a script downloaded from the network",
    ),
    (
        "pipe-to-shell",
        re.compile(rf"\b({_SHELLS})\s+-\w*c\w*\s+.*\b(curl|wget)\b"),
        "runs a script downloaded from the network",
    ),
    (
        "sensitive-file-write",
        re.compile(
            r"(>>?|\btee\b|\bcp\b|\bmv\b|\bsed\s+(-\S+\s+)*-i|\bln\b|\binstall\b|\bdd\b.*of=)"
            r"[^;|&]*(\.(bash|zsh)rc\b|\.bash_(profile|login|logout)\b|\.z?profile\b|\.zshenv\b|"
            r"\.ssh/|authorized_keys|(^|[\s/=])\.env(\.\w+)?\b|/etc/(passwd|shadow|sudoers|crontab)|"
            r"\.aws/|\.gnupg/|\.netrc\b|\.git-credentials\b)"
        ),
        "writes to a shell startup, SSH, credential or .env file",
    ),
    ("git-reset-hard", re.compile(r"\bgit\b.*\breset\b.*--hard\b"), "discards uncommitted work"),
    (
        "git-force-push",
        re.compile(r"\bgit\b.*\bpush\b.*(\s--force\b|\s-f\b|\s--force-with-lease\b|\s\+\S)"),
        "rewrites history on the remote",
    ),
    ("git-clean", re.compile(r"\bgit\b.*\bclean\b.*\s-\w*f"), "deletes untracked files"),
    (
        "sql-destroy",
        re.compile(r"\b(drop\s+(table|database|schema|index|view)|truncate\s+(table\s+)?\w+)\b"),
        "destroys database tables or data",
    ),
    (
        "sql-delete-all",
        re.compile(r"\bdelete\s+from\s+[\w.]+\s*(;|$|\))"),
        "deletes every row of a table",
    ),
    (
        "find-delete",
        re.compile(r"\bfind\b.*(\s-delete\b|-exec\s+rm\b)"),
        "deletes the files it finds",
    ),
    (
        "system-service",
        re.compile(r"\bsystemctl\s+(stop|disable|mask|kill)\b"),
        "stops or disables a system service",
    ),
    (
        "firewall-flush",
        re.compile(r"\b(iptables|nft|ufw)\b.*\s(-f|flush|--flush|disable)\b"),
        "drops firewall rules",
    ),
    ("crontab-remove", re.compile(r"\bcrontab\s+(-\S+\s+)*-r\b"), "deletes every scheduled job"),
    (
        "docker-prune",
        re.compile(r"\bdocker\s+(system|volume|image|container)\s+prune\b"),
        "deletes Docker data",
    ),
    ("overwrite-devnull", re.compile(r"\bmv\s+.*\s/dev/null\b"), "moves files into /dev/null"),
]


def classify(command: str) -> Verdict:
    """The strictest verdict any rule gives ``command``."""
    normalized = normalize(command)
    verdicts: list[Verdict] = []
    for name, pattern, reason in _BLOCK_ANYWHERE:
        if pattern.search(normalized):
            verdicts.append(Verdict(Level.BLOCK, name, reason))
    for segment in segments(normalized):
        words = segment.split()
        check = _WORD_CHECKS.get(words[0])
        if check is not None and (verdict := check(words)) is not None:
            verdicts.append(verdict)
        for name, pattern, reason in _BLOCK_PATTERNS:
            if pattern.search(segment):
                verdicts.append(Verdict(Level.BLOCK, name, reason))
    if not any(v.level is Level.BLOCK for v in verdicts):
        for name, pattern, reason in _ASK_ANYWHERE:
            if pattern.search(normalized):
                verdicts.append(Verdict(Level.ASK, name, reason))
                break
    return max(verdicts, key=lambda v: v.level, default=ALLOWED)
