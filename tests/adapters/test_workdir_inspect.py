"""`stat`, `names` and the mtime/location of reads: the same sandbox as `read_text`."""

import os
from pathlib import Path

import pytest

from app.adapters.workdir import SandboxedWorkdir
from app.core.ports import FileInfo, FileSkip, FileText, SkipReason

ALIAS = "/home/me/proj"
MTIME = 1_700_000_000_123_456_789


@pytest.fixture(params=["openat2", "walk"])
def mode(request: pytest.FixtureRequest) -> str:
    if request.param == "openat2" and SandboxedWorkdir("/").mode != "openat2":
        pytest.skip("openat2 is refused on this machine")
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "outside.txt").write_text("secret")
    workdir = tmp_path / "workspace"
    (workdir / "src").mkdir(parents=True)
    (workdir / "src" / "a.py").write_text("x = 1\n")
    os.utime(workdir / "src" / "a.py", ns=(MTIME, MTIME))
    (workdir / "CODE_LAW.md").write_text("rules\n")
    return workdir


@pytest.fixture
def workdir(root: Path, mode: str) -> SandboxedWorkdir:
    return SandboxedWorkdir(str(root), aliases=[ALIAS], force_walk=mode == "walk")


def test_a_read_reports_the_mtime_of_the_descriptor_and_the_normalised_location(
    workdir: SandboxedWorkdir,
) -> None:
    for path in ("src/a.py", "./src/../src/a.py", f"{ALIAS}/src/a.py"):
        read = workdir.read_text(path, 100)
        assert isinstance(read, FileText)
        assert (read.path, read.text, read.mtime_ns, read.location) == (
            path,
            "x = 1\n",
            MTIME,
            "src/a.py",
        )


def test_stat_of_a_file_gives_kind_size_mtime_and_location(workdir: SandboxedWorkdir) -> None:
    assert workdir.stat(f"{ALIAS}/src/a.py") == FileInfo(
        f"{ALIAS}/src/a.py", "src/a.py", "file", MTIME, 6
    )


def test_stat_of_a_directory_and_of_the_root(workdir: SandboxedWorkdir, root: Path) -> None:
    src = workdir.stat("src/")
    assert isinstance(src, FileInfo)
    assert (src.kind, src.location) == ("directory", "src")
    top = workdir.stat(".")
    assert isinstance(top, FileInfo)
    assert (top.kind, top.location) == ("directory", ".")


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("missing.py", SkipReason.NOT_FOUND),
        ("../outside.txt", SkipReason.OUTSIDE_WORKDIR),
        ("/etc/passwd", SkipReason.OUTSIDE_WORKDIR),
        ("~/x", SkipReason.OUTSIDE_WORKDIR),
        ("", SkipReason.INVALID_PATH),
    ],
)
def test_stat_refuses_what_a_read_refuses(
    workdir: SandboxedWorkdir, path: str, reason: SkipReason
) -> None:
    assert workdir.stat(path) == FileSkip(path, reason)
    assert workdir.read_text(path, 100) == FileSkip(path, reason)


def test_stat_refuses_a_symlink_leaving_the_root(workdir: SandboxedWorkdir, root: Path) -> None:
    (root / "link.txt").symlink_to(root.parent / "outside.txt")
    (root / "dirlink").symlink_to(root.parent)
    assert workdir.stat("link.txt") == FileSkip("link.txt", SkipReason.OUTSIDE_WORKDIR)
    assert workdir.stat("dirlink/outside.txt") == FileSkip(
        "dirlink/outside.txt", SkipReason.OUTSIDE_WORKDIR
    )


def test_stat_of_a_fifo_is_other_without_hanging(workdir: SandboxedWorkdir, root: Path) -> None:
    os.mkfifo(root / "pipe")
    info = workdir.stat("pipe")
    assert isinstance(info, FileInfo)
    assert info.kind == "other"


def test_names_lists_a_directory_sorted(workdir: SandboxedWorkdir, root: Path) -> None:
    (root / "b.txt").write_text("")
    assert workdir.names(".") == ("CODE_LAW.md", "b.txt", "src")
    assert workdir.names("src") == ("a.py",)


def test_names_refuses_outside_and_symlinked_directories(
    workdir: SandboxedWorkdir, root: Path
) -> None:
    (root / "up").symlink_to(root.parent)
    assert workdir.names("..") == FileSkip("..", SkipReason.OUTSIDE_WORKDIR)
    assert workdir.names("up") == FileSkip("up", SkipReason.OUTSIDE_WORKDIR)
    assert workdir.names("nope") == FileSkip("nope", SkipReason.NOT_FOUND)


def test_no_descriptor_leaks_from_stat_or_names(workdir: SandboxedWorkdir) -> None:
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        workdir.stat("src/a.py")
        workdir.stat("../outside.txt")
        workdir.names(".")
        workdir.names("missing")
    assert len(os.listdir("/proc/self/fd")) == before
