"""The server's configuration: `Settings` (environment variables prefixed `COMPACT_`;
model.py), its declarations by subject (storage, counting, summaries, providers, jobs,
toolkit, limits, serving, proxy), the settings declared beside request models' fields
(declared.py), the variables behind them (names.py), and how they are read (sources.py)."""

from app.settings.model import Settings

__all__ = ["Settings"]
