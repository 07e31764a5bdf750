"""One filter from a Spark DataFrame, built where the data is, then used to filter another.

Each partition builds a filter of its rows (``mapPartitions``: one filter per task, the
partition's values added with ``add_many``) and hands back its bytes (bloomkit's file
format). A ``reduce`` unites them two by two (``f | g``: for the bit-array kinds, the OR
of the bit arrays, which is exactly the filter of all the values, since every value sets
the same bits wherever it is added). The driver gets one filter, the same as one built on
a single machine from every value; it is broadcast, and every partition of the other
DataFrame keeps its rows whose value the filter may hold (``contains_many`` per
partition). A typical use: drop, before a join, the rows of a large table whose key is
certainly not in a smaller one.

    python crates/bloomkit-py/examples/spark_filter.py      # a local Spark, small data

Every Python worker needs ``bloomkit`` importable. On a local Spark (``local[*]``) the
workers run this interpreter. On a cluster, install the wheel on every node (``pip install
bloomkit`` in the Python that ``PYSPARK_PYTHON`` names), or ship a virtual environment
with ``spark-submit --archives`` (the repository's README, "Python", says how).
"""

import sys

import bloomkit


def build_filter(df, column: str, capacity: int, fpp: float = 0.01,
                 kind: str = "bloom") -> "bloomkit.Filter":
    """The filter of the values of `column` in `df`: one per partition, united.

    `capacity` is the number of values expected in the whole DataFrame (every partition's
    filter has the same parameters, as a union requires). Null values are left out.
    """
    cls = bloomkit.KINDS[kind]
    if not cls.can_merge:
        raise ValueError(f"a {kind} filter cannot be united (| needs a kind with can_merge)")

    def partition_filter(rows):
        f = cls(capacity, fpp)
        f.add_many([row[0] for row in rows if row[0] is not None])
        yield f.to_bytes()

    def unite(a: bytes, b: bytes) -> bytes:
        return (bloomkit.from_bytes(a) | bloomkit.from_bytes(b)).to_bytes()

    data = df.select(column).rdd.mapPartitions(partition_filter).reduce(unite)
    return bloomkit.from_bytes(data)


def keep_maybe_present(spark, df, column: str, f: "bloomkit.Filter"):
    """The rows of `df` whose `column` the filter may hold (no row whose value was added
    is dropped; others pass with the filter's false-positive rate)."""
    shared = spark.sparkContext.broadcast(f.to_bytes())
    at = df.columns.index(column)

    def keep(rows):
        g = bloomkit.from_bytes(shared.value)  # once per partition
        rows = list(rows)
        values = [row[at] for row in rows]
        present = [v is not None for v in values]
        answers = g.contains_many([v for v in values if v is not None])
        answers = iter(answers)
        for row, has_value in zip(rows, present):
            if has_value and next(answers):
                yield row

    return spark.createDataFrame(df.rdd.mapPartitions(keep), df.schema)


def local_spark(app: str = "bloomkit"):
    """A local Spark session on two cores, its workers running this Python."""
    import os

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return (SparkSession.builder.master("local[2]").appName(app)
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .getOrCreate())


def main() -> None:
    spark = local_spark("bloomkit-spark-example")
    try:
        users = spark.createDataFrame([(f"user{i}", i) for i in range(20_000)],
                                      ["name", "id"]).repartition(4)
        f = build_filter(users, "name", capacity=20_000, fpp=0.01)
        print(f"{f!r}: built from {users.rdd.getNumPartitions()} partitions")
        visits = spark.createDataFrame([(f"user{i}", i % 7) for i in range(0, 40_000, 2)],
                                       ["name", "page"])
        kept = keep_maybe_present(spark, visits, "name", f)
        total, passed = visits.count(), kept.count()
        really = kept.filter(kept.name.isin([f"user{i}" for i in range(20_000)])).count()
        print(f"visits: {total}; kept by the filter: {passed} "
              f"({really} of registered users, {passed - really} false positives)")
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
