"""The safety checks every tool path goes through: dangerous-command approval, write
protection and the environment commands get. They catch mistakes, not adversaries: the
operating system (a container, a separate account) is the real boundary."""
