"""What a one-shot leaves in agent.log: a line per turn, model call and tool call, at INFO,
without what anybody said (unless logging.content) and never a key; logging.level holds."""

from __future__ import annotations

import re

from hermes_testkit import Reply

KEY = "sk-canary-activity-0123456789"
SAID = "my locker code is quokka-7319"


def configure(hermes, openai_server, extra: str = "") -> None:
    hermes.config(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "learning:\n  review: false\n" + extra
    )
    (hermes.home / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")


def one_shot(hermes, openai_server) -> str:
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"echo '{SAID}'"}),
        Reply.say(f"Done: {SAID}"),
    )
    result = hermes("chat", "-q", f"remember: {SAID}")
    assert result.code == 0, result.err
    assert "model call" not in result.err  # the terminal is not flooded: files only
    return (hermes.home / "logs" / "agent.log").read_text()


def test_a_one_shot_logs_each_model_and_tool_call_without_words_or_keys(hermes, openai_server):
    configure(hermes, openai_server)
    log = one_shot(hermes, openai_server)
    lines = log.splitlines()
    models = [line for line in lines if " INFO hermes.activity: model call: " in line]
    tools = [line for line in lines if " INFO hermes.activity: tool call: " in line]
    assert len(models) == 2 and len(tools) == 1, log
    assert re.search(
        r"local-endpoint / test-model, \d+ messages: ok in \d+ ms, [\d,]+ tokens in", models[0]
    )
    assert re.search(r"tool call: session \S+, terminal ok in \d+ ms$", tools[0])
    assert any("turn started: session" in line for line in lines)
    assert any(
        re.search(r"turn ended: session \S+: done in .*2 model call\(s\), 1 tool call", line)
        for line in lines
    )
    assert "quokka" not in log and "locker" not in log
    assert KEY not in log and "sk-canary" not in log


def test_content_is_logged_when_asked_and_keys_never_are(hermes, openai_server):
    configure(hermes, openai_server, "logging:\n  content: true\n")
    openai_server.queue(Reply.say(f"the key you gave me was {KEY}"))
    assert hermes("chat", "-q", f"{SAID}; my key is {KEY}").code == 0
    log = (hermes.home / "logs" / "agent.log").read_text()
    assert SAID in log  # the user's message
    assert "the key you gave me was" in log  # the reply
    assert KEY not in log


def test_the_level_holds(hermes, openai_server):
    configure(hermes, openai_server, "logging:\n  level: WARNING\n")
    path = hermes.home / "logs" / "agent.log"
    one_shot_text = ""
    openai_server.queue(Reply.say("hi"))
    assert hermes("chat", "-q", "hello").code == 0
    if path.exists():
        one_shot_text = path.read_text()
    assert "hermes.activity" not in one_shot_text


def test_config_get_and_the_short_profile_flag(hermes):
    hermes.config("model:\n  default: some-model\nagent:\n  retries: 5\n")
    assert hermes("config", "get", "model.default").out.strip() == "some-model"
    assert hermes("config", "get", "agent.retries").out.strip() == "5"
    assert hermes("config", "get", "agent.max_iterations").out.strip() == "90"  # a default
    assert "retries: 5" in hermes("config", "get", "agent").out
    wrong = hermes("config", "get", "agent.retires")
    assert wrong.code == 1
    assert wrong.err.strip() == "Error: agent has no 'retires'; did you mean agent.retries?"
    profile = hermes.home / "profiles" / "work"
    profile.mkdir(parents=True)
    (profile / "config.yaml").write_text("model:\n  default: work-model\n")
    assert hermes("-p", "work", "config", "get", "model.default").out.strip() == "work-model"
