"""The set-like API, on every kind of the registry."""

import ast
import math
import copy
from pathlib import Path

import numpy as np
import pytest

import bloomkit
from conftest import KEEPING

ALL = list(bloomkit.KINDS)
REMOVING = [k for k, cls in bloomkit.KINDS.items() if cls.can_remove]
NOT_REMOVING = [k for k in ALL if k not in REMOVING]
MERGING = [k for k, cls in bloomkit.KINDS.items() if cls.can_merge]
NOT_MERGING = [k for k in ALL if k not in MERGING]


def test_one_class_per_registered_kind():
    infos = bloomkit.kinds()
    assert [i["name"] for i in infos] == ALL
    assert len(infos) >= 14
    for info in infos:
        cls = getattr(bloomkit, info["type_name"])
        assert cls is bloomkit.KINDS[info["name"]]
        assert issubclass(cls, bloomkit.Filter)
        assert cls.__module__ == "bloomkit" and cls.__name__ == info["type_name"]
        assert cls.kind == info["name"]
        assert cls.can_remove == info["can_remove"] and cls.can_merge == info["can_merge"]
        assert info["summary"] in cls.__doc__
        assert info["type_name"] in bloomkit.__all__
    for name in ["BloomFilter", "BlockedBloomFilter", "CountingBloomFilter", "CuckooFilter",
                 "ScalableBloomFilter", "SplitBlockBloomFilter"]:
        assert hasattr(bloomkit, name)
    assert REMOVING == ["counting", "vi-counting", "deletable", "cuckoo", "spectral"]


def test_stubs_name_what_the_module_has():
    stub = Path(bloomkit.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    kinds_in_stub = {n for n, c in classes.items() if any(
        isinstance(b, ast.Name) and b.id == "Filter" for b in c.bases)}
    assert kinds_in_stub == {i["type_name"] for i in bloomkit.kinds()}
    stub_members = {n.name for n in classes["Filter"].body if isinstance(n, ast.FunctionDef)}
    runtime = {n for n in vars(bloomkit.Filter) if not n.startswith("_")}
    assert runtime - stub_members - {"kind"} == set()
    assert (stub_members - {"__init__"}) <= set(dir(bloomkit.Filter))
    assert (Path(bloomkit.__file__).parent / "py.typed").exists()
    for name in ["add", "add_many", "contains_many", "save", "load", "remove"]:
        assert getattr(bloomkit.Filter, name).__doc__


@pytest.mark.parametrize("kind", ALL)
def test_add_contains_len(kind):
    f = bloomkit.KINDS[kind](1000, 0.01)
    assert len(f) == 0 and not f
    assert f.add("alice") is True
    assert "alice" in f
    assert "mallory" not in f
    f.update(["bob", "carol"], ("dave",))
    assert all(x in f for x in ["alice", "bob", "carol", "dave"])
    assert len(f) == 4 and f
    assert f.kind == kind and f.capacity == 1000
    assert f.memory_bytes > 0
    assert 0 < f.expected_fpp() < 0.01
    assert 0 < f.estimated_len() < 10
    assert repr(f).startswith(f"<{type(f).__name__} capacity=1000")
    assert f.properties()


def test_add_says_whether_new():
    f = bloomkit.BloomFilter(1000)
    assert f.add("x") is True
    assert f.add("x") is False
    assert len(f) == 1
    c = bloomkit.CountingBloomFilter(1000)
    c.add("x")
    c.add("x")
    assert len(c) == 2  # a multiset


def test_parameters_read_back():
    f = bloomkit.BloomFilter(58_110, 0.001)
    assert (f.capacity, f.fpp, f.kind) == (58_110, 0.001, "bloom")
    assert f.properties()["bits (m)"] == "835482"
    assert bloomkit.BloomFilter(10).fpp == 0.01


@pytest.mark.parametrize("kind", REMOVING)
def test_remove_and_discard(kind):
    f = bloomkit.KINDS[kind](1000)
    f.update(["a", "b"])
    assert f.remove("a") is True
    assert "a" not in f and "b" in f
    with pytest.raises(KeyError):
        f.remove("never")
    assert f.discard("never") is False
    assert f.discard("b") is True
    assert len(f) == 0


@pytest.mark.parametrize("kind", NOT_REMOVING)
def test_remove_refused_where_the_kind_cannot(kind):
    f = bloomkit.KINDS[kind](1000)
    f.add("a")
    for method in (f.remove, f.discard):
        with pytest.raises(TypeError, match=f"{kind} filter cannot remove.*CountingBloomFilter"):
            method("a")
    assert "a" in f


@pytest.mark.parametrize("kind", MERGING)
def test_union(kind):
    cls = bloomkit.KINDS[kind]
    a, b = cls(1000), cls(1000)
    a.add("a")
    b.add("b")
    u = a | b
    assert type(u) is cls
    assert "a" in u and "b" in u
    assert "b" not in a  # | makes a new filter
    a |= b
    assert "b" in a and a == u
    with pytest.raises(ValueError, match="not compatible"):
        a | cls(2000)


@pytest.mark.parametrize("kind", NOT_MERGING)
def test_union_refused_where_the_kind_cannot(kind):
    cls = bloomkit.KINDS[kind]
    a = cls(1000)
    with pytest.raises(TypeError, match="cannot merge"):
        a | cls(1000)
    with pytest.raises(TypeError, match="cannot merge"):
        a |= cls(1000)


def test_union_with_other_kinds_and_objects():
    a = bloomkit.BloomFilter(1000)
    with pytest.raises(ValueError, match="bloom filter cannot be merged with a counting"):
        a | bloomkit.CountingBloomFilter(1000)
    with pytest.raises(TypeError):
        a | {"x"}
    with pytest.raises(TypeError):
        a |= {"x"}


@pytest.mark.parametrize("kind", ALL)
def test_copy_clear_and_equality(kind):
    cls = bloomkit.KINDS[kind]
    f = cls(1000)
    f.update(["a", "b"])
    for g in (f.copy(), copy.copy(f), copy.deepcopy(f)):
        assert type(g) is cls and g == f and g is not f
        g.add("c")
        assert "c" in g and "c" not in f
        assert g != f
    f.clear()
    assert len(f) == 0 and "a" not in f
    assert f == cls(1000)
    assert f != cls(1001)
    assert f != "a filter"
    with pytest.raises(TypeError, match="unhashable"):
        hash(f)


def test_bad_parameters():
    for capacity in (0, -1, 2**64):
        with pytest.raises(ValueError, match="capacity"):
            bloomkit.BloomFilter(capacity)
    for fpp in (0.0, 1.0, -0.5, 1.5, float("nan")):
        with pytest.raises(ValueError, match="false-positive probability"):
            bloomkit.BloomFilter(100, fpp)
    with pytest.raises(TypeError, match="capacity must be an int"):
        bloomkit.BloomFilter(10.0)
    with pytest.raises(TypeError, match="capacity must be an int"):
        bloomkit.BloomFilter(True)
    assert bloomkit.BloomFilter(np.int64(100), np.float32(0.5)).capacity == 100
    with pytest.raises(TypeError):
        bloomkit.BloomFilter(100, "0.01")
    with pytest.raises(TypeError, match="base of the kinds"):
        bloomkit.Filter(100)
    with pytest.raises(TypeError, match="key must be a function"):
        bloomkit.BloomFilter(100, key=3)
    with pytest.raises((ValueError, MemoryError)):
        bloomkit.BloomFilter(2**63, 1e-9)


@pytest.mark.parametrize("kind", ALL)
def test_every_kind_refuses_bad_parameters_with_value_error(kind):
    with pytest.raises(ValueError):
        bloomkit.KINDS[kind](0)
    with pytest.raises(ValueError):
        bloomkit.KINDS[kind](100, 2.0)


def test_a_full_cuckoo_filter_raises_full_error_and_keeps_its_items():
    f = bloomkit.CuckooFilter(4)
    added = []
    with pytest.raises(bloomkit.FullError, match="full"):
        for i in range(1000):
            f.add(i)
            added.append(i)
    assert all(i in f for i in added)
    with pytest.raises(bloomkit.FullError, match="items of this call before it were added, it and the items after it were not"):
        bloomkit.CuckooFilter(4).add_many(range(1000))
    for items in (range(1000), [str(i) for i in range(1000)], np.arange(1000)):
        f = bloomkit.CuckooFilter(4)
        with pytest.raises(bloomkit.FullError):
            f.add_many(items)
        went_in = len(f)  # distinct items into a multiset: each one that went in counts
        assert 10 < went_in < 1000
        assert all(f.contains_many(list(items)[:went_in]))
    assert issubclass(bloomkit.FullError, RuntimeError)


def test_scalable_filter_grows():
    f = bloomkit.ScalableBloomFilter(100, 0.01)
    f.add_many(range(10_000))
    assert all(i in f for i in range(10_000))
    assert f.memory_bytes > bloomkit.ScalableBloomFilter(100, 0.01).memory_bytes


def test_subclasses_keep_their_class():
    class Mine(bloomkit.BloomFilter):
        __slots__ = ()

    m = Mine(100)
    m.add("a")
    assert type(m.copy()) is Mine and type(m | m) is Mine
    assert type(Mine.from_bytes(bytes(m))) is Mine


def test_bits_and_hashes_set_the_dimensions():
    f = bloomkit.BloomFilter(1000, bits=5000, hashes=4)
    facts = f.properties()
    assert facts["bits (m)"] == "5000" and facts["hash functions (k)"] == "4"
    assert f.capacity == 1000
    # ε is the rate of those dimensions at capacity: (1 − e^{−kn/m})^k.
    assert f.fpp == pytest.approx((1 - math.exp(-4 * 1000 / 5000)) ** 4, rel=0.01)
    f.add_many([f"x{i}" for i in range(1000)])
    assert all(f.contains_many([f"x{i}" for i in range(1000)]))
    g = bloomkit.BloomFilter(1000, bits=5000)
    assert g.properties()["bits (m)"] == "5000"
    assert bloomkit.BloomFilter(1, bits=1, hashes=1).fpp == 1.0
    with pytest.raises(ValueError, match="bits"):
        bloomkit.CuckooFilter(1000, bits=5000)
    with pytest.raises(ValueError, match="hashes"):
        bloomkit.ScalableBloomFilter(1000, hashes=3)
    with pytest.raises(ValueError):
        bloomkit.BloomFilter(1000, bits=0)
    with pytest.raises((ValueError, OverflowError)):
        bloomkit.BloomFilter(1000, bits=-1)
