"""The code a command line hands to an interpreter that can run shell commands, and the shell
commands that code runs.

An interpreter's code is read wherever the command line holds it: its code option (``python
-c``, ``node -e``, ``perl -e``, ``ruby -e``, ``php -r``, ``lua -e``, ``Rscript -e``,
``osascript -e``), awk's program, a here-document or here-string, and text an ``echo`` pipes
into it. A shell-out in that code (``system(...)``, backticks, ``os.execute``, ``io.popen``,
``qx{}``, ``%x()``, Tcl's ``exec``, awk's ``| getline``, AppleScript's ``do shell script``
...) is a reason to ask; when its command is a literal, that command is also read as shell
and judged by every rule, so ``perl -e 'system("rm -rf /")'`` is refused like ``rm -rf /``.
A shell-out whose command is computed is judged as one of unknown content (asked about).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["language", "literal_shell_outs", "program_texts", "shell_out"]

_LANGUAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(python|pypy)[0-9.]*$"), "python"),
    (re.compile(r"^(node|nodejs|deno|bun)$"), "node"),
    (re.compile(r"^perl[0-9.]*$"), "perl"),
    (re.compile(r"^(ruby|irb)[0-9.]*$"), "ruby"),
    (re.compile(r"^php[0-9.]*$"), "php"),
    (re.compile(r"^(lua|luajit)[0-9.]*$"), "lua"),
    (re.compile(r"^(tclsh|wish|expect)[0-9.]*$"), "tcl"),
    (re.compile(r"^(rscript|r)$"), "r"),
    (re.compile(r"^osascript$"), "applescript"),
    (re.compile(r"^(awk|gawk|mawk|nawk|busybox-awk)$"), "awk"),
)

_CODE_OPTIONS = {
    "python": ("-c",),
    "node": ("-e", "-p", "--eval", "--print"),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
    "lua": ("-e",),
    "r": ("-e",),
    "applescript": ("-e",),
}

_CALLS = re.compile(
    r"\b(os\.system|os\.popen|os\.exec\w*|os\.spawn\w*|subprocess|pty\.spawn|commands\."
    r"|child_process|execSync|spawnSync|execFileSync|shell_exec|passthru|proc_open|popen"
    r"|IO\.popen|Open3|Kernel\.spawn|Runtime\.getRuntime|os\.execute|io\.popen|system2?\s*\("
    r"|exec\s*\(|spawn\s*\(|eval\s*\(|do\s+shell\s+script)",
    re.IGNORECASE,
)
"""Calls that run a shell command (or code they build), written with parentheses."""
_EXTRA: dict[str, re.Pattern[str]] = {
    # perl and ruby: `cmd`, qx{}, %x(), system "cmd", exec "cmd", open(F, "cmd |")
    "perl": re.compile(r"`[^`]+`|\bqx\s*[{(/\[|!]|\b(system|exec)\s+[\"'$@(]|\bopen\b[^;]*\|"),
    "ruby": re.compile(
        r"`[^`]+`|%x\s*[{(\[|!]|\b(system|exec|spawn)\s+[\"'(]|\bexec\s+(sprintf|format)\b"
    ),
    "php": re.compile(r"`[^`]+`|\b(system|exec|passthru|popen)\s*\("),
    "tcl": re.compile(r"(?:^|[\[;{\s])exec\s+\S|\bopen\s+[\"{]?\|"),
    "awk": re.compile(r"\|\s*getline|\|&|\|\s*[\"']|\bsystem\s*\("),
}
"""What else runs a shell command in that language (backticks are template strings in
JavaScript, and ``exec ok`` is only words in Python, so these are not general)."""


def shell_out(lang: str, text: str) -> bool:
    """Whether ``text``, code in ``lang``, runs shell commands (or code it builds)."""
    extra = _EXTRA.get(lang)
    return bool(_CALLS.search(text) or (extra is not None and extra.search(text)))


_QUOTED = r"(?P<q>[\"'])(?P<text>(?:\\.|(?!(?P=q)).)*)(?P=q)"
_LITERAL_CALLS = re.compile(
    r"(?:os\.system|os\.popen|subprocess\.\w+|getoutput|getstatusoutput|check_output|execSync"
    r"|spawnSync|shell_exec|passthru|proc_open|popen|IO\.popen|os\.execute|io\.popen|system2?"
    r"|exec|spawn|do\s+shell\s+script)\s*\(?\s*" + _QUOTED,
    re.IGNORECASE,
)
_LIST_CALLS = re.compile(
    r"(?:subprocess\.\w+|check_output|execFileSync|spawnSync|spawn|system|exec\w*)\s*\(\s*"
    r"\[(?P<items>[^\]]*)\]"
)
_BACKTICKS = re.compile(r"`(?P<text>[^`]+)`")
_QX = re.compile(
    r"(?:qx|%x)\s*(?:\{(?P<a>[^}]*)\}|\((?P<b>[^)]*)\)|\[(?P<c>[^\]]*)\]|/(?P<d>[^/]*)/)"
)
_PIPED = re.compile(
    r"\|\s*(?P<q>[\"'])(?P<text>(?:\\.|(?!(?P=q)).)*)(?P=q)"  # print | "cmd"
    r"|(?P<r>[\"'])(?P<cmd>(?:\\.|(?!(?P=r)).)*)(?P=r)\s*\|\s*getline"  # "cmd" | getline
)
_PERL_OPEN = re.compile(r"\bopen\s*\(?[^\"';]*[\"']\s*(?P<text>\|[^\"']+|[^\"'|]+\|)\s*[\"']")
_TCL_EXEC = re.compile(r"(?:^|[\[;{\s])exec\s+(?P<text>[^\]\n;}]+)")


def language(name: str) -> str | None:
    """The language an interpreter named ``name`` (lower-case) runs, if it can shell out."""
    for pattern, found in _LANGUAGES:
        if pattern.match(name):
            return found
    return None


def program_texts(
    lang: str, args: list[str], redirects: Iterable[tuple[str, str]], fed: Iterable[str]
) -> list[str]:
    """The code the command line gives it: its code option's value, awk's program, the
    text of its here-documents and here-strings, and ``fed`` (what an echo pipes in)."""
    texts = [text for operator, text in redirects if operator in ("<<", "<<-", "<<<")]
    texts += list(fed)
    options = _CODE_OPTIONS.get(lang, ())
    for at, arg in enumerate(args):
        short = arg.startswith("-") and not arg.startswith("--")
        following = args[at + 1] if at + 1 < len(args) else None
        if following is not None and (
            arg in options or (short and lang != "awk" and _bundles(arg, options))
        ):
            texts.append(following)
        elif short and lang != "awk":  # -e'code' reaches the program as one word: -ecode
            texts += [arg[len(o) :] for o in options if len(o) == 2 and arg.startswith(o)][:1]
    if lang == "awk":
        texts += _awk_program(args)
    return texts


def _bundles(arg: str, options: tuple[str, ...]) -> bool:
    """``-ne`` is ``-n -e``: the last letter of a bundle takes the code."""
    letters = {option[1] for option in options if len(option) == 2}
    return len(arg) > 2 and arg[-1] in letters


def _awk_program(args: list[str]) -> list[str]:
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in ("-f", "--file"):
            return []  # a program file: not in the command line
        if option in ("-v", "-F") and rest:
            rest.pop(0)
    return rest[:1]


def literal_shell_outs(lang: str, text: str) -> list[str]:
    """Each shell command ``text`` (code in ``lang``) runs that is written out in it."""
    found = [_unescape(m.group("text")) for m in _LITERAL_CALLS.finditer(text)]
    for match in _LIST_CALLS.finditer(text):
        items = re.findall(r"[\"']((?:\\.|[^\"'])*)[\"']", match.group("items"))
        if items:
            found.append(" ".join(_unescape(item) for item in items))
    if lang in ("perl", "ruby", "php"):
        found += [m.group("text") for m in _BACKTICKS.finditer(text)]
        found += [next(g for g in m.groups() if g is not None) for m in _QX.finditer(text)]
    if lang == "perl":
        found += [m.group("text").strip("| ") for m in _PERL_OPEN.finditer(text)]
    if lang == "awk":
        for match in _PIPED.finditer(text):
            found.append(_unescape(match.group("text") or match.group("cmd") or ""))
    if lang == "tcl":
        found += [m.group("text") for m in _TCL_EXEC.finditer(text)]
    return [line.strip() for line in found if line.strip()]


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)
