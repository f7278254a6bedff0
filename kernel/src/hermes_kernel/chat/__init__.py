"""The CLI chat: one-shot and interactive shells over the turn engine."""
