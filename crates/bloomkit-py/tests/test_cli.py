"""Files shared with the command-line tool, both ways, with the real `bloomkit` binary."""

import subprocess

import pytest

import bloomkit
from conftest import KEEPING

WORDS = [f"user{i}@example.org" for i in range(300)] + ["héllo", "tab-free words ok"]
ABSENT = [f"nobody{i}" for i in range(300)]
CLI_KINDS = ["bloom", "blocked", "counting", "vi-counting", "deletable", "scalable", "cuckoo",
             "sbbf", "spectral", "compressed", "robust"]


def run(cli, *args, stdin=None):
    return subprocess.run([str(cli), *map(str, args)], input=stdin, capture_output=True,
                          text=True)


def answers(cli, path, items):
    out = run(cli, "check", path, stdin="".join(f"{w}\n" for w in items))
    assert out.returncode in (0, 1), out.stderr
    return dict(line.split("\t") for line in out.stdout.splitlines())


@pytest.mark.parametrize("kind", KEEPING)
def test_a_filter_saved_in_python_answers_the_same_in_bloomkit_check(kind, cli, tmp_path):
    f = bloomkit.KINDS[kind](1000, 0.01)
    f.update(WORDS)
    path = tmp_path / "py.filter"
    f.save(path)
    got = answers(cli, path, WORDS + ABSENT)
    assert all(got[w] == "maybe" for w in WORDS)
    assert {a: got[a] == "maybe" for a in ABSENT} == {a: a in f for a in ABSENT}
    info = run(cli, "info", path)
    assert info.returncode == 0 and f"Kind:" in info.stdout and kind in info.stdout


@pytest.mark.parametrize("kind", [k for k in CLI_KINDS if k in bloomkit.KINDS])
def test_a_filter_made_by_the_cli_answers_the_same_in_python(kind, cli, tmp_path):
    path = tmp_path / "cli.filter"
    made = run(cli, "create", "--kind", kind, "--capacity", 1000, "--fpp", 0.01, "-o", path)
    assert made.returncode == 0, made.stderr
    added = run(cli, "add", path, stdin="".join(f"{w}\n" for w in WORDS))
    assert added.returncode == 0, added.stderr
    f = bloomkit.load(path)
    assert type(f) is bloomkit.KINDS[kind] and f.capacity == 1000
    assert all(w in f for w in WORDS)
    got = answers(cli, path, ABSENT)
    assert [a in f for a in ABSENT] == [got[a] == "maybe" for a in ABSENT]
    # And back: Python adds, the CLI sees it.
    f.add("added in python")
    f.save(path)
    assert answers(cli, path, ["added in python"]) == {"added in python": "maybe"}
    if f.can_remove:
        removed = run(cli, "remove", path, "added in python")
        assert removed.returncode == 0, removed.stderr
        assert "added in python" not in bloomkit.load(path)


def test_cli_reports_a_damaged_python_file(cli, tmp_path):
    path = tmp_path / "cut.bloom"
    path.write_bytes(bytes(bloomkit.BloomFilter(100))[:40])
    out = run(cli, "check", path, "x")
    assert out.returncode == 2 and "not a valid filter file" in out.stderr
