"""Where a batch call's instructions go: callgrind counts only inside one call of
`add_many` / `contains_many` (`--toggle-collect` on the method's PyO3 wrapper) on a
BloomFilter(n, 0.01), and prints them per item, by function. The machine's load does not
change the counts.

    target/py-bench-venv/bin/python crates/bloomkit-py/bench/batch_callgrind.py \\
        [--n 1000000] [--calls many_in,many_add,np_in,np_add] [--types str,int]

(after crates/bloomkit-py/bench/run has made that venv). Items as in bench/peers.py:
random 29-byte names or random 62-bit ints; `many_*` pass a list, `np_*` a NumPy int64
array (ints only). For `*_in` the items are added first (outside the count), so every
answer is True. At n = 10**6 the filter (1.14 MiB) is past the L2, so the batches take the
prefetching window.
"""

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile


def workload(call, item_type, n):
    import bloomkit

    rng = random.Random(1)
    if item_type == "int":
        xs = [rng.getrandbits(62) for _ in range(n)]
    else:
        xs = [f"user-{rng.getrandbits(48):012x}@example.org" for _ in range(n)]
    if call.startswith("np_"):
        import numpy as np

        xs = np.array(xs, dtype=np.int64)
    f = bloomkit.BloomFilter(n, 0.01)
    if call.endswith("_in"):
        f.add_many(xs)
        f.contains_many(xs)
    else:
        f.add_many(xs)


def count(call, item_type, n):
    method = "contains_many" if call.endswith("_in") else "add_many"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             "--collect-atstart=no",
             f"--toggle-collect=_bloomkit::Filter::__pymethod_{method}__",
             sys.executable, __file__, "--child", call, "--types", item_type, "--n", str(n)],
            capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        report = subprocess.run(["callgrind_annotate", "--inclusive=no", out],
                                capture_output=True, text=True, check=True).stdout
    rows = []
    for line in report.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(.*)", line)
        if m:
            # "file:function [object]": the function, without CPython's source path.
            label = m.group(2).split(" [")[0].replace("???:", "")
            label = re.sub(r"^/\S*?\.[ch]:", "", label)
            rows.append((int(m.group(1).replace(",", "")) / n, label))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--calls", default="many_in,many_add,np_in,np_add")
    parser.add_argument("--types", default="str,int")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        workload(args.child, args.types, args.n)
        return
    print(f"# load {os.getloadavg()[0]:.2f} (instruction counts do not depend on it)",
          file=sys.stderr)
    for item_type in args.types.split(","):
        for call in args.calls.split(","):
            if call.startswith("np_") and item_type != "int":
                continue
            rows = count(call, item_type, args.n)
            total = next(cost for cost, label in rows if "PROGRAM TOTALS" in label)
            print(f"## {call}, {item_type}, n = {args.n}: {total:.0f} instructions per item")
            for cost, label in rows:
                if cost >= 1.0 and "PROGRAM TOTALS" not in label:
                    print(f"  {cost:6.1f}  {label}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
