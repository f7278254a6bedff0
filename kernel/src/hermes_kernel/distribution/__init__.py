"""Installing plugins: the catalog, the environment's installer, and verified transactions."""
