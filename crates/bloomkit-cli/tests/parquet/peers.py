"""The other side of tests/parquet.rs: Parquet files written, read and probed by pyarrow and
DuckDB, driven one sub-command at a time. Each prints tab-separated lines (or nothing) on standard output.

  write-pyarrow OUT ROWS ROW_GROUP NDV FPP [nofilter]  columns id, name, day, price, ts, score,
                                                      small; filters on all (unless nofilter)
  write-duckdb OUT ROWS ROW_GROUP                      repeated values: DuckDB writes filters for
                                                      dictionary-encoded columns by itself
  values FILE COLUMN                                   ROW_GROUP<TAB>VALUE lines by pyarrow, each
                                                      value as `bloomkit parquet check` reads it
  same-data A B                                        A and B hold the same rows, read by pyarrow
                                                      and by DuckDB (prints the row count); exits
                                                      1 if not
  probe FILE COLUMN VALUES.txt                         for each value (a line), the row groups
                                                      DuckDB's parquet_bloom_probe does not
                                                      exclude, comma-separated
  metadata FILE                                        DuckDB's parquet_metadata bloom columns
"""

import datetime
import decimal
import sys

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

COLUMNS = ["id", "name", "day", "price", "ts", "score", "small"]


def table(rows):
    ids = list(range(rows))
    epoch = datetime.date(2000, 1, 1)
    t0 = datetime.datetime(2024, 1, 1)
    return pa.table(
        {
            "id": pa.array([i * 7 for i in ids], pa.int64()),
            "name": pa.array([f"name-{i}" for i in ids], pa.string()),
            "day": pa.array([epoch + datetime.timedelta(days=i % 5000) for i in ids], pa.date32()),
            "price": pa.array(
                [decimal.Decimal(i * 37 % 100000) / 100 for i in ids], pa.decimal128(9, 2)
            ),
            "ts": pa.array([t0 + datetime.timedelta(microseconds=i * 1001) for i in ids],
                           pa.timestamp("us")),
            "score": pa.array([i * 0.25 for i in ids], pa.float64()),
            "small": pa.array([i % 3000 for i in ids], pa.int32()),
        }
    )


def text(v):
    """A value as `bloomkit parquet check` reads it."""
    if isinstance(v, datetime.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S.%f")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, float):
        return repr(v)
    return str(v)


def main(argv):
    cmd = argv[0]
    if cmd == "write-pyarrow":
        out, rows, group, ndv, fpp = argv[1], int(argv[2]), int(argv[3]), int(argv[4]), float(argv[5])
        options = None if argv[6:] == ["nofilter"] else {c: {"ndv": ndv, "fpp": fpp} for c in COLUMNS}
        pq.write_table(table(rows), out, row_group_size=group, bloom_filter_options=options)
    elif cmd == "write-duckdb":
        out, rows, group = argv[1], int(argv[2]), int(argv[3])
        con = duckdb.connect()
        con.execute(
            f"""COPY (SELECT (i % 997)::BIGINT AS k, 'w' || (i % 401)::VARCHAR AS w,
                       (i % 211)::INTEGER AS n, DATE '2020-01-01' + (i % 300)::INTEGER AS d
                FROM range({rows}) t(i))
                TO '{out}' (FORMAT parquet, ROW_GROUP_SIZE {group})"""
        )
    elif cmd == "values":
        path, column = argv[1], argv[2]
        f = pq.ParquetFile(path)
        for rg in range(f.metadata.num_row_groups):
            col = f.read_row_group(rg, columns=[column]).column(0).to_pylist()
            sys.stdout.write("".join(f"{rg}\t{text(v)}\n" for v in col if v is not None))
    elif cmd == "same-data":
        a, b = argv[1], argv[2]
        ta, tb = pq.read_table(a), pq.read_table(b)
        if not ta.equals(tb):
            print("pyarrow reads different tables", file=sys.stderr)
            return 1
        con = duckdb.connect()
        da = con.execute(f"SELECT * FROM read_parquet('{a}')").fetchall()
        db = con.execute(f"SELECT * FROM read_parquet('{b}')").fetchall()
        if da != db or len(da) != ta.num_rows:
            print(f"DuckDB reads different rows ({len(da)} vs {len(db)})", file=sys.stderr)
            return 1
        print(len(da))
    elif cmd == "probe":
        path, column = argv[1], argv[2]
        values = open(argv[3], encoding="utf-8").read().splitlines()
        con = duckdb.connect()
        for v in values:
            rows = con.execute(
                "SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?)"
                " ORDER BY row_group_id",
                [path, column, v],
            ).fetchall()
            kept = [str(rg) for rg, excludes in rows if not excludes]
            sys.stdout.write(",".join(kept) + "\n")
    elif cmd == "metadata":
        con = duckdb.connect()
        rows = con.execute(
            "SELECT row_group_id, path_in_schema, bloom_filter_offset, bloom_filter_length"
            f" FROM parquet_metadata('{argv[1]}') ORDER BY row_group_id, column_id"
        ).fetchall()
        sys.stdout.write("".join("\t".join(map(str, r)) + "\n" for r in rows))
    else:
        print(f"unknown command {cmd}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
