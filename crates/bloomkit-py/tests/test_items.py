"""Items: the bytes of the Rust library's `Item` for the same values (README, "The
library"), never Python's hash()."""

import array
import os
import subprocess
import sys

import numpy as np
import pytest

import bloomkit
from bloomkit import item_bytes

LE = "little"


def test_str_is_utf8_and_bytes_as_is():
    assert item_bytes("héllo") == "héllo".encode()
    assert item_bytes(b"\x00\xff") == b"\x00\xff"
    assert item_bytes(bytearray(b"ab")) == b"ab"
    assert item_bytes(memoryview(b"abc")[1:]) == b"bc"
    assert item_bytes(array.array("I", [1])) == (1).to_bytes(4, LE)
    assert item_bytes(np.array([1, 2], dtype=np.int16)) == b"\x01\x00\x02\x00"
    f = bloomkit.BloomFilter(100)
    f.add("ab")
    assert b"ab" in f and bytearray(b"ab") in f and memoryview(b"ab") in f


def test_ints_are_i64_or_u64_little_endian():
    assert item_bytes(42) == (42).to_bytes(8, LE)
    assert item_bytes(-5) == (-5).to_bytes(8, LE, signed=True)
    assert item_bytes(-(2**63)) == (2**63).to_bytes(8, LE)
    assert item_bytes(2**64 - 1) == b"\xff" * 8
    # The sign is not part of the bytes: -1 and 2**64 - 1 are one item, as in Rust.
    assert item_bytes(-1) == item_bytes(2**64 - 1)
    for big in (2**64, -(2**63) - 1, 10**30):
        with pytest.raises(OverflowError, match="64 bits"):
            item_bytes(big)
        with pytest.raises(OverflowError):
            bloomkit.BloomFilter(10).add(big)


def test_numpy_integers_are_the_ints_they_equal():
    for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        assert item_bytes(dtype(7)) == item_bytes(7)
    assert item_bytes(np.int32(-3)) == item_bytes(-3)


def test_bool_is_one_byte_as_rust_bool():
    assert item_bytes(True) == b"\x01" and item_bytes(False) == b"\x00"
    f = bloomkit.BloomFilter(100)
    f.add(True)
    assert True in f and 1 not in f


def test_tuples_are_length_prefixed_elements():
    expected = (2).to_bytes(8, LE) + b"ab" + (8).to_bytes(8, LE) + (7).to_bytes(8, LE)
    assert item_bytes(("ab", 7)) == expected
    assert item_bytes(("ab", "c")) != item_bytes(("a", "bc"))
    assert item_bytes((("a", "b"),)) != item_bytes(("a", "b"))
    assert item_bytes(("ab",)) != item_bytes("ab")
    with pytest.raises(TypeError, match="empty tuple"):
        item_bytes(())
    with pytest.raises(TypeError, match="float"):
        item_bytes(("a", 1.5))


@pytest.mark.parametrize("bad", [1.5, None, [1], {"a": 1}, {1}, object(), np.float32(1.0),
                                 np.float64(2.0), 1j])
def test_other_objects_are_type_errors_that_name_key(bad):
    f = bloomkit.BloomFilter(100)
    for call in (f.add, f.__contains__, bloomkit.item_bytes):
        with pytest.raises(TypeError, match="key="):
            call(bad)
    with pytest.raises(TypeError, match="key="):
        f.add_many([bad])
    with pytest.raises(TypeError, match="key="):
        f.contains_many(["fine", bad])


def test_key_turns_objects_into_items():
    class User:
        def __init__(self, name, year):
            self.name, self.year = name, year

    f = bloomkit.BloomFilter(100, key=lambda u: (u.name, u.year))
    f.add(User("ada", 1815))
    assert User("ada", 1815) in f
    assert User("ada", 1816) not in f
    assert f.add_many([User("bob", 1), User("cy", 2)]) == 2
    assert f.contains_many([User("bob", 1), User("bob", 2)]) == [True, False]
    # The key's item is the filter's item: the same filter as adding the tuple itself.
    keyed = bloomkit.BloomFilter(100, key=lambda u: (u.name, u.year))
    keyed.add(User("ada", 1815))
    plain = bloomkit.BloomFilter(100)
    plain.add(("ada", 1815))
    assert keyed == plain
    assert f.key is not None and f.copy().key is f.key


def test_items_do_not_depend_on_pythons_hash_seed():
    code = (
        "import bloomkit; f = bloomkit.BloomFilter(1000); "
        "f.update(['a', 'b', ('c', 1), 2]); import sys; sys.stdout.write(bytes(f).hex())"
    )
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1


EDGE_INTS = [0, 1, -1, 42, -5, 2**31, 2**63 - 1, 2**63, -(2**63), 2**64 - 1]
EDGE_STRS = ["", "ab", "user-0123456789ab@example.org", "é", "日本", "😀", "a\x00b"]


def test_single_calls_on_exact_str_and_int_hash_the_bytes_of_the_item_rule():
    # add and `in` take exact str and int through their own fast path; it must land on
    # the bytes item_bytes gives (the general rule, shared with Rust), for every kind.
    for cls in bloomkit.KINDS.values():
        if cls.forgets:
            continue
        by_value, by_bytes = cls(1000), cls(1000)
        for x in EDGE_INTS + EDGE_STRS:
            by_value.add(x)
            by_bytes.add(item_bytes(x))
        assert by_value == by_bytes, cls.__name__
        for x in EDGE_INTS + EDGE_STRS:
            assert x in by_bytes and item_bytes(x) in by_value, (cls.__name__, x)
    f = bloomkit.BloomFilter(100)
    for big in (2**64, -(2**63) - 1):
        with pytest.raises(OverflowError, match="64 bits"):
            big in f  # noqa: B015


def test_int_subclasses_take_the_general_rule():
    import enum

    class Level(enum.IntEnum):
        HIGH = 7

    f = bloomkit.BloomFilter(100)
    f.add(Level.HIGH)
    assert 7 in f and Level.HIGH in f


def test_numpy_bools_are_the_bools_they_equal():
    # A NumPy bool (an element of a bool array) was a TypeError whose message listed bool
    # among the items.
    assert item_bytes(np.True_) == item_bytes(True) and item_bytes(np.False_) == item_bytes(False)
    f = bloomkit.BloomFilter(100)
    f.add(np.True_)
    assert True in f and np.True_ in f and False not in f
    g = bloomkit.BloomFilter(100)
    assert g.add_many(np.array([True, False])) == 2
    assert g.contains_many(np.array([True, False])).tolist() == [True, True]
    assert g == bloomkit.BloomFilter(100) | f | bloomkit.BloomFilter.from_bytes(bytes(g))
    assert item_bytes((np.True_, "x")) == item_bytes((True, "x"))
