"""Files, bytes, pickling: the library's checksummed format, and Python's errors for
missing, unwritable and damaged files."""

import copy
import errno
import pickle
import random
import subprocess
import sys

import pytest

import bloomkit

ALL = list(bloomkit.KINDS)


def filled(kind, n=200):
    f = bloomkit.KINDS[kind](1000, 0.01)
    f.update(f"item{i}" for i in range(n))
    return f


@pytest.mark.parametrize("kind", ALL)
def test_save_and_load_every_kind(kind, tmp_path):
    f = filled(kind)
    path = tmp_path / f"f.{kind}"
    f.save(path)
    for g in (bloomkit.load(path), bloomkit.load(str(path)), bloomkit.KINDS[kind].load(path)):
        assert type(g) is type(f) and g == f
        assert len(g) == len(f) and g.capacity == f.capacity and g.fpp == f.fpp
        assert all(f"item{i}" in g for i in range(200)) or g.forgets
    assert path.read_bytes() == bytes(f)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left


@pytest.mark.parametrize("kind", ALL)
def test_bytes_pickle_and_deepcopy(kind):
    f = filled(kind)
    data = bytes(f)
    assert data == f.to_bytes() and data.startswith(b"BLOOMKIT")
    for g in (bloomkit.from_bytes(data), bloomkit.Filter.from_bytes(data),
              bloomkit.KINDS[kind].from_bytes(bytearray(data)),
              bloomkit.from_bytes(memoryview(data)),
              pickle.loads(pickle.dumps(f)), pickle.loads(pickle.dumps(f, protocol=0)),
              copy.deepcopy(f)):
        assert type(g) is type(f) and g == f
    with pytest.raises(TypeError, match="bytes-like"):
        bloomkit.from_bytes("not bytes")


def test_pickle_keeps_a_picklable_key():
    f = bloomkit.BloomFilter(100, key=str.lower)
    f.add("ABC")
    g = pickle.loads(pickle.dumps(f))
    assert g.key is str.lower and "abc" in g and "AbC" in g


def test_a_kinds_class_refuses_another_kinds_file(tmp_path):
    path = tmp_path / "c.cuckoo"
    bloomkit.CuckooFilter(100).save(path)
    with pytest.raises(bloomkit.FormatError, match="holds a cuckoo filter, not a bloom filter"):
        bloomkit.BloomFilter.load(path)
    with pytest.raises(bloomkit.FormatError, match="cuckoo filter, not a bloom"):
        bloomkit.BloomFilter.from_bytes(path.read_bytes())
    assert type(bloomkit.load(path)) is bloomkit.CuckooFilter


def test_missing_and_unwritable_files_are_os_errors(tmp_path):
    with pytest.raises(FileNotFoundError) as missing:
        bloomkit.load(tmp_path / "nope.bloom")
    assert missing.value.filename == str(tmp_path / "nope.bloom")
    assert "No such file" in str(missing.value)
    with pytest.raises(FileNotFoundError):
        bloomkit.BloomFilter(10).save(tmp_path / "no-dir" / "f.bloom")
    with pytest.raises(IsADirectoryError):
        bloomkit.load(tmp_path)
    with pytest.raises(OSError):
        bloomkit.BloomFilter(10).save(tmp_path)


def test_a_failed_save_keeps_the_old_file(tmp_path):
    """A save that cannot write its file (here: past a file-size limit, which holds for
    root too) raises OSError and leaves the old file whole, with no temporary beside it."""
    path = tmp_path / "f.bloom"
    old = filled("bloom", 20)
    old.save(path)
    code = (
        "import resource, signal, sys, bloomkit\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "try:\n"
        "    bloomkit.BloomFilter(1_000_000).save(sys.argv[1])\n"
        "except OSError as e:\n"
        "    print(type(e).__name__, e.errno)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["OSError", str(errno.EFBIG)]
    assert bloomkit.load(path) == old
    assert [p.name for p in tmp_path.iterdir()] == ["f.bloom"]


@pytest.mark.parametrize("kind", ALL)
def test_damaged_files_are_format_errors_never_crashes(kind, tmp_path):
    data = bytes(filled(kind, 20))
    rng = random.Random(kind)
    damaged = [b"", b"BLOOMKIT", b"not a filter at all", data[:-1], data[: len(data) // 2],
               data + b"\x00"]
    for _ in range(150):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(len(mutated))] ^= 1 << rng.randrange(8)
        damaged.append(bytes(mutated))
    path = tmp_path / "damaged"
    for bad in damaged:
        with pytest.raises(bloomkit.FormatError):
            bloomkit.from_bytes(bad)
        path.write_bytes(bad)
        with pytest.raises(bloomkit.FormatError, match="damaged|not a valid filter file"):
            bloomkit.load(path)
    assert issubclass(bloomkit.FormatError, ValueError)


def test_format_error_names_the_file(tmp_path):
    path = tmp_path / "cut.bloom"
    path.write_bytes(bytes(filled("bloom"))[:100])
    with pytest.raises(bloomkit.FormatError, match=r"cut\.bloom is not a valid filter file: truncated"):
        bloomkit.load(path)


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links and modes are POSIX")
def test_save_through_a_symlink_writes_the_file_it_names_and_keeps_its_mode(tmp_path):
    # save() renamed its new file over the link itself: the link became a plain file, the
    # filter it named never got the item, and a private (0600) file came back 0644.
    import os
    import stat

    real = tmp_path / "data" / "users.bloom"
    real.parent.mkdir()
    f = bloomkit.BloomFilter(100)
    f.save(real)
    os.chmod(real, 0o600)
    link = tmp_path / "users.bloom"
    os.symlink("data/users.bloom", link)
    f.add("alice")
    f.save(link)
    assert link.is_symlink()
    assert "alice" in bloomkit.load(real)
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o600
    assert sorted(p.name for p in real.parent.iterdir()) == ["users.bloom"]


def test_a_busy_lock_and_an_interrupted_write_are_os_errors(tmp_path):
    """The library's `Locked` and `InterruptedWrite` reached Python as plain ValueErrors,
    the exception for a bad parameter. A busy lock is Python's BlockingIOError (errno
    EWOULDBLOCK, as a non-blocking flock gives); an interrupted write is an OSError of the
    package's own, never a FormatError (the file is not damaged) nor a ValueError."""
    from bloomkit._bloomkit import _library_error

    path = tmp_path / "big.bkb"
    locked = _library_error("locked", str(path))
    assert type(locked) is BlockingIOError
    assert locked.errno == errno.EWOULDBLOCK
    assert str(path) in str(locked) and "in use" in str(locked)

    interrupted = _library_error("interrupted-write", str(path))
    assert type(interrupted) is bloomkit.InterruptedWriteError
    assert isinstance(interrupted, OSError)
    assert not isinstance(interrupted, ValueError)
    assert "was interrupted" in str(interrupted) and str(path) in str(interrupted)
    with pytest.raises(ValueError):
        _library_error("no such error", str(path))
