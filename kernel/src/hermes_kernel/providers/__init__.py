"""Choosing and running model providers: the ladder, credential pools, fallback, cost."""
