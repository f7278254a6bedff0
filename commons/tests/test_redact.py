import pytest

from hermes_commons.redact import REDACTED, is_secret_key, redact_data, redact_text


def test_secret_keys_by_name():
    for key in [
        "api_key",
        "OPENAI_API_KEY",
        "apiKey",
        "bot_token",
        "password",
        "client_secret",
        "privateKey",
    ]:
        assert is_secret_key(key), key
    for key in ["max_tokens", "api_key_env", "token_budget", "model", "keyboard", "author"]:
        assert not is_secret_key(key), key


def test_token_shapes_and_known_values_are_redacted_from_text():
    text = "key sk-abcdefghijklmnopqrstuv and bot 123456789:AAE-abcdefghijklmnopqrstuvwxyz12345 and hunter22"
    out = redact_text(text, ["hunter22", "abc"])
    assert "sk-abc" not in out and "AAE-" not in out and "hunter22" not in out
    assert out.count(REDACTED) == 3
    assert "and" in out, "short secret values would redact ordinary words, so they are skipped"


def test_nested_data_keeps_shape():
    data = {
        "telegram": {"bot_token": "x", "allowed": [1, 2]},
        "providers": [{"api_key": "k", "url": "u"}],
        "max_tokens": 5,
    }
    assert redact_data(data) == {
        "telegram": {"bot_token": REDACTED, "allowed": [1, 2]},
        "providers": [{"api_key": REDACTED, "url": "u"}],
        "max_tokens": 5,
    }


def test_bearer_headers_and_aws_secret_keys_are_redacted() -> None:
    from hermes_commons.redact import redact_text

    text = (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
        "id ASIAIOSFODNN7EXAMPLE"
    )
    redacted = redact_text(text)
    assert "eyJhbGci" not in redacted and "wJalrXUtnFEMI" not in redacted
    assert "ASIAIOSFODNN7EXAMPLE" not in redacted


def test_credentials_written_as_parameters_are_redacted():
    text = "GET /v1?token=abc123secret&q=1 failed; api_key=live-4242 password=correcthorse key=1"
    out = redact_text(text)
    for secret in ("abc123secret", "live-4242", "correcthorse"):
        assert secret not in out
    assert "q=1" in out and "key=1" in out  # short values are ordinary words


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("DB_PASSWORD=hunter22", "DB_PASSWORD=<redacted>"),
        ("export STRIPE_SECRET=abcdxyz", "export STRIPE_SECRET=<redacted>"),
        ('{"api_key": "abcd1234"}', '{"api_key": "<redacted>"}'),
        ("postgres://app:s3cret@db:5432/x", "postgres://app:<redacted>@db:5432/x"),
        (
            "PATH=/bin\x00DB_PASS=xyz12345\x00HOME=/root",
            "PATH=/bin\x00DB_PASS=<redacted>\x00HOME=/root",
        ),
        ("max_tokens: 4096", "max_tokens: 4096"),
        ("password: ${DB_PASSWORD}", "password: ${DB_PASSWORD}"),
        ("https://github.com/a/b", "https://github.com/a/b"),
    ],
)
def test_password_lines_url_credentials_and_environ_are_redacted(text: str, redacted: str) -> None:
    """Issue 62: ``DB_PASSWORD=`` lines, credentials in URLs and ``/proc/$PPID/environ``."""
    assert redact_text(text) == redacted


def test_a_secret_in_a_url_is_hidden_in_httpxs_lines_as_written_and_encoded() -> None:
    import logging

    from hermes_commons.redact import HiddenInHttpLogs

    hide = HiddenInHttpLogs("p@ss w+rd").attach()
    try:
        seen: list[str] = []

        class Keep(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                seen.append(record.getMessage())

        logger = logging.getLogger("httpx")
        keep, level = Keep(), logger.level
        logger.addHandler(keep)
        logger.setLevel(logging.INFO)
        try:
            logger.info("HTTP Request: GET http://mac:1234/api?password=%s", "p%40ss+w%2Brd")
            logger.info("HTTP Request: GET http://mac:1234/api?password=%s", "p%40ss%20w%2Brd")
            logger.info("said p@ss w+rd out loud")
        finally:
            logger.removeHandler(keep)
            logger.setLevel(level)
    finally:
        hide.detach()
    assert not any("p%40ss" in line or "p@ss" in line for line in seen)
    assert all("<redacted>" in line for line in seen)
