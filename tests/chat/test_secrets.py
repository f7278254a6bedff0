"""Seeded secrets: fake keys in the environment, in .env and in files. A turn runs the
terminal, reads the file and logs verbosely; no secret reaches the model, the store, the
log or a command's environment."""

from __future__ import annotations

import json

import apsw

from hermes_testkit import Reply

IN_ENVIRONMENT = {
    "OPENAI_API_KEY": "sk-SEEDEDenvironmentkey0123456789",
    "DEPLOY_TOKEN": "ghp_SEEDEDdeploytoken0123456789abcd",
    "DATABASE_PASSWORD": "correct-horse-battery-staple-SEEDED",
}
IN_DOTENV = {"SERVICE_API_KEY": "svc-SEEDED-dotenv-value-42"}
IN_FILE = {
    "aws": "AKIAIOSFODNN7SEEDEDX",
    "anthropic": "sk-ant-SEEDEDfilesecret0123456789abcdef",
    "github": "ghp_SEEDEDfilegithubtoken0123456789ab",
    "key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----",
}
SECRETS = [*IN_ENVIRONMENT.values(), *IN_DOTENV.values(), *IN_FILE.values()]


def test_no_seeded_secret_leaks(hermes, openai_server, monkeypatch, tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text(
        "\n".join(f"{name}: {value}" for name, value in IN_FILE.items()) + "\n"
    )
    monkeypatch.chdir(workspace)
    for name, value in IN_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    hermes.dotenv("".join(f"{name}={value}\n" for name, value in IN_DOTENV.items()))
    hermes.config(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "terminal:\n  env_passthrough: [DEPLOY_TOKEN_NOT_SET, SERVICE_API_KEY]\n"
    )
    openai_server.queue(
        Reply.tool_call(
            "terminal",
            {"command": "env; echo token=$DEPLOY_TOKEN key=$SERVICE_API_KEY; cat notes.txt"},
        ),
        Reply.tool_call("read_file", {"path": "notes.txt"}),
        Reply.tool_call("search_files", {"pattern": "SEEDED"}),
        Reply.say("done"),
    )
    result = hermes("-v", "chat", "-q", "look around")
    assert result.code == 0, result.err

    # What the model was sent: the tool results, redacted.
    sent = openai_server.requests[-1].json["messages"]  # the whole conversation, at the end
    tool_results = [str(message["content"]) for message in sent if message["role"] == "tool"]
    assert len(tool_results) == 3
    shown = "\n".join(tool_results)
    assert "exit code 0" in shown and "<redacted>" in shown  # the tools ran; values hidden
    # What commands got: none of Hermes' variables, not even by passthrough of a .env key.
    env_lines = tool_results[0].splitlines()
    for name in [*IN_ENVIRONMENT, *IN_DOTENV]:
        assert not any(line.startswith(f"{name}=") for line in env_lines), name
    assert "token= key=" in tool_results[0]

    with apsw.Connection(str(hermes.home / "state.db")) as db:
        stored = "\n".join(str(row[0]) for row in db.execute("SELECT content FROM messages"))
    places = {
        "model requests": json.dumps([request.json for request in openai_server.requests]),
        "the store": stored,
        "stdout and the log on stderr": result.out + result.err,
    }
    for place, text in places.items():
        for secret in SECRETS:
            assert secret not in text, f"{secret[:12]}… leaked into {place}"
