"""The work-directory sandbox: reads the files an agent named, and nothing outside the root.

The agent writes every path string, and the tree may change while we read it (a file
swapped for a symlink between a check and an open). So nothing is checked by name and
then opened by name: the kernel resolves the path beneath a descriptor of the root, either
in one `openat2(RESOLVE_BENEATH)` call or, where that syscall is refused (old kernel,
seccomp), one component at a time with `O_NOFOLLOW`, which refuses every symlink.

`..` is resolved lexically before opening, so `a/../b.py` reads `b.py` even when `a` is a
symlink; a `..` that would climb above the root is refused without touching the disk.
Backslashes and `%2e` are ordinary filename characters on Linux and are never decoded.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat
import sys
from collections.abc import Callable, Sequence
from typing import Literal

from app.core.ports import FileInfo, FileSkip, FileText, SkipReason

# openat2(2) has the same number on every architecture we run on (the unified table).
_SYS_OPENAT2 = 437
_OPENAT2_MACHINES = frozenset({"x86_64", "aarch64"})
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
# O_NONBLOCK: a FIFO must open at once instead of waiting for a writer.
_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
# O_PATH: passing through a directory needs only search permission, as for openat2.
_DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC
# stat: O_PATH opens without reading (no FIFO wait, no device side effects);
# names: a directory descriptor that getdents can read.
_STAT_FLAGS = os.O_PATH | os.O_CLOEXEC
_LIST_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# openat2 may report EAGAIN when a concurrent rename makes `..` unverifiable.
_OPENAT2_TRIES = 3
_READ_CHUNK = 1 << 20

_ERRNO_REASONS = {
    errno.ENOENT: SkipReason.NOT_FOUND,
    errno.ENOTDIR: SkipReason.NOT_FOUND,
    errno.EACCES: SkipReason.UNREADABLE,
    errno.EPERM: SkipReason.UNREADABLE,
    errno.EXDEV: SkipReason.OUTSIDE_WORKDIR,
    errno.ELOOP: SkipReason.OUTSIDE_WORKDIR,
    errno.ENXIO: SkipReason.NOT_REGULAR_FILE,
    errno.ENODEV: SkipReason.NOT_REGULAR_FILE,
    errno.ENAMETOOLONG: SkipReason.INVALID_PATH,
}

_Syscall = Callable[..., int]


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


class SandboxedWorkdir:
    """Reads text files beneath `root`, for paths as the agent wrote them.

    `aliases` are the absolute directories under which the agent sees the same tree (its
    container may mount the project elsewhere than we do). `stat` and `names` resolve a
    path exactly as `read_text` does, only with other flags on the last component.
    """

    def __init__(self, root: str, aliases: Sequence[str] = (), *, force_walk: bool = False) -> None:
        relative = [alias for alias in aliases if not alias.startswith("/")]
        if relative:
            raise ValueError(f"workdir aliases must be absolute: {relative}")
        self._root = os.path.abspath(root)
        bases = [self._root, os.path.realpath(root), *aliases]
        self._bases: list[tuple[bytes, ...]] = []
        for base in bases:
            parts = _normalise(os.fsencode(base), absolute=True)
            if parts is not None and parts not in self._bases:
                self._bases.append(parts)
        self._openat2 = None if force_walk else _load_openat2()

    @property
    def mode(self) -> str:
        return "walk" if self._openat2 is None else "openat2"

    def read_text(self, path: str, max_bytes: int) -> FileText | FileSkip:
        opened = self._open_beneath(path, _FILE_FLAGS)
        if isinstance(opened, FileSkip):
            return opened
        fd, parts = opened
        try:
            info = os.fstat(fd)  # the descriptor we read: its mtime cannot race a rename
            text = _read(fd, info, max_bytes)
        except OSError as err:
            text = _skip_reason(err)
        finally:
            os.close(fd)
        if isinstance(text, SkipReason):
            return FileSkip(path, text)
        return FileText(path, text, mtime_ns=info.st_mtime_ns, location=_location(parts))

    def stat(self, path: str) -> FileInfo | FileSkip:
        """Kind, size and mtime of a path, opened `O_PATH` through the same resolution as
        `read_text` (no content is read, no device is opened, no read permission needed)."""
        opened = self._open_beneath(path, _STAT_FLAGS)
        if isinstance(opened, FileSkip):
            return opened
        fd, parts = opened
        try:
            info = os.fstat(fd)
        except OSError as err:
            return FileSkip(path, _skip_reason(err))
        finally:
            os.close(fd)
        if stat.S_ISLNK(info.st_mode):  # walk mode opened the link itself: refused as a read is
            return FileSkip(path, SkipReason.OUTSIDE_WORKDIR)
        kind: Literal["file", "directory", "other"] = (
            "file"
            if stat.S_ISREG(info.st_mode)
            else "directory"
            if stat.S_ISDIR(info.st_mode)
            else "other"
        )
        return FileInfo(path, _location(parts), kind, info.st_mtime_ns, info.st_size)

    def names(self, path: str) -> tuple[str, ...] | FileSkip:
        """The sorted entry names of a directory beneath the root (`"."` for the root)."""
        opened = self._open_beneath(path, _LIST_FLAGS)
        if isinstance(opened, FileSkip):
            return opened
        fd, _ = opened
        try:
            with os.scandir(fd) as entries:
                return tuple(sorted(entry.name for entry in entries))
        except OSError as err:
            return FileSkip(path, _skip_reason(err))
        finally:
            os.close(fd)

    def _open_beneath(self, path: str, flags: int) -> tuple[int, tuple[bytes, ...]] | FileSkip:
        """A descriptor for `path` resolved beneath the root (the caller closes it) and the
        path's parts relative to the root; or why it cannot be opened."""
        parts = self._relative(path)
        if isinstance(parts, SkipReason):
            return FileSkip(path, parts)
        try:
            root_fd = os.open(self._root, _DIR_FLAGS)
        except OSError:
            return FileSkip(path, SkipReason.UNREADABLE)
        try:
            return self._open(root_fd, parts, flags), parts
        except OSError as err:
            return FileSkip(path, _skip_reason(err))
        finally:
            os.close(root_fd)

    def readable(self) -> bool:
        try:
            fd = os.open(self._root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            with os.scandir(fd) as entries:
                next(entries, None)
            return True
        except OSError:
            return False
        finally:
            os.close(fd)

    def _relative(self, path: str) -> tuple[bytes, ...] | SkipReason:
        if not path or "\0" in path:
            return SkipReason.INVALID_PATH
        if path.startswith("~"):  # the agent's home: never ours to read
            return SkipReason.OUTSIDE_WORKDIR
        try:
            raw = os.fsencode(path)
        except UnicodeEncodeError:  # lone surrogates have no bytes on disk
            return SkipReason.INVALID_PATH
        absolute = raw.startswith(b"/")
        parts = _normalise(raw, absolute=absolute)
        if parts is None:
            return SkipReason.OUTSIDE_WORKDIR
        if not absolute:
            return parts
        for base in self._bases:
            if parts[: len(base)] == base:
                return parts[len(base) :]
        return SkipReason.OUTSIDE_WORKDIR

    def _open(self, root_fd: int, parts: tuple[bytes, ...], final: int) -> int:
        if self._openat2 is not None:
            return _call_openat2(self._openat2, root_fd, b"/".join(parts) or b".", final)
        if not parts:
            return os.open(b".", final, dir_fd=root_fd)
        fd = root_fd
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            flags = (final if last else _DIR_FLAGS) | os.O_NOFOLLOW
            try:
                next_fd = os.open(part, flags, dir_fd=fd)
            except OSError as err:
                # O_DIRECTORY | O_NOFOLLOW reports a symlinked directory as ENOTDIR.
                if err.errno in (errno.ENOTDIR, errno.ELOOP) and _is_symlink(part, fd):
                    raise OSError(errno.ELOOP, "symlink refused", part) from err
                raise
            finally:
                if fd != root_fd:
                    os.close(fd)
            fd = next_fd
        return fd


def _normalise(raw: bytes, *, absolute: bool) -> tuple[bytes, ...] | None:
    """None when `..` climbs above the start (above `/` it stays at `/`, as the kernel does)."""
    parts: list[bytes] = []
    for part in raw.split(b"/"):
        if part in (b"", b"."):
            continue
        if part != b"..":
            parts.append(part)
        elif parts:
            parts.pop()
        elif not absolute:
            return None
    return tuple(parts)


def _skip_reason(err: OSError) -> SkipReason:
    return _ERRNO_REASONS.get(err.errno or 0, SkipReason.UNREADABLE)


def _is_symlink(name: bytes, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _location(parts: tuple[bytes, ...]) -> str:
    return os.fsdecode(b"/".join(parts)) or "."


def _read(fd: int, info: os.stat_result, max_bytes: int) -> str | SkipReason:
    if not stat.S_ISREG(info.st_mode):
        return SkipReason.NOT_REGULAR_FILE
    if info.st_size > max_bytes:
        return SkipReason.TOO_LARGE
    chunks: list[bytes] = []
    remaining = max_bytes + 1  # one byte more tells a file that grew since fstat
    while remaining > 0:
        chunk = os.read(fd, min(remaining, _READ_CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    if remaining <= 0:
        return SkipReason.TOO_LARGE
    data = b"".join(chunks)
    if b"\0" in data:
        return SkipReason.NOT_UTF8
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return SkipReason.NOT_UTF8


def _call_openat2(syscall: _Syscall, dir_fd: int, path: bytes, flags: int) -> int:
    how = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
    code = errno.EAGAIN
    for _ in range(_OPENAT2_TRIES):
        fd = int(syscall(_SYS_OPENAT2, dir_fd, path, ctypes.byref(how), ctypes.sizeof(how)))
        if fd >= 0:
            return fd
        code = ctypes.get_errno()
        if code not in (errno.EINTR, errno.EAGAIN):
            break
    raise OSError(code, os.strerror(code), path)


def _load_openat2() -> _Syscall | None:
    """The syscall if this kernel lets us use it; None means walk (ENOSYS, seccomp EPERM…)."""
    if sys.platform != "linux" or platform.machine() not in _OPENAT2_MACHINES:
        return None
    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    syscall.argtypes = (
        ctypes.c_long,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.POINTER(_OpenHow),
        ctypes.c_size_t,
    )
    probe: _Syscall = syscall
    try:
        dir_fd = os.open("/", _DIR_FLAGS)
    except OSError:
        return None
    try:
        os.close(_call_openat2(probe, dir_fd, b".", os.O_PATH | os.O_CLOEXEC))
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    return probe
