"""Seed 002's experiment on bloomkit: a Bloom filter in front of a file of user names.

Seed 002 (/work/shared/seeds/002_ee4b1f30388e0c8c.txt, "Análisis de la eficiencia de los
filtros de Bloom", Escobar, López, Valderrama, 2020) pictures a site that keeps n (user
name, e-mail) pairs on disk. When someone who forgot a password types a user name, the
site searches the file for it; many such names were never registered, and each of those
searches reads the file for nothing. A Bloom filter of the registered names, asked first,
answers "definitely not" for most of them, and the file is searched only on "maybe".

What this program does, as the seed's section 5 and annex B describe it:

* for each bigN of the seed's range (2000, 5000, 10000, 15000, 20000), smallN = bigN/2;
* bigN random user names (the universe); the first smallN of them, each with a random
  e-mail, are the lines of the file (Lfile) and are inserted into the filter (B.1);
* for each m of the seed's range (smallN/1000, /100, /50, /10, ×1, ×2 … ×10, that is
  ρ = m/n from 0.001 to 10) a filter of m bits and k = ⌈(m/smallN)·ln 2⌉ hash functions
  (section 5.5), built with ``bloomkit.BloomFilter(n, bits=m, hashes=k)``;
* every one of the bigN names is asked, in random order: the filter first, and only on
  "maybe" a ``grep`` process searches the file (B.2: one ``grep`` per lookup; here
  ``grep -q -e '^name '`` without a shell, so that a name is matched as a whole user name
  and not inside another name or an e-mail);
* per (bigN, m): k, m, the mean time of a filter query (timeBF) and of a grep
  (timeFile), the false positives (a "maybe" whose grep finds nothing), the disk
  accesses (greps run) and the filter's size (sizeBF) — the seed's dictionary (B.3).
  The size is ``objsize.get_deep_size`` when the ``objsize`` package the seed used is
  installed, else ``sys.getsizeof`` (the filter object and its bits).

Beside each row it prints what the seed expects: the false-positive rate
(1 − (1 − 1/m)^{kn})^k of its section 3, the disk accesses smallN + (bigN − smallN)·that
rate, and its Cuadro 1 band for the row's ρ; at the end, its statements on times and
sizes (fig. 3 and 5) beside the means measured here.

    python crates/bloomkit-py/examples/seed002.py                   # the seed's ranges
    python crates/bloomkit-py/examples/seed002.py --bign 2000 --rho 1,5,10
    python crates/bloomkit-py/examples/seed002.py --json            # the rows, as JSON

The seed's full ranges start about 470 000 grep processes (a few minutes to half an hour,
with the machine's process-start time); ``--bign`` and ``--rho`` choose fewer.
"""

import argparse
import json
import math
import os
import random
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bloomkit

#: The seed's bigN values (section 5.5).
SEED_BIGN = [2000, 5000, 10000, 15000, 20000]
#: The seed's m values as ρ = m/smallN (section 5.5).
SEED_RHO = [0.001, 0.01, 0.02, 0.1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
ALPHABET = string.ascii_lowercase + string.digits


def num_hashes(m: int, small_n: int) -> int:
    """The seed's k = ⌈(m / smallN)·ln 2⌉ (section 5.5), at least 1."""
    return max(1, math.ceil(m / small_n * math.log(2)))


def seed_fpp(m: int, k: int, n: int) -> float:
    """The seed's false-positive probability (section 3): (1 − (1 − 1/m)^{kn})^k."""
    return (1.0 - (1.0 - 1.0 / m) ** (k * n)) ** k


def seed_band(rho: float) -> tuple[str, float, float]:
    """The seed's Cuadro 1 row for ρ = m/n: its words and the interval of P(FP) it states
    ("log" there is the natural logarithm: its k = m log 2 / n is the optimal k)."""
    if rho <= 0.02:
        return "m << n: about 1", 0.9, 1.0
    if rho < 1 / math.log(2):
        return "m < n/log 2: in (1/2, 1)", 0.5, 1.0
    if rho <= 2 / math.log(2):
        return "m in [n/log 2, 2n/log 2]: in [1/4, 1/2]", 0.25, 0.5
    return "m > 2n/log 2: below 1/4", 0.0, 0.25


def random_string(rng: random.Random) -> str:
    """generateRandomString(randomLength) of annex B.1: 6 to 12 letters and digits."""
    return "".join(rng.choices(ALPHABET, k=rng.randint(6, 12)))


def generate(rng: random.Random, big_n: int, small_n: int, folder: Path):
    """Annex B.1: the universe of bigN distinct names (universeFile) and the file of the
    first smallN with their e-mails (Lfile)."""
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < big_n:
        name = random_string(rng)
        if name not in seen:
            seen.add(name)
            names.append(name)
    universe = folder / "universeFile"
    universe.write_text("".join(f"{name}\n" for name in names))
    lfile = folder / "Lfile"
    with lfile.open("w") as out:
        for name in names[:small_n]:
            out.write(f"{name} {random_string(rng)}@example.org\n")
    return names, lfile


def search_in_file(name: str, lfile: Path) -> bool:
    """Annex B.2: one grep process per lookup; True when the file has the name."""
    found = subprocess.run(["grep", "-q", "-e", f"^{name} ", str(lfile)],
                           stdin=subprocess.DEVNULL)
    if found.returncode > 1:
        raise RuntimeError(f"grep failed on {lfile} (status {found.returncode})")
    return found.returncode == 0


def size_of(f) -> tuple[int, str]:
    """sizeBF: objsize's deep size when installed (what the seed used), else getsizeof."""
    try:
        import objsize
    except ImportError:
        return sys.getsizeof(f), "sys.getsizeof"
    return objsize.get_deep_size(f), "objsize"


def one_run(rng: random.Random, big_n: int, rho: float, folder: Path) -> dict:
    """Annex B.3's inner loop for one (bigN, m): files, filter, every query."""
    small_n = big_n // 2
    m = max(1, round(rho * small_n))
    k = num_hashes(m, small_n)
    names, lfile = generate(rng, big_n, small_n, folder)
    f = bloomkit.BloomFilter(small_n, bits=m, hashes=k)
    for name in names[:small_n]:
        f.add(name)
    queries = names[:]
    rng.shuffle(queries)
    filter_seconds = file_seconds = 0.0
    disk = found = false_positives = 0
    for name in queries:
        start = time.perf_counter()
        maybe = name in f
        filter_seconds += time.perf_counter() - start
        if maybe:
            start = time.perf_counter()
            hit = search_in_file(name, lfile)
            file_seconds += time.perf_counter() - start
            disk += 1
            found += hit
            false_positives += not hit
    size, sized_by = size_of(f)
    return {
        "bigN": big_n, "smallN": small_n, "rho": rho, "m": m, "k": k,
        "queries": len(queries), "absent": big_n - small_n,
        "diskAccess": disk, "found": found, "falsePositives": false_positives,
        "timeBF": filter_seconds / len(queries),
        "timeFile": file_seconds / disk if disk else 0.0,
        "sizeBF": size, "sizedBy": sized_by, "memory_bytes": f.memory_bytes,
        "seed_fpp": seed_fpp(m, k, small_n),
    }


def experiment(big_ns, rhos, iterations: int, seed: int, folder: Path) -> list[dict]:
    """Annex B.3: every bigN and m, `iterations` runs each, averaged."""
    rng = random.Random(seed)
    rows = []
    for big_n in big_ns:
        for rho in rhos:
            runs = [one_run(rng, big_n, rho, folder) for _ in range(iterations)]
            row = dict(runs[0])
            for field in ("diskAccess", "found", "falsePositives", "timeBF", "timeFile",
                          "sizeBF"):
                row[field] = sum(r[field] for r in runs) / iterations
            row["iterations"] = iterations
            rows.append(row)
    return rows


def print_rows(rows: list[dict]) -> None:
    header = ("bigN", "ρ", "m", "k", "disk acc.", "seed expects", "false pos.", "FPR",
              "seed FPR", "Cuadro 1 (seed)", "BF query µs", "grep ms", "size B")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        expected = r["smallN"] + r["absent"] * r["seed_fpp"]
        band, low, high = seed_band(r["rho"])
        fpr = r["falsePositives"] / r["absent"]
        mark = "in" if low <= fpr <= high else "outside"
        print(f"| {r['bigN']} | {r['rho']:g} | {r['m']} | {r['k']} | {r['diskAccess']:.0f} | "
              f"{expected:.0f} | {r['falsePositives']:.0f} | {fpr:.4f} | {r['seed_fpp']:.4f} | "
              f"{band} ({mark}) | {r['timeBF'] * 1e6:.2f} | {r['timeFile'] * 1e3:.2f} | "
              f"{r['sizeBF']:.0f} |")


def print_beside_seed(rows: list[dict]) -> None:
    """The seed's statements on time and size (fig. 3 and 5) beside this run's means."""
    looked = [r for r in rows if r["diskAccess"]]
    grep = sum(r["timeFile"] * r["diskAccess"] for r in looked) / max(
        1, sum(r["diskAccess"] for r in looked))
    query = sum(r["timeBF"] for r in rows) / len(rows)
    largest = max(rows, key=lambda r: (r["smallN"], r["m"]))
    print()
    print("| quantity | seed 002 says | measured here |")
    print("|---|---|---|")
    print(f"| time of a disk lookup (grep) | about 0.1 s (fig. 5a, in 10⁻¹ s) | "
          f"{grep * 1e3:.2f} ms |")
    print(f"| time of a filter query | about 10 µs (fig. 5b, in 10⁻⁵ s) | "
          f"{query * 1e6:.2f} µs |")
    print(f"| disk ÷ filter | about 10⁴ | {grep / query:.0f} |")
    print(f"| filter size | in units of 10⁴ bytes (fig. 3, by objsize), growing with ρ and N | "
          f"{largest['sizeBF']:.0f} bytes at smallN = {largest['smallN']}, "
          f"ρ = {largest['rho']:g} ({largest['sizedBy']}; the bits alone "
          f"{largest['memory_bytes']} bytes) |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bign", default=",".join(map(str, SEED_BIGN)),
                        help="bigN values, comma-separated (the seed's by default)")
    parser.add_argument("--rho", default=",".join(f"{r:g}" for r in SEED_RHO),
                        help="ρ = m/smallN values, comma-separated (the seed's by default)")
    parser.add_argument("--iterations", type=int, default=1,
                        help="runs per (bigN, m), averaged")
    parser.add_argument("--seed", type=int, default=2, help="random seed")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    big_ns = [int(x) for x in args.bign.split(",")]
    rhos = [float(x) for x in args.rho.split(",")]
    if any(b < 2 for b in big_ns) or any(r <= 0 for r in rhos) or args.iterations < 1:
        parser.error("bigN must be at least 2, ρ above 0 and iterations at least 1")
    with tempfile.TemporaryDirectory(prefix="seed002-") as folder:
        rows = experiment(big_ns, rhos, args.iterations, args.seed, Path(folder))
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
        return
    print(f"# seed 002 on bloomkit {bloomkit.__version__}: {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.2f}")
    print_rows(rows)
    print_beside_seed(rows)


if __name__ == "__main__":
    main()
