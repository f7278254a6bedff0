"""The ``hermes`` command: a small click group whose subcommands load on demand."""
