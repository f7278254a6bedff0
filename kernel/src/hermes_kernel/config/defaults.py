"""The default of each kernel setting that code outside the section models also needs, once.

The section models (:mod:`hermes_kernel.config.model`, which needs pydantic and is imported
only to validate) declare their defaults from here, and the code that reads a setting from
config.yaml, or runs without one (an engine in a test, a policy built by hand), uses the same
name. Plain values: importing this costs nothing at start-up. A test fails when a kernel
module writes one of these values again (``kernel/tests/test_defaults.py``).
"""

from __future__ import annotations

from typing import Final

AGENT_MAX_ITERATIONS: Final = 90
"""``agent.max_iterations``: model calls in one turn before it stops."""
AGENT_RETRIES: Final = 3
"""``agent.retries``: attempts per provider before falling back."""
TOOLS_TIMEOUT_SECONDS: Final = 300.0
"""``tools.timeout_seconds``: one tool call's deadline, unless the tool sets its own."""
MODEL_TIMEOUT_SECONDS: Final = 120.0
"""``model.timeout_seconds``: one model request's deadline."""
APPROVALS_MODE: Final = "manual"
"""``approvals.mode``: ask the user before a dangerous command runs."""
APPROVALS_TIMEOUT_SECONDS: Final = 120.0
"""``approvals.timeout_seconds``: a question unanswered this long is denied."""
