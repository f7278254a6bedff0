"""hermes-agent's settings as ours: each key mapped or left with a reason, never dropped in
silence, and no secret left in config.yaml."""

from __future__ import annotations

import pytest
from hermes_plugin_import_hermes_agent.config_map import leaves, map_config


def accounted(source, env=None):
    mapped = map_config(source, env or {})
    named = {key for key, _ in mapped.mapped} | {key for key, _ in mapped.left}
    return mapped, named


def test_every_key_is_mapped_or_left_with_a_reason():
    source = {
        "_config_version": 33,
        "model": {"default": "gpt-4o", "provider": "openrouter", "max_tokens": 4096},
        "agent": {"max_turns": 60, "tool_use_enforcement": "auto"},
        "display": {"skin": "mono", "compact": True},
        "terminal": {"backend": "modal", "modal_mode": "sandbox", "timeout": 30},
        "kanban": {"enabled": True},
        "memory": {"memory_char_limit": 5000, "user_profile_enabled": True},
    }
    mapped, named = accounted(source)
    for path in leaves(source):
        section = path.split(".")[0]
        assert any(key == path or key.startswith(section) for key in named), path
    reasons = dict(mapped.left)
    assert reasons["display.skin"].startswith("how hermes-agent's terminal looks")
    assert "no 'modal' backend" in reasons["terminal.backend"]
    assert reasons["kanban.enabled"] == "no setting of Hermes means this"
    assert reasons["model.max_tokens"] == "not a setting of Hermes's models"
    assert mapped.config["model"] == {"default": "gpt-4o", "provider": "openrouter"}
    assert mapped.config["agent"] == {"max_iterations": 60}
    assert mapped.config["memory"] == {"memory_chars": 5000}


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o-mini", {"default": "gpt-4o-mini"}),
        ({"default": "m", "provider": "auto"}, {"default": "m"}),
        ({"model": "m", "provider": "anthropic"}, {"default": "m", "provider": "anthropic"}),
        ({"name": "m", "provider": "openai-api"}, {"default": "m", "provider": "openai"}),
        (
            {"default": "llama3", "provider": "custom", "base_url": "http://127.0.0.1:11434/v1"},
            {"default": "llama3", "base_url": "http://127.0.0.1:11434/v1"},
        ),
        (
            {"default": "q", "provider": "ollama", "api_base": "http://box:11434/v1"},
            {"default": "q", "base_url": "http://box:11434/v1"},
        ),
    ],
)
def test_the_model_in_each_shape_hermes_agent_accepts(model, expected):
    assert map_config({"model": model}, {}).config["model"] == expected


def test_a_key_written_into_the_config_moves_to_env_and_the_config_names_it():
    source = {
        "model": {"default": "m", "provider": "custom", "base_url": "https://x.test/v1",
                  "api_key": "sk-inline-1"},
        "providers": {"My Box": {"base_url": "https://box.test/v1", "api_key": "sk-inline-2",
                                 "api_mode": "anthropic_messages", "models": {"a": {}, "b": {}}}},
    }  # fmt: skip
    mapped = map_config(source, {})
    assert mapped.config["model"]["api_key_env"] == "CUSTOM_API_KEY"
    assert mapped.config["providers"]["my-box"] == {
        "base_url": "https://box.test/v1",
        "api_key_env": "MY_BOX_API_KEY",
        "transport": "anthropic",
        "models": ["a", "b"],
    }
    assert mapped.secrets == {"CUSTOM_API_KEY": "sk-inline-1", "MY_BOX_API_KEY": "sk-inline-2"}
    assert "sk-inline" not in repr(mapped.config) + repr(mapped.mapped) + repr(mapped.left)


def test_custom_providers_lists_and_fallbacks_become_endpoints():
    source = {
        "model": {"default": "m", "provider": "custom:work"},
        "custom_providers": [{"name": "work", "base_url": "http://w.test/v1", "key_env": "W_KEY"}],
        "fallback_providers": [{"provider": "anthropic", "model": "claude"}],
        "fallback_model": {"provider": "spare", "model": "s", "base_url": "http://s.test/v1"},
    }
    config = map_config(source, {}).config
    assert config["model"]["provider"] == "work"
    assert config["providers"]["work"] == {"base_url": "http://w.test/v1", "api_key_env": "W_KEY"}
    assert config["providers"]["spare"] == {"base_url": "http://s.test/v1"}
    assert config["model"]["fallback_providers"] == [
        {"provider": "anthropic", "model": "claude"},
        {"provider": "spare", "model": "s"},
    ]


def test_an_oauth_provider_is_left_with_its_reason():
    mapped = map_config({"model": {"default": "x", "provider": "copilot-acp"}}, {})
    assert "provider" not in mapped.config["model"]
    assert (
        "model.provider",
        "'copilot-acp' signs in with OAuth, which Hermes cannot use",
    ) in mapped.left


@pytest.mark.parametrize(
    ("theirs", "ours"),
    [
        ("nous", "nous"),
        ("openai-codex", "codex"),
        ("xai-oauth", "xai-oauth"),
        ("copilot", "copilot"),
        ("minimax-oauth", "minimax-oauth"),
        ("minimax-portal", "minimax-oauth"),
    ],
)
def test_a_sign_in_provider_becomes_the_sign_in_here(theirs: str, ours: str) -> None:
    mapped = map_config({"model": {"default": "m", "provider": theirs}}, {})
    assert mapped.config["model"]["provider"] == ours
    assert not [why for key, why in mapped.left if key == "model.provider"]


def test_the_allowlist_keeps_its_meaning():
    allow = ["recursive delete", "git force push (rewrites remote history)", "podman *",
             "git status", "ls | wc -l", "something we have no rule for; rm"]  # fmt: skip
    mapped = map_config({"command_allowlist": allow}, {})
    assert mapped.config["approvals"]["allow"] == [
        "recursive-delete",
        "git-force-push",
        "podman *",
        "[g]it status",
    ]
    left = [key for key, _ in mapped.left]
    assert "command_allowlist: ls | wc -l" in left
    assert "command_allowlist: something we have no rule for; rm" in left


def test_an_unset_approvals_mode_stays_closed():
    mapped = map_config({}, {})
    assert "approvals" not in mapped.config  # manual, ours, not smart, theirs
    (why,) = [why for key, why in mapped.left if key == "approvals.mode"]
    assert "set approvals.mode: smart to match" in why
    assert map_config({"approvals": {"mode": False}}, {}).config["approvals"]["mode"] == "off"


def test_backends_and_their_settings_from_the_config_and_env():
    source = {
        "terminal": {"docker_image": "python:3.12", "container_memory": 2048,
                     "docker_network": False, "container_cpu": 2},
    }  # fmt: skip
    env = {"TERMINAL_ENV": "docker", "TERMINAL_SSH_HOST": "box", "TERMINAL_SSH_PORT": "2222"}
    mapped = map_config(source, env)
    assert mapped.config["agent"] == {"backend": "docker"}
    assert mapped.config["docker"] == {
        "image": "python:3.12",
        "cpus": 2.0,
        "memory": "2048m",
        "network": "none",
        "mount_workspace": False,
    }
    assert mapped.config["ssh"] == {"host": "box", "port": 2222}
    assert {"TERMINAL_ENV", "TERMINAL_SSH_HOST", "TERMINAL_SSH_PORT"} <= mapped.env_settings


def test_platform_allowlists_move_from_env_into_config():
    env = {
        "TELEGRAM_ALLOWED_USERS": "42, 43",
        "GATEWAY_ALLOWED_USERS": "7",
        "WHATSAPP_ALLOWED_USERS": "9",
        "TELEGRAM_BOT_TOKEN": "123:abc",
    }
    mapped = map_config({"unauthorized_dm_behavior": "ignore"}, env)
    assert mapped.config["platforms"]["telegram"] == {
        "allowed_users": ["42", "43", "7"],
        "pairing": False,
    }
    assert mapped.config["platforms"]["whatsapp_bridge"] == {"allowed_users": ["9", "7"]}
    assert "TELEGRAM_BOT_TOKEN" not in mapped.env_settings  # a secret: it stays in .env
    assert map_config({}, {"TELEGRAM_ALLOWED_USERS": "*"}).config["platforms"] == {
        "telegram": {"allow_all": True}
    }


def test_mcp_servers_keep_what_ours_reads_and_name_the_rest():
    source = {
        "mcp_servers": {
            "github": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-github"],
                "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"},
                "timeout": 9000,
                "keepalive_interval": 30,
                "tools": {"include": ["search"], "resources": True},
            },
            "remote": {"url": "https://mcp.test/mcp", "transport": "http"},
        }
    }
    mapped = map_config(source, {})
    assert mapped.config["mcp_servers"]["github"] == {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-github"],
        "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
        "timeout": 3600.0,
        "tools": {"include": ["search"]},
    }
    assert mapped.config["mcp_servers"]["remote"]["transport"] == "streamable_http"
    left = dict(mapped.left)
    assert left["mcp_servers.github.keepalive_interval"] == "an MCP option Hermes does not have"
    assert "mcp_servers.github.tools.resources" in left


def test_a_key_for_a_built_in_endpoint_goes_to_the_variable_it_reads():
    mapped = map_config({"model": {"provider": "openrouter", "api_key": "sk-or-1"}}, {})
    assert mapped.config["model"] == {"provider": "openrouter"}
    assert mapped.secrets == {"OPENROUTER_API_KEY": "sk-or-1"}


def test_matrix_and_email_settings_move_from_env_into_config():
    env = {
        "MATRIX_HOMESERVER": "https://matrix.example.org",
        "MATRIX_USER_ID": "@hermes:example.org",
        "MATRIX_ACCESS_TOKEN": "syt_secret",
        "MATRIX_ALLOWED_USERS": "@ann:example.org,@bob:example.org",
        "MATRIX_REQUIRE_MENTION": "false",
        "EMAIL_ADDRESS": "hermes@example.org",
        "EMAIL_PASSWORD": "app-password",
        "EMAIL_IMAP_HOST": "imap.example.org",
        "EMAIL_SMTP_HOST": "smtp.example.org",
        "EMAIL_ALLOWED_USERS": "ann@example.org",
        "EMAIL_POLL_INTERVAL": "30",
    }
    mapped = map_config({}, env)
    assert mapped.config["platforms"]["matrix"] == {
        "homeserver": "https://matrix.example.org",
        "user_id": "@hermes:example.org",
        "require_mention": False,
        "allowed_users": ["@ann:example.org", "@bob:example.org"],
    }
    assert mapped.config["platforms"]["email"] == {
        "address": "hermes@example.org",
        "imap_host": "imap.example.org",
        "smtp_host": "smtp.example.org",
        "imap_port": 993,
        "smtp_port": 587,
        "tls": "implicit",
        "smtp_tls": "starttls",
        "poll_seconds": 30,
        "allowed_users": ["ann@example.org"],
    }
    assert {"MATRIX_ACCESS_TOKEN", "EMAIL_PASSWORD"}.isdisjoint(mapped.env_settings)
    assert {"MATRIX_HOMESERVER", "EMAIL_IMAP_HOST"} <= mapped.env_settings


def test_discord_settings_move_from_env_and_config_into_config():
    env = {
        "DISCORD_BOT_TOKEN": "discord-token",
        "DISCORD_ALLOWED_USERS": "111111111111111111,<@!222222222222222222>,someone",
        "DISCORD_REQUIRE_MENTION": "false",
        "DISCORD_HOME_CHANNEL": "333333333333333333",
        "DISCORD_HOME_CHANNEL_NAME": "general",
    }
    source = {"discord": {"allow_from": ["444"], "dm_role_auth_guild": "555555555555555555"}}
    mapped = map_config(source, env)
    assert mapped.config["platforms"]["discord"] == {
        "allowed_users": ["111111111111111111", "222222222222222222"],
        "require_mention": False,
    }
    assert mapped.config["cron"] == {"home_chats": {"discord": "333333333333333333"}}
    left = dict(mapped.left)
    assert "numeric user id" in left[".env DISCORD_ALLOWED_USERS: someone"]
    assert left["discord.allow_from"] == "hermes-agent used .env DISCORD_ALLOWED_USERS instead"
    # hermes-agent has no server allowlist: its one guild id is for role checks in DMs.
    assert left["discord.dm_role_auth_guild"].endswith("not by role")
    assert "allowed_guilds" not in mapped.config["platforms"]["discord"]
    assert left[".env DISCORD_HOME_CHANNEL_NAME"].startswith("only a label")
    assert "DISCORD_BOT_TOKEN" not in mapped.env_settings  # a secret: it stays in .env
    assert {"DISCORD_ALLOWED_USERS", "DISCORD_REQUIRE_MENTION", "DISCORD_HOME_CHANNEL",
            "DISCORD_HOME_CHANNEL_NAME"} <= mapped.env_settings  # fmt: skip


def test_discord_config_section_wins_over_env_as_in_hermes_agent():
    source = {"discord": {"require_mention": False, "allow_from": ["666", "777"]}}
    mapped = map_config(source, {"DISCORD_REQUIRE_MENTION": "true", "GATEWAY_ALLOWED_USERS": "7"})
    assert mapped.config["platforms"]["discord"] == {
        "require_mention": False,
        "allowed_users": ["666", "777", "7"],
    }
    reasons = dict(mapped.left)
    assert (
        reasons[".env DISCORD_REQUIRE_MENTION"]
        == "hermes-agent used discord.require_mention instead"
    )


def test_slack_allowed_users_move_and_its_tokens_stay_secrets():
    env = {
        "SLACK_BOT_TOKEN": "xoxb-1",
        "SLACK_APP_TOKEN": "xapp-1",
        "SLACK_SIGNING_SECRET": "signing",
        "SLACK_ALLOWED_USERS": "U0123, U0456",
        "SLACK_REQUIRE_MENTION": "no",
        "SLACK_HOME_CHANNEL": "C0789",
    }
    mapped = map_config({}, env)
    assert mapped.config["platforms"]["slack"] == {
        "require_mention": False,
        "allowed_users": ["U0123", "U0456"],
    }
    assert mapped.config["cron"] == {"home_chats": {"slack": "C0789"}}
    assert {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"}.isdisjoint(
        mapped.env_settings
    )
    assert {"SLACK_ALLOWED_USERS", "SLACK_REQUIRE_MENTION", "SLACK_HOME_CHANNEL"} <= (
        mapped.env_settings
    )
    assert "xoxb-1" not in repr(mapped.config) + repr(mapped.mapped) + repr(mapped.left)


def test_discord_and_slack_settings_hermes_lacks_are_left_with_their_reason():
    source = {
        "discord": {"auto_thread": True, "free_response_channels": "1,2",
                    "missed_message_backfill": {"enabled": True}, "voice_fx": {"enabled": True}},
        "slack": {"require_mention": True, "allowed_channels": ["C1"]},
    }  # fmt: skip
    env = {"DISCORD_ALLOWED_CHANNELS": "3", "SLACK_STRICT_MENTION": "true", "WEBHOOK_PORT": "8644",
           "DISCORD_SOMETHING_NEW": "kept"}  # fmt: skip
    mapped, named = accounted(source, env)
    assert mapped.config["platforms"] == {"slack": {"require_mention": True}}
    left = dict(mapped.left)
    assert left["discord.auto_thread"] == (
        "Hermes always answers a mention in a server channel in a thread of its own"
    )
    assert left["discord.free_response_channels"].startswith(
        "Hermes answers mentions in every channel of allowed_guilds"
    )
    assert left["discord.missed_message_backfill.enabled"].startswith("Hermes reads the messages")
    assert left["discord.voice_fx.enabled"].startswith(
        "a setting of hermes-agent's Discord adapter"
    )
    assert left["slack.allowed_channels"].startswith("Hermes does not limit Slack by channel")
    assert left[".env DISCORD_ALLOWED_CHANNELS"].startswith("Hermes limits Discord by server")
    assert "require_mention" in left[".env SLACK_STRICT_MENTION"]
    assert left[".env WEBHOOK_PORT"].startswith("hermes-agent's webhook receiver")
    assert {"DISCORD_ALLOWED_CHANNELS", "SLACK_STRICT_MENTION", "WEBHOOK_PORT"} <= (
        mapped.env_settings
    )
    # A name hermes-agent does not read is no setting of its: it stays in .env as it was.
    assert "DISCORD_SOMETHING_NEW" not in mapped.env_settings
    assert set(leaves(source)) <= named


def test_hermes_agent_plugin_names_come_over_unless_a_hermes_plugin_has_the_name():
    source = {
        "plugins": {"enabled": ["noisegate", "acp"], "disabled": ["old-guard"]},
        "memory": {"memory_enabled": False},
    }
    mapped = map_config(source, {})
    assert mapped.config["plugins"]["foreign"] == ["noisegate"]  # ours has an "acp" plugin
    assert "enabled" not in mapped.config["plugins"]
    assert mapped.config["plugins"]["disabled"] == ["old-guard", "memory-builtin"]
    left = dict(mapped.left)
    assert "also the name of a Hermes plugin" in left["plugins.enabled: acp"]


def test_a_memory_provider_comes_over_when_its_folder_does():
    source = {"memory": {"provider": "local_memory"}}
    assert map_config(source, {}, ["local_memory"]).config["memory"]["provider"] == "local_memory"
    bundled = map_config({"memory": {"provider": "honcho"}}, {})
    assert "memory" not in bundled.config
    assert "bundled with hermes-agent" in dict(bundled.left)["memory.provider"]


@pytest.mark.parametrize(
    ("theirs", "ours", "key_env"),
    [
        ("deepseek", "deepseek", "DEEPSEEK_API_KEY"),
        ("glm", "zai", "GLM_API_KEY"),
        ("moonshot", "kimi-coding", "KIMI_API_KEY"),
        ("dashscope", "alibaba", "DASHSCOPE_API_KEY"),
        ("grok", "xai", "XAI_API_KEY"),
        ("google", "gemini", "GOOGLE_API_KEY"),
        ("HF", "huggingface", "HF_TOKEN"),
    ],
)
def test_an_api_key_provider_becomes_its_preset(theirs: str, ours: str, key_env: str) -> None:
    source = {"model": {"default": "m-1", "provider": theirs, "api_key": "sk-inline-123"}}
    mapped = map_config(source, {})
    assert mapped.config["model"] == {"default": "m-1", "provider": ours}
    assert "providers" not in mapped.config  # the preset is the endpoint: nothing to write
    assert mapped.secrets == {key_env: "sk-inline-123"}


def test_bedrock_becomes_an_endpoint_in_the_region_its_env_names() -> None:
    source = {
        "model": {"default": "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "provider": "bedrock"}
    }
    mapped = map_config(source, {"AWS_REGION": "eu-west-3"})
    assert mapped.config["model"]["provider"] == "bedrock"
    assert mapped.config["providers"]["bedrock"] == {
        "base_url": "https://bedrock-runtime.eu-west-3.amazonaws.com",
        "transport": "bedrock",
    }
    assert not [why for key, why in mapped.left if key == "model.provider"]


def test_signal_settings_come_over():
    env = {
        "SIGNAL_HTTP_URL": "http://127.0.0.1:8080",
        "SIGNAL_ACCOUNT": "+15550002222",
        "SIGNAL_ALLOWED_USERS": "+15551234567",
        "SIGNAL_REQUIRE_MENTION": "false",
        "SIGNAL_GROUP_ALLOWED_USERS": "+15551234567",
    }
    mapped = map_config({}, env)
    assert mapped.config["platforms"]["signal"] == {
        "allowed_users": ["+15551234567"],
        "require_mention": False,
    }
    assert "the groups it answered" in dict(mapped.left)[".env SIGNAL_GROUP_ALLOWED_USERS"]
    assert "SIGNAL_HTTP_URL" not in mapped.env_settings  # read from .env, where it stays


def test_whatsapp_bridge_settings_come_over():
    env = {
        "WHATSAPP_ENABLED": "true",
        "WHATSAPP_MODE": "bot",
        "WHATSAPP_ALLOWED_USERS": "+1 555-123-4567, 98765@lid, 15559876543@s.whatsapp.net",
        "WHATSAPP_DM_POLICY": "pairing",
        "WHATSAPP_GROUP_POLICY": "open",
        "WHATSAPP_REQUIRE_MENTION": "true",
        "WHATSAPP_MENTION_PATTERNS": '["^bot[,:]?", "jarvis"]',
        "WHATSAPP_HOME_CHANNEL": "+1 555 123 4567",
        "WHATSAPP_REPLY_PREFIX": "*Bot*",
    }
    hermes_agent_config = {"platforms": {"whatsapp": {"extra": {"bridge_port": 3111}}}}
    mapped = map_config(hermes_agent_config, env)
    assert mapped.config["platforms"]["whatsapp_bridge"] == {
        "allowed_users": ["15551234567", "98765@lid", "15559876543"],
        "pairing": True,
        "require_mention": True,
        "mention_patterns": ["^bot[,:]?", "jarvis"],
        "bridge_url": "http://127.0.0.1:3111",
    }
    assert mapped.config["cron"]["home_chats"]["whatsapp_bridge"] == "15551234567"
    left = dict(mapped.left)
    assert "--mode bot" in left[".env WHATSAPP_MODE"]
    assert "WHATSAPP_DM_POLICY=pairing" in left[".env WHATSAPP_MODE"]
    assert "mentions the bot" in left[".env WHATSAPP_GROUP_POLICY"]
    assert "read by the bridge itself" in left[".env WHATSAPP_REPLY_PREFIX"]
    everyone = map_config({}, {"WHATSAPP_ALLOW_ALL_USERS": "true", "WHATSAPP_MODE": "bot"})
    assert everyone.config["platforms"]["whatsapp_bridge"]["allow_all"] is True
    gateway = map_config({}, {"WHATSAPP_ALLOWED_USERS": "155", "GATEWAY_ALLOWED_USERS": "+1 555"})
    assert gateway.config["platforms"]["whatsapp_bridge"]["allowed_users"] == ["155", "1555"]
    self_chat = map_config({}, {"WHATSAPP_ENABLED": "true"})
    assert "your own number" in dict(self_chat.left)[".env WHATSAPP_MODE"]
    # hermes-agent ignored groups unless told otherwise, and read its YAML's allow_from.
    assert self_chat.config["platforms"]["whatsapp_bridge"] == {"groups": False}
    yaml = {"whatsapp": {"allow_from": ["+44 7700 900123"], "require_mention": "no"}}
    from_yaml = map_config(yaml, {"WHATSAPP_MODE": "bot"})
    assert from_yaml.config["platforms"]["whatsapp_bridge"] == {
        "groups": False,
        "allowed_users": ["447700900123"],
        "require_mention": False,
    }


def test_bluebubbles_settings_come_over():
    env = {
        "BLUEBUBBLES_SERVER_URL": "http://192.168.1.20:1234",
        "BLUEBUBBLES_PASSWORD": "secret",
        "BLUEBUBBLES_ALLOWED_USERS": "+15551234567,ann@icloud.com",
        "BLUEBUBBLES_REQUIRE_MENTION": "true",
        "BLUEBUBBLES_MENTION_PATTERNS": "hey bot, @?jarvis",
        "BLUEBUBBLES_SEND_READ_RECEIPTS": "false",
        "BLUEBUBBLES_HOME_CHANNEL": "iMessage;-;+15551234567",
        "BLUEBUBBLES_WEBHOOK_PORT": "8645",
    }
    mapped = map_config({}, env)
    assert mapped.config["platforms"]["bluebubbles"] == {
        "allowed_users": ["+15551234567", "ann@icloud.com"],
        "require_mention": True,
        "read_receipts": False,
        "mention_patterns": ["hey bot", "@?jarvis"],
    }
    assert mapped.config["cron"]["home_chats"]["bluebubbles"] == "iMessage;-;+15551234567"
    assert "webhook_url" in dict(mapped.left)[".env BLUEBUBBLES_WEBHOOK_PORT"]
    assert "BLUEBUBBLES_PASSWORD" not in mapped.env_settings  # stays in .env, read from there
    json_listed = map_config({}, {"BLUEBUBBLES_MENTION_PATTERNS": '["a,b", "c"]'})
    assert json_listed.config["platforms"]["bluebubbles"]["mention_patterns"] == ["a,b", "c"]


def test_sms_settings_come_over():
    env = {
        "TWILIO_ACCOUNT_SID": "AC" + "0" * 32,
        "TWILIO_AUTH_TOKEN": "secret",
        "SMS_ALLOWED_USERS": "+15551234567",
        "SMS_HOME_CHANNEL": "+15551234567",
        "SMS_INSECURE_NO_SIGNATURE": "true",
        "SMS_WEBHOOK_URL": "https://example.org/sms",
    }
    mapped = map_config({}, env)
    assert mapped.config["platforms"]["sms"] == {"allowed_users": ["+15551234567"]}
    assert mapped.config["cron"]["home_chats"]["sms"] == "+15551234567"
    assert "checks every text" in dict(mapped.left)[".env SMS_INSECURE_NO_SIGNATURE"]
    assert "SMS_WEBHOOK_URL" not in mapped.env_settings  # stays in .env, read from there


def test_whatsapp_cloud_settings_come_over():
    env = {
        "WHATSAPP_CLOUD_ACCESS_TOKEN": "EAA-secret",
        "WHATSAPP_CLOUD_PHONE_NUMBER_ID": "106540352242922",
        "WHATSAPP_CLOUD_ALLOWED_USERS": "+1 555-123-4567, 15559876543",
        "WHATSAPP_CLOUD_WEBHOOK_PATH": "/wa/hook",
        "WHATSAPP_CLOUD_API_VERSION": "v20.0",
        "WHATSAPP_CLOUD_WEBHOOK_PORT": "8090",
        "GATEWAY_ALLOWED_USERS": "15550001111",
        "WHATSAPP_CLOUD_HOME_CHANNEL": "+1 555 123 4567",
        "WHATSAPP_CLOUD_DM_POLICY": "open",
    }
    mapped = map_config({}, env)
    assert mapped.config["cron"]["home_chats"]["whatsapp"] == "15551234567"
    assert "one person at a time" in dict(mapped.left)[".env WHATSAPP_CLOUD_DM_POLICY"]
    assert mapped.config["platforms"]["whatsapp"] == {
        "allowed_users": ["15551234567", "15559876543", "15550001111"],
        "path": "/wa/hook",
        "api_version": "20.0",
    }
    assert (
        "gateway.http_host and http_port" in dict(mapped.left)[".env WHATSAPP_CLOUD_WEBHOOK_PORT"]
    )
    assert "WHATSAPP_CLOUD_ACCESS_TOKEN" not in mapped.env_settings  # a secret: stays in .env


def test_irc_settings_come_over():
    env = {
        "IRC_SERVER": "irc.libera.chat",
        "IRC_PORT": "6697",
        "IRC_NICKNAME": "hermes-bot",
        "IRC_CHANNEL": "#hermes, #ops",
        "IRC_USE_TLS": "true",
        "IRC_ALLOWED_USERS": "alice,Bob",
        "IRC_NICKSERV_PASSWORD": "secret",
        "IRC_HOME_CHANNEL": "#hermes",
    }
    source = {
        "platforms": {"irc": {"extra": {"server": "irc.oftc.net", "max_message_length": 400}}}
    }
    mapped = map_config(source, env)
    assert mapped.config["platforms"]["irc"] == {
        "allowed_users": ["alice", "Bob"],
        "server": "irc.libera.chat",
        "nick": "hermes-bot",
        "port": 6697,
        "channels": ["#hermes", "#ops"],
        "tls": "tls",
    }
    assert mapped.config["cron"]["home_chats"]["irc"] == "#hermes"
    left = dict(mapped.left)
    assert "IRC_SERVER" in left["platforms.irc.extra.server"]
    assert "512-byte" in left["platforms.irc.extra.max_message_length"]
    assert "IRC_NICKSERV_PASSWORD" not in mapped.env_settings  # stays in .env, read from there


def test_irc_settings_in_config_yaml_come_over_with_the_password_as_a_secret():
    extra = {
        "server": "irc.example.org",
        "port": 6667,
        "nickname": "bot",
        "channel": "#a",
        "use_tls": False,
        "server_password": "pw",
        "allowed_users": ["carol"],
    }
    mapped = map_config({"platforms": {"irc": {"extra": extra}}}, {})
    assert mapped.config["platforms"]["irc"] == {
        "server": "irc.example.org",
        "nick": "bot",
        "port": 6667,
        "channels": ["#a"],
        "tls": "none",
        "allowed_users": ["carol"],
    }
    assert mapped.secrets == {"IRC_SERVER_PASSWORD": "pw"}


def test_mattermost_settings_come_over():
    env = {
        "MATTERMOST_URL": "https://chat.example.org",
        "MATTERMOST_TOKEN": "secret",
        "MATTERMOST_ALLOWED_USERS": "a1234567890abcdefghijklmno",
        "MATTERMOST_REPLY_MODE": "off",
        "MATTERMOST_REQUIRE_MENTION": "false",
        "MATTERMOST_HOME_CHANNEL": "c1234567890abcdefghijklmno",
        "MATTERMOST_FREE_RESPONSE_CHANNELS": "c1",
    }
    mapped = map_config({"mattermost": {"channel_prompts": {"c1": "be brief"}}}, env)
    assert mapped.config["platforms"]["mattermost"] == {
        "allowed_users": ["a1234567890abcdefghijklmno"],
        "url": "https://chat.example.org",
        "reply_mode": "flat",
        "require_mention": False,
    }
    assert mapped.config["cron"]["home_chats"]["mattermost"] == "c1234567890abcdefghijklmno"
    left = dict(mapped.left)
    assert "require_mention" in left[".env MATTERMOST_FREE_RESPONSE_CHANNELS"]
    assert "mattermost.channel_prompts" in left
    assert "MATTERMOST_TOKEN" not in mapped.env_settings  # stays in .env, read from there


def test_google_chat_settings_come_over():
    env = {
        "GOOGLE_CHAT_HTTP_EVENTS_URL": "https://hermes.example.org/google-chat/events",
        "GOOGLE_CHAT_HTTP_EVENTS_AUDIENCE": "123456789012",
        "GOOGLE_CHAT_SERVICE_ACCOUNT_JSON": "/etc/hermes/key.json",
        "GOOGLE_CHAT_ALLOWED_USERS": "Ann@Example.org",
        "GOOGLE_CHAT_HOME_CHANNEL": "spaces/AAAA",
        "GOOGLE_CHAT_SUBSCRIPTION_NAME": "projects/p/subscriptions/s",
    }
    mapped = map_config({}, env)
    assert mapped.config["platforms"]["google_chat"] == {
        "endpoint_url": "https://hermes.example.org/google-chat/events",
        "project_number": "123456789012",
        "allowed_users": ["ann@example.org"],
    }
    assert mapped.config["cron"]["home_chats"]["google_chat"] == "spaces/AAAA"
    assert "HTTP endpoint" in dict(mapped.left)[".env GOOGLE_CHAT_SUBSCRIPTION_NAME"]
    assert "GOOGLE_CHAT_SERVICE_ACCOUNT_JSON" not in mapped.env_settings


def test_teams_settings_come_over():
    env = {
        "TEAMS_CLIENT_ID": "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b",
        "TEAMS_CLIENT_SECRET": "secret",
        "TEAMS_ALLOWED_USERS": "0b8e7f6a-1111-4c2d-9e3f-123456789abc",
        "TEAMS_HOME_CHANNEL": "a:1personal",
        "TEAMS_PORT": "3978",
    }
    source = {
        "platforms": {"teams": {"extra": {"tenant_id": "72f988bf-86f1-41af-91ab-2d7cd011db47"}}}
    }
    mapped = map_config(source, env)
    assert mapped.config["platforms"]["teams"] == {
        "allowed_users": ["0b8e7f6a-1111-4c2d-9e3f-123456789abc"]
    }
    assert mapped.secrets == {"TEAMS_TENANT_ID": "72f988bf-86f1-41af-91ab-2d7cd011db47"}
    assert mapped.config["cron"]["home_chats"]["teams"] == "a:1personal"
    assert "shared listener" in dict(mapped.left)[".env TEAMS_PORT"]
    assert "TEAMS_CLIENT_SECRET" not in mapped.env_settings


def test_feishu_settings_come_over():
    env = {
        "FEISHU_APP_ID": "cli_a1b2c3d4e5",
        "FEISHU_APP_SECRET": "secret",
        "FEISHU_DOMAIN": "lark",
        "FEISHU_CONNECTION_MODE": "webhook",
        "FEISHU_WEBHOOK_PORT": "8765",
        "FEISHU_ALLOWED_USERS": "ou_7d8a6e6df7621556ce0d21922b676706,e33ggbyz",
        "FEISHU_HOME_CHANNEL": "oc_5ad11d72b830411d72b836c20",
        "FEISHU_REACTIONS": "false",
    }
    source = {"platforms": {"feishu": {"extra": {"encrypt_key": "k", "require_mention": False}}}}
    mapped = map_config(source, env)
    assert mapped.config["platforms"]["feishu"] == {
        "domain": "lark",
        "connection_mode": "webhook",
        "require_mention": False,
        "allowed_users": ["ou_7d8a6e6df7621556ce0d21922b676706", "e33ggbyz"],
    }
    assert mapped.secrets == {"FEISHU_ENCRYPT_KEY": "k"}
    assert mapped.config["cron"]["home_chats"]["feishu"] == "oc_5ad11d72b830411d72b836c20"
    left = dict(mapped.left)
    assert "shared listener" in left[".env FEISHU_WEBHOOK_PORT"]
    assert "reactions" in left[".env FEISHU_REACTIONS"]
    assert "FEISHU_APP_SECRET" not in mapped.env_settings


def test_dingtalk_settings_come_over():
    env = {
        "DINGTALK_CLIENT_ID": "dingabc",
        "DINGTALK_CLIENT_SECRET": "secret",
        "DINGTALK_ALLOWED_USERS": "0145121354681234",
        "DINGTALK_REQUIRE_MENTION": "true",
        "DINGTALK_HOME_CHANNEL": "cidTeam==",
        "DINGTALK_FREE_RESPONSE_CHATS": "cidOther==",
    }
    source = {
        "platforms": {"dingtalk": {"extra": {"robot_code": "dingrobot", "card_template_id": "t"}}}
    }
    mapped = map_config(source, env)
    assert mapped.config["platforms"]["dingtalk"] == {
        "robot_code": "dingrobot",
        "require_mention": True,
        "allowed_users": ["0145121354681234"],
    }
    assert mapped.config["cron"]["home_chats"]["dingtalk"] == "cidTeam=="
    left = dict(mapped.left)
    assert "@" in left[".env DINGTALK_FREE_RESPONSE_CHATS"]
    assert "AI cards" in left["platforms.dingtalk.extra.card_template_id"]
    assert "DINGTALK_CLIENT_SECRET" not in mapped.env_settings


def test_wecom_callback_settings_come_over_as_wecom():
    env = {
        "WECOM_CALLBACK_CORP_ID": "ww0123456789abcdef",
        "WECOM_CALLBACK_CORP_SECRET": "secret",
        "WECOM_CALLBACK_AGENT_ID": "1000002",
        "WECOM_CALLBACK_TOKEN": "token",
        "WECOM_CALLBACK_ENCODING_AES_KEY": "k" * 43,
        "WECOM_CALLBACK_ALLOWED_USERS": "ZhangSan,LiSi",
        "WECOM_CALLBACK_PORT": "8645",
        "WECOM_BOT_ID": "aibot",
    }
    mapped = map_config({}, env)
    assert mapped.config["platforms"]["wecom"] == {
        "corp_id": "ww0123456789abcdef",
        "agent_id": "1000002",
        "allowed_users": ["ZhangSan", "LiSi"],
    }
    left = dict(mapped.left)
    assert "shared listener" in left[".env WECOM_CALLBACK_PORT"]
    assert "AI bot" in left[".env WECOM_BOT_ID"]
    assert "WECOM_CALLBACK_CORP_SECRET" not in mapped.env_settings


def test_qqbot_settings_come_over():
    env = {
        "QQ_APP_ID": "102000000",
        "QQ_CLIENT_SECRET": "secret",
        "QQ_ALLOWED_USERS": "E8B5A0C2F1D3",
        "QQ_GROUP_ALLOWED_USERS": "GROUPMEMBER1",
        "QQ_SANDBOX": "true",
        "QQBOT_HOME_CHANNEL": "E8B5A0C2F1D3",
        "QQ_STT_API_KEY": "k",
    }
    source = {"platforms": {"qqbot": {"extra": {"markdown_support": True}}}}
    mapped = map_config(source, env)
    assert mapped.config["platforms"]["qqbot"] == {
        "allowed_users": ["E8B5A0C2F1D3", "GROUPMEMBER1"],
        "sandbox": True,
    }
    assert mapped.config["cron"]["home_chats"]["qqbot"] == "user:E8B5A0C2F1D3"
    left = dict(mapped.left)
    assert "plain text" in left["platforms.qqbot.extra.markdown_support"]
    assert ".env QQ_ALLOWED_USERS" not in left
    assert "QQ_CLIENT_SECRET" not in mapped.env_settings


def test_personalities_come_over_in_either_shape():
    source = {
        "agent": {
            "personalities": {
                "terse": "Answer in one line.",
                "tutor": {"system_prompt": "Teach step by step."},
                "broken": {"colour": "blue"},
            }
        }
    }
    mapped = map_config(source, {})
    assert mapped.config["agent"]["personalities"] == {
        "terse": "Answer in one line.",
        "tutor": "Teach step by step.",
    }
