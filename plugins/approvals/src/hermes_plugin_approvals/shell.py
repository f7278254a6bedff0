"""Read a shell command line as the shell would, with a real grammar (tree-sitter-bash).

:func:`parse` turns a command line into every simple command it would run, each as its
argument vector (quotes and escapes resolved, ``$HOME`` as ``~``, the command's path and the
prefixes that do not change what runs dropped): the stages of pipelines and lists, the
insides of ``$(...)``, backticks and ``<(...)``, the code given to ``sh -c`` / ``bash -c`` /
``eval`` / ``su -c``, and text a shell reads from a here-string, a here-document or an
``echo`` piped into it. Each command also knows what its pipeline feeds it, so the checks
can tell a script downloaded or decoded into an interpreter from data that merely mentions
one. Text the grammar cannot read is reported (the checks then fail closed).
"""

from __future__ import annotations

import codecs
import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from hermes_plugin_approvals.interpreters import language, literal_shell_outs, program_texts

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = [
    "EXPANDED",
    "SHELLS",
    "SUBSTITUTED",
    "Command",
    "Parsed",
    "fixed_input",
    "parse",
    "prepare",
]

SUBSTITUTED = "\x00$(...)\x00"
"""What a ``$(...)`` / ``<(...)`` stands for in a word: output known only when it runs (the
input cannot contain it: :func:`prepare` drops control characters)."""
EXPANDED = "\x00${}\x00"
"""Marks a word built by a parameter expansion with an operator (``${x:-rm}``): a command
whose name starts with it is not known until it runs."""
MAX_DEPTH = 6
"""Code inside code (``sh -c "eval '...'"``) this deep is not read further: fail closed."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "mksh", "busybox-sh"})
_PASSTHROUGH = frozenset(
    {"sudo", "doas", "env", "nohup", "command", "exec", "builtin", "time", "nice", "ionice"}
    | {"stdbuf", "timeout", "busybox", "xargs", "chroot", "setsid", "unbuffer", "caffeinate"}
    | {"strace", "ltrace", "watch", "flock", "firejail", "unshare", "runuser", "torsocks"}
    | {"proxychains", "proxychains4", "nsenter", "chrt", "taskset", "screen"}
)
# Options of the prefixes above that take a value of their own (sudo -u root, nice -n 5).
_VALUED = {
    "sudo": {"-u", "-g", "-h", "-p", "-c", "-r", "-t", "-C", "-D", "-U"},
    "env": {"-u", "-C", "--unset", "--chdir"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p", "--class", "--classdata"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "xargs": {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a"},
    "strace": {"-o", "-e", "-p", "-s", "-E", "-u", "-a", "-b", "-I", "-O", "-P", "-S", "-X"},
    "ltrace": {"-o", "-e", "-p", "-s", "-u", "-a", "-n", "-A"},
    "watch": {"-n", "--interval", "-d", "--differences", "-q", "--equexit"},
    "flock": {"-w", "--timeout", "-E", "--conflict-exit-code"},
    "screen": {"-S", "-c", "-e", "-h", "-L", "-Logfile", "-p", "-T", "-t", "-X"},
    "runuser": {"-u", "-g", "-G", "--user", "--group"},
    "chrt": {"-p"},
    "taskset": {"-p", "-c"},
}
_TAKES_ONE = frozenset({"timeout", "chroot", "flock", "taskset", "chrt"})
"""Prefixes whose first operand is theirs (a duration, a root, a lock file, a CPU mask)
before the command they run."""
_RUN_CODE = {"tmux": -1, "script": 0}
"""Programs that hand a shell a line of code: tmux's session and window commands (their
last word), and ``script -c CODE``."""


@dataclass
class Command:
    """One simple command, as it would run."""

    words: list[str]
    """argv; the program as its lower-case base name (``/bin/rm`` -> ``rm``)."""
    script: str = ""
    """The program as written, when it is a path (``./install.sh``), for download-then-run."""
    redirects: list[tuple[str, str]] = field(default_factory=list)
    """(operator, target): ``(">", "~/.bashrc")``, ``("<", "x")``, ``("<<<", "text")``."""
    fed_by: list[Command] = field(default_factory=list)
    """The earlier stages of its pipeline (what its standard input comes from)."""
    dynamic: list[list[Command]] = field(default_factory=list)
    """The commands inside each ``$(...)`` / ``<(...)`` of its words: output used as text."""
    depth: int = 0
    prefixes: list[list[str]] = field(default_factory=list)
    """The prefixes taken off, each with its options: ``[["sudo", "-S"]]``."""
    elsewhere: str = ""
    """Where it runs when not here: ``host web1`` (ssh), ``container app`` (docker exec)."""
    loops: dict[str, list[str]] = field(default_factory=dict)
    """The ``for`` variables around it, each with the words it takes (a word computed when
    it runs stays as such: ``SUBSTITUTED``, a glob)."""
    assignments: list[tuple[str, str]] = field(default_factory=list)
    """``NAME=value`` written before it (``GIT_SSH_COMMAND='...' git fetch``): its
    environment, as the checks judge it."""
    code: list[str] = field(default_factory=list)
    """For an interpreter that can run shell commands (:func:`interpreters.language`), the
    code its command line gives it (its code option, awk's program, here-documents, what an
    echo pipes in)."""

    @property
    def name(self) -> str:
        return self.words[0] if self.words else ""

    @property
    def args(self) -> list[str]:
        return self.words[1:]


@dataclass
class Parsed:
    commands: list[Command] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    """The source of every function definition (fork bombs are written as one)."""
    unreadable: str = ""
    """Why some of the text could not be read as shell; empty when all of it was."""


def prepare(command: str) -> str:
    """The text the shell effectively reads: NFKC (full-width letters are letters), no
    invisible format characters, no line continuations, and ``$IFS`` as the space it is."""
    text = _TERMINAL_ESCAPE.sub("", command)  # ESC ] title BEL, ESC [ 31m, CSI 31m
    text = unicodedata.normalize("NFKC", text)
    text = "".join(
        ch for ch in text if unicodedata.category(ch) not in ("Cf", "Cc") or ch in "\n\t"
    )
    text = text.replace("\\\n", "")
    return re.sub(r"\$\{IFS[^}]*\}|\$IFS\b", " ", text, flags=re.IGNORECASE)


_TERMINAL_ESCAPE = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-9;?]*[ -/]*[@-~]|\x9b[0-9;?]*[ -/]*[@-~]|\x1b[@-_]"
)


@cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def parse(command: str) -> Parsed:
    parsed = Parsed()
    _Reader(parsed).read_text(prepare(command), 0)
    return parsed


_VARIABLE = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
_DOUBLE_QUOTED_ESCAPE = re.compile(r'\\([$`"\\])')


class _Reader:
    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed

    def fail(self, why: str) -> None:
        if not self.parsed.unreadable:
            self.parsed.unreadable = why

    def read_text(
        self, text: str, depth: int, fed_by: list[Command] | None = None
    ) -> list[Command]:
        """Every command ``text`` runs (added to the result), in order; ``fed_by`` is what
        its standard input comes from (a remote shell's is ssh's)."""
        if depth > MAX_DEPTH:
            self.fail(f"code nested more than {MAX_DEPTH} levels deep")
            return []
        data = text.encode("utf-8")
        tree = _parser().parse(data)
        if tree.root_node.has_error:
            self.fail("the shell grammar cannot read it")
        return self.read(tree.root_node, depth, fed_by)

    # --- structure ---------------------------------------------------------------------

    def read(self, node: Node, depth: int, fed_by: list[Command] | None = None) -> list[Command]:
        kind = node.type
        if kind == "command":
            return self.command(node, depth, fed_by or [])
        if kind == "pipeline":
            found: list[Command] = []
            upstream: list[Command] = []
            for child in node.named_children:
                stage = self.read(child, depth, list(upstream))
                found += stage
                upstream += stage
            return found
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            inner = self.read(body, depth, fed_by) if body is not None else []
            nodes = node.children_by_field_name("redirect") or [
                c for c in node.named_children if c.type.endswith("_redirect")
            ]
            dynamic: list[list[Command]] = []
            redirects = [self.redirect(r, depth, dynamic) for r in nodes]
            for command in list(inner):
                if command.depth == depth:  # the statement's redirects apply to its commands
                    command.redirects += [r for r in redirects if r not in command.redirects]
                    command.dynamic += dynamic
                    inner += self.code_of(command, depth, fed_only=redirects)
            if not inner:  # a bare redirect (`> file`) still writes
                self.parsed.commands.append(Command([":"], redirects=redirects, depth=depth))
            return inner
        if kind == "variable_assignment":  # X=$(cat f): a statement of its own
            value = node.child_by_field_name("value")
            named = node.child_by_field_name("name")
            carried: list[list[Command]] = []
            written = self.word(value, depth, carried) if value is not None else ""
            name = _text(named) if named is not None else ""
            holder = Command([":"], dynamic=carried, depth=depth, assignments=[(name, written)])
            self.parsed.commands.append(holder)
            return [*(c for group in carried for c in group), holder]
        if kind == "declaration_command":  # export NAME=value, declare -x, readonly ...
            return self.declaration(node, depth, fed_by or [])
        if kind == "function_definition":
            self.parsed.functions.append(_text(node))
        if kind == "for_statement":
            return self.for_loop(node, depth, fed_by)
        found = []
        for child in node.named_children:
            found += self.read(child, depth, fed_by)
        return found

    def declaration(self, node: Node, depth: int, fed_by: list[Command]) -> list[Command]:
        """``export NAME=value ...`` as a command whose arguments are ``NAME=value`` (and
        whose values' substitutions run)."""
        dynamic: list[list[Command]] = []
        words = [next((_text(c) for c in node.children if not c.is_named), "export")]
        for child in node.named_children:
            if child.type == "variable_assignment":
                named = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                written = self.word(value, depth, dynamic) if value is not None else ""
                words.append(f"{_text(named) if named is not None else ''}={written}")
            else:
                words.append(self.word(child, depth, dynamic))
        command = Command(words, fed_by=fed_by, dynamic=dynamic, depth=depth)
        self.parsed.commands.append(command)
        return [command]

    def for_loop(self, node: Node, depth: int, fed_by: list[Command] | None) -> list[Command]:
        """``for NAME in WORDS; do ...; done``: each command of its body knows the words
        NAME takes (``rm -rf $d`` over ``/ /etc`` is judged as ``rm -rf / /etc``)."""
        variable = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        values: list[str] = []
        dynamic: list[list[Command]] = []
        for child in node.children_by_field_name("value"):
            values.append(self.word(child, depth, dynamic))
        found = [command for group in dynamic for command in group]
        if body is None:
            return found
        inner = self.read(body, depth, fed_by)
        if variable is not None:
            name = _text(variable)
            for command in inner:
                command.loops.setdefault(name, values or [SUBSTITUTED])  # no list: "$@"
        return found + inner

    def redirect(
        self, node: Node, depth: int, dynamic: list[list[Command]] | None = None
    ) -> tuple[str, str]:
        operator = next((c.type for c in node.children if not c.is_named), "")
        if node.type == "heredoc_redirect":
            body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
            return ("<<", _text(body) if body is not None else "")
        # ``>& /dev/tcp/h/p 0>&1``: the grammar hangs the next redirect's descriptor on as a
        # second destination; the first is the target.
        targets = node.children_by_field_name("destination")[:1] or [
            c for c in node.named_children if c.type != "file_descriptor"
        ]
        target = (
            self.word(targets[-1], depth, dynamic if dynamic is not None else []) if targets else ""
        )
        return (operator or ">", target)

    # --- one command ---------------------------------------------------------------------

    def command(self, node: Node, depth: int, fed_by: list[Command]) -> list[Command]:
        dynamic: list[list[Command]] = []
        words: list[str] = []
        name_node = node.child_by_field_name("name")
        redirects: list[tuple[str, str]] = []
        assignments: list[tuple[str, str]] = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                value = child.child_by_field_name("value")
                named = child.child_by_field_name("name")
                written = self.word(value, depth, dynamic) if value is not None else ""
                if named is not None:  # VAR=$(cmd) still runs cmd (in dynamic)
                    assignments.append((_text(named), written))
                continue
            if child.type.endswith("_redirect"):
                redirects.append(self.redirect(child, depth, dynamic))
                continue
            if child.type == "command_name" or child is name_node:
                words.append(self.word(child, depth, dynamic))
                continue
            words.append(self.word(child, depth, dynamic))
        prefixes: list[list[str]] = []
        words, script = _strip_prefixes(words, prefixes)
        command = Command(
            words,
            script,
            redirects=redirects,
            fed_by=fed_by,
            dynamic=dynamic,
            depth=depth,
            prefixes=prefixes,
            assignments=assignments,
        )
        self.parsed.commands.append(command)
        found = [command]
        found += self.code_of(command, depth)
        return found

    def code_of(
        self,
        command: Command,
        depth: int,
        fed_only: list[tuple[str, str]] | None = None,
    ) -> list[Command]:
        """The commands inside the code this command runs as shell, where that code is in
        the command line itself (code that is substituted at run time is the checks' to
        judge by where it comes from)."""
        found: list[Command] = []
        name, args = command.name, command.args
        if name in SHELLS or name == "su":
            code = _code_argument(args)
            if code is not None:
                if SUBSTITUTED not in code and fed_only is None:
                    found += self.read_text(code, depth + 1)
                return found
            for operator, text in command.redirects if fed_only is None else fed_only:
                if operator in ("<<<", "<<", "<<-") and SUBSTITUTED not in text:
                    found += self.read_text(text, depth + 1)
            if fed_only is None and not [a for a in args if not a.startswith("-")]:
                for producer in command.fed_by:
                    if producer.name in ("echo", "printf") and not producer.dynamic:
                        found += self.read_text(" ".join(_echoed(producer)), depth + 1)
        elif name in _RUN_CODE and fed_only is None and (wrapped := _wrapped_code(name, args)):
            if SUBSTITUTED not in wrapped:
                found += self.read_text(wrapped, depth + 1)
        elif name == "eval" and args and SUBSTITUTED not in " ".join(args) and fed_only is None:
            found += self.read_text(" ".join(args), depth + 1)
        elif (lang := language(name)) is not None:
            # Its own words are read once, when it is; a statement's redirects (here-docs)
            # come later, alone (fed_only).
            fed = fixed_input(command)
            texts = (
                program_texts(lang, args, command.redirects, [" ".join(fed)] if fed else [])
                if fed_only is None
                else program_texts(lang, [], fed_only, [])
            )
            command.code += texts
            for text in texts:
                for written in literal_shell_outs(lang, text):
                    if SUBSTITUTED not in written:
                        found += self.read_text(written, depth + 1)
        elif fed_only is None and (remote := _remote(command)) is not None:
            where, line, argv = remote
            if line is not None and SUBSTITUTED not in line:  # ssh: read as one shell line
                inner = self.read_text(line, depth + 1, command.fed_by)
            elif line is not None:  # computed when it runs: judged as `sh -c` of the same
                inner = self.argv_command(["sh", "-c", line], depth + 1, command)
            else:
                inner = self.argv_command(argv, depth + 1, command)
            for each in inner:
                each.elsewhere = each.elsewhere or where
            found += inner
        return found

    def argv_command(self, argv: list[str], depth: int, parent: Command) -> list[Command]:
        """A command given as its argument vector (``docker exec box rm -rf /``), and the
        code it runs in turn (``docker exec box sh -c '...'``)."""
        if depth > MAX_DEPTH:
            self.fail(f"code nested more than {MAX_DEPTH} levels deep")
            return []
        prefixes: list[list[str]] = []
        words, script = _strip_prefixes(list(argv), prefixes)
        command = Command(
            words,
            script,
            depth=depth,
            prefixes=prefixes,
            fed_by=parent.fed_by,
            dynamic=parent.dynamic,  # its $(...) are the outer command's
        )
        self.parsed.commands.append(command)
        return [command, *self.code_of(command, depth)]

    # --- words ---------------------------------------------------------------------------

    def word(self, node: Node, depth: int, dynamic: list[list[Command]]) -> str:
        """The text a word stands for; the commands of its substitutions go to ``dynamic``
        (and into the result: they run too)."""
        kind = node.type
        if kind in ("command_substitution", "process_substitution"):
            inner: list[Command] = []
            for child in node.named_children:
                inner += self.read(child, depth)
            dynamic.append(inner)
            echoed = _static_output(inner) if kind == "command_substitution" else None
            return echoed if echoed is not None else SUBSTITUTED
        if kind == "raw_string":
            return _text(node)[1:-1]
        if kind == "ansi_c_string":
            return _ansi_c(_text(node))
        if kind in ("simple_expansion", "expansion"):
            for child in node.named_children:  # ${x:-$(cmd)} still runs cmd
                if child.type in ("command_substitution", "process_substitution"):
                    self.word(child, depth, dynamic)
            match = _VARIABLE.match(_text(node))
            if match and match.group(1) == "HOME":
                return "~"
            if match is None:  # ${x:-rm}, ${0/x/r}: its value is known only when it runs
                return EXPANDED + _text(node)
            return _text(node)
        if kind == "string":
            return "".join(self._string_part(c, depth, dynamic) for c in node.children)[1:-1]
        if node.named_child_count == 0 or kind == "word":
            text = _text(node)
            return re.sub(r"\\(.)", r"\1", text) if kind in ("word", "number") else text
        return "".join(self.word(child, depth, dynamic) for child in node.children)

    def _string_part(self, node: Node, depth: int, dynamic: list[list[Command]]) -> str:
        if node.type == "string_content":
            return _DOUBLE_QUOTED_ESCAPE.sub(r"\1", _text(node))
        if node.is_named:
            return self.word(node, depth, dynamic)
        return _text(node)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _ansi_c(text: str) -> str:
    """``$'\\x72\\x6d'`` -> ``rm``."""
    body = text[2:-1]
    try:
        return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return body


def _static_output(commands: list[Command]) -> str | None:
    """What ``$(echo rm)`` or ``$(printf %s rm)`` prints, when that is fixed text."""
    if len(commands) != 1 or commands[0].dynamic or commands[0].fed_by:
        return None
    command = commands[0]
    if command.name == "echo":
        return " ".join(_echoed(command))
    if command.name == "printf" and command.args:
        form, *values = command.args
        if form in ("%s", "%s\\n") and values:
            return " ".join(values)
        if "%" not in form and "\\" not in form:
            return form
    return None


_TMUX_RUNS = frozenset(
    {"new", "new-session", "neww", "new-window", "splitw", "split-window", "respawn-pane"}
    | {"respawnp", "respawn-window", "respawnw", "run-shell", "run", "display-popup", "popup"}
)


def _wrapped_code(name: str, args: list[str]) -> str:
    """The shell line ``tmux new-session ... 'CODE'`` or ``script -c CODE`` runs; ''."""
    if name == "tmux":
        if not any(a in _TMUX_RUNS for a in args):
            return ""
        operands = [a for a in args if not a.startswith("-")]
        return operands[-1] if operands and operands[-1] not in _TMUX_RUNS else ""
    if name == "script":
        for option, value in itertools.pairwise(args):
            short = option.startswith("-") and not option.startswith("--")
            if option == "--command" or (short and option.endswith("c")):
                return value
    return ""


def _code_argument(args: list[str]) -> str | None:
    """The code of ``sh -c CODE`` (``-c`` may be combined: ``-ec``, ``-lc``)."""
    for at, arg in enumerate(args[:-1]):
        if arg == "--":
            return None
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            return args[at + 1]
    return None


# ssh options that take a value (from ssh(1)): the host is the first word that is neither.
_SSH_VALUED = frozenset("BbcDEeFIiJLlmOoPpQRSWw")
# docker/podman exec options that take a value; the container is the first word after them.
_EXEC_VALUED = frozenset(
    {"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys"}
)


def _remote(command: Command) -> tuple[str, str | None, list[str]] | None:
    """(where, shell line, argv) of a command this one runs elsewhere: ``ssh [opts] HOST
    CMD...`` (a line the remote shell reads), ``docker|podman [container] exec [opts] NAME
    CMD...`` and ``kubectl exec ... -- CMD...`` (an argument vector). None when it runs
    nothing there (``ssh host`` alone is a login, judged by the user)."""
    name, args = command.name, command.args
    if name == "ssh":
        rest = list(args)
        while rest and rest[0].startswith("-") and rest[0] != "--":
            option = rest.pop(0)
            if option[-1] in _SSH_VALUED and len(option) == 2 and rest:
                rest.pop(0)
        if rest and rest[0] == "--":
            rest.pop(0)
        if len(rest) < 2:
            return None
        return f"host {rest[0]}", " ".join(rest[1:]), []
    if name in ("docker", "podman"):
        rest = list(args)
        if rest[:2] == ["container", "exec"]:
            rest = rest[1:]
        if not rest or rest[0] != "exec":
            return None
        rest = rest[1:]
        while rest and rest[0].startswith("-"):
            option = rest.pop(0)
            if option in _EXEC_VALUED and rest:
                rest.pop(0)
        if len(rest) < 2:
            return None
        return f"container {rest[0]}", None, rest[1:]
    if name in ("kubectl", "oc") and "exec" in args and "--" in args:
        after = args[args.index("--") + 1 :]
        pod = next((a for a in args[args.index("exec") + 1 :] if not a.startswith("-")), "?")
        return (f"pod {pod}", None, after) if after else None
    return None


def fixed_input(command: Command) -> list[str] | None:
    """The words piped into ``command`` when they are fixed text (``echo a b | ...``,
    ``printf ...``), else None (a file, a program's output, nothing)."""
    producer = command.fed_by[-1] if command.fed_by else None
    if producer is None or producer.name not in ("echo", "printf") or producer.dynamic:
        return None
    return _echoed(producer)


def _echoed(producer: Command) -> list[str]:
    words = producer.args
    while words and words[0].startswith("-") and producer.name == "echo":
        words = words[1:]  # echo -e / -n
    return words


def _strip_prefixes(words: list[str], taken: list[list[str]]) -> tuple[list[str], str]:
    """argv without the prefixes that do not change what runs, and the program as written
    when it is a path. The program's name is lower-cased (``/BIN/RM`` on a file system that
    ignores case); its arguments keep their case (``curl -o`` is not ``curl -O``)."""
    script = ""
    while words:
        head = words[0].lower()
        if head.startswith(EXPANDED) or SUBSTITUTED in head:
            break  # computed when it runs: the checks judge it as such
        if "/" in head:
            script = words[0]
            head = head.rstrip("/").rsplit("/", 1)[-1]
        words = [head, *words[1:]]
        if head not in _PASSTHROUGH:
            break
        rest = words[1:]
        valued = _VALUED.get(head, set())
        options = [head]
        while rest and (rest[0].startswith("-") or (head == "env" and "=" in rest[0])):
            option = rest.pop(0)
            options.append(option)
            if option in valued and rest:
                rest.pop(0)
        taken.append(options)
        if head in _TAKES_ONE and rest:
            rest.pop(0)  # the duration, the new root, the lock file, the priority
        if head == "flock" and rest[:1] in (["-c"], ["--command"]):
            rest = ["sh", "-c", *rest[1:]]  # flock FILE -c CODE runs CODE with sh
        words = rest
        script = ""
    return words, script
