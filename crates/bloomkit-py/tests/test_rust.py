"""The same values as Rust items (crates/bloomkit/examples/cross_check.rs): equal bytes, and filters that
answer the same in Rust and in Python, both ways, for every kind."""

import subprocess

import pytest

import bloomkit
from conftest import KEEPING

#: The values of cross_check.rs's `each_item`, as Python writes them.
ITEMS = {
    "str": "héllo wörld",
    "empty str": "",
    "bytes": b"\x00\xffraw",
    "negative int": -5,
    "min i64": -(2**63),
    "small int": 42,
    "large int": 2**63 + 5,
    "max u64": 2**64 - 1,
    "true": True,
    "false": False,
    "pair": ("user", 7),
    "nested": (("a", -1), b"z", True),
    "four": (1, "two", b"3", -4),
}
#: Its `each_absent`.
ABSENT = {
    "absent str": "hello world",
    "absent int": 43,
    "absent pair": ("user", 8),
    "absent swapped pair": ("a", "bc"),
}


def rust(cross_check, *args):
    out = subprocess.run([str(cross_check), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return dict(line.split("\t") for line in out.stdout.splitlines())


def test_item_bytes_equal_rusts(cross_check):
    expected = rust(cross_check, "bytes")
    assert set(expected) == set(ITEMS) | set(ABSENT)
    for name, value in {**ITEMS, **ABSENT}.items():
        assert bloomkit.item_bytes(value).hex() == expected[name], name


@pytest.mark.parametrize("kind", KEEPING)
def test_a_filter_built_in_python_answers_the_same_in_rust(kind, cross_check, tmp_path):
    f = bloomkit.KINDS[kind](1000, 1e-3)
    f.update(ITEMS.values())
    path = tmp_path / "py.filter"
    f.save(path)
    got = rust(cross_check, "read", path)
    assert {n: got[n] for n in ITEMS} == {n: "yes" for n in ITEMS}
    assert {n: got[n] for n in ABSENT} == {n: "yes" if v in f else "no" for n, v in ABSENT.items()}
    assert all(got[n] == "no" for n in ABSENT)


@pytest.mark.parametrize("kind", KEEPING)
def test_a_filter_built_in_rust_answers_the_same_in_python(kind, cross_check, tmp_path):
    path = tmp_path / "rust.filter"
    rust(cross_check, "write", kind, path)
    f = bloomkit.load(path)
    assert type(f) is bloomkit.KINDS[kind]
    assert [name for name, value in ITEMS.items() if value not in f] == []
    assert [name for name, value in ABSENT.items() if value in f] == []
    mine = bloomkit.KINDS[kind](1000, 1e-3)
    mine.update(ITEMS.values())
    assert mine == f  # the same bytes, item for item
