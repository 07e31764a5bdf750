"""Shared fixtures: the command-line tool and the Rust cross-check program, built by cargo
unless scripts/test hands over the binaries its `cargo test` already built."""

import os
import subprocess
from pathlib import Path

import pytest

import bloomkit

ROOT = Path(__file__).resolve().parents[3]

#: Every kind that never forgets an item (no false negatives), by name.
KEEPING = [name for name, cls in bloomkit.KINDS.items() if not cls.forgets]


def _binary(variable: str, cargo_args: list[str], relative: str) -> Path:
    given = os.environ.get(variable)
    if given:
        return Path(given)
    subprocess.run(["cargo", "build", "-q", *cargo_args], cwd=ROOT, check=True)
    return ROOT / "target" / "debug" / relative


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `bloomkit` command-line tool."""
    return _binary("BLOOMKIT_BIN", ["-p", "bloomkit-cli"], "bloomkit")


@pytest.fixture(scope="session")
def cross_check() -> Path:
    """examples/cross_check.rs: the same values as Rust items."""
    return _binary(
        "BLOOMKIT_CROSS_CHECK",
        ["-p", "bloomkit", "--example", "cross_check"],
        "examples/cross_check",
    )
