"""What tools reach through their ToolContext: the session's terminal backend behind the
safety checks, and the user."""
