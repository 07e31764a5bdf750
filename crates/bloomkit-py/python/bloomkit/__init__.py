"""Approximate-membership filters: the classic Bloom filter and its family.

A filter answers "is x in the set?" with *definitely not* (``x not in f``) or *maybe*
(``x in f``), in a fraction of the memory the set would need, with a false-positive
probability ``fpp`` (ε) chosen when it is built::

    import bloomkit
    users = bloomkit.BloomFilter(1_000_000, 0.01)
    users.add("alice")
    "alice" in users      # True: maybe
    "mallory" in users    # False: definitely not (wrong with probability ε)

There is one class per kind of the Rust library's registry (``KINDS`` maps each kind's
name to its class): ``BloomFilter``, ``BlockedBloomFilter``, ``CountingBloomFilter``,
``CuckooFilter``, ``ScalableBloomFilter``, ``SplitBlockBloomFilter``, … All share the
methods of ``Filter``; ``remove``/``discard`` work on the kinds whose ``can_remove`` is
True, ``|`` and ``|=`` on those whose ``can_merge`` is.

Items are ``str`` (hashed as UTF-8), bytes-like objects (as they are), ``int``
(-2**63 <= x < 2**64, as Rust's ``i64``/``u64``: 8 little-endian bytes), ``bool`` (one
byte) and tuples of these (each element's length as 8 little-endian bytes, then its
bytes) — the bytes the Rust library's ``Item`` gives for the same values, so a filter
saved here answers the same in ``bloomkit check`` and in Rust. Python's ``hash()`` is
never used. Other objects need ``key=``, a function that turns each into an item.
"""

from ._bloomkit import (
    Filter,
    FormatError,
    FullError,
    InterruptedWriteError,
    __version__,
    item_bytes,
    kinds,
)

__all__ = [
    "Filter",
    "FormatError",
    "FullError",
    "InterruptedWriteError",
    "KINDS",
    "from_bytes",
    "item_bytes",
    "kinds",
    "load",
]

#: Every kind's class by the kind's name (``"bloom"``, ``"cuckoo"``, …), in the order of
#: the Rust library's registry.
KINDS: dict = {}


def _kind_class(info: dict) -> type:
    abilities = ", ".join(
        f"{word}: {'yes' if info[flag] else 'no'}"
        for word, flag in (
            ("remove", "can_remove"),
            ("merge (| and |=)", "can_merge"),
            ("grow past capacity", "can_grow"),
            ("forgets old items by design", "forgets"),
        )
    )
    doc = (
        f"{info['type_name']}(capacity, fpp=0.01, *, bits=None, hashes=None, key=None)\n\n"
        f"The {info['name']} filter: {info['summary']}\n\n"
        f"Can {abilities}.\n\n"
        "A filter for `capacity` items at false-positive probability `fpp`; every method is "
        "Filter's."
    )
    return type(
        info["type_name"],
        (Filter,),
        {
            "__slots__": (),
            "__module__": __name__,
            "__qualname__": info["type_name"],
            "__doc__": doc,
            "kind": info["name"],
            "summary": info["summary"],
            "can_remove": info["can_remove"],
            "can_merge": info["can_merge"],
            "can_grow": info["can_grow"],
            "forgets": info["forgets"],
        },
    )


for _info in kinds():
    _cls = _kind_class(_info)
    globals()[_info["type_name"]] = _cls
    KINDS[_info["name"]] = _cls
    __all__.append(_info["type_name"])
del _info, _cls

#: load(path, *, key=None): the filter in a file, of whatever kind the file holds.
load = Filter.load
#: from_bytes(data, *, key=None): the filter in bytes, of whatever kind they hold.
from_bytes = Filter.from_bytes


def _restore(cls: type, data: bytes, key):
    """Unpickles a filter (what ``Filter.__reduce__`` names)."""
    return cls.from_bytes(data, key=key)
