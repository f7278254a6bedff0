"""The default of each kernel setting that code outside the section models also needs, once.

The section models (:mod:`hermes_kernel.config.model`, which needs pydantic and is imported
only to validate) declare their defaults from here, and the code that reads a setting from
config.yaml, or runs without one (an engine in a test, a policy built by hand), uses the same
name. Plain values: importing this costs nothing at start-up. A test fails when a kernel
module writes one of these values again (``kernel/tests/test_defaults.py``).
"""

from __future__ import annotations

from typing import Final

from hermes_sdk import models

AGENT_MAX_ITERATIONS: Final = 90
"""``agent.max_iterations``: model calls in one turn before it stops."""
AGENT_RETRIES: Final = 3
"""``agent.retries``: attempts per provider before falling back."""
AGENT_GOAL_TURNS: Final = 20
"""Turns a ``/goal`` may take on its own before it pauses."""
TOOLS_TIMEOUT_SECONDS: Final = 300.0
"""``tools.timeout_seconds``: one tool call's deadline, unless the tool sets its own."""
MODEL_TIMEOUT_SECONDS: Final = models.MODEL_TIMEOUT_SECONDS
"""``model.timeout_seconds``: one model request's deadline (the SDK's, which a provider
plugin reading the section uses too)."""
APPROVALS_MODE: Final = "manual"
"""``approvals.mode``: ask the user before a dangerous command runs."""
APPROVALS_TIMEOUT_SECONDS: Final = 120.0
"""``approvals.timeout_seconds``: a question unanswered this long is denied."""
PLUGINS_LOAD_TIMEOUT_SECONDS: Final = 10.0
"""``plugins.load_timeout_seconds``: importing and registering one plugin."""
PLUGINS_HOOK_TIMEOUT_SECONDS: Final = 5.0
"""``plugins.hook_timeout_seconds``: one plugin's hook call while the agent runs."""
PLUGINS_STRICT: Final = False
"""``plugins.strict``: a plugin failure is a warning, not an error."""
TERMINAL_SHARE_BACKEND: Final = False
"""``terminal.share_backend``: each session gets a backend of its own."""
LEARNING_REVIEW: Final = True
"""``learning.review``: review a turn worth learning from, in the background."""
LEARNING_REVIEW_MIN_TOOL_CALLS: Final = 5
"""``learning.review_min_tool_calls``: tool calls in one turn that make it worth a review."""
LEARNING_NUDGE_EVERY_TURNS: Final = 10
"""``learning.nudge_every_turns``: user turns between periodic reviews."""
COMPRESSION_ENGINE: Final = "summary"
"""``compression.engine``: the context engine that writes summaries."""
COMPRESSION_THRESHOLD: Final = 0.5
"""``compression.threshold``: share of the window past which the view is compacted."""
COMPRESSION_PROTECT_LAST_N: Final = 20
"""``compression.protect_last_n``: latest messages kept word for word."""
COMPRESSION_KEEP_RECENT_TOKENS: Final = 2000
"""``compression.keep_recent_tokens``: tokens of the latest messages kept at least."""
COMPRESSION_UNATTENDED_THRESHOLD: Final = 0.85
"""``compression.unattended_threshold``: where nobody can /compact."""
LOGGING_LEVEL: Final = "INFO"
"""``logging.level``: agent.log keeps records from this level up."""
LOGGING_CONTENT: Final = False
"""``logging.content``: activity lines say what happened, not what was said."""
STORE_POOL_SIZE: Final = 8
"""``store.pool_size``: connections this process keeps to a database server."""
