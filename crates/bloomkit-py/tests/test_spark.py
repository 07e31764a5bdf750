"""examples/spark_filter.py on a local Spark: the filter built per partition and united in a
reduce answers as the one built on one machine, and the broadcast filter keeps the same
rows of another DataFrame.

Needs pyspark and a Java runtime; scripts/test installs both and sets
BLOOMKIT_REQUIRE_SPARK=1, under which a missing pyspark is a failure, not a skip."""

import importlib.util
import os
from pathlib import Path

import pytest

import bloomkit

if os.environ.get("BLOOMKIT_REQUIRE_SPARK") != "1":
    pytest.importorskip("pyspark", reason="pyspark is not installed (scripts/test installs it)")

spec = importlib.util.spec_from_file_location(
    "spark_filter", Path(__file__).resolve().parents[1] / "examples" / "spark_filter.py")
spark_filter = importlib.util.module_from_spec(spec)
spec.loader.exec_module(spark_filter)

NAMES = [f"user{i}" for i in range(6000)]
PROBES = NAMES + [f"other{i}" for i in range(20_000)]


@pytest.fixture(scope="module")
def spark():
    session = spark_filter.local_spark("bloomkit-test")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def users(spark):
    rows = [(name, i) for i, name in enumerate(NAMES)] + [(None, -1)]
    return spark.createDataFrame(rows, "name string, id long").repartition(4)


@pytest.mark.parametrize("kind", ["bloom", "sbbf"])
def test_spark_filter_united_from_partitions_answers_as_one_built_on_one_machine(users, kind):
    assert users.rdd.getNumPartitions() == 4
    built = spark_filter.build_filter(users, "name", capacity=6000, fpp=0.01, kind=kind)
    local = bloomkit.KINDS[kind](6000, 0.01)
    local.add_many(NAMES)
    assert type(built) is type(local) and built.capacity == 6000
    # The same bits: the same fill, and the same answer for every probe, present or not.
    assert built.estimated_len() == local.estimated_len()
    assert built.contains_many(PROBES) == local.contains_many(PROBES)
    assert all(built.contains_many(NAMES))


def test_spark_broadcast_filter_keeps_the_rows_a_local_filter_keeps(spark, users):
    built = spark_filter.build_filter(users, "name", capacity=6000, fpp=0.01)
    visits = [(name, i % 7) for i, name in enumerate(PROBES[::3])] + [(None, 0)]
    df = spark.createDataFrame(visits, "name string, page long").repartition(3)
    kept = spark_filter.keep_maybe_present(spark, df, "name", built)
    got = sorted((r["name"], r["page"]) for r in kept.collect())
    local = bloomkit.BloomFilter(6000, 0.01)
    local.add_many(NAMES)
    want = sorted((n, p) for n, p in visits if n is not None and n in local)
    assert got == want
    registered = [v for v in visits if v[0] in set(NAMES)]
    assert set(registered) <= set(got)  # no row of a registered user is dropped
    assert len(got) < len(registered) + 0.05 * (len(visits) - len(registered))


def test_spark_filter_refuses_a_kind_that_cannot_unite(users):
    with pytest.raises(ValueError, match="cannot be united"):
        spark_filter.build_filter(users, "name", capacity=6000, kind="cuckoo")
