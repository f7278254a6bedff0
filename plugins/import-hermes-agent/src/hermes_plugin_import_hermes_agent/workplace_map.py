"""hermes-agent's settings for the workplace platforms (IRC ...), as Hermes writes them.

hermes-agent reads each from .env first, then ``platforms.NAME.extra`` in config.yaml;
Hermes keeps behaviour in ``platforms.NAME`` and secrets in .env under hermes-agent's own
names, where the platform plugins read them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol


class _Out(Protocol):
    @property
    def env_settings(self) -> set[str]: ...

    @property
    def left(self) -> list[tuple[str, str]]: ...


class _Mapper(Protocol):
    """What these mappings use of the config mapper (config_map's), named here so this
    module imports nothing of the module that calls it."""

    @property
    def env(self) -> Mapping[str, str]: ...

    @property
    def out(self) -> _Out: ...

    def take(self, path: str) -> Any: ...

    def put(self, target: str, value: Any, source: str) -> None: ...

    def from_env(self, name: str, target: str, convert: Callable[[str], Any] = str) -> None: ...

    def secret(self, name: str, value: str, source: str) -> str: ...

    def allow(self, platform: str, users: str, source: str) -> None: ...


__all__ = ["dingtalk", "feishu", "google_chat", "irc", "mattermost", "qqbot", "teams", "wecom"]


def _setting(mapper: _Mapper, platform: str, key: str, variable: str) -> tuple[Any, str]:
    """hermes-agent's value and where it was: .env, else ``platforms.NAME.extra.KEY``."""
    path = f"platforms.{platform}.extra.{key}"
    kept = mapper.take(path)
    value = mapper.env.get(variable, "").strip()
    if value:
        mapper.out.env_settings.add(variable)
        if kept not in (None, ""):
            mapper.out.left.append((path, f"hermes-agent used .env {variable} instead"))
        return value, f".env {variable}"
    return (kept, path) if kept not in (None, "") else (None, "")


def irc(mapper: _Mapper) -> None:
    """IRC_SERVER, IRC_PORT, IRC_NICKNAME, IRC_CHANNEL and IRC_USE_TLS (or their
    ``extra`` keys) become ``platforms.irc``; the passwords stay secrets in .env
    (IRC_SERVER_PASSWORD, IRC_NICKSERV_PASSWORD)."""
    ours = "platforms.irc"
    for key, variable, target in (
        ("server", "IRC_SERVER", "server"),
        ("nickname", "IRC_NICKNAME", "nick"),
    ):
        value, where = _setting(mapper, "irc", key, variable)
        if value is not None:
            mapper.put(f"{ours}.{target}", str(value), where)
    port, where = _setting(mapper, "irc", "port", "IRC_PORT")
    if port is not None and str(port).isdigit():
        mapper.put(f"{ours}.port", int(port), where)
    channels, where = _setting(mapper, "irc", "channel", "IRC_CHANNEL")
    if channels is not None:
        names = [c.strip() for c in str(channels).split(",") if c.strip()]
        mapper.put(f"{ours}.channels", names, where)
    tls, where = _setting(mapper, "irc", "use_tls", "IRC_USE_TLS")
    if tls is not None:
        on = tls is True or str(tls).strip().lower() in ("1", "true", "yes", "on")
        mapper.put(f"{ours}.tls", "tls" if on else "none", where)
    for key, variable in (
        ("server_password", "IRC_SERVER_PASSWORD"),
        ("nickserv_password", "IRC_NICKSERV_PASSWORD"),
    ):
        value = mapper.take(f"platforms.irc.extra.{key}")
        if value and not mapper.env.get(variable, "").strip():
            mapper.secret(variable, str(value), f"platforms.irc.extra.{key}")
    allowed = mapper.take("platforms.irc.extra.allowed_users")
    if isinstance(allowed, list) and allowed and not mapper.env.get("IRC_ALLOWED_USERS"):
        mapper.allow("irc", ",".join(str(nick) for nick in allowed), "platforms.irc.extra")
    if mapper.take("platforms.irc.extra.max_message_length") is not None:
        mapper.out.left.append(
            (
                "platforms.irc.extra.max_message_length",
                "Hermes cuts lines by the server's 512-byte limit and the address it relays",
            )
        )
    # Lower case, as the platform names chats (IRC compares names in any case).
    mapper.from_env("IRC_HOME_CHANNEL", "cron.home_chats.irc", lambda name: name.lower())


def mattermost(mapper: _Mapper) -> None:
    """MATTERMOST_URL, MATTERMOST_REPLY_MODE (``off`` is flat), MATTERMOST_REQUIRE_MENTION
    (or ``mattermost.require_mention``) become ``platforms.mattermost``; the token stays in
    .env (MATTERMOST_TOKEN)."""
    ours = "platforms.mattermost"
    mapper.from_env("MATTERMOST_URL", f"{ours}.url")
    mapper.from_env("MATTERMOST_REPLY_MODE", f"{ours}.reply_mode", _reply_mode)
    if mapper.env.get("MATTERMOST_URL", "").strip() and "MATTERMOST_REPLY_MODE" not in mapper.env:
        # hermes-agent's default was flat; Hermes's is threads: keep what its users had.
        mapper.put(f"{ours}.reply_mode", "flat", "hermes-agent's default reply mode (off)")
    mention, where = _setting(mapper, "mattermost", "require_mention", "MATTERMOST_REQUIRE_MENTION")
    yaml_mention = mapper.take("mattermost.require_mention")
    if mention is None and yaml_mention is not None:
        mention, where = yaml_mention, "mattermost.require_mention"
    if mention is not None:
        on = mention is True or str(mention).strip().lower() not in ("false", "0", "no", "off")
        mapper.put(f"{ours}.require_mention", on, where)
    mapper.from_env("MATTERMOST_HOME_CHANNEL", "cron.home_chats.mattermost")
    for name, why in (
        ("MATTERMOST_FREE_RESPONSE_CHANNELS", "set require_mention: false to answer every post"),
        ("MATTERMOST_ALLOWED_CHANNELS", "Hermes answers in every channel the bot is added to"),
        ("MATTERMOST_HOME_CHANNEL_THREAD_ID", "scheduled jobs post at the top of the channel"),
        ("MATTERMOST_PROXY", "Hermes connects to the server directly"),
    ):
        if mapper.env.get(name, "").strip():
            mapper.out.env_settings.add(name)
            mapper.out.left.append((f".env {name}", why))
    for key in ("free_response_channels", "allowed_channels", "channel_prompts"):
        if mapper.take(f"mattermost.{key}") is not None:
            mapper.out.left.append((f"mattermost.{key}", "Hermes has no such Mattermost setting"))


def _reply_mode(value: str) -> str:
    return "flat" if value.strip().lower() in ("off", "flat", "") else "thread"


def google_chat(mapper: _Mapper) -> None:
    """GOOGLE_CHAT_HTTP_EVENTS_URL (the HTTP endpoint app's URL) and, when it is a project
    number, GOOGLE_CHAT_HTTP_EVENTS_AUDIENCE become ``platforms.google_chat``; the service
    account key stays in .env (GOOGLE_CHAT_SERVICE_ACCOUNT_JSON). hermes-agent's Pub/Sub
    mode has no equivalent: Hermes is an HTTP endpoint app."""
    ours = "platforms.google_chat"
    url, where = _setting(mapper, "google_chat", "http_events_url", "GOOGLE_CHAT_HTTP_EVENTS_URL")
    if url is not None:
        mapper.put(f"{ours}.endpoint_url", str(url), where)
        mapper.out.left.append(
            (
                where,
                "hermes-agent took events on its API server's port; here they come to the "
                "gateway's listener (gateway.http_port) at this URL's path: point your proxy "
                "there",
            )
        )
    audience, where = _setting(
        mapper, "google_chat", "http_events_audience", "GOOGLE_CHAT_HTTP_EVENTS_AUDIENCE"
    )
    if audience is not None and str(audience).strip().isdigit():
        mapper.put(f"{ours}.project_number", str(audience).strip(), where)
    elif audience is not None and str(audience).strip() != str(url or "").strip():
        mapper.out.left.append(
            (where, "Hermes takes the endpoint URL itself or a project number as the audience")
        )
    mapper.from_env("GOOGLE_CHAT_HOME_CHANNEL", "cron.home_chats.google_chat")
    # Its own: the shared PLATFORM_ENV pattern reads one word before _ALLOWED_USERS.
    users = mapper.env.get("GOOGLE_CHAT_ALLOWED_USERS", "")
    if users.strip():
        mapper.out.env_settings.add("GOOGLE_CHAT_ALLOWED_USERS")
        everyone = mapper.env.get("GATEWAY_ALLOWED_USERS", "")
        emails = ",".join(u.strip().lower() for u in f"{users},{everyone}".split(","))
        mapper.allow("google_chat", emails, ".env GOOGLE_CHAT_ALLOWED_USERS")
    if mapper.env.get("GOOGLE_CHAT_ALLOW_ALL_USERS", "").strip().lower() in ("1", "true", "yes"):
        mapper.out.env_settings.add("GOOGLE_CHAT_ALLOW_ALL_USERS")
        mapper.put(f"{ours}.allow_all", True, ".env GOOGLE_CHAT_ALLOW_ALL_USERS")
    pubsub = [
        name
        for name in ("GOOGLE_CHAT_SUBSCRIPTION_NAME", "GOOGLE_CHAT_SUBSCRIPTION")
        if mapper.env.get(name, "").strip()
    ]
    for name in pubsub:
        mapper.out.env_settings.add(name)
        mapper.out.left.append(
            (
                f".env {name}",
                "Hermes is an HTTP endpoint Chat app, not a Pub/Sub one: set the app's HTTP "
                "endpoint URL to the gateway's listener and platforms.google_chat.endpoint_url",
            )
        )
    if mapper.env.get("GOOGLE_CHAT_HTTP_EVENTS_SERVICE_ACCOUNT_EMAIL", "").strip():
        mapper.out.env_settings.add("GOOGLE_CHAT_HTTP_EVENTS_SERVICE_ACCOUNT_EMAIL")
        mapper.out.left.append(
            (
                ".env GOOGLE_CHAT_HTTP_EVENTS_SERVICE_ACCOUNT_EMAIL",
                "Hermes accepts only Google Chat's own account (chat@system.gserviceaccount.com)",
            )
        )


def teams(mapper: _Mapper) -> None:
    """TEAMS_CLIENT_ID and TEAMS_TENANT_ID stay in .env with TEAMS_CLIENT_SECRET, where the
    teams platform reads them (from ``platforms.teams.extra``, they are moved there);
    TEAMS_PORT is left: the Bot Connector reaches the gateway's shared listener."""
    ours = "platforms.teams"
    for key, variable in (
        ("client_id", "TEAMS_CLIENT_ID"),
        ("client_secret", "TEAMS_CLIENT_SECRET"),
        ("tenant_id", "TEAMS_TENANT_ID"),
    ):
        value = mapper.take(f"{ours}.extra.{key}")
        if value and not mapper.env.get(variable, "").strip():
            mapper.secret(variable, str(value), f"{ours}.extra.{key}")
    service, where = _setting(mapper, "teams", "service_url", "TEAMS_SERVICE_URL")
    if service is not None:
        mapper.put(f"{ours}.service_url", str(service), where)
    mapper.from_env("TEAMS_HOME_CHANNEL", "cron.home_chats.teams")
    port, where = _setting(mapper, "teams", "port", "TEAMS_PORT")
    if port is not None:
        mapper.out.left.append(
            (
                where,
                "the Bot Connector reaches the gateway's shared listener: point the Azure Bot's "
                "messaging endpoint at gateway.http_port, path /api/messages",
            )
        )


def feishu(mapper: _Mapper) -> None:
    """FEISHU_DOMAIN, FEISHU_CONNECTION_MODE, FEISHU_WEBHOOK_PATH and FEISHU_REQUIRE_MENTION
    (or their ``extra`` keys) become ``platforms.feishu``; the app's credentials and the
    callbacks' keys stay in .env (from ``extra``, they are moved there). hermes-agent's
    own callback listener (host and port) becomes the gateway's shared one."""
    ours = "platforms.feishu"
    for key, variable in (
        ("app_id", "FEISHU_APP_ID"),
        ("app_secret", "FEISHU_APP_SECRET"),
        ("encrypt_key", "FEISHU_ENCRYPT_KEY"),
        ("verification_token", "FEISHU_VERIFICATION_TOKEN"),
    ):
        value = mapper.take(f"{ours}.extra.{key}")
        if value and not mapper.env.get(variable, "").strip():
            mapper.secret(variable, str(value), f"{ours}.extra.{key}")
    for key, variable, target in (
        ("domain", "FEISHU_DOMAIN", "domain"),
        ("connection_mode", "FEISHU_CONNECTION_MODE", "connection_mode"),
        ("webhook_path", "FEISHU_WEBHOOK_PATH", "webhook_path"),
    ):
        value, where = _setting(mapper, "feishu", key, variable)
        if value is not None:
            mapper.put(f"{ours}.{target}", str(value).strip(), where)
    mention, where = _setting(mapper, "feishu", "require_mention", "FEISHU_REQUIRE_MENTION")
    if mention is not None:
        on = mention is True or str(mention).strip().lower() not in ("false", "0", "no", "off")
        mapper.put(f"{ours}.require_mention", on, where)
    mapper.from_env("FEISHU_HOME_CHANNEL", "cron.home_chats.feishu")
    for key, variable in (
        ("webhook_host", "FEISHU_WEBHOOK_HOST"),
        ("webhook_port", "FEISHU_WEBHOOK_PORT"),
    ):
        _, where = _setting(mapper, "feishu", key, variable)
        if where:
            mapper.out.left.append(
                (
                    where,
                    "callbacks come to the gateway's shared listener (gateway.http_host, "
                    "gateway.http_port) at platforms.feishu.webhook_path",
                )
            )
    for variable, why in (
        ("FEISHU_GROUP_POLICY", "groups answer a mention of the bot from someone allowed"),
        ("FEISHU_ALLOW_BOTS", "Hermes never answers other bots (no loops)"),
        ("FEISHU_REACTIONS", "Hermes adds no reactions while it works"),
    ):
        if mapper.env.get(variable, "").strip():
            mapper.out.env_settings.add(variable)
            mapper.out.left.append((f".env {variable}", why))
    for key in ("group_rules", "default_group_policy", "admins"):
        if mapper.take(f"{ours}.extra.{key}") is not None:
            mapper.out.left.append(
                (f"{ours}.extra.{key}", "Hermes has no per-group rules for Feishu")
            )


def dingtalk(mapper: _Mapper) -> None:
    """DINGTALK_REQUIRE_MENTION and ``robot_code`` (or their ``extra`` keys) become
    ``platforms.dingtalk``; the credentials stay in .env (from ``extra``, they are moved
    there). The group filters are left: DingTalk sends a robot only what @s it."""
    ours = "platforms.dingtalk"
    for key, variable in (
        ("client_id", "DINGTALK_CLIENT_ID"),
        ("client_secret", "DINGTALK_CLIENT_SECRET"),
    ):
        value = mapper.take(f"{ours}.extra.{key}")
        if value and not mapper.env.get(variable, "").strip():
            mapper.secret(variable, str(value), f"{ours}.extra.{key}")
    robot = mapper.take(f"{ours}.extra.robot_code")
    if robot:
        mapper.put(f"{ours}.robot_code", str(robot), f"{ours}.extra.robot_code")
    mention, where = _setting(mapper, "dingtalk", "require_mention", "DINGTALK_REQUIRE_MENTION")
    if mention is not None:
        on = mention is True or str(mention).strip().lower() not in ("false", "0", "no", "off")
        mapper.put(f"{ours}.require_mention", on, where)
    mapper.from_env("DINGTALK_HOME_CHANNEL", "cron.home_chats.dingtalk")
    for key, variable, why in (
        ("free_response_chats", "DINGTALK_FREE_RESPONSE_CHATS", _DINGTALK_MENTIONS),
        (
            "allowed_chats",
            "DINGTALK_ALLOWED_CHATS",
            "Hermes answers in every group the robot is in",
        ),
        ("mention_patterns", "DINGTALK_MENTION_PATTERNS", _DINGTALK_MENTIONS),
        (
            "webhook_url",
            "DINGTALK_WEBHOOK_URL",
            "scheduled jobs reach DingTalk through the gateway",
        ),
    ):
        _, where = _setting(mapper, "dingtalk", key, variable)
        if where:
            mapper.out.left.append((where, why))
    if mapper.take(f"{ours}.extra.card_template_id") is not None:
        mapper.out.left.append(
            (f"{ours}.extra.card_template_id", "Hermes does not stream replies into AI cards yet")
        )


_DINGTALK_MENTIONS = "DingTalk sends a robot only the group messages that @ it"


def wecom(mapper: _Mapper) -> None:
    """hermes-agent's ``wecom_callback`` (a self-built app) is Hermes's ``wecom``: the corp
    and agent ids become ``platforms.wecom``; the secret, token and AES key stay in .env
    (from ``extra``, they are moved there). Its own listener (host, port) becomes the
    gateway's; its AI bot mode (``wecom``, a WebSocket) has no equivalent."""
    ours, theirs = "platforms.wecom", "platforms.wecom_callback"
    for key, variable, target in (
        ("corp_id", "WECOM_CALLBACK_CORP_ID", "corp_id"),
        ("agent_id", "WECOM_CALLBACK_AGENT_ID", "agent_id"),
    ):
        value, where = _setting(mapper, "wecom_callback", key, variable)
        if value is not None:
            mapper.put(f"{ours}.{target}", str(value).strip(), where)
    path = mapper.take(f"{theirs}.extra.path")
    if path:
        mapper.put(f"{ours}.callback_path", str(path), f"{theirs}.extra.path")
    for key, variable in (
        ("corp_secret", "WECOM_CALLBACK_CORP_SECRET"),
        ("token", "WECOM_CALLBACK_TOKEN"),
        ("encoding_aes_key", "WECOM_CALLBACK_ENCODING_AES_KEY"),
    ):
        value = mapper.take(f"{theirs}.extra.{key}")
        if value and not mapper.env.get(variable, "").strip():
            mapper.secret(variable, str(value), f"{theirs}.extra.{key}")
    users = mapper.env.get("WECOM_CALLBACK_ALLOWED_USERS", "")
    if users.strip():
        mapper.out.env_settings.add("WECOM_CALLBACK_ALLOWED_USERS")
        everyone = mapper.env.get("GATEWAY_ALLOWED_USERS", "")
        mapper.allow("wecom", f"{users},{everyone}", ".env WECOM_CALLBACK_ALLOWED_USERS")
    if mapper.env.get("WECOM_CALLBACK_ALLOW_ALL_USERS", "").strip().lower() in ("1", "true", "yes"):
        mapper.out.env_settings.add("WECOM_CALLBACK_ALLOW_ALL_USERS")
        mapper.put(f"{ours}.allow_all", True, ".env WECOM_CALLBACK_ALLOW_ALL_USERS")
    for key, variable in (("host", "WECOM_CALLBACK_HOST"), ("port", "WECOM_CALLBACK_PORT")):
        _, where = _setting(mapper, "wecom_callback", key, variable)
        if where:
            mapper.out.left.append(
                (where, "callbacks come to the gateway's shared listener (gateway.http_port)")
            )
    if mapper.take(f"{theirs}.extra.apps") is not None:
        mapper.out.left.append((f"{theirs}.extra.apps", "Hermes serves one WeCom app"))
    for variable in ("WECOM_BOT_ID", "WECOM_SECRET", "WECOM_WEBSOCKET_URL"):
        if mapper.env.get(variable, "").strip():
            mapper.out.env_settings.add(variable)
            mapper.out.left.append(
                (
                    f".env {variable}",
                    "Hermes joins WeCom as a self-built app (callbacks), not as an AI bot: "
                    "see docs/user/wecom.md",
                )
            )


def qqbot(mapper: _Mapper) -> None:
    """QQ_SANDBOX and QQ_GROUP_ALLOWED_USERS join ``platforms.qqbot`` (QQ_ALLOWED_USERS comes
    with every platform's allowlist); the credentials stay in .env (from ``extra``, they are
    moved there). The home chat (an openid) is a direct chat's."""
    ours = "platforms.qqbot"
    for key, variable in (("app_id", "QQ_APP_ID"), ("client_secret", "QQ_CLIENT_SECRET")):
        value = mapper.take(f"{ours}.extra.{key}")
        if value and not mapper.env.get(variable, "").strip():
            mapper.secret(variable, str(value), f"{ours}.extra.{key}")
    if mapper.env.get("QQ_SANDBOX", "").strip().lower() in ("1", "true", "yes", "on"):
        mapper.out.env_settings.add("QQ_SANDBOX")
        mapper.put(f"{ours}.sandbox", True, ".env QQ_SANDBOX")
    groups = mapper.env.get("QQ_GROUP_ALLOWED_USERS", "")
    if groups.strip():  # with the direct ones: one list, as QQ's ids differ by place
        mapper.out.env_settings.add("QQ_GROUP_ALLOWED_USERS")
        direct = mapper.env.get("QQ_ALLOWED_USERS", "")
        everyone = mapper.env.get("GATEWAY_ALLOWED_USERS", "")
        users = f"{direct},{groups},{everyone}"
        mapper.allow("qqbot", users, ".env QQ_ALLOWED_USERS, QQ_GROUP_ALLOWED_USERS")
    for variable in ("QQBOT_HOME_CHANNEL", "QQ_HOME_CHANNEL"):
        home = mapper.env.get(variable, "").strip()
        if home:
            mapper.out.env_settings.add(variable)
            chat = home if ":" in home else f"user:{home}"
            mapper.put("cron.home_chats.qqbot", chat, f".env {variable}")
            break
    for key, why in (
        ("markdown_support", "QQ's Markdown is by invitation: Hermes sends plain text"),
        ("stt", "voice is transcribed by Hermes's own speech-to-text (media.md)"),
        ("dm_policy", "strangers get a pairing code; allowed_users lets people in"),
        ("group_policy", "groups answer an @ from someone allowed"),
    ):
        if mapper.take(f"{ours}.extra.{key}") is not None:
            mapper.out.left.append((f"{ours}.extra.{key}", why))
    for variable in ("QQ_STT_API_KEY", "QQ_STT_BASE_URL", "QQ_STT_MODEL"):
        if mapper.env.get(variable, "").strip():
            mapper.out.env_settings.add(variable)
            mapper.out.left.append(
                (f".env {variable}", "voice is transcribed by Hermes's own speech-to-text")
            )
