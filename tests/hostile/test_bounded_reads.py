"""Every file a command opens by a name it was given goes through one bounded reader (issue 35):
/dev/zero, a named pipe, a folder or an oversized file are refused before a byte is read, with a
message naming the file. `ask --open /dev/zero` grew to 20 GB on main; a pipe hung."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memrag import filesafe
from memrag.llm.recordings import FILE_NAME, Recordings, RecordingsFormatError

probe = pytest.mark.probe
GROUP = "bounded reads"
ROOT = Path(__file__).resolve().parents[2]


def _memory_cap() -> None:
    """In the child: at most 4 GB of address space, so a reader that is not bounded fails at once
    instead of filling the machine (main's `ask --open /dev/zero` grew to 20 GB)."""
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def _cli(*args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "memrag", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "MEMRAG_PRELOAD": "0"}, preexec_fn=_memory_cap)
    return done, time.monotonic() - started


@pytest.fixture()
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)  # nobody ever writes: an open that waits for a writer never returns
    return path


@probe("`python -m memrag ask --open /dev/zero`", "an error naming the file within 5 s, no traceback",
       group=GROUP)
def test_ask_open_dev_zero_ends_at_once():
    done, seconds = _cli("ask", "--open", "/dev/zero")
    assert done.returncode == 1 and seconds < 5, (done.returncode, seconds)
    assert done.stderr.startswith("error: /dev/zero: a character device") and "Traceback" not in done.stderr


@probe("`ask --open PIPE`, `eval --params PIPE.json`, `eval --params /dev/zero.json` (nobody writes to the pipe)",
       "an error naming the pipe, no hang, no traceback", group=GROUP)
def test_a_named_pipe_is_refused_by_ask_and_eval(fifo, tmp_path):
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    for args, named in ((["ask", "--open", str(fifo)], "a named pipe"),
                        (["eval", "--dataset", "sample", "--scope", "pooled", "--out", str(tmp_path / "run"),
                          "--params", str(fifo)], "a named pipe"),
                        (["eval", "--dataset", "sample", "--scope", "pooled", "--out", str(tmp_path / "run"),
                          "--params", str(zero)], "a character device")):
        done, _ = _cli(*args)
        assert done.returncode != 0 and named in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "run").exists()


@probe("`ask --open` a 30 MB sparse file, and a folder", "refused from its size (or kind) with the bound named; "
       "nothing read", group=GROUP)
def test_an_oversized_traces_file_and_a_folder_are_refused(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(30_000_000)
    done, _ = _cli("ask", "--open", str(big))
    assert done.returncode == 1 and "more than a traces file holds" in done.stderr
    done, _ = _cli("ask", "--open", str(tmp_path))
    assert done.returncode == 1 and "a folder, not a regular file" in done.stderr


@probe("a memory's responses.jsonl that is a named pipe, or /dev/zero by a link",
       "refused as unreadable recordings naming the file, without waiting or reading", group=GROUP)
def test_recordings_that_are_not_a_file_are_refused(tmp_path):
    os.mkfifo(tmp_path / FILE_NAME)
    with pytest.raises(RecordingsFormatError, match="a named pipe"):
        Recordings.load(tmp_path / FILE_NAME)
    other = tmp_path / "other"
    other.mkdir()
    (other / FILE_NAME).symlink_to("/dev/zero")
    with pytest.raises(RecordingsFormatError, match="a character device"):
        Recordings.open(other)


def test_the_reader_reads_a_regular_file_within_its_bound(tmp_path):
    f = tmp_path / "a.json"
    f.write_text('{"a": 1}')
    assert filesafe.read_text(f, 100) == '{"a": 1}'
    with pytest.raises(filesafe.UnreadableFile, match=r"more than a parameters file holds \(at most 4 bytes\)"):
        filesafe.read_bytes(f, 4, what="parameters file")
    link = tmp_path / "link.json"
    link.symlink_to(f)
    with pytest.raises(filesafe.LinkRefused):
        filesafe.read_bytes(link, 100, follow_links=False)
    assert filesafe.read_bytes(link, 100) == b'{"a": 1}'
