"""Type stubs for bloomkit: approximate-membership filters, set-like."""

import os
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Self, TypeAlias

from typing_extensions import Buffer

__version__: str

#: What a filter holds: str (UTF-8), bytes-like objects (as they are), int
#: (-2**63 <= x < 2**64, as Rust's i64/u64), bool (one byte) and tuples of these.
Item: TypeAlias = str | bytes | bytearray | memoryview | int | bool | tuple[Any, ...]

class FormatError(ValueError):
    """The bytes or file are not a valid bloomkit filter (damaged, cut short, not a filter,
    or another kind than the class asked for)."""

class FullError(RuntimeError):
    """The filter cannot take another item; every item already in is kept."""

class InterruptedWriteError(OSError):
    """A write to the file was interrupted (its writer died mid-flush) and its journal must
    be replayed before the file can be read, which takes someone who can write the file to
    open it for writing. The file is not damaged: once that is done it reads as before.

    The library's other file troubles are OSErrors too: a file missing or not allowed is a
    ``FileNotFoundError`` or ``PermissionError``, and a file whose lock another writer holds
    (where the caller asked not to wait) a ``BlockingIOError`` with ``errno.EWOULDBLOCK``,
    Python's own exception for a lock that is busy. (Only the library's on-disk filter,
    not yet in this package, locks files or journals its writes.)"""

class Filter:
    """The base of every kind's class: build ``BloomFilter(capacity, fpp)`` or another
    class of ``KINDS``."""

    #: The kind's name (``"bloom"``, ``"cuckoo"``, …): a class attribute of each kind's
    #: class, and the instances' kind.
    kind: ClassVar[str]
    #: One line on the kind: structure, paper, what it offers.
    summary: ClassVar[str]
    #: Whether ``remove``/``discard`` work (else they raise TypeError).
    can_remove: ClassVar[bool]
    #: Whether ``|`` and ``|=`` work (else they raise TypeError).
    can_merge: ClassVar[bool]
    #: Whether the filter grows past its capacity and keeps its error bound.
    can_grow: ClassVar[bool]
    #: Whether the kind forgets old items by design (false negatives).
    forgets: ClassVar[bool]

    def __init__(
        self,
        capacity: int,
        fpp: float | None = None,
        *,
        bits: int | None = None,
        hashes: int | None = None,
        key: Callable[[Any], Item] | None = None,
    ) -> None:
        """A filter for ``capacity`` items at false-positive probability ``fpp`` (0.01 when
        not given).

        ``bits`` (m, the number of cells) and ``hashes`` (k) set the dimensions instead of
        the kind's formulas, as ``bloomkit create -m M -k K`` does; with ``bits`` and no
        ``fpp``, ε is the rate those dimensions give at ``capacity``. ValueError for a
        capacity below 1, an fpp outside (0, 1), or a dimension the kind does not have;
        ``key`` turns every object added or asked for into an item."""
    @property
    def capacity(self) -> int:
        """The number of items the filter was sized for (n)."""
    @property
    def fpp(self) -> float:
        """The false-positive probability ε the filter was built for."""
    @property
    def memory_bytes(self) -> int:
        """The bytes the filter's storage takes in memory."""
    @property
    def key(self) -> Callable[[Any], Item] | None:
        """The key function given at construction, or None."""
    def add(self, item: Any, /) -> bool:
        """Adds an item; True when it was certainly not in the filter before."""
    def __contains__(self, item: object, /) -> bool:
        """False: certainly not added. True: maybe (wrong with probability ε)."""
    def remove(self, item: Any, /) -> bool:
        """Removes one copy (the kinds with ``can_remove``, else TypeError); KeyError when
        the item is certainly absent. False when a deletable filter had to keep it."""
    def discard(self, item: Any, /) -> bool:
        """``remove``, but an item certainly absent is no error (False)."""
    def add_many(self, items: Iterable[Any] | Buffer, /) -> int:
        """Adds every item; returns how many were certainly new. NumPy integer arrays are
        read in place; the work runs without the GIL (a batch of fewer than 64 items, with
        it). If the iterable (or the key function) raises part-way, the items before that
        point are added, as ``set.update`` adds them, and the exception is raised."""
    def update(self, *iterables: Iterable[Any]) -> None:
        """Adds every item of every iterable (``add_many`` of each)."""
    def contains_many(self, items: Iterable[Any] | Buffer, /) -> Any:
        """Whether each item may be in the filter: a list of bools, or a NumPy bool array
        for a NumPy array (read in place, without the GIL)."""
    def __len__(self) -> int:
        """Items added (minus removed); the set-like kinds count an item once."""
    def clear(self) -> None:
        """Empties the filter; its parameters stay."""
    def copy(self) -> Self:
        """An independent copy (same class, parameters, items and key)."""
    def __copy__(self) -> Self: ...
    def __deepcopy__(self, memo: dict[int, Any], /) -> Self: ...
    def __or__(self, other: Filter, /) -> Self:
        """A new filter with the items of both (same kind and parameters)."""
    def __ior__(self, other: Filter, /) -> Self:
        """Adds the items of ``other`` (same kind and parameters)."""
    def __eq__(self, other: object, /) -> bool:
        """Same kind, parameters and content."""
    __hash__: ClassVar[None]  # type: ignore[assignment]
    def estimated_len(self) -> float:
        """Distinct items estimated from the fill."""
    def expected_fpp(self) -> float:
        """The false-positive probability now, from the fill."""
    def properties(self) -> dict[str, str]:
        """The kind's own facts, as ``bloomkit info`` prints them."""
    def to_bytes(self) -> bytes:
        """The filter in the bloomkit file format (``bytes(f)`` is the same)."""
    def __bytes__(self) -> bytes: ...
    def save(self, path: str | os.PathLike[str], /) -> None:
        """Writes the file atomically; the CLI and Rust read it."""
    @classmethod
    def from_bytes(
        cls, data: Buffer, /, *, key: Callable[[Any], Item] | None = None
    ) -> Self:
        """The filter in ``data``; FormatError when damaged or of another kind."""
    @classmethod
    def load(
        cls, path: str | os.PathLike[str], /, *, key: Callable[[Any], Item] | None = None
    ) -> Self:
        """The filter in a file; FileNotFoundError/OSError, FormatError when damaged."""
    def __sizeof__(self) -> int: ...

class BloomFilter(Filter):
    """The classic Bloom filter (Bloom 1970): m bits, k hashes."""

class BlockedBloomFilter(Filter):
    """All k bits of an item in one 64-byte cache line (Putze, Sanders & Singler 2007)."""

class CountingBloomFilter(Filter):
    """Counters instead of bits: can remove (Fan, Cao, Almeida & Broder 2000)."""

class VariableIncrementBloomFilter(Filter):
    """Counters grown by hashed increments: can remove (Rottenstreich et al. 2014)."""

class DeletableBloomFilter(Filter):
    """Regions and a collision bitmap: can remove most items (Rothenberg et al. 2010)."""

class ScalableBloomFilter(Filter):
    """Grows past its capacity with a bounded error (Almeida et al. 2007)."""

class StableBloomFilter(Filter):
    """Duplicate detection on unbounded streams; forgets old items (Deng & Rafiei 2006)."""

class CuckooFilter(Filter):
    """Fingerprints in buckets: can remove; can become full (Fan et al. 2014)."""

class SplitBlockBloomFilter(Filter):
    """Apache Parquet's split block Bloom filter."""

class SpectralBloomFilter(Filter):
    """Frequency estimates (Cohen & Matias 2003)."""

class WeightedBloomFilter(Filter):
    """k per item from its query frequency (Bruck, Gao & Jiang 2006)."""

class GeneralizedBloomFilter(Filter):
    """Bits set and reset; forgets by design (Laufer et al.)."""

class CompressedBloomFilter(Filter):
    """Sized for the bytes sent, not held (Mitzenmacher 2002)."""

class RobustBloomFilter(Filter):
    """robustBF, the 2D filter (Nayak & Patgiri 2021)."""

class PartitionedBloomFilter(Filter):
    """The partitioned Bloom filter (Chang et al. 2004): k slices, one bit per slice."""

#: Every kind's class by the kind's name, in the Rust registry's order.
KINDS: dict[str, type[Filter]]

def kinds() -> list[dict[str, Any]]:
    """Every kind of the registry: name, type_name, summary, can_remove, can_merge,
    can_grow, forgets."""

def load(
    path: str | os.PathLike[str], /, *, key: Callable[[Any], Item] | None = None
) -> Filter:
    """The filter in a file, as an instance of its kind's class."""

def from_bytes(data: Buffer, /, *, key: Callable[[Any], Item] | None = None) -> Filter:
    """The filter in bytes, as an instance of its kind's class."""

def item_bytes(item: Any, /) -> bytes:
    """The bytes a filter hashes for ``item`` (those of the Rust library's ``Item``)."""

def __getattr__(name: str) -> type[Filter]:
    """A kind added to the Rust registry after these stubs were written."""
