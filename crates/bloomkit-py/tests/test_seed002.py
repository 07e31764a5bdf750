"""examples/seed002.py, seed 002's experiment, at a small size: its dimensions are the
seed's, no registered name is ever skipped, and the false positives stay within the
interval of the seed's rate."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "seed002.py"


def binomial_interval(trials: int, p: float, tail: float = 5e-4) -> tuple[int, int]:
    """The counts below and above which a Binomial(trials, p) falls with probability
    `tail` each (exact sums)."""
    pmf = [math.comb(trials, i) * p**i * (1 - p) ** (trials - i) for i in range(trials + 1)]
    low, below = 0, 0.0
    while below + pmf[low] < tail:
        below += pmf[low]
        low += 1
    high, above = trials, 0.0
    while above + pmf[high] < tail:
        above += pmf[high]
        high -= 1
    return low, high


@pytest.fixture(scope="module")
def rows():
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), "--bign", "400", "--rho", "0.001,0.1,1,3,10",
         "--json"],
        capture_output=True, text=True, check=True, timeout=300,
    )
    return json.loads(run.stdout)


def test_seed002_dimensions_are_the_seeds(rows):
    assert [(r["bigN"], r["rho"]) for r in rows] == [
        (400, 0.001), (400, 0.1), (400, 1.0), (400, 3.0), (400, 10.0)]
    for r in rows:
        assert r["smallN"] == 200 and r["queries"] == 400 and r["absent"] == 200
        # m = ρ·smallN (at least one bit), k = ⌈(m/smallN)·ln 2⌉ (seed 002, section 5.5).
        assert r["m"] == max(1, round(r["rho"] * 200))
        assert r["k"] == max(1, math.ceil(r["m"] / 200 * math.log(2)))
    assert [r["k"] for r in rows] == [1, 1, 1, 3, 7]


def test_seed002_filter_never_skips_a_registered_name(rows):
    for r in rows:
        # Every name of the file was looked up (grep found it): no false negative.
        assert r["found"] == r["smallN"], r
        assert r["diskAccess"] == r["found"] + r["falsePositives"], r


def test_seed002_false_positives_within_the_seeds_rate_interval(rows):
    for r in rows:
        low, high = binomial_interval(r["absent"], r["seed_fpp"])
        assert low <= r["falsePositives"] <= high, (r, (low, high))
    # One bit, one hash: every absent name is a false positive, as the seed's "m << n" row.
    assert rows[0]["falsePositives"] == rows[0]["absent"]
    # Its last row (ρ = 10, k = 7) keeps most absent names off the disk.
    assert rows[-1]["falsePositives"] < 0.05 * rows[-1]["absent"]


def test_seed002_prints_the_seeds_numbers_beside_its_own():
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), "--bign", "60", "--rho", "1,10"],
        capture_output=True, text=True, check=True, timeout=300,
    )
    out = run.stdout
    assert "| bigN | ρ | m | k | disk acc. | seed expects |" in out
    assert "about 0.1 s (fig. 5a" in out and "about 10 µs (fig. 5b" in out
    assert out.count("| 60 |") == 2
