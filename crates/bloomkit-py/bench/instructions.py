"""Instructions per item of bloomkit's calls and of a Python loop over rbloom, counted by
valgrind (callgrind): a measure the machine's load does not change, for decisions.

    target/py-bench-venv/bin/python crates/bloomkit-py/bench/instructions.py \\
        [--n 20000] [--batch-n 1000000] [--types str,int] [--kinds BloomFilter] [--only CALLS]

(after crates/bloomkit-py/bench/run has made that venv). Each count runs a program under
callgrind twice: it builds n items and the filters (each for n items at ε = 1%, holding
the items, every item asked for once), then makes the measured call on every item once,
and in the second run three times; the difference ÷ 2n is the call's instructions per
item, the interpreter's loop included where there is one (`for x in xs: x in f` in a
function: the loop costs about 150 of them, the same for every library). Both runs do
exactly the same work before the call, so the difference is exact (PYTHONHASHSEED=0 fixes
the string hashes). Items: random 29-byte names (`user-…@example.org`) or random 62-bit
ints. `--short 1,8,32,64,128` counts instead `add_many` of short lists of names (2 000
calls, a BloomFilter for 10⁵ items), per call. The batch calls are counted at --batch-n, past the size where the classic filter's
batches switch to their prefetching path (10⁶ items at ε = 1%: 1.14 MiB).
"""

import argparse
import os
import re
import subprocess
import sys

#: label -> (call, whether it is a batch call)
CALLS = {
    "rbloom: for x in xs: x in rb": ("rbloom in", False),
    "rbloom: for x in xs: rb.add(x)": ("rbloom add", False),
    "{kind}: for x in xs: x in f": ("loop in", False),
    "{kind}: for x in xs: f.add(x)": ("loop add", False),
    "{kind}: f.contains_many(xs), a list": ("many in", True),
    "{kind}: f.add_many(xs), a list": ("many add", True),
    "{kind}: f.contains_many(a), a NumPy int64 array": ("numpy in", True),
    "{kind}: f.add_many(a), a NumPy int64 array": ("numpy add", True),
}


def loop_in(f, xs):
    for x in xs:
        x in f  # noqa: B015


def loop_add(f, xs):
    for x in xs:
        f.add(x)


def workload(n: int, kind: str, item_type: str, call: str, reps: int) -> None:
    import random

    import rbloom

    import bloomkit

    rng = random.Random(1)
    if item_type == "int":
        xs = [rng.getrandbits(62) for _ in range(n)]
    else:
        xs = [f"user-{rng.getrandbits(48):012x}@example.org" for _ in range(n)]
    if call.startswith("rbloom"):
        f = rbloom.Bloom(n, 0.01)
    else:
        f = getattr(bloomkit, kind)(n, 0.01)
    loop_add(f, xs)
    loop_in(f, xs)
    if call.startswith("numpy"):
        import numpy as np

        a = np.array(xs, dtype=np.int64)
    for _ in range(reps):
        if call.endswith("loop in") or call == "rbloom in":
            loop_in(f, xs)
        elif call.endswith("loop add") or call == "rbloom add":
            loop_add(f, xs)
        elif call == "many in":
            f.contains_many(xs)
        elif call == "many add":
            f.add_many(xs)
        elif call == "numpy in":
            f.contains_many(a)
        elif call == "numpy add":
            f.add_many(a)


def short_batches(size: int, reps: int) -> None:
    """2 000 calls of `add_many` on lists of `size` names, into a BloomFilter for 10⁵ items
    (every list added and asked for once first), `reps` times."""
    import random

    import bloomkit

    rng = random.Random(1)
    lists = [[f"user-{rng.getrandbits(48):012x}@example.org" for _ in range(size)]
             for _ in range(2000)]
    f = bloomkit.BloomFilter(100_000, 0.01)
    for items in lists:
        f.add_many(items)
    for items in lists:
        f.contains_many(items)
    for _ in range(reps):
        for items in lists:
            f.add_many(items)


def count(n: int, kind: str, item_type: str, call: str, reps: int) -> int:
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, "--child", call, "--n", str(n), "--kinds", kind, "--types", item_type,
         "--reps", str(reps)],
        capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"})
    return int(re.search(r"refs:\s+([\d,]+)", run.stderr).group(1).replace(",", ""))


def per_item(n: int, kind: str, item_type: str, call: str) -> float:
    return (count(n, kind, item_type, call, 3) - count(n, kind, item_type, call, 1)) / (2 * n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="items for the single calls")
    parser.add_argument("--batch-n", type=int, default=1_000_000, help="items for the batches")
    parser.add_argument("--kinds", default="BloomFilter")
    parser.add_argument("--types", default="str,int")
    parser.add_argument("--only", default=None,
                        help="calls to count, comma-separated (rbloom in, loop in, many add, …)")
    parser.add_argument("--short", default=None,
                        help="instead: add_many of short lists of these lengths (1,8,64), per call")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--reps", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "short":
        short_batches(args.n, args.reps)
        return
    if args.child:
        workload(args.n, args.kinds, args.types, args.child, args.reps)
        return
    if args.short:
        print("| add_many of a list of | instructions per call |")
        print("|---|---|")
        for size in (int(s) for s in args.short.split(",")):
            calls = (count(size, "", "", "short", 3) - count(size, "", "", "short", 1)) / 4000
            print(f"| {size} str | {calls:.0f} |", flush=True)
        return
    only = set(args.only.split(",")) if args.only else None
    print(f"# load {os.getloadavg()[0]:.2f} (instruction counts do not depend on it)",
          file=sys.stderr)
    print("| call | items | instructions per item |")
    print("|---|---|---|")
    kinds = args.kinds.split(",")
    for item_type in args.types.split(","):
        for kind in kinds:
            for label, (call, batch) in CALLS.items():
                if only is not None and call not in only:
                    continue
                if call.startswith("rbloom") and kind != kinds[0]:
                    continue
                if call.startswith("numpy") and item_type != "int":
                    continue
                n = args.batch_n if batch else args.n
                cost = per_item(n, kind, item_type, call)
                print(f"| {label.format(kind=kind)} | {item_type} | {cost:.0f} |", flush=True)


if __name__ == "__main__":
    main()
