"""HERMES_HOME/logs: the records of a run in agent.log (gateway.log for the gateway) and
errors.log, rotated by size, secrets redacted; ``hermes logs`` reads them."""

from __future__ import annotations

import logging

import pytest

from hermes_kernel import log as hermes_log


@pytest.fixture
def hermes(hermes_cli):
    return hermes_cli


def test_a_runs_warnings_reach_agent_log_and_errors_log_without_secrets(hermes):
    (hermes.home / ".env").write_text("OPENAI_API_KEY=sk-live-abcdef123456\n")
    (hermes.home / "config.yaml").write_text("model:\n  defualt: x\n")  # a typo: a warning
    assert hermes("config", "validate")[0] == 0
    logging.getLogger("hermes.test").warning("the key was sk-live-abcdef123456, oops")
    for handler in logging.getLogger("hermes").handlers:
        handler.flush()
    agent = (hermes.home / "logs" / "agent.log").read_text()
    errors = (hermes.home / "logs" / "errors.log").read_text()
    named = "model.defualt (line 2; did you mean 'default'?)"
    assert named in agent and named in errors
    assert " WARNING hermes" in agent
    assert "sk-live-abcdef123456" not in agent + errors
    assert "the key was <redacted>, oops" in agent


def test_a_run_that_logs_nothing_creates_no_files(hermes):
    assert hermes("config", "validate")[0] == 0
    assert not (hermes.home / "logs").exists()


def test_logs_rotate_by_size_and_keep_three_old_copies(tmp_path, monkeypatch):
    monkeypatch.setattr(hermes_log, "MAX_BYTES", 2_000)
    logger = logging.getLogger("hermes")
    redactor = hermes_log.setup_logging(verbose=False)
    hermes_log.log_to_files(tmp_path, redactor)
    try:
        for number in range(400):
            logging.getLogger("hermes.rotation").info("line %04d %s", number, "x" * 40)
    finally:
        for handler in list(logger.handlers):
            handler.close()
            logger.removeHandler(handler)
    folder = tmp_path / "logs"
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["agent.log", "agent.log.1", "agent.log.2", "agent.log.3"]
    assert all(p.stat().st_size <= 2_100 for p in folder.iterdir())
    assert "line 0399" in (folder / "agent.log").read_text()


def test_hermes_logs_shows_the_tail_filtered_by_level(hermes):
    hermes.home.chmod(0o700)  # as Hermes keeps it: else the first line says it was made so
    folder = hermes.home / "logs"
    folder.mkdir()
    (folder / "agent.log").write_text(
        "2026-12-01 09:00:00,001 INFO hermes: started\n"
        "2026-12-01 09:00:01,002 WARNING hermes.x: slow hook\n"
        "2026-12-01 09:00:02,003 ERROR hermes.y: failed\n"
        "Traceback (most recent call last):\n"
        "  ValueError: boom\n"
        "2026-12-01 09:00:03,004 INFO hermes: done\n"
    )
    code, out, _ = hermes("logs", "--level", "warning")
    assert code == 0
    assert out.splitlines() == [
        "2026-12-01 09:00:01,002 WARNING hermes.x: slow hook",
        "2026-12-01 09:00:02,003 ERROR hermes.y: failed",
        "Traceback (most recent call last):",
        "  ValueError: boom",
    ]
    assert hermes("logs", "-n", "1")[1] == "2026-12-01 09:00:03,004 INFO hermes: done\n"
    code, out, _ = hermes("logs", "gateway")  # a front-end's log, before it ever ran
    assert code == 1 and "does not exist yet" in out
    assert hermes("logs", "errors")[0] == 0  # the kernel's: nothing logged is not a failure


def test_a_read_only_home_is_one_line_and_loses_nothing_on_the_terminal(tmp_path, capsys):
    home = tmp_path / "readonly"
    home.mkdir()
    (home / "logs").write_text("a file where the folder should be")
    logger = logging.getLogger("hermes")
    redactor = hermes_log.setup_logging(verbose=False)
    hermes_log.log_to_files(home, redactor)
    try:
        logging.getLogger("hermes.x").warning("first")
        logging.getLogger("hermes.x").warning("second")
    finally:
        for handler in list(logger.handlers):
            handler.close()
            logger.removeHandler(handler)
    err = capsys.readouterr().err
    assert "hermes: warning: first" in err and "hermes: warning: second" in err
    assert err.count("cannot write") == 2  # once per file (agent.log, errors.log), no traceback
    assert "Traceback" not in err


def test_hermes_log_stderr_0_keeps_records_in_the_files_only(tmp_path, capsys, monkeypatch):
    # A service's stderr is kept in a file of its own (gateway-output.log): records are not
    # repeated there while a log file takes them; without one they still reach stderr.
    monkeypatch.setenv("HERMES_LOG_STDERR", "0")
    logger = logging.getLogger("hermes")
    redactor = hermes_log.setup_logging(verbose=False)
    try:
        logging.getLogger("hermes.x").warning("before the files")
        hermes_log.log_to_files(tmp_path, redactor)
        logging.getLogger("hermes.x").warning("in the files")
    finally:
        for handler in list(logger.handlers):
            handler.close()
            logger.removeHandler(handler)
    err = capsys.readouterr().err
    assert "before the files" in err and "in the files" not in err
    assert "in the files" in (tmp_path / "logs" / "agent.log").read_text()


def test_hermes_logs_shows_what_a_service_kept_of_the_output(hermes):
    folder = hermes.home / "logs"
    folder.mkdir()
    (folder / "gateway-output.log").write_text("hermes: error: config.yaml: bad\n")
    code, out, _ = hermes("logs", "gateway-output")
    assert (code, out) == (0, "hermes: error: config.yaml: bad\n")


def test_a_strangers_text_in_a_log_line_forges_no_line_and_drives_no_terminal():
    """Issue 62: arguments of a log record (a display name, a path) are one line."""
    import logging

    from hermes_kernel.log import RedactingFilter

    record = logging.LogRecord(
        "hermes.gateway",
        logging.WARNING,
        __file__,
        1,
        "user %s asks to pair",
        ("a\nERROR hermes: x\x1b[2J",),
        None,
    )
    RedactingFilter().filter(record)
    assert record.getMessage() == "user a\\nERROR hermes: x\u241b[2J asks to pair"


def test_any_log_in_the_folder_is_shown_and_a_missing_one_lists_those_there(hermes) -> None:
    """Issue 61: the kernel names no front-end's log; a plugin's log is read by its name."""
    folder = hermes.home / "logs"
    folder.mkdir(exist_ok=True)
    (folder / "relay.log").write_text("2026-12-01 09:21:03,123 INFO hermes.relay: up\n")
    code, out, _ = hermes("logs", "relay")
    assert code == 0 and "hermes.relay: up" in out
    code, out, _ = hermes("logs", "nothing-here")
    assert code == 1 and "does not exist yet" in out and "(logs: agent, errors, relay)" in out
    code, _, err = hermes("logs", "../config")
    assert code == 2 and "a log's name" in err
