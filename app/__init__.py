"""Context Compact: a compaction sidecar for LLM agents."""

__version__ = "0.1.0"
