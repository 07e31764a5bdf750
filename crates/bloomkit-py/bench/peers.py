"""bloomkit against the Python filters people use, in one run, on the same items.

    crates/bloomkit-py/bench/run            # venv, pinned peers, release build, this script

For each item type (str, int) and n (10**6, 10**7): the time per call of `add` and `in`
in a Python loop (one call per item, as a user writes it; the peers take turns, best of
three rounds at 10**6 and of two at 10**7), of the batch calls (bloomkit's
add_many/contains_many, rbloom's update, fastbloom-rs's batch methods), the false-positive
rate measured on n items never added, and bits per item. Every filter is built for n
items at ε = 1%. Prints a Markdown table (BENCHMARKS.md has the one of the last run).

Peers that are not installed are left out; pybloom-live (pure Python) is timed at 10**6
only, since at 10**7 one run takes minutes.

    crates/bloomkit-py/bench/run --quick    # bloomkit's BloomFilter against rbloom, < 2 min

`--quick` times bloomkit (`--kinds`, BloomFilter by default) and rbloom only, at 10**6
(`--sizes`), str and int, peers taking turns (best of five rounds), and prints each of the
issue's targets as a ratio: `in`/`add` per call as bloomkit's time ÷ rbloom's (at most 1 is
met), the batch calls as a Python loop over rbloom ÷ bloomkit's batch (at least 5 is met;
lists of str and of int, and a NumPy int64 array).
"""

import argparse
import gc
import os
import platform
import random
import sys
import time

import numpy as np

import bloomkit

FPP = 0.01


def items_of(kind, n, seed):
    rng = random.Random(seed)
    if kind == "int":
        return [rng.getrandbits(62) for _ in range(n)]
    return [f"user-{rng.getrandbits(48):012x}@example.org" for _ in range(n)]


def timed(fn, n):
    """ns per item of fn(), best of two runs for small n (one for large)."""
    runs = 2 if n <= 1_000_000 else 1
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e9 / n


def loop_add(add, items):
    for x in items:
        add(x)


def loop_in(f, items):
    hits = 0
    for x in items:
        if x in f:
            hits += 1
    return hits


class Peer:
    """A library's filter, with the calls the table measures (None where it has none)."""

    name = ""

    def new(self, n): ...

    def bits(self, f, n): ...

    def batch_add(self, f, items, arr):
        return None

    def batch_in(self, f, items, arr):
        return None

    def add(self, f):
        return f.add

    def loop_in(self, f, items):
        return loop_in(f, items)


class Bloomkit(Peer):
    def __init__(self, cls):
        self.cls = cls
        self.name = f"bloomkit {cls.__name__}"

    def new(self, n):
        return self.cls(n, FPP)

    def bits(self, f, n):
        return f.memory_bytes * 8 / n

    def batch_add(self, f, items, arr):
        return f.add_many(arr if arr is not None else items)

    def batch_in(self, f, items, arr):
        return f.contains_many(arr if arr is not None else items)


class Rbloom(Peer):
    name = "rbloom (default hash)"

    def new(self, n):
        import rbloom

        return rbloom.Bloom(n, FPP)

    def bits(self, f, n):
        return f.size_in_bits / n

    def batch_add(self, f, items, arr):
        f.update(items)
        return True


class FastbloomRs(Peer):
    name = "fastbloom-rs"

    def new(self, n):
        from fastbloom_rs import FilterBuilder

        return FilterBuilder(n, FPP).build_bloom_filter()

    def bits(self, f, n):
        return len(f.get_bytes()) * 8 / n

    def loop_in(self, f, items):
        contains = f.contains
        hits = 0
        for x in items:
            if contains(x):
                hits += 1
        return hits

    def batch_add(self, f, items, arr):
        if isinstance(items[0], int):
            f.add_int_batch(items)
        else:
            f.add_str_batch(items)
        return True

    def batch_in(self, f, items, arr):
        if isinstance(items[0], int):
            return f.contains_int_batch(items)
        return f.contains_str_batch(items)


class PybloomLive(Peer):
    name = "pybloom-live"
    max_n = 1_000_000

    def new(self, n):
        import pybloom_live

        return pybloom_live.BloomFilter(n, FPP)

    def bits(self, f, n):
        return f.num_bits / n


class Pybloomfiltermmap3(Peer):
    name = "pybloomfiltermmap3"

    def new(self, n):
        import pybloomfilter

        return pybloomfilter.BloomFilter(n, FPP)

    def bits(self, f, n):
        return f.num_bits / n


def available():
    peers = [Bloomkit(bloomkit.BloomFilter), Bloomkit(bloomkit.BlockedBloomFilter),
             Bloomkit(bloomkit.SplitBlockBloomFilter)]
    for peer, module in ((Rbloom(), "rbloom"), (FastbloomRs(), "fastbloom_rs"),
                         (PybloomLive(), "pybloom_live"),
                         (Pybloomfiltermmap3(), "pybloomfilter")):
        try:
            __import__(module)
            peers.append(peer)
        except ImportError:
            print(f"# {peer.name}: not installed, left out", file=sys.stderr)
    return peers


def once(fn, n):
    """ns per item of one run of fn()."""
    gc.collect()
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e9 / n


def per_call(peers, items, n):
    """Each peer's filter and the best ns per item of its `add` and `in` loops, the peers
    taking turns: every round times every peer once, so that a change in the machine's
    load during the run falls on all of them alike (timed peer after peer, a busy minute
    made whichever peer it met look slow)."""
    rounds = 3 if n <= 1_000_000 else 2
    filters = [peer.new(n) for peer in peers]
    best = [{"add": float("inf"), "in": float("inf")} for _ in peers]
    for _ in range(rounds):
        for peer, f, times in zip(peers, filters, best):
            times["add"] = min(times["add"], once(lambda: loop_add(peer.add(f), items), n))
            times["in"] = min(times["in"], once(lambda: peer.loop_in(f, items), n))
    return filters, best


def measure(peer, f, times, kind, n, items, absent, arr, absent_arr):
    row = {"library": peer.name, "items": kind, "n": n, **times}
    sample = items[: min(n, 100_000)]
    assert peer.loop_in(f, sample) == len(sample), f"{peer.name}: false negatives"
    row["fpr"] = peer.loop_in(f, absent) / len(absent)
    row["bits"] = peer.bits(f, n)
    g = peer.new(n)
    if peer.batch_add(g, items[:1], arr[:1] if arr is not None else None) is not None:
        g = peer.new(n)
        row["add batch"] = timed(lambda: peer.batch_add(g, items, arr), n)
    answers = peer.batch_in(f, items[:1], arr[:1] if arr is not None else None)
    if answers is not None:
        row["in batch"] = timed(lambda: peer.batch_in(f, absent, absent_arr), n)
    return row


def fmt(row, key):
    value = row.get(key)
    if value is None:
        return "—"
    if key == "fpr":
        return f"{value * 100:.3f}%"
    if key == "bits":
        return f"{value:.2f}"
    return f"{value:.0f}"


def best_of(fn, n, rounds):
    """The best ns per item of `rounds` runs of fn()."""
    return min(once(fn, n) for _ in range(rounds))


def quick(sizes, kinds):
    """bloomkit against rbloom only, each target of issue 20 as a ratio (see the module's
    documentation)."""
    import rbloom

    rounds = 5
    print(f"# quick: {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at start; best of {rounds}",
          file=sys.stderr)
    header = ["bloomkit", "items", "n", "in ÷ rbloom", "add ÷ rbloom",
              "rbloom add loop ÷ add_many", "rbloom in loop ÷ contains_many",
              "FPR ours / rbloom", "bits ours / rbloom"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for n in sizes:
        for item_type in ("str", "int"):
            items = items_of(item_type, n, seed=1)
            present = set(items)
            absent = [x for x in items_of(item_type, n, seed=2) if x not in present]
            batches = {"list": items}
            if item_type == "int":
                batches["numpy"] = np.array(items, dtype=np.int64)
            for cls in kinds:
                ours, theirs = cls(n, FPP), rbloom.Bloom(n, FPP)
                t = {"ours add": [], "ours in": [], "rb add": [], "rb in": []}
                for _ in range(rounds):
                    for name, f in (("ours", ours), ("rb", theirs)):
                        t[f"{name} add"].append(once(lambda: loop_add(f.add, items), n))
                        t[f"{name} in"].append(once(lambda: loop_in(f, items), n))
                t = {k: min(v) for k, v in t.items()}
                batch = []
                for how, arg in batches.items():
                    add_ns = best_of(lambda: cls(n, FPP).add_many(arg), n, 3)
                    in_ns = best_of(lambda: ours.contains_many(arg), n, 3)
                    batch.append((how, t["rb add"] / add_ns, t["rb in"] / in_ns))
                fpr = (loop_in(ours, absent) / len(absent), loop_in(theirs, absent) / len(absent))
                bits = (ours.memory_bytes * 8 / n, theirs.size_in_bits / n)
                cells = [
                    cls.__name__, item_type, f"10^{len(str(n)) - 1}",
                    f"{t['ours in'] / t['rb in']:.2f} ({t['ours in']:.0f}/{t['rb in']:.0f} ns)",
                    f"{t['ours add'] / t['rb add']:.2f} ({t['ours add']:.0f}/{t['rb add']:.0f} ns)",
                    ", ".join(f"{a:.1f}× ({how})" for how, a, _ in batch),
                    ", ".join(f"{c:.1f}× ({how})" for how, _, c in batch),
                    f"{fpr[0] * 100:.3f}% / {fpr[1] * 100:.3f}%",
                    f"{bits[0]:.2f} / {bits[1]:.2f}",
                ]
                print("| " + " | ".join(cells) + " |", flush=True)
    print(f"# load {os.getloadavg()[0]:.2f} at the end", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=None,
                        help="n, comma-separated (default 1000000,10000000; 1000000 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="bloomkit against rbloom only, the targets as ratios")
    parser.add_argument("--kinds", default="BloomFilter",
                        help="with --quick: bloomkit classes, comma-separated")
    args = parser.parse_args()
    if args.quick:
        quick([int(s) for s in (args.sizes or "1000000").split(",")],
              [getattr(bloomkit, k) for k in args.kinds.split(",")])
        return
    sizes = [int(s) for s in (args.sizes or "1000000,10000000").split(",")]
    peers = available()
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at start", file=sys.stderr)
    header = ["library", "items", "n", "add ns", "in ns", "add batch ns", "in batch ns",
              "FPR", "bits/item"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for n in sizes:
        for kind in ("str", "int"):
            items = items_of(kind, n, seed=1)
            absent = items_of(kind, n, seed=2)
            present = set(items)
            absent = [x for x in absent if x not in present]
            arr = np.array(items, dtype=np.int64) if kind == "int" else None
            absent_arr = np.array(absent, dtype=np.int64) if kind == "int" else None
            here = [peer for peer in peers if n <= getattr(peer, "max_n", n)]
            filters, times = per_call(here, items, n)
            for peer, f, t in zip(here, filters, times):
                row = measure(peer, f, t, kind, n, items, absent, arr, absent_arr)
                cells = [row["library"], kind, f"10^{len(str(n)) - 1}", fmt(row, "add"),
                         fmt(row, "in"), fmt(row, "add batch"), fmt(row, "in batch"),
                         fmt(row, "fpr"), fmt(row, "bits")]
                print("| " + " | ".join(cells) + " |", flush=True)
    print(f"# load {os.getloadavg()[0]:.2f} at the end", file=sys.stderr)


if __name__ == "__main__":
    main()
