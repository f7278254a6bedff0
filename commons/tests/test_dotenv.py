"""The one .env reader and writer: strict, one line per problem, and what is written reads
back as it was."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from hermes_commons.dotenv import (
    DotenvError,
    parse_dotenv,
    quote_dotenv_value,
    read_dotenv,
    set_dotenv_value,
    set_dotenv_values,
)


def test_the_rules_of_shells_and_python_dotenv(tmp_path: Path) -> None:
    text = (
        "# keys\n\nexport OPENAI_API_KEY=\"sk-from-file\"\nBOT=abc # comment\nQ='a b # c'\n"
        'E="line\\none\\ttab \\"quoted\\" \\\\"\nHASH=a#b\nEMPTY=\nLATER=1\nLATER=2\n'
    )
    assert parse_dotenv(tmp_path / ".env", text) == {
        "OPENAI_API_KEY": "sk-from-file",
        "BOT": "abc",
        "Q": "a b # c",
        "E": 'line\none\ttab "quoted" \\',
        "HASH": "a#b",
        "EMPTY": "",
        "LATER": "2",
    }


def test_errors_name_each_line(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    with pytest.raises(DotenvError) as raised:
        parse_dotenv(path, "GOOD=1\nnot a line\nX=\"open\n1BAD=x\nY='open\n")
    assert raised.value.problems == [
        f"{path}:2: expected KEY=VALUE with KEY made of letters, digits and _",
        f'{path}:3: unterminated " quote; close it on the same line',
        f"{path}:4: expected KEY=VALUE with KEY made of letters, digits and _",
        f"{path}:5: unterminated ' quote; close it on the same line",
    ]
    assert str(raised.value) == "\n".join(raised.value.problems)


def test_a_missing_file_holds_nothing_and_an_unreadable_one_is_an_error(tmp_path: Path) -> None:
    assert read_dotenv(tmp_path / ".env") == {}
    (tmp_path / ".env").write_bytes(b"KEY=\xff\n")
    with pytest.raises(DotenvError, match=r"\.env: cannot read"):
        read_dotenv(tmp_path / ".env")


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        "with spaces",
        'a"b',
        "it's",
        "x # not a comment",
        'a"b\\c\rd\te\nf',
        "ends in \\",
        "",
    ],
)
def test_what_is_written_reads_back_as_it_was(tmp_path: Path, value: str) -> None:
    path = tmp_path / ".env"
    set_dotenv_value(path, "ODD", value)
    assert read_dotenv(path) == {"ODD": value}
    assert parse_dotenv(path, f"K={quote_dotenv_value(value)}\n") == {"K": value}


def test_setting_keeps_other_lines_replaces_the_first_and_drops_later_duplicates(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".env"
    path.write_text('# mine\nOTHER="keep me"\nexport KEY=old\nKEY=older\n', encoding="utf-8")
    set_dotenv_values(path, {"KEY": "new", "ADDED": "a b"})
    assert path.read_text(encoding="utf-8") == ('# mine\nOTHER="keep me"\nKEY="new"\nADDED="a b"\n')
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, ".env holds secrets"


def test_a_file_that_does_not_parse_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("this is not a dotenv line\n", encoding="utf-8")
    with pytest.raises(DotenvError, match="KEY=VALUE"):
        set_dotenv_value(path, "KEY", "value")
    assert path.read_text(encoding="utf-8") == "this is not a dotenv line\n"
    with pytest.raises(DotenvError, match="'not-a-name' is not a variable name"):
        set_dotenv_value(tmp_path / "other.env", "not-a-name", "value")
    assert not (tmp_path / "other.env").exists()


def test_current_secret_reads_the_environment_then_the_file_as_it_is_now(tmp_path, monkeypatch):
    from hermes_commons.dotenv import current_secret

    dotenv = tmp_path / ".env"
    monkeypatch.delenv("ACME_KEY", raising=False)
    assert current_secret(dotenv, "ACME_KEY") is None  # no file yet
    dotenv.write_text("ACME_KEY=old\n")
    assert current_secret(dotenv, "ACME_KEY") == "old"
    dotenv.write_text("ACME_KEY=replaced\n")  # the user replaced a rejected key
    assert current_secret(dotenv, "ACME_KEY") == "replaced"
    monkeypatch.setenv("ACME_KEY", "from-env")
    assert current_secret(dotenv, "ACME_KEY") == "from-env"
    monkeypatch.delenv("ACME_KEY")
    dotenv.write_text("ACME_KEY='unclosed\n")  # a broken file: no key, never a crash
    assert current_secret(dotenv, "ACME_KEY") is None
