"""Configuration: HERMES_HOME, config.yaml (behaviour), .env (secrets) and their precedence."""
