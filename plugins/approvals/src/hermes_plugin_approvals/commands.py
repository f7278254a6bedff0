"""Classify a shell command: harmless, dangerous (ask the user) or hardline (never run).

The command is read with a real shell grammar (:mod:`hermes_plugin_approvals.shell`), so each
rule looks at what a command actually runs: every stage of a pipeline or list, the insides of
``$(...)``, backticks and ``<(...)``, and the code given to ``sh -c``, ``eval`` or fed to a
shell on its standard input, with quotes, escapes and harmless prefixes (``sudo``, ``env``,
``nohup``, ``timeout 5``, ``/usr/bin/``) resolved. A quoted argument of a harmless program is
data (``grep -rn 'DROP TABLE' src``), while anything a download or a decoder feeds to an
interpreter is dangerous however it is wired (a pipe, a substitution, a process
substitution, a file downloaded and then run). Text the grammar cannot read is asked about:
the check fails closed. None of this is a sandbox: a determined adversary gets past it, and
the docs say so. What it catches is a model's (or a person's) mistake.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import unicodedata
from collections.abc import Callable
from dataclasses import replace

from hermes_plugin_approvals.destruction import DESTROYERS, check_destruction, check_git_discard
from hermes_plugin_approvals.exfiltration import (
    SENSITIVE_READ,
    check_exfiltration,
    reads_secret,
    serving_verdict,
)
from hermes_plugin_approvals.footholds import check_footholds
from hermes_plugin_approvals.hermes_state import check_hermes_state
from hermes_plugin_approvals.interpreters import language, literal_shell_outs, shell_out
from hermes_plugin_approvals.shell import EXPANDED, SHELLS, SUBSTITUTED, Command, fixed_input, parse
from hermes_plugin_approvals.targets import flags as _flags
from hermes_plugin_approvals.targets import long_option as _long
from hermes_plugin_approvals.targets import protected_target, written_elsewhere
from hermes_plugin_approvals.targets import recursive as _recursive
from hermes_sdk.approvals import ALLOWED, Level, Verdict

__all__ = ["Level", "Verdict", "classify", "normalize"]


def normalize(command: str) -> str:
    """The command as one line of plain text (NFKC, no quotes or escapes, lower-case, single
    spaces): what plugins' ``hermes_check_command`` and the allow-list match against."""
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


# --- rules ---------------------------------------------------------------------------------

FROM_INPUT = "\x00input\x00"
"""A target the command reads from its input (``xargs rm -rf``) or from a variable: known
only when it runs."""


def _unknown(target: str) -> bool:
    return FROM_INPUT in target or target.startswith("$") or SUBSTITUTED in target


def _check_rm(words: list[str]) -> Verdict | None:
    letters, targets = _flags(words[1:])
    if not _recursive(letters):
        return None
    if any(protected_target(target) for target in targets) or "--no-preserve-root" in letters:
        return Verdict(
            Level.BLOCK,
            "recursive-delete-system",
            "recursively deletes / or a system or home directory",
        )
    if any(_unknown(target) for target in targets):
        return Verdict(
            Level.ASK,
            "recursive-delete-unknown",
            "recursively deletes paths known only when it runs (read from its input, a file "
            "or a variable)",
        )
    if any(t.startswith(("/", "~", "..")) or t in {"*", ".", ".*"} for t in targets):
        return Verdict(
            Level.ASK, "recursive-delete", "recursively deletes files outside the project"
        )
    return None


def _check_permissions(words: list[str]) -> Verdict | None:
    letters, targets = _flags(words[1:])
    recursive = _recursive(letters)
    if recursive and any(protected_target(target) for target in targets[1:] or targets):
        return Verdict(
            Level.BLOCK, "recursive-chmod-system", f"{words[0]} -R on / or a system directory"
        )
    if recursive and any(_unknown(target) for target in targets[1:]):
        return Verdict(
            Level.ASK,
            "recursive-chmod-unknown",
            f"{words[0]} -R on paths known only when it runs (its input, a file or a variable)",
        )
    world = {"777", "0777", "a+rwx", "ugo+rwx", "o+w", "a+w"}
    outside = any(t.startswith(("/", "~")) for t in targets[1:])
    if words[0] == "chmod" and any(t in world for t in targets) and (recursive or outside):
        return Verdict(Level.ASK, "world-writable", "makes files writable by everyone")
    if words[0] == "chown" and recursive:
        return Verdict(Level.ASK, "recursive-chown", "changes the owner of a whole tree")
    return None


def _check_kill(words: list[str]) -> Verdict | None:
    letters, targets = _flags(words[1:])
    if words[0] == "killall" and not targets and letters & {"l", "V", "--list", "--version"}:
        return None  # it lists signals or prints its version
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
_FORK_BOMB = re.compile(r"(\S+)\s*\(\)\s*\{.*\1\s*\|\s*\1\s*&")
_BLOCK_DEVICE = re.compile(
    r"^/dev/(sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d|mapper/)"
)
_SENSITIVE = re.compile(
    r"(\.(bash|zsh)rc$|\.bash_(profile|login|logout)$|(^|/)\.z?profile$|\.zshenv$|\.ssh/|"
    r"authorized_keys|(^|/)\.env(\.\w+)?$|^/etc/(passwd|shadow|sudoers|crontab)|\.aws/|"
    r"\.gnupg/|\.netrc$|\.git-credentials$)",
    re.IGNORECASE,  # ~/.BASHRC is ~/.bashrc where the file system ignores case
)
_SYSTEM_FILE = re.compile(r"^(/private)?/(etc|boot|usr|bin|sbin|lib|lib64|var/db)/")
_HERMES_HOME = re.compile(r"((^|/)\.hermes(?![\w.-])|\$\{?hermes_home\b)", re.IGNORECASE)
_WRITES = (">", ">>", ">|", "&>", "&>>", ">&")
_SQL_DESTROY = re.compile(
    r"\b(drop\s+(table|database|schema|index|view)|truncate\s+(table\s+)?\w+)\b"
)
_SQL_DELETE_ALL = re.compile(r"\bdelete\s+from\s+[\w.\"`]+\s*(;|$|\))")
_DB_CLIENTS = frozenset(
    {"psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "clickhouse-client", "duckdb", "cqlsh"}
)
_INTERPRETER = re.compile(
    r"^((ba|z|da|k|fi|a|mk)?sh|python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby|node|nodejs|php|"
    r"deno|bun|lua[0-9.]*|tclsh|pwsh|osascript|source|\.|eval)$"
)
_DOWNLOADERS = frozenset(
    {
        "curl",
        "wget",
        "fetch",
        "aria2c",
        "http",
        "https",
        "xh",
        "nc",
        "ncat",
        "socat",
        "lwp-download",
    }
)


def _is_decoder(command: Command) -> bool:
    name, args = command.name, command.args
    if name in ("base64", "base32", "basenc"):
        return any(
            a in ("-d", "-D", "--decode") or (a.startswith("-") and "d" in a[1:]) for a in args
        )
    if name == "xxd":
        return any(a.startswith("-") and "r" in a[1:] for a in args)
    if name == "openssl":
        return "-d" in args or ("base64" in args and "-d" in args)
    if name in ("gunzip", "zcat", "bzcat", "xzcat", "uudecode", "unxz"):
        return True
    return name in ("gzip", "bzip2", "xz") and any(a in ("-d", "--decompress") for a in args)


def _source_of(commands: list[Command]) -> str:
    """What the output of these commands is, if it is dangerous to run: a download or a
    decoded payload; '' otherwise."""
    for command in commands:
        if command.name in _DOWNLOADERS:
            return "download"
        if _is_decoder(command):
            return "decoded"
        for inner in command.dynamic:
            if found := _source_of(inner):
                return found
    return ""


_SOURCE_REASON = {
    "download": ("pipe-to-shell", "runs a script downloaded from the network"),
    "decoded": ("decoded-to-shell", "runs code that was encoded to hide what it does"),
}


def _check_git(command: Command) -> Verdict | None:
    args = command.args
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in ("-c", "-C", "--git-dir", "--work-tree") and rest:
            rest.pop(0)
    if not rest:
        return None
    sub, sub_args = rest[0], rest[1:]
    if sub == "reset" and any(_long(a, "--hard", 3) for a in sub_args):
        return Verdict(Level.ASK, "git-reset-hard", "discards uncommitted work")
    if (
        sub == "push"
        and any(
            a.startswith("--force")  # --force, --force-with-lease, and --forced (meant so)
            or _long(a, "--force", 5)
            or _long(a, "--mirror", 4)
            or _long(a, "--delete", 5)
            or (a.startswith("-") and not a.startswith("--") and "f" in a[1:])
            or (a.startswith("+") and len(a) > 1)
            for a in sub_args
        )
    ):
        return Verdict(Level.ASK, "git-force-push", "rewrites history on the remote")
    if sub == "branch":
        letters, _ = _flags(sub_args)
        forced = "D" in letters or "f" in letters or any(_long(o, "--force", 5) for o in letters)
        deleting = bool(letters & {"d", "D"}) or any(_long(o, "--delete", 5) for o in letters)
        if deleting and forced:
            return Verdict(Level.ASK, "git-branch-delete", "deletes a branch with unmerged work")
    if sub == "clean":
        letters, _ = _flags(sub_args)
        if "f" in letters or "--force" in letters:
            return Verdict(Level.ASK, "git-clean", "deletes untracked files")
    return check_git_discard(sub, sub_args)


def _sql_verdict(text: str) -> Verdict | None:
    text = text.lower()
    if _SQL_DESTROY.search(text):
        return Verdict(Level.ASK, "sql-destroy", "destroys database tables or data")
    if _SQL_DELETE_ALL.search(text):
        return Verdict(Level.ASK, "sql-delete-all", "deletes every row of a table")
    return None


def _written_paths(command: Command) -> list[str]:
    """Files this command writes, as far as its arguments say."""
    name, args = command.name, command.args
    _, operands = _flags(args)
    if name == "tee":
        return operands
    if name in ("cp", "mv", "ln", "install", "rsync", "scp") and len(operands) >= 2:
        return operands[-1:] + written_elsewhere(command)  # cp -t DIR names it first
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name == "sed" and any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args):
        return operands[1:]
    if name in ("perl", "ruby") and any(
        a.startswith("-") and not a.startswith("--") and "i" in a[1:] for a in args
    ):
        return operands[1:]  # the script, then the files it edits in place
    if name == "truncate":
        return operands
    return written_elsewhere(command)


def _in_hermes_home(target: str, here: str | None, hermes_home: str) -> bool:
    """Whether a write lands in HERMES_HOME: ``~/.hermes/...``, ``$HERMES_HOME/...``, the
    home's real path, or a relative path after a ``cd`` into one of those."""
    if here is not None and not target.startswith(("/", "~", "$")):
        target = _joined(here, target)
    if _HERMES_HOME.search(target):
        return True
    home = hermes_home.rstrip("/")
    return bool(home) and (target == home or target.startswith(home + "/"))


_REMOVERS = frozenset({"rm", "unlink", "shred", "truncate", "mv", "srm", "wipe", "rmdir", "find"})


def _removes_hermes_state(command: Command, here: str | None, hermes_home: str) -> bool:
    """``rm ~/.hermes/state.db``, ``mv ~/.hermes/SOUL.md /tmp``, ``find ~/.hermes -delete``:
    Hermes's own files deleted, emptied or moved away."""
    if command.name not in _REMOVERS:
        return False
    _, operands = _flags(command.args)
    if command.name == "mv":
        operands = operands[:-1]
    if command.name == "find":
        operands = operands[:1] if _find_deletes(command.args) else []
    return any(_in_hermes_home(o, here, hermes_home) for o in operands)


def _check_writes(
    command: Command, here: str | None, hermes_home: str, written: list[str]
) -> list[Verdict]:
    verdicts: list[Verdict] = []
    if _removes_hermes_state(command, here, hermes_home):
        verdicts.append(
            Verdict(
                Level.ASK,
                "hermes-state",
                "deletes or moves Hermes's own files (config, secrets, state, what its "
                "plugins keep); the owning tool or command does that",
                guarded=True,
            )
        )
    targets = [t for op, t in command.redirects if op in _WRITES] + written
    for target in targets:
        if _BLOCK_DEVICE.match(target):
            verdicts.append(
                Verdict(Level.BLOCK, "block-device-write", "writes onto a block device")
            )
        elif _in_hermes_home(target, here, hermes_home):
            verdicts.append(
                Verdict(
                    Level.ASK,
                    "hermes-state",
                    "changes Hermes's own files (config, secrets, SOUL, what its plugins keep, "
                    "plugins); the owning tool or command does that",
                    guarded=True,
                )
            )
        elif _SYSTEM_FILE.match(target):
            verdicts.append(Verdict(Level.ASK, "system-file-write", "writes to a system file"))
        elif _SENSITIVE.search(target):
            verdicts.append(
                Verdict(
                    Level.ASK,
                    "sensitive-file-write",
                    "writes to a shell startup, SSH, credential or .env file",
                )
            )
    return verdicts


_DELETERS = DESTROYERS


def _find_deletes(args: list[str]) -> bool:
    """``find ... -delete`` or ``-exec rm/shred/truncate ...``."""
    return "-delete" in args or any(
        a in ("-exec", "-execdir", "-ok", "-okdir") and b.rsplit("/", 1)[-1] in _DELETERS
        for a, b in itertools.pairwise(args)
    )


def _check_tools(command: Command) -> Verdict | None:
    name, args = command.name, command.args
    if name == "git":
        return _check_git(command)
    if name == "find" and _find_deletes(args):
        return Verdict(Level.ASK, "find-delete", "deletes the files it finds")
    operands = [a for a in args if not a.startswith("-")]
    if name == "systemctl" and operands[:1] and operands[0] in ("stop", "disable", "mask", "kill"):
        return Verdict(Level.ASK, "system-service", "stops or disables a system service")
    if name in ("iptables", "ip6tables", "nft", "ufw") and any(
        a in ("-f", "-F", "--flush", "flush", "disable", "reset", "-X") for a in args
    ):
        return Verdict(Level.ASK, "firewall-flush", "drops firewall rules")
    if name == "crontab" and "r" in _flags(args)[0]:
        return Verdict(Level.ASK, "crontab-remove", "deletes every scheduled job")
    if name in ("docker", "podman") and "prune" in operands[:3]:
        return Verdict(Level.ASK, "docker-prune", "deletes Docker data")
    if name == "mv" and operands[-1:] == ["/dev/null"]:
        return Verdict(Level.ASK, "overwrite-devnull", "moves files into /dev/null")
    if name in _DB_CLIENTS:
        fed = " ".join(w for p in command.fed_by for w in p.args)
        stdin = " ".join(t for op, t in command.redirects if op.startswith("<<"))
        return _sql_verdict(" ".join([*args, fed, stdin]))
    return None


def _script_argument(command: Command) -> str:
    """The script an interpreter runs from a file (``bash x.sh``, ``source x``), or ''."""
    for arg in command.args:
        if arg == "-":
            return ""
        if arg.startswith("-"):
            if arg in ("-e", "-m") or (not arg.startswith("--") and "c" in arg[1:]):
                return ""  # code or a module, not a file
            continue
        return arg
    return ""


def _reads_stdin(command: Command) -> bool:
    if command.name in ("eval",):
        return False
    args = command.args
    if any(a in ("-", "-s", "/dev/stdin") for a in args):
        return True
    return not _script_argument(command) and not any(
        a.startswith("-") and not a.startswith("--") and ("c" in a[1:] or "e" in a[1:] or a == "-m")
        for a in args
    )


def _output_option(args: list[str], letter: str, long: str) -> tuple[bool, str]:
    """Whether ``-LETTER`` / ``--LONG`` is given (alone, in a cluster like ``-fsSLo``, or as
    ``--LONG=VALUE``), and its value."""
    for at, arg in enumerate(args):
        if arg == f"--{long}" or (arg.startswith("-") and not arg.startswith("--")
                                  and letter in arg[1:]):  # fmt: skip
            attached = arg[arg.index(letter) + 1 :] if not arg.startswith("--") else ""
            if attached:
                return True, attached
            return True, args[at + 1] if at + 1 < len(args) else ""
        if arg.startswith(f"--{long}="):
            return True, arg.split("=", 1)[1]
    return False, ""


def _url_file(args: list[str]) -> str:
    urls = [a for a in args if "://" in a]
    return urls[-1].split("?")[0].rstrip("/").rsplit("/", 1)[-1] if urls else ""


def _downloads(commands: list[Command]) -> set[str]:
    """Files the downloaders among ``commands`` write (``-o FILE``, ``-O``, ``> FILE``)."""
    files: set[str] = set()
    for command in commands:
        args = command.args
        if command.name == "curl":
            named, value = _output_option(args, "o", "output")
            if named:
                files.add(value)
            if _output_option(args, "O", "remote-name")[0]:
                files.add(_url_file(args))
        elif command.name == "wget":
            named, value = _output_option(args, "O", "output-document")
            files.add(value if named else _url_file(args))
        elif command.name not in _DOWNLOADERS:
            continue
        files.update(t for op, t in command.redirects if op in _WRITES)
    return {f.removeprefix("./") for f in files if f and f != "-"}


def _check_code(command: Command, downloaded: set[str]) -> Verdict | None:
    """An interpreter (or ``./script``) running what a download or a decoder produced."""
    name = command.name
    interpreter = bool(_INTERPRETER.match(name))
    if interpreter:
        if _reads_stdin(command) and (source := _source_of(command.fed_by)):
            return Verdict(Level.ASK, *_SOURCE_REASON[source])
        for inner in command.dynamic:  # sh -c "$(curl ..)", bash <(curl ..), eval "$(..)"
            if source := _source_of(inner):
                return Verdict(Level.ASK, *_SOURCE_REASON[source])
        script = _script_argument(command)
    else:
        script = command.script
    if script and script.removeprefix("./") in downloaded:
        return Verdict(Level.ASK, "download-then-run", "runs a script downloaded from the network")
    return None


_PLAIN_SOURCES = frozenset({"cat", "echo", "printf"})
_NETWORK = _DOWNLOADERS | {"ssh", "scp", "rsync", "ftp", "sftp", "telnet"}


def _check_more(command: Command) -> Verdict | None:
    """What hides a command, hands a password over, ships private files out, generates code
    for a shell, or stops Hermes itself."""
    name, args = command.name, command.args
    if SUBSTITUTED in name or name.startswith((EXPANDED, "$")):
        # Whatever it turns out to be, `X -rf /` is never run unseen: judge it as rm would be.
        as_rm = _check_rm(["rm", *args])
        if as_rm is not None and as_rm.level is Level.BLOCK:
            return as_rm
        return Verdict(
            Level.ASK, "computed-command", "runs a command whose name is known only when it runs"
        )
    for prefix in command.prefixes:
        if prefix[0] == "sudo" and any(
            o in ("-S", "-A") or _long(o, "--stdin", 4) or _long(o, "--askpass", 4)
            or (o.startswith("-") and not o.startswith("--") and ("S" in o or "A" in o))
            for o in prefix[1:]
        ):  # fmt: skip
            return Verdict(Level.ASK, "sudo-password", "hands a password to sudo")
    if name in ("powershell", "pwsh") and any(
        a.lower() in ("-e", "-ec", "-enc", "-encodedcommand") for a in args
    ):
        return Verdict(Level.ASK, *_SOURCE_REASON["decoded"])
    interpreter = bool(_INTERPRETER.match(name)) and name not in SHELLS and name != "eval"
    if (lang := language(name)) is not None:
        texts = command.code
        if any(shell_out(lang, text) or literal_shell_outs(lang, text) for text in texts):
            return Verdict(
                Level.ASK, "script-shell-out", f"runs shell commands from inside a {lang} script"
            )
        if any(SUBSTITUTED in text or EXPANDED in text for text in texts):
            return Verdict(
                Level.ASK,
                "script-unknown",
                f"runs {lang} code known only when it runs (it may run shell commands)",
            )
    if (name in SHELLS or interpreter) and _reads_stdin(command):
        producers = [p for p in command.fed_by if p.name not in _PLAIN_SOURCES or p.dynamic]
        if producers and not _source_of(command.fed_by):
            return Verdict(Level.ASK, "generated-code", "runs code that another command generates")
    if name in _NETWORK:
        read = [w for p in command.fed_by for w in p.args] + [
            a.split("@", 1)[1] for a in args if "@" in a and not a.startswith("http")
        ]
        read += [t for op, t in command.redirects if op == "<"]
        if any(SENSITIVE_READ.search(path.lstrip("<")) for path in read):
            return Verdict(Level.ASK, "exfiltration", "sends private files over the network")
    return _check_hermes(command)


def _check_hermes(command: Command) -> Verdict | None:
    """Stopping or restarting Hermes's own gateway (the process this conversation runs in)."""
    name, args = command.name, command.args
    text = " ".join(args).lower()
    stops = {"stop", "restart", "kill", "kickstart", "bootout", "unload", "disable"}
    if name == "hermes" and "gateway" in args and (stops & set(args) or "--replace" in args):
        return Verdict(Level.ASK, "stops-hermes", "stops or restarts Hermes itself")
    if name in ("systemctl", "launchctl", "service") and "hermes" in text and stops & set(args):
        return Verdict(Level.ASK, "stops-hermes", "stops or restarts Hermes itself")
    if name in ("kill", "pkill", "killall"):
        chosen = [w for inner in command.dynamic for c in inner for w in c.words]
        if "hermes" in text or any("hermes" in w.lower() for w in chosen):
            return Verdict(Level.ASK, "stops-hermes", "stops or restarts Hermes itself")
        if name == "kill" and command.dynamic:
            return Verdict(Level.ASK, "kill-by-name", "kills processes chosen only when it runs")
    return None


_HOME = "/home/\x00you"
"""``~`` while a path is resolved, so that ``~/..`` is the folder of homes; mapped back."""
_TARGETED = frozenset(_WORD_CHECKS) - {"kill", "pkill", "killall", "killall5"}
"""The checks whose arguments are paths: judged where a ``cd`` earlier in the line lands."""


class _Directory:
    """Where each command of one line runs, as far as its ``cd``, ``pushd`` and ``popd``
    tell: a path (``/srv``, ``~``, ``./build``), or None once it is not known (``cd -``,
    ``cd "$dir"``) or never changed. Code inside code (``sh -c``) starts where its shell
    was started."""

    def __init__(self) -> None:
        self._at: dict[int, str | None] = {}
        self._stack: dict[int, list[str | None]] = {}

    def of(self, command: Command) -> str | None:
        for depth in range(command.depth, -1, -1):
            if depth in self._at:
                return self._at[depth]
        return None

    def follow(self, command: Command) -> None:
        name = command.name
        if name not in {"cd", "pushd", "popd"}:
            return
        # -P, -L ... are options; "-" alone is the previous directory.
        args = [a for a in command.args if a == "-" or not a.startswith("-")]
        here = self.of(command)
        depth = command.depth
        if name == "popd":
            stack = self._stack.get(depth) or []
            self._at[depth] = stack.pop() if stack else None
            return
        if name == "pushd":
            self._stack.setdefault(depth, []).append(here)
        target = args[0] if args else "~"
        if target == "-" or SUBSTITUTED in target or EXPANDED in target or "$" in target:
            self._at[depth] = None
        elif target.startswith(("/", "~")):
            self._at[depth] = _joined(target, "")
        else:
            self._at[depth] = _joined(here or ".", target)


def _joined(base: str, path: str) -> str:
    """``path`` from ``base`` (``~`` kept as ``~``), normalised: ``~/..`` is /home."""
    if base.startswith("~"):
        base = _HOME + base[1:]
    resolved = posixpath.normpath(posixpath.join(base, path))
    if resolved == _HOME or resolved.startswith(_HOME + "/"):
        return "~" + resolved[len(_HOME) :]
    return resolved


def _where_it_lands(words: list[str], directory: str | None) -> list[str]:
    """A path-taking command's words with its relative paths resolved from ``directory``."""
    if directory is None or directory in {".", "./"} or words[0] not in _TARGETED:
        return words
    landed = [words[0]]
    not_a_path = words[0] in {"chmod", "chown", "chgrp"}  # the mode or owner comes first
    for word in words[1:]:
        if word.startswith("-") or SUBSTITUTED in word or EXPANDED in word:
            landed.append(word)
        elif not_a_path:
            not_a_path = False
            landed.append(word)
        else:
            landed.append(word if word.startswith(("/", "~")) else _joined(directory, word))
    return landed


def _landed(
    command: Command, directory: _Directory, check: Callable[[list[str]], Verdict | None]
) -> Verdict | None:
    """The hardline verdict of a path-taking command judged where an earlier ``cd`` of the
    line took it (``cd ~ && rm -rf .``). Only a BLOCK counts: the project's own folder is not
    known here, so a relative path stays judged as written otherwise (``cd ~/app && rm -rf
    build`` is as harmless as it was)."""
    here = directory.of(command)
    landed = _where_it_lands(command.words, here)
    if landed == command.words or (verdict := check(landed)) is None:
        return None
    if verdict.level is not Level.BLOCK:
        return None
    return Verdict(verdict.level, verdict.rule, f"{verdict.reason} (run in {here}, after cd)")


def _with_inputs(command: Command) -> list[str]:
    """Its words with the targets it takes from elsewhere added: the words an ``echo``
    pipes into ``xargs`` (or :data:`FROM_INPUT` when its input is not fixed text: a pipe, a
    file, ``-a FILE``), the lists after ``:::`` of ``parallel`` (else its input), and the
    words a ``for`` variable takes."""
    words = list(command.words)
    if words and words[0] == "parallel":
        rest = words[1:]
        while rest and rest[0].startswith("-"):
            rest.pop(0)
        if ":::" in rest:
            at = rest.index(":::")
            words = rest[:at] + [w for w in rest[at + 1 :] if not w.startswith(":::")]
        else:
            words = [*rest, FROM_INPUT]
    elif any(prefix[0] == "xargs" for prefix in command.prefixes):
        words += fixed_input(command) or [FROM_INPUT]
    if command.loops:
        looped: list[str] = []
        for word in words:
            name = word.removeprefix("$").strip("{}")
            if word.startswith("$") and name in command.loops:
                values = command.loops[name]
                looped += [FROM_INPUT if SUBSTITUTED in v else v for v in values]
            else:
                looped.append(word)
        words = looped
    return words


def _find_from_protected(command: Command) -> Verdict | None:
    """``find`` deleting (``-delete``, ``-exec rm ...``) from / or a system or home folder."""
    args = command.args
    starts = list(itertools.takewhile(lambda a: not a.startswith(("-", "(", "!")), args))
    if _find_deletes(args) and any(protected_target(start) for start in starts):
        return Verdict(
            Level.BLOCK,
            "recursive-delete-system",
            "deletes what it finds under / or a system or home directory",
        )
    return None


def _judge(
    found: Command,
    directory: _Directory,
    downloaded: set[str],
    hermes_home: str,
    verdicts: list[Verdict],
) -> None:
    """Every rule's verdict on one command, added to ``verdicts``."""
    words = found.words
    if words and (words[0] == "parallel" or found.prefixes or found.loops):
        words = _with_inputs(found)
    if words and words[0] == "find" and (verdict := _find_from_protected(found)) is not None:
        verdicts.append(verdict)
    here = directory.of(found)
    if words:
        check = _WORD_CHECKS.get(words[0])
        if check is not None and (verdict := check(words)) is not None:
            verdicts.append(verdict)
        if check is not None and (landed := _landed(found, directory, check)) is not None:
            verdicts.append(landed)
        segment = " ".join(w for w in words if SUBSTITUTED not in w)
        for name, pattern, reason in _BLOCK_PATTERNS:
            if pattern.search(segment):
                verdicts.append(Verdict(Level.BLOCK, name, reason))
        moved = _where_it_lands(words, here)
        for each in (words, moved) if moved != words else (words,):
            if (verdict := check_destruction(found, each)) is not None:
                verdicts.append(verdict)
        for rule in (_check_tools, _check_more, check_hermes_state):
            if (verdict := rule(found)) is not None:
                verdicts.append(verdict)
        if (verdict := check_exfiltration(found, hermes_home, here)) is not None:
            verdicts.append(verdict)
        if (verdict := _check_code(found, downloaded)) is not None:
            verdicts.append(verdict)
        if (verdict := serving_verdict(found, here)) is not None:
            verdicts.append(verdict)
    written = _written_paths(found)
    if words:
        verdicts += check_footholds(found, written)
    verdicts += _check_writes(found, here, hermes_home, written)


_TALKS = frozenset({"curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp"})
_TALKS |= {"ftp", "http", "https", "xh", "ssh", "rsync", "dig", "nslookup", "host", "ping"}


def _secret_goes_out(commands: list[Command]) -> Verdict | None:
    """A private file read where its text can reach the network in the same line: inside a
    substitution (``X=$(cat ~/.env); curl -d "$X" ...``) or piped into a sender. A file
    merely read beside a network call (``source .env && curl localhost``) is not."""
    if not any(c.name in _TALKS for c in commands):
        return None
    inside = {id(c) for owner in commands for group in owner.dynamic for c in group}
    piped = [p for c in commands if c.name in _TALKS for p in c.fed_by]
    readers = [c for c in commands if id(c) in inside] + piped
    if any(reads_secret(c) for c in readers if c.name not in _TALKS):
        return Verdict(
            Level.ASK,
            "exfiltration",
            "reads a private file (keys, .env, Hermes's home) and talks to the network",
        )
    return None


def classify(command: str, hermes_home: str = "") -> Verdict:
    """The strictest verdict any rule gives ``command``; ``hermes_home`` is the home's
    real path, so writes there are known however the path is spelled."""
    try:
        parsed = parse(command)
    except (RecursionError, UnicodeError, ValueError) as exc:  # fails closed, in one line
        why = f"{type(exc).__name__}: it is nested too deeply or holds text no shell reads"
        return Verdict(Level.ASK, "unreadable", f"cannot be read as a shell command ({why})")
    verdicts: list[Verdict] = []
    for source in parsed.functions:
        if _FORK_BOMB.search(" ".join(source.split())):
            verdicts.append(Verdict(Level.BLOCK, "fork-bomb", "a fork bomb"))
    downloaded = _downloads(parsed.commands)
    directory = _Directory()
    known: dict[str, str] = {}
    for written in parsed.commands:
        found = written
        directory.follow(found)
        if found.name == ":":  # X=value alone: a later $X is judged as what it holds
            known.update((n.lower(), v) for n, v in found.assignments if SUBSTITUTED not in v)
        named = found.name.removeprefix("$").strip("{}")
        if found.name.startswith("$") and named in known and known[named].split():
            value = known[named].split()
            found = replace(
                found, words=[value[0].rsplit("/", 1)[-1].lower(), *value[1:], *found.args]
            )
        before = len(verdicts)
        _judge(found, directory, downloaded, hermes_home, verdicts)
        if found.elsewhere:  # said so: the rules are the same, the machine is not this one
            verdicts[before:] = [
                Verdict(v.level, v.rule, f"{v.reason} (on {found.elsewhere})", v.guarded)
                for v in verdicts[before:]
            ]
    if (verdict := _secret_goes_out(parsed.commands)) is not None:
        verdicts.append(verdict)
    if parsed.unreadable:
        verdicts.append(
            Verdict(
                Level.ASK,
                "unreadable",
                f"cannot be read as a shell command ({parsed.unreadable}), so it is not checked",
            )
        )
    return max(verdicts, key=lambda v: v.weight, default=ALLOWED)
