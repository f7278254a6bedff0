"""The turn engine: one loop of model calls and tool rounds, persisted before it acts."""
