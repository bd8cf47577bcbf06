"""Durable file writes and careful reads, shared by the stores that keep one JSON file per
record (archives, jobs, compaction records, seen times).

A write is atomic and durable before it returns: a unique temp file in the same directory,
fsync it, `os.replace` it onto the final name, fsync the directory. A failed fsync is never
retried (the page cache may already have dropped the data): the caller writes again.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import time

# A temp file this old belongs to no running write: its writer was killed (SIGKILL, power
# loss) between creating it and the rename. Younger ones may be another worker's write.
STALE_TEMP_SECONDS = 3600.0

DIR_MODE = 0o700
FILE_MODE = 0o600
WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
_DIR_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY


def errno_name(exc: OSError) -> str:
    if exc.errno is None:
        return type(exc).__name__
    return errno.errorcode.get(exc.errno, f"errno {exc.errno}")


def close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def fsync_dir(path: str) -> None:
    fd = os.open(path, _DIR_FLAGS)
    try:
        os.fsync(fd)
    finally:
        close_quietly(fd)


def ensure_dir(path: str, parent: str) -> None:
    """Creates `path` (mode 0700) and makes its entry in `parent` durable."""
    if os.path.isdir(path):
        return
    os.makedirs(path, mode=DIR_MODE, exist_ok=True)
    fsync_dir(parent)


def ensure_dirs(root: str, *names: str) -> str:
    """Creates `root/names[0]/names[1]/...` one level at a time, each entry made durable in
    its parent; the deepest directory."""
    path = root
    for name in names:
        parent, path = path, os.path.join(path, name)
        ensure_dir(path, parent)
    return path


def temp_path(directory: str, name: str) -> str:
    return os.path.join(directory, f".{name}.{secrets.token_hex(8)}.tmp")


def is_temp_name(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")


def remove_stale_temps(directory: str, older_than: float = STALE_TEMP_SECONDS) -> list[str]:
    """Deletes the temp files left in `directory` by killed writers; the names removed.
    Final names are never touched: a temp file is never visible under one."""
    cutoff = time.time() - older_than
    removed: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        try:
            if (
                is_temp_name(entry.name)
                and entry.is_file(follow_symlinks=False)
                and entry.stat(follow_symlinks=False).st_mtime <= cutoff
            ):
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            continue
    return sorted(removed)


def final_names(directory: str, suffix: str) -> list[str]:
    """The sorted names in `directory` that end in `suffix`, temp files left out; [] when
    the directory does not exist yet. Raises OSError when it cannot be listed."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.endswith(suffix) and not n.startswith("."))


def write_temp(path: str, data: bytes) -> None:
    """Writes a new file (never an existing one) and fsyncs it."""
    fd = os.open(path, WRITE_FLAGS, FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(errno.EIO, "short write")
            view = view[written:]
        os.fsync(fd)
    except OSError:
        close_quietly(fd)
        raise
    os.close(fd)


def replace_durably(directory: str, name: str, data: bytes) -> None:
    """Writes `directory/name` atomically, replacing any previous version. Raises OSError
    with the temp file removed."""
    temp = temp_path(directory, name)
    try:
        write_temp(temp, data)
        os.replace(temp, os.path.join(directory, name))
    except OSError:
        unlink_quietly(temp)
        raise
    fsync_dir(directory)


def read_regular(path: str) -> bytes | None:
    """The file's bytes, or None when it is not a regular file (FIFO, device, dir)."""
    fd = os.open(path, _READ_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        close_quietly(fd)
