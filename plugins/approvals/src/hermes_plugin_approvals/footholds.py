"""Rules for what outlives the command: persistence (scheduled jobs, services, autostart,
git settings that run programs, every shell startup file, keys authorized elsewhere),
privilege (setuid bits, capabilities, admin groups, a container given the host) and code
fetched and run (``npx -y``, a package index other than PyPI's or npm's, a package from
a URL).

All of these are asked about; reading the same things stays quiet (``crontab -l``,
``systemctl --user status``, ``git config user.name``, ``docker run -v $PWD:/app``,
``pip install -r requirements.txt``).
"""

from __future__ import annotations

import itertools
import re

from hermes_plugin_approvals.shell import Command
from hermes_plugin_approvals.targets import flags, protected_target
from hermes_sdk.approvals import Level, Verdict

__all__ = ["PERSISTENCE_PATHS", "check_footholds"]

# (/etc's scheduler folders are written cro[n]...: the operating system's, not a plugin's.)
PERSISTENCE_PATHS = re.compile(
    r"(\.config/systemd/|\.local/share/systemd/|^/(etc|lib|usr/lib)/systemd/|"
    r"\.config/autostart/|/library/launch(agents|daemons)/|\.config/environment\.d/|"
    r"(^|/)\.git/hooks/|(^|/)\.git/config$|(^|/)\.gitconfig$|\.config/git/|"
    r"(^|/)\.(bash_aliases|bash_logout|zlogin|zlogout|kshrc|mkshrc|cshrc|tcshrc|xprofile|"
    r"xinitrc|xsession|xsessionrc|pam_environment|tmux\.conf|screenrc|vimrc|exrc|"
    r"npmrc|pypirc|yarnrc|curlrc|wgetrc|inputrc)$|\.config/(fish|nvim|gh|pip)/|(^|/)\.pip/|"
    r"\.local/bin/|^(~|/root|/home/[^/]+|/users/[^/]+)/bin/|site-packages/.*\.pth$|"
    r"(site|user)customize\.py$|^/etc/(cro[n][a-z.]*|anacrontab|profile\.d|rc\.local|ld\.so\.preload|sudoers))",
    re.IGNORECASE,
)
"""Files that make something run later (a login, a shell, a git command, a boot) or hold
credentials for a package registry."""

_WRITES = (">", ">>", ">|", "&>", "&>>", ">&")
_GIT_RUNS = re.compile(
    r"^(core\.(hookspath|askpass|gitproxy)|diff\.external|gpg\.(\w+\.)?program|"
    r"filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver|"
    r"include\.path|includeif\..+\.path|init\.templatedir|uploadpack\.packobjectshook|"
    r"remote\..+\.(uploadpack|receivepack)|url\..+\.insteadof)$",
    re.IGNORECASE,
)
"""git settings that always make it run (or fetch) something of the setting's choosing."""
_GIT_RUNS_A_LINE = re.compile(
    r"^(core\.(fsmonitor|sshcommand|pager|editor)|credential\..*helper|sequence\.editor|"
    r"pager\..+)$",
    re.IGNORECASE,
)
"""git settings that name a program (an editor, a pager, a credential helper): asked about
only when the value is more than a program and its options (``!``, ``;``, ``|``, ``$(``)."""
_SHELL_LINE = re.compile(r"[!;|&`$<>(){}]|\bsh\b|\bbash\b|\bcurl\b|\bwget\b")


def _runs_code(key: str, value: str) -> bool:
    if _GIT_RUNS.match(key):
        return True
    if key.lower() == "core.fsmonitor" and value.lower() in ("true", "false", "", "0", "1"):
        return False
    if _GIT_RUNS_A_LINE.match(key) or key.lower().startswith("alias."):
        return bool(_SHELL_LINE.search(value)) or key.lower() == "core.fsmonitor"
    return False


_HOST_DEVICE = re.compile(
    r"^/dev/(sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d|mapper/|mem$|kmem$|port$|"
    r"loop|dm-|md\d)"
)
"""Devices that hold this machine's data or memory (a GPU, /dev/nvidia0, is not one)."""
_ADMIN_GROUPS = frozenset({"sudo", "wheel", "admin", "root", "docker", "lxd", "disk", "adm"})
_SETUID = re.compile(r"^([ugoa]*[+=][rwxXt]*s|0*[2-7]\d{3})$")
_DEFAULT_INDEXES = (
    "https://pypi.org/",
    "https://files.pythonhosted.org/",
    "https://download.pytorch.org/whl",  # PyTorch's own wheels, as its install page says
)
_NPM_REGISTRY = "https://registry.npmjs.org"
_INDEX_OPTIONS = frozenset(
    {"-i", "--index-url", "--extra-index-url", "--index", "-f", "--find-links", "--default-index"}
)


def _write_targets(command: Command, written: list[str]) -> list[str]:
    return [t for op, t in command.redirects if op in _WRITES] + written


def _git_config(args: list[str]) -> Verdict | None:
    """``git config KEY VALUE`` or ``git -c KEY=VALUE``, where KEY makes git run a
    program (or an alias starting with ``!``)."""
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option == "-c" and rest:
            key, _, value = rest.pop(0).partition("=")
            if _runs_code(key, value):
                return Verdict(Level.ASK, "git-runs-code", f"makes git run a program ({key})")
        elif option in ("-C", "--git-dir", "--work-tree") and rest:
            rest.pop(0)
    if not rest or rest[0] != "config":
        return None
    _, operands = flags(rest[1:])
    if operands[:1] in (["set"], ["add"]):
        operands = operands[1:]
    if len(operands) < 2:
        return None
    key, value = operands[0], " ".join(operands[1:])
    if _runs_code(key, value):
        return Verdict(Level.ASK, "git-runs-code", f"makes git run a program ({key})")
    return None


def _persistence(command: Command) -> Verdict | None:
    name, args = command.name, command.args
    letters, operands = flags(args)
    if name == "crontab" and (operands or "-" in args or "e" in letters):
        return Verdict(Level.ASK, "scheduled-job", "installs scheduled jobs (crontab)")
    if name in ("at", "batch") and not letters & {"l", "r", "d"}:
        return Verdict(Level.ASK, "scheduled-job", "schedules a command to run later")
    if name == "systemctl" and any(o in ("enable", "link", "edit", "preset") for o in operands):
        return Verdict(Level.ASK, "service-install", "makes a service start at every boot")
    if name == "systemd-run" or (name == "loginctl" and "enable-linger" in operands):
        return Verdict(Level.ASK, "service-install", "starts a service that outlives this session")
    if name == "launchctl" and any(
        o in ("load", "bootstrap", "enable", "submit") for o in operands
    ):
        return Verdict(Level.ASK, "service-install", "makes a launchd job start at login")
    if name == "ssh-copy-id":
        return Verdict(Level.ASK, "authorize-key", "authorizes a key to log in to another host")
    if name == "git":
        return _git_config(args)
    return None


def _container_gets_host(args: list[str]) -> bool:
    for at, arg in enumerate(args):
        value = args[at + 1] if at + 1 < len(args) else ""
        option, _, attached = arg.partition("=")
        given = attached or value
        if option in ("-v", "--volume") and given:
            source = given.split(":", 1)[0]
            if protected_target(source) or source.endswith("docker.sock"):
                return True
        mounted = re.search(r"(?:source|src)=([^,]*)", given) if option == "--mount" else None
        if mounted and (protected_target(mounted.group(1)) or "docker.sock" in given):
            return True
        if arg == "--privileged" or (option in ("--pid", "--userns", "--ipc") and given == "host"):
            return True
        if option == "--cap-add" and given.upper() in ("ALL", "SYS_ADMIN", "SYS_PTRACE"):
            return True
        if option == "--device" and _HOST_DEVICE.match(given):
            return True
    return False


_RUNS_PROGRAM_VARIABLES = re.compile(
    r"^(git_ssh(_command)?|git_(external_diff|pager|editor|askpass|proxy_command|exec_path|"
    r"config_global|config_system|template_dir)|ld_preload|ld_audit|bash_env|env|"
    r"prompt_command|pythonstartup|pythonpath|perl5opt|node_options|ruby_?opt|"
    r"pip_(index_url|extra_index_url|trusted_host|find_links)|uv_(index_url|extra_index_url|"
    r"index|default_index|find_links)|npm_config_registry|yarn_npm_registry_server)$",
    re.IGNORECASE,
)
"""Variables that make a later program run other code or fetch from elsewhere."""


def _environment(command: Command) -> Verdict | None:
    """``GIT_SSH_COMMAND='...' git fetch``, ``export LD_PRELOAD=...``, ``PIP_INDEX_URL=...
    pip install x``: the environment chooses what runs."""
    assigned = [name for name, _ in command.assignments]
    if command.name in ("export", "declare", "typeset", "env") or any(
        p[0] == "env" for p in command.prefixes
    ):
        assigned += [w.split("=", 1)[0] for w in command.args if "=" in w]
        assigned += [w.split("=", 1)[0] for p in command.prefixes for w in p if "=" in w]
    for name in assigned:
        if _RUNS_PROGRAM_VARIABLES.match(name):
            return Verdict(
                Level.ASK, "environment-runs-code", f"sets {name}, which changes what runs"
            )
    return None


def _privilege(command: Command) -> Verdict | None:
    name, args = command.name, command.args
    if name == "chmod" and any(_SETUID.match(m) for a in args for m in a.split(",")):
        return Verdict(Level.ASK, "setuid", "sets the setuid or setgid bit (runs as its owner)")
    if name in ("setcap",):
        return Verdict(Level.ASK, "setuid", "gives a program special privileges")
    if (name == "usermod" and any(a in _ADMIN_GROUPS for a in ",".join(args).split(","))) or (
        name in ("gpasswd", "adduser") and any(a in _ADMIN_GROUPS for a in args[1:])
    ):
        return Verdict(Level.ASK, "admin-group", "adds a user to an administrators' group")
    if name in ("docker", "podman", "nerdctl"):
        operands = [a for a in args if not a.startswith("-")]
        runs = operands[:1] in (["run"], ["create"]) or operands[:2] in (
            ["container", "run"],
            ["container", "create"],
        )
        if runs and _container_gets_host(args):
            return Verdict(
                Level.ASK, "container-host", "gives a container this machine's files or powers"
            )
    return None


def _foreign_url(url: str, defaults: tuple[str, ...]) -> bool:
    return "://" in url and not url.lower().startswith(defaults)


def _python_install(name: str, args: list[str]) -> list[str] | None:
    """The arguments of a ``pip install`` (``pip``, ``python -m pip``, ``uv pip``,
    ``uv add``), or None."""
    if name in ("pip", "pip3") or re.match(r"^pip3?\.\d+$", name):
        rest = args
    elif re.match(r"^(python|pypy)[0-9.]*$", name) and args[:2] == ["-m", "pip"]:
        rest = args[2:]
    elif name == "uv" and args[:1] == ["pip"]:
        rest = args[1:]
    elif name in ("uv", "poetry", "pdm") and args[:1] == ["add"]:
        return args[1:]
    elif name in ("uv", "pipx") and args[:2] in (["tool", "install"], ["tool", "run"]):
        return args[2:]
    elif (name == "pipx" and args[:1] in (["install"], ["run"])) or name == "uvx":
        return args[1:] if name == "pipx" else args
    else:
        return None
    return rest[1:] if rest[:1] == ["install"] else None


_INDEX_SETTING = re.compile(r"(index-url|extra-index-url|trusted-host|find-links|registry)$")


def _fetched_code(command: Command) -> Verdict | None:
    name, args = command.name, command.args
    configures = name in ("pip", "pip3", "npm", "pnpm", "yarn", "uv") and "config" in args[:2]
    if (
        configures
        and any(a in ("set", "add") for a in args[:3])
        and any(_INDEX_SETTING.search(a.split("=", 1)[0]) for a in args)
    ):
        return Verdict(Level.ASK, "foreign-index", "changes where packages are fetched from")
    if (
        name == "deno"
        and args[:1] in (["run"], ["install"], ["eval"])
        and any(re.match(r"^(https?|npm|jsr):", a) for a in args[1:])
    ):
        return Verdict(Level.ASK, "fetch-and-run", "downloads code and runs it")
    if (installing := _python_install(name, args)) is not None:
        rest = list(installing)
        while rest:
            arg = rest.pop(0)
            option, _, attached = arg.partition("=")
            if option in _INDEX_OPTIONS:
                value = attached or (rest.pop(0) if rest else "")
                if _foreign_url(value, _DEFAULT_INDEXES):
                    return Verdict(
                        Level.ASK,
                        "foreign-index",
                        f"installs packages from another index ({value})",
                    )
            elif option == "--trusted-host":
                return Verdict(Level.ASK, "foreign-index", "trusts a package host without TLS")
            elif not arg.startswith("-") and re.match(r"^(git\+)?(https?|ftp)://", arg):
                return Verdict(Level.ASK, "foreign-index", "installs a package from a URL")
        return None
    if name in ("npm", "pnpm", "yarn"):
        registry = [a.split("=", 1)[1] for a in args if a.startswith("--registry=")]
        registry += [b for a, b in itertools.pairwise(args) if a == "--registry"]
        if any(_foreign_url(r, (_NPM_REGISTRY,)) for r in registry):
            return Verdict(Level.ASK, "foreign-index", "installs packages from another registry")
        if args[:1] == ["exec"] and any(a in ("-y", "--yes") for a in args):
            return Verdict(Level.ASK, "fetch-and-run", "downloads a package and runs it")
        if name in ("pnpm", "yarn") and args[:1] == ["dlx"]:
            return Verdict(Level.ASK, "fetch-and-run", "downloads a package and runs it")
    if name in ("npx", "pnpx", "bunx"):
        letters, operands = flags(args)
        spec = operands[0] if operands else ""
        if (
            letters & {"y", "--yes", "p", "--package"}
            or re.search(r"(^@?[^@]+@\S|://|^github:|^git\+|\.tgz$)", spec)
            or name == "bunx"
        ):
            return Verdict(Level.ASK, "fetch-and-run", "downloads a package and runs it")
    return None


def check_footholds(command: Command, written: list[str]) -> list[Verdict]:
    """``written`` is what the command writes as its arguments say (``cp``'s target,
    ``tee``'s files ...); redirects are read here."""
    verdicts: list[Verdict] = []
    for target in _write_targets(command, written):
        if PERSISTENCE_PATHS.search(target):
            verdicts.append(
                Verdict(
                    Level.ASK,
                    "persistence-write",
                    "writes a file that runs something later or holds credentials "
                    "(a startup file, a service, git settings)",
                )
            )
            break
    for check in (_persistence, _privilege, _fetched_code, _environment):
        if (verdict := check(command)) is not None:
            verdicts.append(verdict)
    return verdicts
