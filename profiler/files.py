"""Every file profgen writes goes through here, and every user file it reads can.

Writes are atomic and safe in a shared directory: the content goes to a temporary file created
exclusively, with an unpredictable name and without following links (`tempfile.mkstemp`), in
the target's own directory, and is then renamed over the target. A reader never sees half a
file, a crash leaves the old file (or none), and a planted `.report.html.tmp -> victim` link
is never written through. Only regular files are written: a target that exists as anything
else (a directory, a device node such as /dev/full, a FIFO, a symbolic link) is refused, and
so is a target that is one of the command's own inputs.

Reads refuse anything but a regular file before reading a byte (a FIFO would block forever)
and stop at a size limit.

Raises UsageError for a target or input that makes no sense and OutputError when the disk
refuses (full, read-only, permissions).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from profiler.errors import DataError, OutputError, UsageError

#: what an input file may weigh unless a reader says otherwise
DEFAULT_READ_LIMIT = 2 << 30


def cache_dir() -> Path:
    """profgen's cache: `$XDG_CACHE_HOME/profgen`, else `~/.cache/profgen` (not created)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "profgen"


def check_output_file(path: str | Path, inputs: Iterable[str | Path] = (), what: str = "") -> Path:
    """`path` as a file profgen may (over)write.

    Raises: UsageError when it exists as anything but a regular file (a symbolic link
    included), when its parent exists as a non-directory, or when it is one of `inputs`.
    """
    path = Path(path)
    label = f"{what} {path}" if what else str(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise UsageError(f"{label}: cannot be written ({exc.strerror})") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{label}: is a directory; give a file name")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{label}: exists and is not a regular file; profgen writes only files")
    for other in inputs:
        if _same_file(path, Path(other)):
            raise UsageError(f"{label}: is also an input of this command; refusing to overwrite it")
    parent = path.parent
    if parent.exists() and not parent.is_dir():
        raise UsageError(f"{label}: {parent} is not a directory")
    return path


def check_output_dir(path: str | Path, what: str = "--out") -> Path:
    """`path` as a directory profgen may create runs in (created when missing).

    Raises: UsageError when it exists as a non-directory; OutputError when it cannot be created.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{what} {path}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{what} {path}: cannot create the directory ({exc.strerror})") from None
    return path


@contextlib.contextmanager
def atomic_output(
    path: str | Path, inputs: Iterable[str | Path] = (), what: str = "", binary: bool = True
) -> Iterator[IO[Any]]:
    """A file object whose content replaces `path` when the block ends without an error.

    Raises: UsageError (see `check_output_file`), OutputError when the disk refuses.
    """
    path = check_output_file(path, inputs, what)
    label = f"{what} {path}" if what else str(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise OutputError(f"{label}: cannot be written ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8") as fh:
            yield fh
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise OutputError(f"{label}: cannot be written ({exc.strerror or exc})") from None
    except BaseException:
        _unlink_quietly(tmp)
        raise


def write_text(
    path: str | Path, text: str, inputs: Iterable[str | Path] = (), what: str = ""
) -> Path:
    """Write `text` (UTF-8) to `path` atomically. Returns the path. Raises: see `atomic_output`."""
    with atomic_output(path, inputs, what, binary=False) as fh:
        fh.write(text)
    return Path(path)


def write_bytes(
    path: str | Path, data: bytes, inputs: Iterable[str | Path] = (), what: str = ""
) -> Path:
    """Write `data` to `path` atomically. Returns the path. Raises: see `atomic_output`."""
    with atomic_output(path, inputs, what) as fh:
        fh.write(data)
    return Path(path)


def read_bytes(path: str | Path, what: str = "", limit: int = DEFAULT_READ_LIMIT) -> bytes:
    """The content of the regular file `path`, at most `limit` bytes.

    Raises: DataError when it is missing, not a regular file (a FIFO, a device, a directory),
    unreadable or larger than `limit`.
    """
    path = Path(path)
    label = f"{what} {path}" if what else str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise DataError(f"{label}: no such file") from None
    except OSError as exc:
        raise DataError(f"{label}: cannot be read ({exc.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            raise DataError(f"{label}: is a directory, not a file")
        raise DataError(f"{label}: not a regular file (a FIFO, socket or device); refused")
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > limit:
            raise DataError(f"{label}: {st.st_size} bytes, more than the {limit} bytes allowed")
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise DataError(f"{label}: cannot be read ({exc.strerror})") from None
    if len(data) > limit:
        raise DataError(f"{label}: more than the {limit} bytes allowed")
    return data


def read_text(path: str | Path, what: str = "", limit: int = DEFAULT_READ_LIMIT) -> str:
    """`read_bytes` decoded as UTF-8 (a byte-order mark dropped).

    Raises: DataError as `read_bytes`, and when the file is not UTF-8 text.
    """
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        label = f"{what} {path}" if what else str(path)
        raise DataError(f"{label}: not UTF-8 text (byte {exc.start})") from None


def is_regular_file(path: str | Path) -> bool:
    """True for a regular file that is not a symbolic link (what an import may copy)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


_UMASK: int | None = None


def _umask() -> int:
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0o022)
        os.umask(_UMASK)
    return _UMASK


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
