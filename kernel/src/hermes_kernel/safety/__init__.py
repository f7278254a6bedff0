"""The safety mechanisms every tool path goes through: the approval gate (its command rules
are a plugin's), write protection for Hermes's own files, and the environment commands get.
They catch mistakes, not adversaries: the operating system (a container, a separate
account) is the real boundary."""
