"""Instructions per item of bloomkit's calls and of a Python loop over rbloom, counted by
valgrind (callgrind): a measure the machine's load does not change, for decisions.

    target/py-bench-venv/bin/python crates/bloomkit-py/bench/instructions.py [--n 100000]

(after crates/bloomkit-py/bench/run has made that venv). For each call, the program is run
under callgrind twice, once building the items and filters only and once also making the
call on every item; the difference ÷ n is the call's instructions per item, interpreter
loop included where there is one. Items: n random 29-byte names (`user-…@example.org`),
every filter built for n at ε = 1% and holding the items.
"""

import argparse
import os
import re
import subprocess
import sys

CALLS = {
    "rbloom: for x in xs: x in rb": "rbloom in",
    "rbloom: for x in xs: rb.add(x)": "rbloom add",
    "{kind}: for x in xs: x in f": "loop in",
    "{kind}: for x in xs: f.add(x)": "loop add",
    "{kind}: f.contains_many(xs)": "many in",
    "{kind}: f.add_many(xs)": "many add",
}


def workload(n: int, kind: str, call: str) -> None:
    import random

    import rbloom

    import bloomkit

    rng = random.Random(1)
    xs = [f"user-{rng.getrandbits(48):012x}@example.org" for _ in range(n)]
    rb = rbloom.Bloom(n, 0.01)
    rb.update(xs)
    f = getattr(bloomkit, kind)(n, 0.01)
    f.add_many(xs)
    if call == "rbloom in":
        for x in xs:
            x in rb  # noqa: B015
    elif call == "rbloom add":
        for x in xs:
            rb.add(x)
    elif call == "loop in":
        for x in xs:
            x in f  # noqa: B015
    elif call == "loop add":
        for x in xs:
            f.add(x)
    elif call == "many in":
        f.contains_many(xs)
    elif call == "many add":
        f.add_many(xs)


def count(n: int, kind: str, call: str) -> int:
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, "--child", call, "--n", str(n), "--kind", kind],
        capture_output=True, text=True, check=True,
        # One string-hash seed for every run: with a random one, set and dict work outside
        # the measured call differs between the two runs whose difference is taken.
        env={**os.environ, "PYTHONHASHSEED": "0"})
    return int(re.search(r"refs:\s+([\d,]+)", run.stderr).group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--kinds", default="BloomFilter,BlockedBloomFilter,SplitBlockBloomFilter")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--kind", default="BloomFilter", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        workload(args.n, args.kind, args.child)
        return
    print(f"# n = {args.n}, load {os.getloadavg()[0]:.2f} (instruction counts do not depend on it)",
          file=sys.stderr)
    print("| call | instructions per item |")
    print("|---|---|")
    for kind in args.kinds.split(","):
        base = count(args.n, kind, "none")
        for label, call in CALLS.items():
            if call.startswith("rbloom") and kind != args.kinds.split(",")[0]:
                continue
            per_item = (count(args.n, kind, call) - base) / args.n
            print(f"| {label.format(kind=kind)} | {per_item:.0f} |", flush=True)


if __name__ == "__main__":
    main()
