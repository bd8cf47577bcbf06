"""Converters that turn public agent sessions into the replay corpus's format.

Each module reads one agent's documented export format (Cursor's SpecStory markdown,
aider's chat history, Roo Code's task export, Claude Code's console transcript, Gemini
CLI's chat export) and yields the session as a `session.Transcript`; `build` fetches the
sources named in `SOURCES.md` and writes both shapes to a directory outside the repository
(`/work/corpus-wide/` by default). The harness's own text stays as the agent saw it.
"""
