import os
import pickle
import shutil
import socket
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.adapters.workdir import SandboxedWorkdir
from app.core.ports import FileSkip, FileText, SkipReason
from tests.forking import fork

ALIAS = "/home/me/proj"
MAX = 1000
SECRET = "top secret"


@pytest.fixture(params=["openat2", "walk"])
def mode(request: pytest.FixtureRequest) -> str:
    if request.param == "openat2" and SandboxedWorkdir("/").mode != "openat2":
        pytest.skip("openat2 is refused on this machine")
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The work directory, with a secret beside it that no path may reach."""
    (tmp_path / "outside.txt").write_text(SECRET)
    (tmp_path / "outside_dir").mkdir()
    (tmp_path / "outside_dir" / "secret.txt").write_text(SECRET)
    workdir = tmp_path / "workspace"
    (workdir / "src" / "pkg").mkdir(parents=True)
    (workdir / "hello.txt").write_text("hello\n")
    (workdir / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    return workdir


@pytest.fixture
def reader(root: Path, mode: str) -> SandboxedWorkdir:
    return SandboxedWorkdir(str(root), aliases=[ALIAS], force_walk=mode == "walk")


def skip(path: str, reason: SkipReason) -> FileSkip:
    return FileSkip(path=path, reason=reason)


def outside(path: str) -> FileSkip:
    return skip(path, SkipReason.OUTSIDE_WORKDIR)


def test_the_reader_runs_in_the_requested_mode(reader: SandboxedWorkdir, mode: str) -> None:
    assert reader.mode == mode


def test_relative_path_is_read(reader: SandboxedWorkdir) -> None:
    assert reader.read_text("hello.txt", MAX) == FileText(path="hello.txt", text="hello\n")


def test_nested_path_is_read_and_reported_as_given(reader: SandboxedWorkdir) -> None:
    path = "./src//pkg/./mod.py"
    assert reader.read_text(path, MAX) == FileText(path=path, text="x = 1\n")


def test_absolute_path_inside_root_is_read(reader: SandboxedWorkdir, root: Path) -> None:
    path = str(root / "src" / "pkg" / "mod.py")
    assert reader.read_text(path, MAX) == FileText(path=path, text="x = 1\n")


def test_absolute_path_under_an_alias_is_read(reader: SandboxedWorkdir) -> None:
    path = f"{ALIAS}/src/pkg/mod.py"
    assert reader.read_text(path, MAX) == FileText(path=path, text="x = 1\n")


def test_dotdot_that_stays_inside_is_normalised_and_read(reader: SandboxedWorkdir) -> None:
    path = "src/../hello.txt"
    assert reader.read_text(path, MAX) == FileText(path=path, text="hello\n")


def test_absolute_dotdot_back_into_root_is_read(reader: SandboxedWorkdir, root: Path) -> None:
    path = f"{root}/../{root.name}/hello.txt"
    assert reader.read_text(path, MAX) == FileText(path=path, text="hello\n")


@pytest.mark.parametrize(
    "path", ["../outside.txt", "src/../../outside.txt", "a/b/../../../outside.txt", ".."]
)
def test_dotdot_climbing_above_root_is_refused(reader: SandboxedWorkdir, path: str) -> None:
    assert reader.read_text(path, MAX) == outside(path)


def test_absolute_dotdot_out_of_root_is_refused(reader: SandboxedWorkdir, root: Path) -> None:
    path = f"{root}/../outside.txt"
    assert reader.read_text(path, MAX) == outside(path)


def test_absolute_path_outside_is_refused(reader: SandboxedWorkdir, root: Path) -> None:
    for path in ["/etc/passwd", str(root.parent / "outside.txt"), "/"]:
        assert reader.read_text(path, MAX) == outside(path)


def test_sibling_directory_sharing_the_root_prefix_is_refused(
    reader: SandboxedWorkdir, root: Path
) -> None:
    evil = root.parent / f"{root.name}-evil"
    evil.mkdir()
    (evil / "hello.txt").write_text(SECRET)
    path = str(evil / "hello.txt")
    assert reader.read_text(path, MAX) == outside(path)


def test_sibling_directory_sharing_the_alias_prefix_is_refused(reader: SandboxedWorkdir) -> None:
    path = f"{ALIAS}-evil/hello.txt"
    assert reader.read_text(path, MAX) == outside(path)


@pytest.mark.parametrize("path", ["~/x", "~", "~root/.ssh/id_rsa"])
def test_home_relative_path_is_refused(reader: SandboxedWorkdir, path: str) -> None:
    assert reader.read_text(path, MAX) == outside(path)


@pytest.mark.parametrize("path", ["", "hello.txt\0", "a\0b", "\ud800.txt"])
def test_empty_nul_or_unencodable_path_is_invalid(reader: SandboxedWorkdir, path: str) -> None:
    assert reader.read_text(path, MAX) == skip(path, SkipReason.INVALID_PATH)


def test_overlong_name_is_invalid(reader: SandboxedWorkdir) -> None:
    path = "a" * 300
    assert reader.read_text(path, MAX) == skip(path, SkipReason.INVALID_PATH)


def test_missing_file_is_not_found(reader: SandboxedWorkdir) -> None:
    for path in ["nope.txt", "src/nope/mod.py", "hello.txt/child"]:
        assert reader.read_text(path, MAX) == skip(path, SkipReason.NOT_FOUND)


@pytest.mark.parametrize("path", ["..%2f..%2fetc%2fpasswd", "%2e%2e/outside.txt"])
def test_percent_encoded_names_are_literal(reader: SandboxedWorkdir, root: Path, path: str) -> None:
    assert reader.read_text(path, MAX) == skip(path, SkipReason.NOT_FOUND)
    target = root / path
    target.parent.mkdir(exist_ok=True)
    target.write_text("literal")
    assert reader.read_text(path, MAX) == FileText(path=path, text="literal")


def test_backslash_names_are_literal(reader: SandboxedWorkdir, root: Path) -> None:
    path = "..\\..\\etc\\passwd"
    assert reader.read_text(path, MAX) == skip(path, SkipReason.NOT_FOUND)
    (root / path).write_text("literal")
    assert reader.read_text(path, MAX) == FileText(path=path, text="literal")


def test_symlink_to_file_outside_is_refused(reader: SandboxedWorkdir, root: Path) -> None:
    (root / "abs").symlink_to(root.parent / "outside.txt")
    (root / "rel").symlink_to("../outside.txt")
    for path in ["abs", "rel"]:
        assert reader.read_text(path, MAX) == outside(path)


def test_symlink_to_directory_outside_is_refused_beneath(
    reader: SandboxedWorkdir, root: Path
) -> None:
    (root / "abs").symlink_to(root.parent / "outside_dir")
    (root / "rel").symlink_to("../outside_dir", target_is_directory=True)
    for path in ["abs/secret.txt", "rel/secret.txt", f"{root}/rel/secret.txt"]:
        assert reader.read_text(path, MAX) == outside(path)


def test_relative_symlink_chain_leaving_the_root_is_refused(
    reader: SandboxedWorkdir, root: Path
) -> None:
    (root / "src" / "up").symlink_to("..", target_is_directory=True)
    (root / "first").symlink_to("second")
    (root / "second").symlink_to("src/up/../outside.txt")
    assert reader.read_text("first", MAX) == outside("first")
    (root / "escape").symlink_to("src/up/..", target_is_directory=True)
    assert reader.read_text("escape/outside.txt", MAX) == outside("escape/outside.txt")


def test_symlink_loop_is_refused(reader: SandboxedWorkdir, root: Path) -> None:
    (root / "loop_a").symlink_to("loop_b")
    (root / "loop_b").symlink_to("loop_a")
    assert reader.read_text("loop_a", MAX) == outside("loop_a")


def test_dangling_symlink_is_not_found_or_refused(
    reader: SandboxedWorkdir, root: Path, mode: str
) -> None:
    (root / "dangling").symlink_to("missing.txt")
    expected = SkipReason.NOT_FOUND if mode == "openat2" else SkipReason.OUTSIDE_WORKDIR
    assert reader.read_text("dangling", MAX) == skip("dangling", expected)


def test_symlink_inside_to_inside_is_read_with_openat2_and_refused_by_walk(
    reader: SandboxedWorkdir, root: Path, mode: str
) -> None:
    (root / "link.txt").symlink_to("src/pkg/mod.py")
    (root / "pkg").symlink_to("src/pkg", target_is_directory=True)
    for path in ["link.txt", "pkg/mod.py"]:
        expected = FileText(path=path, text="x = 1\n") if mode == "openat2" else outside(path)
        assert reader.read_text(path, MAX) == expected


def test_file_swapped_for_symlink_outside_is_refused_on_next_read(
    reader: SandboxedWorkdir, root: Path
) -> None:
    assert reader.read_text("hello.txt", MAX) == FileText(path="hello.txt", text="hello\n")
    (root / "hello.txt").unlink()
    (root / "hello.txt").symlink_to(root.parent / "outside.txt")
    assert reader.read_text("hello.txt", MAX) == outside("hello.txt")


def test_directory_swapped_for_symlink_outside_is_refused_on_next_read(
    reader: SandboxedWorkdir, root: Path
) -> None:
    (root / "src" / "pkg" / "mod.py").unlink()
    (root / "src" / "pkg").rmdir()
    (root / "src" / "pkg").symlink_to(root.parent / "outside_dir")
    path = "src/pkg/secret.txt"
    assert reader.read_text(path, MAX) == outside(path)


def test_fifo_is_refused_without_hanging(reader: SandboxedWorkdir, root: Path) -> None:
    os.mkfifo(root / "pipe")
    results: list[FileText | FileSkip] = []
    thread = threading.Thread(target=lambda: results.append(reader.read_text("pipe", MAX)))
    thread.start()
    thread.join(timeout=2)
    if thread.is_alive():  # blocked waiting for a writer: release it, then fail
        os.close(os.open(root / "pipe", os.O_WRONLY | os.O_NONBLOCK))
        thread.join()
        pytest.fail("opening a FIFO blocked")
    assert results == [skip("pipe", SkipReason.NOT_REGULAR_FILE)]


def test_directory_is_not_a_regular_file(reader: SandboxedWorkdir, root: Path) -> None:
    for path in ["src", "src/pkg/", ".", str(root), f"{ALIAS}/"]:
        assert reader.read_text(path, MAX) == skip(path, SkipReason.NOT_REGULAR_FILE)


def test_dev_zero_through_a_symlink_is_refused_unread(
    reader: SandboxedWorkdir, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "zero").symlink_to("/dev/zero")
    monkeypatch.setattr(os, "read", _no_read)
    assert reader.read_text("zero", 1 << 30) == outside("zero")


def test_character_device_inside_root_is_refused_unread(
    reader: SandboxedWorkdir, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    zero = os.stat("/dev/zero").st_rdev
    try:
        os.mknod(root / "zero", stat.S_IFCHR | 0o600, zero)
    except PermissionError:
        pytest.skip("creating device nodes needs CAP_MKNOD")
    monkeypatch.setattr(os, "read", _no_read)
    assert reader.read_text("zero", 1 << 30) == skip("zero", SkipReason.NOT_REGULAR_FILE)


def test_unix_socket_is_not_a_regular_file(
    reader: SandboxedWorkdir, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root)  # a relative name keeps within the 108-byte socket path limit
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("sock")
        assert reader.read_text("sock", MAX) == skip("sock", SkipReason.NOT_REGULAR_FILE)


def test_file_over_max_bytes_is_too_large_without_reading(
    reader: SandboxedWorkdir, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "big.txt").write_text("x" * 11)
    monkeypatch.setattr(os, "read", _no_read)
    assert reader.read_text("big.txt", 10) == skip("big.txt", SkipReason.TOO_LARGE)


def test_file_of_exactly_max_bytes_is_read(reader: SandboxedWorkdir, root: Path) -> None:
    (root / "ten.txt").write_text("x" * 10)
    assert reader.read_text("ten.txt", 10) == FileText(path="ten.txt", text="x" * 10)


def test_file_grown_after_fstat_is_too_large(
    reader: SandboxedWorkdir, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "grows.txt").write_text("x" * 11)
    real_fstat = os.fstat

    def fstat_before_growth(fd: int) -> os.stat_result:
        info = list(real_fstat(fd))
        info[stat.ST_SIZE] = 10
        return os.stat_result(info)

    monkeypatch.setattr(os, "fstat", fstat_before_growth)
    assert reader.read_text("grows.txt", 10) == skip("grows.txt", SkipReason.TOO_LARGE)


def test_empty_file_is_empty_text(reader: SandboxedWorkdir, root: Path) -> None:
    (root / "empty.txt").write_bytes(b"")
    assert reader.read_text("empty.txt", 0) == FileText(path="empty.txt", text="")


def test_utf8_text_is_decoded(reader: SandboxedWorkdir, root: Path) -> None:
    (root / "ä.py").write_text("s = 'héllo 日本語 🚀'\n", encoding="utf-8")
    assert reader.read_text("ä.py", MAX) == FileText(path="ä.py", text="s = 'héllo 日本語 🚀'\n")


@pytest.mark.parametrize("content", [b"caf\xe9", b"\xff\xfe", b"ok\x00binary", b"\x00"])
def test_invalid_utf8_or_nul_is_not_utf8(
    reader: SandboxedWorkdir, root: Path, content: bytes
) -> None:
    (root / "bin.dat").write_bytes(content)
    assert reader.read_text("bin.dat", MAX) == skip("bin.dat", SkipReason.NOT_UTF8)


def test_file_without_permission_is_unreadable(mode: str) -> None:
    """Run as an unprivileged user (root reads whatever the mode): a forked child drops
    to `nobody` over a tree it may traverse, with the file itself mode 0."""
    base = Path(tempfile.mkdtemp())
    try:
        base.chmod(0o755)
        (base / "secret.txt").write_text(SECRET)
        (base / "secret.txt").chmod(0)
        reader = SandboxedWorkdir(str(base), force_walk=mode == "walk")
        assert _as_nobody(lambda: reader.read_text("secret.txt", MAX)) == skip(
            "secret.txt", SkipReason.UNREADABLE
        )
    finally:
        shutil.rmtree(base)


def test_read_error_is_unreadable(
    reader: SandboxedWorkdir, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "read", _no_read)
    assert reader.read_text("hello.txt", MAX) == skip("hello.txt", SkipReason.UNREADABLE)


def test_missing_root_makes_every_file_unreadable(tmp_path: Path, mode: str) -> None:
    reader = SandboxedWorkdir(str(tmp_path / "gone"), force_walk=mode == "walk")
    assert reader.read_text("hello.txt", MAX) == skip("hello.txt", SkipReason.UNREADABLE)
    assert not reader.readable()


def test_root_directory_is_readable(reader: SandboxedWorkdir) -> None:
    assert reader.readable()


def test_root_that_is_a_file_is_not_readable(root: Path, mode: str) -> None:
    reader = SandboxedWorkdir(str(root / "hello.txt"), force_walk=mode == "walk")
    assert not reader.readable()


def test_relative_alias_is_a_configuration_error(root: Path) -> None:
    with pytest.raises(ValueError, match="absolute"):
        SandboxedWorkdir(str(root), aliases=["home/me/proj"])


def test_no_descriptor_leaks_whatever_the_outcome(reader: SandboxedWorkdir, root: Path) -> None:
    os.mkfifo(root / "pipe")
    (root / "out").symlink_to("../outside_dir", target_is_directory=True)
    paths = ["hello.txt", "src/pkg/mod.py", "src/pkg/nope", "pipe", "src", "out/secret.txt"]
    before = _open_fds()
    for path in paths * 20:
        reader.read_text(path, MAX)
    assert _open_fds() == before


@pytest.mark.slow
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    path=st.one_of(
        st.text(),
        st.lists(
            st.sampled_from(["..", ".", "", "~", "src", "pkg", "out", "outside.txt", "\\", "%2e"])
        ).map("/".join),
    ),
    absolute=st.booleans(),
)
def test_no_path_string_raises_or_reads_outside(
    reader: SandboxedWorkdir, root: Path, path: str, absolute: bool
) -> None:
    if not (root / "out").is_symlink():
        (root / "out").symlink_to("../outside_dir", target_is_directory=True)
    path = f"{root}/{path}" if absolute else path
    result = reader.read_text(path, MAX)
    assert result.path == path
    assert not (isinstance(result, FileText) and SECRET in result.text)


def _as_nobody(action: Callable[[], object]) -> object:
    """`action()` run in a forked child whose effective uid and gid are `nobody`'s."""
    read_end, write_end = os.pipe()
    pid = fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.close(read_end)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setegid(65534)
                os.seteuid(65534)
            os.write(write_end, pickle.dumps(action()))
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answer:
        data = answer.read()
    os.waitpid(pid, 0)
    return pickle.loads(data)


def _no_read(fd: int, n: int) -> bytes:
    raise PermissionError("read refused by the test")


def _open_fds() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


# --- look-alikes, encodings and /proc -------------------------------------------------

LOOK_ALIKES = [
    "\uff0e\uff0e\uff0foutside.txt",  # fullwidth ．．／
    "\uff0e\uff0e/outside.txt",  # fullwidth dots, real slash
    "\u2024\u2024/outside.txt",  # one dot leader ․․
    "..\u2215outside.txt",  # division slash ∕
    "..\u2044outside.txt",  # fraction slash ⁄
    "\ufe52\ufe52/outside.txt",  # small full stop ﹒
    "..\u29f8outside.txt",  # big solidus ⧸
]


@pytest.mark.parametrize("path", LOOK_ALIKES)
def test_unicode_look_alikes_of_dots_and_slashes_are_literal_names(
    reader: SandboxedWorkdir, root: Path, path: str
) -> None:
    """Never normalised (NFKC would turn `．．／` into `../`): a look-alike names a file
    inside the root or nothing."""
    assert reader.read_text(path, MAX) == skip(path, SkipReason.NOT_FOUND)
    target = root / path
    target.parent.mkdir(exist_ok=True)
    target.write_text("literal")
    assert reader.read_text(path, MAX) == FileText(path=path, text="literal")


@pytest.mark.parametrize("path", ["%2e%2e%2foutside.txt", "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd"])
def test_fully_percent_encoded_traversal_is_one_literal_name(
    reader: SandboxedWorkdir, path: str
) -> None:
    assert reader.read_text(path, MAX) == skip(path, SkipReason.NOT_FOUND)


@pytest.mark.parametrize(
    "path",
    [
        "/proc/self/root/etc/passwd",
        "/proc/self/cwd/outside.txt",
        "/proc/self/environ",
        "/proc/1/root/etc/passwd",
        "/proc/self/fd/0",
        "/dev/zero",
    ],
)
def test_proc_and_dev_paths_are_outside(reader: SandboxedWorkdir, path: str) -> None:
    assert reader.read_text(path, MAX) == outside(path)


def test_proc_cwd_is_outside_even_when_cwd_is_the_root(
    reader: SandboxedWorkdir, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root)
    path = "/proc/self/cwd/hello.txt"
    assert reader.read_text(path, MAX) == outside(path)


@pytest.mark.parametrize(
    ("name", "target", "path"),
    [
        ("proc_root", "/proc/self/root", "proc_root/etc/passwd"),
        ("proc_cwd", "/proc/self/cwd", "proc_cwd/hello.txt"),
        ("proc", "/proc", "proc/self/environ"),
        ("environ", "/proc/self/environ", "environ"),
        ("fd0", "/proc/self/fd/0", "fd0"),
    ],
)
def test_symlinks_into_proc_are_refused(
    reader: SandboxedWorkdir,
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    target: str,
    path: str,
) -> None:
    monkeypatch.chdir(root)
    (root / name).symlink_to(target)
    assert reader.read_text(path, MAX) == outside(path)


def test_dangling_symlink_pointing_out_is_refused(reader: SandboxedWorkdir, root: Path) -> None:
    (root / "rel_out").symlink_to("../missing_outside.txt")
    (root / "abs_out").symlink_to("/nonexistent/missing.txt")
    for path in ["rel_out", "abs_out"]:
        assert reader.read_text(path, MAX) == outside(path)


def test_a_file_growing_while_read_never_yields_more_than_the_limit(
    reader: SandboxedWorkdir, root: Path
) -> None:
    """A real writer appends while we read until a read says TOO_LARGE: every read before
    it is the text of an earlier state, never more bytes than the limit."""
    target = root / "log.txt"
    target.write_text("")
    stop = threading.Event()

    def grow() -> None:
        with open(target, "a") as out:
            while not stop.is_set():
                out.write("y" * 64)
                out.flush()

    writer = threading.Thread(target=grow)
    writer.start()
    results: list[FileText | FileSkip] = []
    try:
        while len(results) < 100_000:
            results.append(reader.read_text("log.txt", 4096))
            if isinstance(results[-1], FileSkip):
                break
    finally:
        stop.set()
        writer.join()
    *texts, last = results
    assert last == skip("log.txt", SkipReason.TOO_LARGE)
    assert all(isinstance(r, FileText) and len(r.text.encode()) <= 4096 for r in texts)


def test_racing_swaps_of_file_and_directory_for_symlinks_never_read_outside(
    reader: SandboxedWorkdir, root: Path
) -> None:
    """A thread swaps `flip` (a file) and `dir` (a directory) for symlinks to the secret
    and back, as fast as it can, while we read through them: never the secret."""
    (root / "dir").mkdir()
    (root / "dir" / "secret.txt").write_text("inside")
    (root / "flip").write_text("inside")
    outside_file = root.parent / "outside.txt"
    outside_dir = root.parent / "outside_dir"
    stop = threading.Event()

    def swap(name: str, fake: Path, is_dir: bool) -> None:
        """Alternates `name` between the real entry and a symlink to `fake`."""
        staged = root / f".{name}.staged"
        parked = root / f".{name}.parked"
        staged.symlink_to(fake, target_is_directory=is_dir)
        while not stop.is_set():
            os.rename(root / name, parked)
            os.rename(staged, root / name)
            os.rename(parked, staged)

    swappers = [
        threading.Thread(target=swap, args=("flip", outside_file, False)),
        threading.Thread(target=swap, args=("dir", outside_dir, True)),
    ]
    for thread in swappers:
        thread.start()
    texts: list[str] = []
    seen: set[tuple[str, bool]] = set()  # (path, read?): the race ran through both states
    paths = ("flip", "dir/secret.txt")
    try:
        while len(texts) < 3000 or (len(seen) < 4 and len(texts) < 200_000):
            for path in paths:
                result = reader.read_text(path, MAX)
                texts.append(result.text if isinstance(result, FileText) else "")
                seen.add((path, isinstance(result, FileText)))
    finally:
        stop.set()
        for thread in swappers:
            thread.join()
    assert SECRET not in texts
    assert seen == {(path, read) for path in paths for read in (True, False)}
