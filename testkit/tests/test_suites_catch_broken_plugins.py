"""Each conformance suite, tested by mutation: a suite that passes a broken plugin is a bug.

Every case scaffolds a working plugin of one kind (``hermes-sdk new-plugin``; that the
unchanged scaffolds pass their suites is ``test_scaffold``'s job), breaks it in one way a
newcomer might, and runs the plugin's own generated tests as its author would. A broken
plugin must fail, in the test meant to catch it; a correct variant (an async handler, an
optional argument) must pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_sdk.scaffold import new_plugin

INIT = "src/{module}/__init__.py"


@dataclass(frozen=True)
class Mutant:
    kind: str
    what: str  # the pytest id: what is broken
    file: str  # relative to the plugin folder; {module} and {skill} are filled in
    old: str
    new: str
    caught_by: str | None  # the suite test that must fail; None for a correct variant

    def apply(self, folder: Path) -> None:
        tail = folder.name.removeprefix("hermes-plugin-")
        names = {
            "{module}": f"hermes_plugin_{tail.replace('-', '_')}",
            "{module_tail}": tail.replace("-", "_"),
            "{skill}": f"{tail}-release-notes",
        }

        def fill(text: str) -> str:
            for key, value in names.items():
                text = text.replace(key, value)
            return text

        path = folder / fill(self.file)
        text = path.read_text(encoding="utf-8")
        old = fill(self.old)
        assert text.count(old) == 1, f"the scaffold changed: {old!r} is not once in {path}"
        path.write_text(text.replace(old, fill(self.new)), encoding="utf-8")


# The suite class each kind's generated tests subclass: only it runs, not the author's extras.
SUITE_CLASS = {
    "tools": "TestTools",
    "memory": "TestMemory",
    "skills": "TestSkills",
    "provider": "TestProvider",
    "backend": "TestBackend",
    "platform": "TestPlatform",
    "frontend": "TestFrontend",
    "context": "TestContextEngine",
}

_TOOL_SCHEMA = """            "properties": {"text": {"type": "string", "description": "the text to count"}},
            "required": ["text"],"""

MUTANTS = [
    # --- tools ---------------------------------------------------------------------------------
    Mutant("tools", "wrong-result-with-the-right-digits", INIT,
           'return f"{len(words)} words"', 'return f"{len(words) + 10} words"',
           "test_every_tool_works_on_its_example"),
    Mutant("tools", "int-result", INIT,
           'return f"{len(words)} words"', "return len(words)  # type: ignore[return-value]",
           "test_every_tool_works_on_its_example"),
    Mutant("tools", "schema-names-content-handler-takes-text", INIT,
           _TOOL_SCHEMA, _TOOL_SCHEMA.replace('"text"', '"content"'),
           "test_the_schema_and_the_handler_agree"),
    Mutant("tools", "schema-with-no-properties", INIT,
           _TOOL_SCHEMA, '            "properties": {},',
           "test_the_schema_and_the_handler_agree"),
    Mutant("tools", "example-does-not-fit-the-schema", INIT,
           '{"type": "string", "description": "the text to count"}',
           '{"type": "integer", "description": "the text to count"}',
           "test_every_example_fits_the_schema"),
    Mutant("tools", "required-argument-with-a-default-missing-from-the-schema", INIT,
           "def count_words(text: str) -> str:", "def count_words(text: str, sep: str) -> str:",
           "test_the_schema_and_the_handler_agree"),
    Mutant("tools", "handler-raises", INIT,
           "    words = text.split()\n", "    words = text.split(maxsplit=-2)[5:]\n    1 / 0\n",
           "test_every_tool_works_on_its_example"),
    Mutant("tools", "correct-async-handler", INIT,
           "def count_words(text: str) -> str:", "async def count_words(text: str) -> str:",
           None),
    Mutant("tools", "correct-optional-argument", INIT,
           _TOOL_SCHEMA + "\n",
           _TOOL_SCHEMA.replace(
               '"description": "the text to count"},',
               '"description": "the text to count"},\n'
               '                "unit": {"type": "string", "description": "what to count"},',
           ) + "\n",
           None),
    # --- memory ----------------------------------------------------------------------------------
    Mutant("memory", "one-file-for-everyone", INIT,
           'name = (user_scope or "local").replace(":", "_").replace("/", "_")', 'name = "all"',
           "test_one_persons_memory_never_reaches_another"),
    Mutant("memory", "forgets-at-restart", INIT,
           'self.folder = Path(context.home) / "{module_tail}"',
           'self.folder = Path(__import__("tempfile").mkdtemp())',
           "test_what_it_recalls_survives_a_restart"),
    Mutant("memory", "prefetch-returns-a-list", INIT,
           'return "Earlier the user said: " + " / ".join(relevant[-3:]) if relevant else None',
           "return relevant or None  # type: ignore[return-value]",
           "test_a_turn_is_observed_and_recalled"),
    Mutant("memory", "raises-on-an-interrupted-turn", INIT,
           'if turn.status != "done":\n            return',
           'if turn.status != "done":\n            raise ValueError(turn.status)',
           "test_a_turn_is_observed_and_recalled"),
    # --- skills ----------------------------------------------------------------------------------
    Mutant("skills", "name-differs-from-the-folder", "src/{module}/skills/{skill}/SKILL.md",
           "name: {skill}", "name: release-notes", "test_every_skill_has_a_valid_skill_md"),
    Mutant("skills", "front-matter-is-not-yaml", "src/{module}/skills/{skill}/SKILL.md",
           "description: Write a clear release note",
           "description: Write this: a clear release note",
           "test_every_skill_has_a_valid_skill_md"),
    Mutant("skills", "description-too-short", "src/{module}/skills/{skill}/SKILL.md",
           "description: Write a clear release note from a list of changes. Use when the user "
           "asks for release notes or a changelog entry.",
           "description: Notes.", "test_every_skill_has_a_valid_skill_md"),
    Mutant("skills", "front-matter-never-closed", "src/{module}/skills/{skill}/SKILL.md",
           "entry.\n---\n", "entry.\n\n", "test_every_skill_has_a_valid_skill_md"),
    Mutant("skills", "source-folder-missing", INIT,
           "factory=lambda: SKILLS,", 'factory=lambda: SKILLS / "missing",',
           "test_every_skill_has_a_valid_skill_md"),
    # --- providers -------------------------------------------------------------------------------
    Mutant("provider", "drops-tool-call-id", "src/{module}/client.py",
           '"tool_call_id": message.tool_call_id, ', "", "test_tool_call_round_trip"),
    Mutant("provider", "renames-the-call-it-answers", "src/{module}/client.py",
           '{"id": c.id, "type": "function"', '{"id": "call_x", "type": "function"',
           "test_tool_call_round_trip"),
    Mutant("provider", "keeps-only-the-last-argument-chunk", "src/{module}/client.py",
           '"".join(call[2:])', "call[-1]", "test_tool_call_round_trip"),
    Mutant("provider", "does-not-stream", "src/{module}/client.py",
           'on_text(delta["content"])', "pass", "test_streaming_delivers_text_as_it_arrives"),
    Mutant("provider", "drops-usage", "src/{module}/client.py",
           'int(chunk["usage"].get("prompt_tokens") or 0)', "0", "test_usage_is_reported"),
    Mutant("provider", "misclassifies-garbage", "src/{module}/client.py",
           'ErrorKind.BAD_RESPONSE, f"{where} streamed', 'ErrorKind.SERVER, f"{where} streamed',
           "test_malformed_response_is_a_bad_response"),
    # --- terminal backends -----------------------------------------------------------------------
    Mutant("backend", "leaks-the-environment", "src/{module}/backend.py",
           "            env=env,\n", "            env={**os.environ, **env},\n",
           "test_environment_is_isolated"),
    Mutant("backend", "forgets-the-working-directory", "src/{module}/backend.py",
           "self.cwd = new_cwd  #", "pass  #", "test_working_directory_persists"),
    Mutant("backend", "merges-stderr-into-stdout", "src/{module}/backend.py",
           "stderr=subprocess.PIPE,", "stderr=subprocess.STDOUT,",
           "test_stdout_and_stderr_are_separate"),
    Mutant("backend", "loses-the-exit-code", "src/{module}/backend.py",
           "process.wait(), started", "0, started", "test_exit_codes"),
    Mutant("backend", "drops-stdin", "src/{module}/backend.py",
           "stdin=subprocess.PIPE if stdin else subprocess.DEVNULL",
           "stdin=subprocess.DEVNULL", "test_stdin"),
    Mutant("backend", "truncates-large-output", "src/{module}/backend.py",
           "while chunk := os.read(pipe.fileno(), 65536):\n            sink(chunk)",
           "for _ in range(16):\n            if not (chunk := os.read(pipe.fileno(), 65536)):"
           "\n                break\n            sink(chunk)",
           "test_large_output_arrives_whole"),
    Mutant("backend", "mangles-binary-files", "src/{module}/backend.py",
           "target.write_bytes(data)", 'target.write_text(data.decode("latin-1"))',
           "test_binary_files_round_trip"),
    Mutant("backend", "lists-every-size-as-zero", "src/{module}/backend.py",
           "entry.stat().st_size", "0", "test_listing_a_directory"),
    # --- platforms -------------------------------------------------------------------------------
    Mutant("platform", "never-confirms-updates", "src/{module}/adapter.py",
           'self._after = update["id"]', "pass", "test_messages_arrive_once_and_in_order"),
    Mutant("platform", "does-not-split", "src/{module}/adapter.py",
           "split_message(text, self.max_message_chars)", "[text]",
           "test_a_long_reply_is_split_within_the_limit"),
    Mutant("platform", "truncates-long-replies", "src/{module}/adapter.py",
           "split_message(text, self.max_message_chars)", "[text[: self.max_message_chars]]",
           "test_a_long_reply_is_split_within_the_limit"),
    Mutant("platform", "ignores-a-missing-message", "src/{module}/adapter.py",
           'raise MessageGone(f"{path} no longer exists")', "return {}",
           "test_editing_a_missing_message_raises_message_gone"),
    Mutant("platform", "private-chats-not-addressed", "src/{module}/adapter.py",
           'addressed=chat.chat_type == "private" or ', "addressed=",
           "test_a_private_message_arrives"),
    Mutant("platform", "send-returns-no-ids", "src/{module}/adapter.py",
           "        return ids\n", "        return []\n", "test_send_returns_message_ids"),
    Mutant("platform", "ids-messages-by-delivery", "src/{module}/adapter.py",
           'message_id=str(message["id"]),', 'message_id=str(update["id"]),',
           "test_a_message_delivered_again_keeps_its_id"),
    Mutant("platform", "starts-without-a-token", "src/{module}/adapter.py",
           "if not token:", "if False:", "test_missing_credentials_are_a_clear_error"),
    # --- front-ends ------------------------------------------------------------------------------
    Mutant("frontend", "a-new-session-per-message", INIT,
           "await self.answer(runtime, session.session_id, message)",
           "await self.answer(runtime, (await runtime.open_session(SessionOptions("
           "source=SOURCE))).session_id, message)",
           "test_a_conversation_continues_in_one_session"),
    Mutant("frontend", "ignores-stop", INIT, "                turn.stop()\n",
           "                pass\n", "test_a_stop_stops_the_turn"),
    Mutant("frontend", "claims-to-answer-questions", INIT,
           "runtime.start_turn(session_id, text)",
           "runtime.start_turn(session_id, text, answers_questions=True)",
           "test_an_approval_reaches_the_client_or_is_denied"),
    # --- context engines -------------------------------------------------------------------------
    Mutant("context", "sends-the-whole-conversation", INIT,
           "budget_chars=max(room, 1000)", "budget_chars=10**9",
           "test_the_request_to_the_model_fits_its_input_budget"),
    Mutant("context", "forgets-the-earlier-summary", INIT,
           "        if earlier:\n", "        if False:\n",
           "test_the_earlier_summary_is_folded_in"),
    Mutant("context", "ignores-the-focus", INIT,
           "        if request.focus:\n", "        if False:\n",
           "test_the_focus_reaches_the_model"),
    Mutant("context", "fails-without-the-model", INIT,
           "except SummaryUnavailable as exc:", "except ZeroDivisionError as exc:",
           "test_without_the_model_the_summary_keeps_the_requests_within_budget"),
    Mutant("context", "an-empty-summary-without-the-model", INIT,
           "return Compaction(fallback, by_model=False, notice=str(exc))",
           'return Compaction("", by_model=False, notice=str(exc))',
           "test_without_the_model_the_summary_keeps_the_requests_within_budget"),
    Mutant("context", "drops-the-models-summary", INIT,
           "return Compaction(summary.strip())", 'return Compaction("The conversation so far.")',
           "test_what_the_user_said_reaches_the_summary"),
]  # fmt: skip


SUITE_DEADLINE = 180  # seconds; the slowest suite takes about 15 here


def _run_suite(folder: Path, kind: str, test: str | None) -> subprocess.CompletedProcess[str]:
    """The plugin's own tests, as its author runs them. A run past the deadline is a failed
    outcome of its own (return code -1), so one hung suite fails one case, not all."""
    selected = SUITE_CLASS[kind] + (f" and {test}" if test else "")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-rfE",
        "-p",
        "no:cacheprovider",
        "-k",
        selected,
    ]
    # Only the SDK's pytest plugin (its fixtures), not every installed one (xdist, anyio ...):
    # a second less per run, of the two a run takes, and the suite's verdict is the same.
    command[3:3] = ["-p", "hermes_testkit.plugin"]
    environment = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    try:
        return subprocess.run(
            command,
            cwd=folder,
            env=environment,
            capture_output=True,
            text=True,
            check=False,
            timeout=SUITE_DEADLINE,
        )
    except subprocess.TimeoutExpired as expired:
        return subprocess.CompletedProcess(
            command,
            -1,
            _text(expired.stdout),
            f"{_text(expired.stderr)}\nhung: no result in {SUITE_DEADLINE} s",
        )


def _text(output: str | bytes | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def _try(mutant: Mutant, parent: Path) -> subprocess.CompletedProcess[str]:
    folder = new_plugin(mutant.kind, f"m-{mutant.kind}", parent)
    mutant.apply(folder)
    return _run_suite(folder, mutant.kind, mutant.caught_by)


@pytest.fixture(scope="module")
def outcomes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every selected mutant's run, two at a time (one per core): each is a process of its
    own, and one by one they would leave a core idle for a minute."""
    selected = [
        item.callspec.params["mutant"]
        for item in request.session.items
        if getattr(item, "callspec", None) is not None and "mutant" in item.callspec.params
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = {m.what: pool.submit(_try, m, tmp_path_factory.mktemp(m.what)) for m in selected}
        return {what: run.result() for what, run in runs.items()}


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: f"{m.kind}-{m.what}")
def test_each_broken_plugin_is_caught_and_each_correct_one_passes(
    outcomes: dict[str, subprocess.CompletedProcess[str]], mutant: Mutant
) -> None:
    done = outcomes[mutant.what]
    output = done.stdout + done.stderr
    if mutant.caught_by is None:
        assert done.returncode == 0, f"a correct plugin failed its suite:\n{output}"
        assert " passed" in done.stdout and "skipped" not in done.stdout, output
        return
    failed = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert done.returncode == 1, f"the suite passed a broken plugin ({mutant.what}):\n{output}"
    assert any(f"::{mutant.caught_by}" in line for line in failed), (
        f"{mutant.caught_by} did not catch {mutant.what}:\n{output}"
    )


def test_mutants_have_distinct_names() -> None:
    assert len({m.what for m in MUTANTS}) == len(MUTANTS)


def test_every_kind_with_a_suite_has_mutants() -> None:
    assert {m.kind for m in MUTANTS if m.caught_by} == set(SUITE_CLASS)
