"""How the kernel gets a session's models: from the installed model router (a plugin's)."""
