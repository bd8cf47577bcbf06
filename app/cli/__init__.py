"""The command line's `count` and `compact`: the input read as the API reads a body
(`reading`), each command in its own module (`count`, `compact`). No face: each command
imports only the module it needs, so that both start fast."""
