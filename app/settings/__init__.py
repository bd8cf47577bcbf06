"""The server's configuration: `Settings` (environment variables prefixed `COMPACT_`), the
names behind them, and how they are read."""

from app.settings.model import Settings

__all__ = ["Settings"]
