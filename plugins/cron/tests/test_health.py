"""What the cron plugin contributes to ``hermes status`` and ``hermes doctor``, from this
home's jobs.json alone."""

from __future__ import annotations

from pathlib import Path

import hermes_plugin_cron
from hermes_plugin_cron.jobs import JobStore

from hermes_sdk import Finding, HealthContext, StatusLine

from .cron_helpers import add_job


def lines(home: Path) -> list[StatusLine]:
    return list(hermes_plugin_cron.hermes_status_lines(HealthContext(home=str(home))))


def findings(home: Path) -> list[Finding]:
    return list(hermes_plugin_cron.hermes_doctor_checks(HealthContext(home=str(home))))


def test_no_jobs_is_one_line_and_no_finding(tmp_path):
    assert lines(tmp_path) == [StatusLine(label="Jobs", text="none")]
    assert findings(tmp_path) == []
    assert not (tmp_path / "cron").exists(), "looking changes nothing"


def test_jobs_paused_and_failed_are_counted(tmp_path):
    add_job(tmp_path, name="a")
    add_job(tmp_path, name="b")
    JobStore(tmp_path).update("a", {"paused": True, "last_status": "error"})
    assert lines(tmp_path) == [
        StatusLine(
            label="Jobs",
            text="2 scheduled (1 paused), 1 failed on their last run (see: hermes cron status)",
        )
    ]


def test_an_unreadable_jobs_file_is_a_line_and_an_error(tmp_path):
    path = tmp_path / "cron" / "jobs.json"
    path.parent.mkdir()
    path.write_text("{not json")
    [line] = lines(tmp_path)
    assert line.text.startswith(f"{path}: not valid JSON") and "hermes doctor" in line.text
    [finding] = findings(tmp_path)
    assert finding.level == "error" and finding.message.startswith(f"{path}: not valid JSON")
    assert "move it aside" in finding.fix


def test_an_active_job_whose_script_is_gone_is_a_warning(tmp_path):
    script = tmp_path / "report.sh"
    script.write_text("echo hi\n")
    job = add_job(tmp_path, name="report", script=str(script), no_agent=True, prompt="")
    add_job(tmp_path, name="resting", script=str(script), no_agent=True, prompt="")
    JobStore(tmp_path).update("resting", {"paused": True})
    script.unlink()
    ok, warning = findings(tmp_path)
    assert ok.level == "ok" and ok.message.startswith("2 scheduled jobs in ")
    assert warning.level == "warning"
    assert warning.message == (
        f"scheduled job 'report': its script {script} does not exist, so its runs fail"
    )
    assert warning.fix.endswith(f"hermes cron pause {job['id']}")
