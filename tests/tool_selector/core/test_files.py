"""The size-limited reader of files a person names (tool_selector/core/files.py): a device, a FIFO or a file
over the limit is refused at once, saying the file, the limit and what to do."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tool_selector.core.errors import CalibrationError, CatalogFileError
from tool_selector.core.files import describe_size, read_bytes_limited, read_text_limited


def test_dev_zero_is_refused_without_being_read() -> None:
    with pytest.raises(CatalogFileError, match="character device, not a regular file") as caught:
        read_bytes_limited(Path("/dev/zero"), limit_bytes=1024, what="client configuration")
    assert "/dev/zero" in str(caught.value) and "Give the path of a regular file" in str(caught.value)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused: list[BaseException] = []

    def read() -> None:
        try:
            read_bytes_limited(fifo, limit_bytes=1024, what="catalog file")
        except CatalogFileError as exc:
            refused.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # it blocked on open: let it finish, then fail
        with open(fifo, "wb"):
            pass
        reader.join(10)
        pytest.fail("reading a FIFO waited for a writer")
    assert refused and "FIFO" in str(refused[0])


def test_a_file_over_the_limit_is_refused_naming_the_file_the_limit_and_the_setting(tmp_path: Path) -> None:
    big = tmp_path / "tools.json"
    big.write_bytes(b"[" + b" " * 2048 + b"]")
    with pytest.raises(CatalogFileError) as caught:
        read_bytes_limited(big, limit_bytes=2048, what="catalog file")
    error = caught.value
    assert f"The catalog file {big} is 2.0 KiB (2050 bytes)" in error.message
    assert "over the limit of 2 KiB (2048 bytes); it was not read" in error.message
    assert "max_file_bytes" in error.hint and "TOOL_SELECTOR_MAX_FILE_BYTES" in error.hint
    assert error.details == {"path": str(big), "limit_bytes": 2048}


def test_a_file_of_exactly_the_limit_is_read_whole(tmp_path: Path) -> None:
    exact = tmp_path / "queries.txt"
    exact.write_bytes(b"a\r\nb" + b"c" * 1020)
    assert read_text_limited(exact, limit_bytes=1024, what="queries file") == "a\nb" + "c" * 1020


def test_a_proc_file_of_reported_size_zero_is_held_to_the_limit_as_it_is_read() -> None:
    # /proc files report size 0 and are read to their end: the limit holds as they are read
    with pytest.raises(CalibrationError, match="reading stopped there"):
        read_bytes_limited(Path("/proc/self/maps"), limit_bytes=16, what="map", error=CalibrationError)


def test_a_missing_file_raises_the_oserror_for_its_caller_to_word(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bytes_limited(tmp_path / "nowhere.json", limit_bytes=1024, what="catalog file")


def test_sizes_read_as_a_person_reads_them_and_exactly() -> None:
    assert describe_size(64 * 2**20) == "64 MiB (67108864 bytes)"
    assert describe_size(1536) == "1.5 KiB (1536 bytes)"
    assert describe_size(100) == "100 bytes"
