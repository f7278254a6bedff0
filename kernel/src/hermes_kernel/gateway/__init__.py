"""The gateway: one long-running process that hosts chat platform plugins and owns their
sessions (``hermes gateway run``)."""
