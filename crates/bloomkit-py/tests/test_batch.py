"""Batch calls: any iterable, NumPy integer arrays read in place, lists of str and bytes;
the same answers as the single calls; without the GIL; thread-safe."""

import array
import threading

import numpy as np
import pytest

import bloomkit

ALL = list(bloomkit.KINDS)
INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
              np.intc, np.uintp, np.longlong]


@pytest.mark.parametrize("kind", ALL)
def test_batches_match_single_calls(kind):
    cls = bloomkit.KINDS[kind]
    words = [f"w{i}" for i in range(5000)]
    mixed = words[:100] + [b"raw", 5, -7, 2**64 - 1, ("t", 1), True] + [f"w{i}" for i in range(10)]
    single, batch = cls(20_000), cls(20_000)
    new = sum(single.add(x) for x in words + mixed)
    assert batch.add_many(words) + batch.add_many(iter(mixed)) == new
    assert batch == single and len(batch) == len(single)
    probes = [f"w{i}" for i in range(10_000)] + [b"raw", 5, 6, -7]
    assert batch.contains_many(probes) == [p in single for p in probes]
    assert batch.contains_many(x for x in probes) == [p in single for p in probes]
    assert batch.contains_many([]) == [] and batch.add_many([]) == 0


class Name(str):
    """A str subclass: an item as its UTF-8, through the general path."""


@pytest.mark.parametrize("kind", ["bloom", "blocked", "sbbf", "cuckoo", "counting"])
def test_lists_of_str_take_the_same_bytes_as_single_calls(kind):
    cls = bloomkit.KINDS[kind]
    # ASCII, Latin-1, BMP and astral strings, a subclass, and a chunk (2048 items) of str
    # followed by a chunk mixing str with other items: every path of the batch reader.
    words = [f"w{i}" for i in range(3000)] + ["café", "日本語", "🦀x", Name("sub"), ""]
    mixed = [f"m{i}" for i in range(2100)] + [7, b"w1", ("w", 2)]
    single, batch = cls(20_000), cls(20_000)
    for x in words + mixed:
        single.add(x)
    batch.add_many(words)
    batch.add_many(mixed)
    assert batch == single
    probes = words + mixed + [f"absent{i}" for i in range(3000)]
    assert batch.contains_many(probes) == [p in single for p in probes]
    assert batch.contains_many(tuple(probes)) == [p in single for p in probes]


class Count(int):
    """An int subclass: an item by the general rule."""


@pytest.mark.parametrize("kind", ["bloom", "blocked", "sbbf", "cuckoo", "counting"])
def test_lists_of_int_take_the_same_bytes_as_single_calls(kind):
    cls = bloomkit.KINDS[kind]
    # A chunk (2048 items) of exact ints with the edges of the i64/u64 rule (-1 is the
    # value the C API also uses for errors), then chunks mixing ints with a bool, an int
    # subclass and a str: every path of the batch reader.
    edges = [0, 1, -1, 2**63 - 1, -(2**63), 2**63, 2**64 - 1, 2**32, -(2**32)]
    ints = edges + [i * 7919 - 5000 for i in range(3000)]
    mixed = [i * 31 for i in range(2100)] + [True, Count(12), "12", 12]
    single, batch = cls(20_000), cls(20_000)
    new = sum(single.add(x) for x in ints + mixed)
    assert batch.add_many(ints) + batch.add_many(mixed) == new
    assert batch == single
    probes = ints + mixed + [10**9 + i for i in range(3000)] + [-(10**9) - i for i in range(99)]
    assert batch.contains_many(probes) == [p in single for p in probes]
    assert batch.contains_many(iter(probes)) == [p in single for p in probes]


def test_an_int_past_64_bits_in_a_list_is_an_overflow_and_the_chunk_before_it_stays():
    f = bloomkit.BloomFilter(10_000)
    with pytest.raises(OverflowError):
        f.add_many([1, 2, 2**64])
    with pytest.raises(OverflowError):
        f.contains_many([5, -(2**63) - 1])
    first = list(range(10_000, 12_048))
    with pytest.raises(OverflowError):
        f.add_many(first + [3, 2**70])
    assert all(f.contains_many(first))
    assert f.contains_many([1, 2, 3]) == [x in f for x in [1, 2, 3]]


def test_a_lone_surrogate_is_an_error_and_the_chunk_before_it_stays():
    f = bloomkit.BloomFilter(10_000)
    with pytest.raises(UnicodeEncodeError):
        f.add_many(["a", "\ud800", "b"])
    with pytest.raises(UnicodeEncodeError):
        f.contains_many(["a", "\ud800"])
    with pytest.raises(UnicodeEncodeError):
        f.add_many([f"x{i}" for i in range(2048)] + ["\udfff"])
    assert all(f.contains_many([f"x{i}" for i in range(2048)]))


def test_a_key_function_that_empties_the_list_reads_no_freed_item():
    items = [f"k{i}" for i in range(5000)]

    def key(x):
        items.clear()  # the batch reader must not read past the list's new end
        return x

    f = bloomkit.BloomFilter(10_000, key=key)
    assert f.add_many(items) <= 2048
    assert "k0" in f


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_numpy_integer_arrays_are_their_ints(dtype):
    info = np.iinfo(dtype)
    values = np.array([info.min, info.max, 0, 1, info.max // 3, info.min // 3], dtype=dtype)
    batch, single = bloomkit.BlockedBloomFilter(1000), bloomkit.BlockedBloomFilter(1000)
    batch.add_many(values)
    for v in values.tolist():
        single.add(v)
    assert batch == single
    answers = batch.contains_many(values)
    assert isinstance(answers, np.ndarray) and answers.dtype == np.bool_
    assert answers.tolist() == [True] * len(values)


@pytest.mark.parametrize("kind", ALL)
def test_numpy_arrays_strided_and_sliced(kind):
    cls = bloomkit.KINDS[kind]
    values = np.arange(-3000, 3000, dtype=np.int64)
    views = [values[::2], values[::-3], values[10:20], values.astype(np.int32)[1::5]]
    for view in views:
        batch, single = cls(10_000), cls(10_000)
        assert batch.add_many(view) == sum(single.add(int(v)) for v in view)
        assert batch == single
        probes = np.arange(-3100, 3100, 7, dtype=np.int64)
        assert batch.contains_many(probes).tolist() == [int(p) in single for p in probes]


def test_other_buffers_and_arrays():
    f = bloomkit.BloomFilter(1000)
    f.add_many(array.array("q", [1, -2, 3]))
    assert all(x in f for x in (1, -2, 3))
    f.add_many(b"\x07\x08")  # bytes iterate as ints, and so do they add
    assert 7 in f and 8 in f and b"\x07" not in f
    f.add_many(np.array(["np-str", "two"]))  # not integers: iterated (NumPy str is str)
    assert "np-str" in f
    f.add_many(np.array([[11, 12], [13, 14]]))  # two dimensions: iterated, each row its bytes
    assert np.array([11, 12]).tobytes() in f
    with pytest.raises(TypeError, match="key="):
        f.add_many(np.array([1.5, 2.5]))
    assert f.contains_many(array.array("q", [1, 99])) == [True, False]  # a list, not numpy


def test_update_takes_several_iterables_and_returns_none():
    f = bloomkit.BloomFilter(1000)
    assert f.update(["a"], ("b",), {"c"}, range(3), np.arange(5, 7)) is None
    assert all(x in f for x in ["a", "b", "c", 0, 1, 2, 5, 6])
    with pytest.raises(TypeError):
        f.update(5)


@pytest.mark.parametrize("present", [0, 1, 2, 50, 98, 99, 100])
def test_answers_are_the_bool_singletons_of_single_calls_whichever_value_is_rarer(present):
    # The answer list is made as [majority] * n with the other value set where it falls:
    # all absent, all present, a tie and everything between.
    f = bloomkit.BloomFilter(10_000, 0.0001)
    f.add_many([f"p{i}" for i in range(present)])
    probes = [f"p{i}" for i in range(present)] + [f"a{i}" for i in range(100 - present)]
    probes = probes[1::2] + probes[::2]  # present and absent interleaved
    answers = f.contains_many(probes)
    assert type(answers) is list and len(answers) == 100
    assert all(a is (p in f) for a, p in zip(answers, probes))
    assert sum(answers) == present


def test_a_chunk_of_a_list_is_read_by_its_first_item_and_falls_back_on_a_mix():
    # Chunks of 2048 items: ints then a str, strs then an int, a str subclass first, bytes
    # first, bools among ints; each chunk of the list is sorted on its own.
    chunks = [
        [i * 3 for i in range(2047)] + ["x"],
        [f"s{i}" for i in range(2047)] + [-5],
        [Name("n0")] + [f"n{i}" for i in range(1, 2048)],
        [b"b0"] + [f"b{i}" for i in range(1, 2048)],
        [True, False] + list(range(100, 2146)),
        [f"t{i}" for i in range(1000)],
    ]
    items = [x for chunk in chunks for x in chunk]
    single, batch = bloomkit.BloomFilter(30_000), bloomkit.BloomFilter(30_000)
    new = sum(single.add(x) for x in items)
    assert batch.add_many(items) == new
    assert batch == single
    probes = items + [f"absent{i}" for i in range(3000)] + list(range(-3000, 0))
    assert batch.contains_many(probes) == [p in single for p in probes]


def test_a_non_item_in_a_list_is_a_type_error_and_its_chunk_is_not_added():
    f = bloomkit.BloomFilter(10_000)
    with pytest.raises(TypeError, match="key="):
        f.add_many(["a", "b", object(), "c"])
    with pytest.raises(TypeError, match="key="):
        f.add_many([1, 2, 3.5])
    with pytest.raises(TypeError, match="key="):
        f.contains_many(["a", None])
    assert len(f) == 0 and f.contains_many(["a", "b", "c", 1, 2]) == [False] * 5
    first = [f"x{i}" for i in range(2048)]
    with pytest.raises(TypeError):
        f.add_many(first + ["y", [1]])
    assert all(f.contains_many(first)) and "y" not in f and len(f) == 2048


def test_batches_take_many_items_in_chunks():
    f = bloomkit.SplitBlockBloomFilter(200_000)
    assert f.add_many(np.arange(100_000, dtype=np.uint64)) >= 99_000
    assert f.contains_many(np.arange(100_000)).all()
    assert f.add_many(str(i) for i in range(50_000)) >= 49_000
    assert all(f.contains_many([str(i) for i in range(50_000)]))


def test_concurrent_adds_from_threads_lose_nothing():
    f = bloomkit.CountingBloomFilter(400_000, 0.001)
    threads_n, per_thread = 8, 20_000
    barrier = threading.Barrier(threads_n)

    def work(t):
        barrier.wait()
        mine = [f"t{t}-{i}" for i in range(per_thread)]
        for i in range(0, per_thread, 4000):
            f.add_many(mine[i:i + 2000])  # batches, without the GIL
            for item in mine[i + 2000:i + 4000]:  # and single adds, with it
                f.add(item)
        f.add_many(np.arange(t * per_thread, (t + 1) * per_thread))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(f) == 2 * threads_n * per_thread  # a counting filter counts every add
    assert all(f.contains_many([f"t{t}-{i}" for t in range(threads_n) for i in range(per_thread)]))
    assert f.contains_many(np.arange(threads_n * per_thread)).all()


def test_single_calls_while_a_batch_works_without_the_gil_lose_nothing():
    """Single calls (with the GIL) and batch calls (without it) on one filter at the same
    time: a single call that finds a batch at work waits for it, so no count or counter
    is lost. The batches run back to back until the single adds are done, so every single
    add lands while the batch thread is at work, however the threads are scheduled."""
    f = bloomkit.CountingBloomFilter(2_000_000, 0.01)
    batch = np.arange(10**9, 10**9 + 50_000, dtype=np.int64)
    wanted = 200
    running = threading.Event()
    stop = threading.Event()
    batches = []

    def run_batches():
        running.set()
        while not stop.is_set():
            f.add_many(batch)
            batches.append(1)

    singles = 0
    t = threading.Thread(target=run_batches)
    t.start()
    running.wait()
    while singles < wanted or len(batches) < 2:
        f.add(singles)
        singles += 1
        f.add_many([-singles])  # a short batch, which runs with the GIL as single calls do
    stop.set()
    t.join()
    rounds = len(batches)
    # A counting filter counts every add.
    assert len(f) == rounds * len(batch) + 2 * singles
    assert all(f.contains_many(list(range(singles))))
    assert all(f.contains_many([-i for i in range(1, singles + 1)]))
    f.remove(0)
    assert len(f) == rounds * len(batch) + 2 * singles - 1


def test_batches_release_the_gil():
    """Another Python thread runs while a long batch call is in Rust: without the GIL
    released, it could not run a line between the call's start and end."""
    import time

    f = bloomkit.BloomFilter(10_000)
    keys = np.arange(6_000_000, dtype=np.int64)
    stamps = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0005)

    t = threading.Thread(target=ticker)
    t.start()
    windows = []
    try:
        for call in (f.add_many, f.contains_many, f.add_many, f.contains_many):
            time.sleep(0.01)
            start = time.perf_counter()
            call(keys)
            windows.append((call.__name__, start, time.perf_counter()))
    finally:
        done.set()
        t.join()
    # Held, the GIL lets the other thread in once at most (as the call starts); released,
    # the other thread runs every half millisecond of the call's 0.1 s or so.
    ran = [(name, sum(start < s < end for s in stamps)) for name, start, end in windows]
    assert all(n >= 5 for _, n in ran), ran


@pytest.mark.parametrize("fail_at", [0, 5, 2047, 2048, 3000])
def test_an_iterable_that_raises_part_way_keeps_the_items_before_it(fail_at):
    # As set.update: what the generator yielded before it raised is in the filter, and the
    # filter equals one given those items alone. (The items of an unfinished chunk of 2048
    # were dropped.)
    def items():
        for i in range(5000):
            if i == fail_at:
                raise RuntimeError("the source failed")
            yield f"g{i}"

    for kind in ["bloom", "cuckoo", "counting"]:
        f = bloomkit.KINDS[kind](10_000)
        with pytest.raises(RuntimeError, match="the source failed"):
            f.add_many(items())
        expected = bloomkit.KINDS[kind](10_000)
        for i in range(fail_at):
            expected.add(f"g{i}")
        assert f == expected and len(f) == len(expected), kind
        assert all(f.contains_many([f"g{i}" for i in range(fail_at)]))


def test_a_key_function_that_raises_part_way_keeps_the_items_before_it():
    def key(x):
        if x == 3000:
            raise ValueError("no key for 3000")
        return f"k{x}"

    f = bloomkit.BloomFilter(10_000, key=key)
    with pytest.raises(ValueError, match="no key for 3000"):
        f.add_many(iter(range(5000)))
    assert len(f) == 3000 and all(f.contains_many(range(3000)))
