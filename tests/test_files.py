"""Safe writes and reads (profiler.files) and the crash log of an unexpected error."""

from __future__ import annotations

import os
import stat

import pytest

from profiler import files
from profiler.errors import DataError, OutputError, UsageError


def test_write_replaces_atomically_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "r.html"
    target.write_text("old")
    files.write_text(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    assert stat.S_IMODE(target.stat().st_mode) & 0o044  # readable as other files, not 0600


def test_a_planted_temporary_link_is_not_written_through(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "d"
    out.mkdir()
    (out / ".r.html.tmp").symlink_to(victim)
    files.write_text(out / "r.html", "report")
    assert victim.read_text() == "precious" and (out / "r.html").read_text() == "report"


@pytest.mark.parametrize("make", ["dir", "symlink", "fifo", "device"])
def test_a_target_that_is_not_a_regular_file_is_refused(tmp_path, make):
    target = tmp_path / "t"
    if make == "dir":
        target.mkdir()
    elif make == "symlink":
        (tmp_path / "real").write_text("x")
        target.symlink_to(tmp_path / "real")
    elif make == "fifo":
        os.mkfifo(target)
    else:
        target = files.Path("/dev/full")
    with pytest.raises(UsageError) as err:
        files.write_text(target, "x")
    assert str(target) in str(err.value)
    if make == "symlink":
        assert (tmp_path / "real").read_text() == "x"
    if make == "device":
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_an_output_that_is_an_input_is_refused(tmp_path):
    src = tmp_path / "run.json"
    src.write_text("{}")
    with pytest.raises(UsageError, match="also an input"):
        files.write_text(tmp_path / "." / "run.json", "x", inputs=[src], what="-o")
    assert src.read_text() == "{}"


def test_a_failing_write_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(OutputError, match="out.txt"):
        with files.atomic_output(target, binary=False) as fh:
            fh.write("half")
            raise OSError(28, "No space left on device")
    assert target.read_text() == "old" and len(list(tmp_path.iterdir())) == 1


def test_an_unwritable_directory_is_an_output_error(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):  # root ignores the mode
            pytest.skip("running as root: a read-only directory is still writable")
        with pytest.raises(OutputError):
            files.write_text(ro / "x", "y")
    finally:
        ro.chmod(0o700)


def test_reads_refuse_fifos_directories_and_oversized_files(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="not a regular file"):
        files.read_text(fifo)  # would block forever if it were opened for a plain read
    with pytest.raises(DataError, match="directory"):
        files.read_text(tmp_path)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 100)
    with pytest.raises(DataError, match="100 bytes"):
        files.read_bytes(big, limit=10)
    with pytest.raises(DataError, match="no such file"):
        files.read_text(tmp_path / "absent")
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DataError, match="not UTF-8"):
        files.read_text(tmp_path / "bin")


def test_output_dir_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "f"
    f.write_text("")
    with pytest.raises(UsageError, match="not a directory"):
        files.check_output_dir(f)


def test_an_internal_error_is_one_line_and_a_log(tmp_path, monkeypatch, capsys):
    from profiler import cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def boom(args):
        raise RuntimeError("kaboom\nsecond line")

    monkeypatch.setattr(cli, "build_parser", _parser_with(boom))
    assert cli.main(["x"]) == 5
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "RuntimeError: kaboom" in err
    log = next((tmp_path / "profgen" / "logs").iterdir())
    assert str(log) in err and "Traceback" in log.read_text() and "second line" in log.read_text()


def _parser_with(handler):
    import argparse

    def build():
        p = argparse.ArgumentParser()
        p.add_argument("x")
        p.set_defaults(handler=handler)
        return p

    return build
