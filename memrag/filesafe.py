"""The one bounded reader for files a command or a page opens by a name someone gave it (`ask --open`,
`eval --params`, recordings, run folders, documents to index).

A name may lead to anything: /dev/zero (endless), a named pipe (an open that waits forever for a
writer), a folder, or a regular file of gigabytes. `read_bytes` opens without waiting (O_NONBLOCK),
refuses anything that is not a regular file before reading a byte, refuses a file over its bound
from its size, and reads at most the bound (a file growing meanwhile is refused too). Every refusal
is an `UnreadableFile` (a ValueError) whose message names the file and says why.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class UnreadableFile(ValueError):
    """A file that was not read: missing, not a regular file, over its size bound, not text."""


class NotRegularFile(UnreadableFile):
    """A name that leads to a folder, a pipe, a device or a socket (nothing was read from it)."""

    def __init__(self, path: str | Path, kind: str) -> None:
        super().__init__(f"{path}: {kind}, not a regular file; nothing was read from it")
        self.kind = kind  # "a named pipe", "a character device", …


class LinkRefused(UnreadableFile):
    """A symbolic link where links are not followed (nothing was read through it)."""


def size_text(n: int) -> str:
    """A byte count for a message: '5 MB', '740 KB', '312 bytes'."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | Path, *, follow_links: bool = True) -> int:
    """A read-only descriptor of a regular file; NotRegularFile (or LinkRefused without
    `follow_links`: a link swapped in after a folder walk is not followed either) before any read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a named pipe must not hold the open
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if not follow_links and Path(path).is_symlink():
            raise LinkRefused(f"{path}: a link (not followed)") from None
        raise UnreadableFile(f"{path}: {e.strerror or e}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegularFile(path, _kind(mode))
    return fd


def read_bytes(path: str | Path, max_bytes: int, *, what: str = "file", follow_links: bool = True) -> bytes:
    """The whole file, when it is a regular file of at most `max_bytes` bytes; else UnreadableFile
    naming the file and `what` it was meant to be ('traces file', 'parameters file')."""
    fd = open_regular(path, follow_links=follow_links)
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise UnreadableFile(f"{path}: {size_text(size)}, more than a {what} holds "
                                 f"(at most {size_text(max_bytes)}); nothing was read")
        try:
            data = f.read(max_bytes + 1)
        except OSError as e:
            raise UnreadableFile(f"{path}: {e.strerror or e}") from None
    if len(data) > max_bytes:
        raise UnreadableFile(f"{path}: grew past {size_text(max_bytes)} while it was read; not read further")
    return data


def read_text(path: str | Path, max_bytes: int, *, what: str = "file") -> str:
    """`read_bytes` decoded as UTF-8 (a file that is not UTF-8 is an UnreadableFile)."""
    data = read_bytes(path, max_bytes, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UnreadableFile(f"{path}: not UTF-8 text (byte {e.start}); not a {what}") from None
