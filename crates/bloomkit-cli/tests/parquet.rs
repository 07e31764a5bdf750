//! `bloomkit parquet` against the real writers and readers: files written by pyarrow and
//! DuckDB (through `tests/parquet/peers.py`, run by the Python that `BLOOMKIT_PYTHON` names;
//! scripts/test makes a virtual environment with pinned pyarrow and DuckDB) and by parquet-rs
//! (in this process). For every value in a file `check` says maybe in its row group; absent
//! values come out "maybe" at the rate the filter's fill predicts; `info` agrees with the
//! writer's sizes; files from `add-filters` read back the same rows in pyarrow and DuckDB, and
//! DuckDB's `parquet_bloom_probe` and parquet-rs's reader prune exactly as `check` says.
//! Damaged files are errors, never panics.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use bloomkit::interop::parquet::parquet_rs;
use bloomkit::interop::parquet::{add_filters, FilterSizing, ParquetBloomFile};
use parquet_rs::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet_rs::file::properties::{ReaderProperties, WriterProperties};
use parquet_rs::file::reader::FileReader;
use parquet_rs::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};
use parquet_rs::file::writer::SerializedFileWriter;
use parquet_rs::schema::parser::parse_message_type;

// ---------------------------------------------------------------- helpers

fn bloomkit(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloomkit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bloomkit runs");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.unwrap_or(b"").to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("bloomkit finishes");
    writer.join().unwrap();
    out
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "bloomkit failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The Python with pyarrow and DuckDB: `BLOOMKIT_PYTHON` (then it must work), else the
/// workspace's target/py-venv if it has both; `None` (the peer tests say SKIPPED) otherwise.
fn python() -> Option<PathBuf> {
    let has_peers = |p: &Path| {
        Command::new(p)
            .args(["-c", "import pyarrow, duckdb"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if let Some(p) = std::env::var_os("BLOOMKIT_PYTHON") {
        let p = PathBuf::from(p);
        assert!(
            has_peers(&p),
            "BLOOMKIT_PYTHON={} cannot import pyarrow and duckdb",
            p.display()
        );
        return Some(p);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/py-venv/bin/python");
    if has_peers(&venv) {
        return Some(venv);
    }
    eprintln!("SKIPPED: no Python with pyarrow and duckdb (scripts/test sets BLOOMKIT_PYTHON)");
    None
}

fn peers(python: &Path, args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/parquet/peers.py");
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "peers.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `(row group, value)` pairs of a column, as pyarrow reads them.
fn values(python: &Path, file: &Path, column: &str) -> Vec<(usize, String)> {
    peers(python, &["values", s(file), column])
        .lines()
        .map(|l| {
            let (rg, v) = l.split_once('\t').expect("rg<TAB>value");
            (rg.parse().unwrap(), v.to_string())
        })
        .collect()
}

/// `bloomkit parquet check`'s answer for each value: the row groups that may hold it.
fn check(file: &Path, column: &str, values: &[String]) -> Vec<Vec<usize>> {
    let mut stdin = values.join("\n").into_bytes();
    stdin.push(b'\n');
    let out = ok(bloomkit(
        &["parquet", "check", s(file), "--column", column],
        Some(&stdin),
    ));
    let answers: Vec<Vec<usize>> = out
        .lines()
        .zip(values)
        .map(|(line, value)| {
            let mut fields = line.split('\t');
            assert_eq!(fields.next(), Some(value.as_str()), "{line}");
            match (fields.next(), fields.next()) {
                (Some("no"), None) => vec![],
                (Some("maybe"), Some(list)) => {
                    list.split(',').map(|x| x.parse().unwrap()).collect()
                }
                _ => panic!("unexpected line {line:?}"),
            }
        })
        .collect();
    assert_eq!(answers.len(), values.len(), "one answer per value");
    answers
}

/// DuckDB's `parquet_bloom_probe`: the row groups it does not exclude, per value.
fn duckdb_probe(
    python: &Path,
    dir: &Path,
    file: &Path,
    column: &str,
    values: &[String],
) -> Vec<Vec<usize>> {
    let list = dir.join(format!("probe-{column}.txt"));
    std::fs::write(&list, values.join("\n") + "\n").unwrap();
    peers(python, &["probe", s(file), column, s(&list)])
        .lines()
        .map(|l| {
            if l.is_empty() {
                vec![]
            } else {
                l.split(',').map(|x| x.parse().unwrap()).collect()
            }
        })
        .collect()
}

/// Panics, naming the first few values, unless both pruners keep the same row groups for
/// every value; and checks that the comparison is not vacuous (some value is ruled out of
/// some row group, and some is kept).
fn assert_same_pruning(what: &str, values: &[String], theirs: &[Vec<usize>], ours: &[Vec<usize>]) {
    assert_eq!(theirs.len(), values.len(), "{what}: one answer per value");
    let differ: Vec<String> = (0..values.len())
        .filter(|&i| theirs[i] != ours[i])
        .take(5)
        .map(|i| format!("{}: theirs {:?}, ours {:?}", values[i], theirs[i], ours[i]))
        .collect();
    assert!(differ.is_empty(), "{what}: answers differ, e.g. {differ:?}");
    assert!(
        ours.iter().any(|a| a.is_empty()),
        "{what}: nothing was ruled out"
    );
    assert!(
        ours.iter().any(|a| !a.is_empty()),
        "{what}: nothing was kept"
    );
}

/// One line of `bloomkit parquet info`.
#[derive(Debug)]
struct InfoRow {
    filter: bool,
    bytes: u64,
    bits_set: u64,
    implied: f64,
    fpr: f64,
}

fn info(file: &Path) -> HashMap<(usize, String), InfoRow> {
    let out = ok(bloomkit(&["parquet", "info", s(file)], None));
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("row_group\tcolumn\ttype\trows\tfilter\tbytes\tbits_set\tdistinct_implied\tfpr")
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 9, "{l}");
            let filter = f[4] == "yes";
            let row = InfoRow {
                filter,
                bytes: f[5].parse().unwrap_or(0),
                bits_set: f[6].parse().unwrap_or(0),
                implied: f[7].parse().unwrap_or(f64::NAN),
                fpr: f[8].parse().unwrap_or(f64::NAN),
            };
            ((f[0].parse().unwrap(), f[1].to_string()), row)
        })
        .collect()
}

/// Distinct values per row group.
fn distinct_per_group(values: &[(usize, String)]) -> BTreeMap<usize, BTreeSet<String>> {
    let mut out: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for (rg, v) in values {
        out.entry(*rg).or_default().insert(v.clone());
    }
    out
}

/// Every value is "maybe" in every row group that holds it.
fn assert_no_false_negatives(file: &Path, column: &str, values: &[(usize, String)]) {
    let distinct: Vec<String> = values
        .iter()
        .map(|(_, v)| v.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let answers: HashMap<String, Vec<usize>> = distinct
        .iter()
        .cloned()
        .zip(check(file, column, &distinct))
        .collect();
    for (rg, v) in values {
        assert!(
            answers[v].contains(rg),
            "{column} = {v} is in row group {rg}, but check says {:?}",
            answers[v]
        );
    }
}

/// `x` successes in `n` trials is within 4.5 standard deviations (plus one) of rate `p`.
fn assert_rate(what: &str, x: usize, n: usize, p: f64) {
    let mean = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    assert!(
        (x as f64 - mean).abs() <= 4.5 * sd + 1.0,
        "{what}: {x} of {n} false positives, expected {mean:.1} ± {:.1}",
        4.5 * sd
    );
}

/// Of the `absent` values, each row group of `file` answers "maybe" for as many as the
/// false-positive rate `info` reports for its filter on `column` predicts ([`assert_rate`]).
fn assert_false_positive_rates(
    file: &Path,
    column: &str,
    absent: &[String],
    info: &HashMap<(usize, String), InfoRow>,
) {
    let answers = check(file, column, absent);
    let groups: BTreeSet<usize> = info.keys().map(|(rg, _)| *rg).collect();
    assert!(!groups.is_empty(), "{} has no row groups", file.display());
    for rg in groups {
        let x = answers.iter().filter(|a| a.contains(&rg)).count();
        let fpr = info[&(rg, column.to_string())].fpr;
        assert_rate(&format!("{column} rg {rg}"), x, absent.len(), fpr);
    }
}

/// The filter size arrow (C++ and Rust) writes for `ndv` values at `fpp`: the
/// specification's bits per value, `−8 / ln(1 − fpp^(1/8))`, times ndv, in bytes, rounded
/// up to a power of two (at least 32).
fn arrow_bytes(ndv: u64, fpp: f64) -> u64 {
    let bits = -8.0 * ndv as f64 / (1.0 - fpp.powf(1.0 / 8.0)).ln();
    ((bits / 8.0).ceil() as u64).next_power_of_two().max(32)
}

// ---------------------------------------------------------------- pyarrow

const PYARROW_COLUMNS: [&str; 7] = ["id", "name", "day", "price", "ts", "score", "small"];

#[test]
fn pyarrow_files_every_value_is_found_and_info_matches_the_writer() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pyarrow.parquet");
    // 30,000 rows in row groups of 10,000, filters for ndv 10,000 at 1% on every column.
    peers(
        &py,
        &["write-pyarrow", s(&file), "30000", "10000", "10000", "0.01"],
    );
    let info = info(&file);
    for column in PYARROW_COLUMNS {
        let vals = values(&py, &file, column);
        assert_eq!(vals.len(), 30_000, "{column}");
        for (rg, distinct) in distinct_per_group(&vals) {
            let row = &info[&(rg, column.to_string())];
            assert!(row.filter, "{column} row group {rg} has a filter");
            // pyarrow 26 sizes each chunk's filter for min(ndv, the chunk's distinct values).
            let n = distinct.len() as u64;
            assert_eq!(
                row.bytes,
                arrow_bytes(n.min(10_000), 0.01),
                "{column} rg {rg}"
            );
            // The count the fill implies is the chunk's distinct values (its standard error
            // is well under 2% at these fills).
            assert!(
                (row.implied - n as f64).abs() <= 0.03 * n as f64 + 5.0,
                "{column} rg {rg}: implied {} for {n} distinct",
                row.implied
            );
            assert!(row.bits_set > 0 && row.bits_set <= row.bytes * 8);
        }
        assert_no_false_negatives(&file, column, &vals);
    }
    // Absent ids (the ids are multiples of 7): each row group's false positives at the rate
    // its filter's fill predicts.
    let absent: Vec<String> = (0..40_000i64).map(|i| (7 * i + 3).to_string()).collect();
    assert_false_positive_rates(&file, "id", &absent, &info);
    // A single absent value: exit code 1, a present one 0.
    let out = bloomkit(&["parquet", "check", s(&file), "--column", "id", "7"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "7\tmaybe\t0\n");
    let mut absent_one = None;
    for v in 0..1000 {
        let v = (7 * v + 1).to_string();
        let out = bloomkit(&["parquet", "check", s(&file), "--column", "id", &v], None);
        if String::from_utf8_lossy(&out.stdout).ends_with("\tno\n") {
            absent_one = Some(out);
            break;
        }
    }
    assert_eq!(
        absent_one
            .expect("some absent id is ruled out")
            .status
            .code(),
        Some(1)
    );
}

// ---------------------------------------------------------------- DuckDB

#[test]
fn duckdb_files_answer_as_duckdbs_own_probe() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("duckdb.parquet");
    peers(&py, &["write-duckdb", s(&file), "30000", "10000"]);
    // Where DuckDB says its filters are, and their lengths, are what the library reads.
    let opened = ParquetBloomFile::open(&file).unwrap();
    let meta = peers(&py, &["metadata", s(&file)]);
    let mut filters = 0;
    for line in meta.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (rg, column) = (f[0].parse::<usize>().unwrap(), opened.column(f[1]).unwrap());
        let chunk = opened.bloom_filter(rg, column.index()).unwrap();
        match (f[2], chunk) {
            ("None", None) => {}
            (offset, Some(chunk)) => {
                assert_eq!(chunk.offset.to_string(), offset, "{line}");
                assert_eq!(
                    (chunk.header_bytes + chunk.num_bytes()).to_string(),
                    f[3],
                    "{line}"
                );
                filters += 1;
            }
            (offset, None) => panic!("DuckDB says {line}, we found no filter at {offset}"),
        }
    }
    assert_eq!(
        filters, 12,
        "DuckDB wrote a filter per row group for its 4 columns"
    );
    let info = info(&file);
    for (column, present, absent) in [
        (
            "k",
            (0..997).map(|i| i.to_string()).collect::<Vec<_>>(),
            (997..20_997).map(|i| i.to_string()).collect::<Vec<_>>(),
        ),
        (
            "w",
            (0..401).map(|i| format!("w{i}")).collect(),
            (401..10_401).map(|i| format!("w{i}")).collect(),
        ),
        (
            "n",
            (0..211).map(|i| i.to_string()).collect(),
            (211..10_211).map(|i| i.to_string()).collect(),
        ),
        (
            "d",
            (0..300)
                .map(|i| format!("2020-{:02}-{:02}", 1 + i / 28 % 12, 1 + i % 28))
                .collect(),
            (0..3000)
                .map(|i| format!("2021-{:02}-{:02}", 1 + i / 28 % 12, 1 + i % 28))
                .collect(),
        ),
    ] {
        let vals = values(&py, &file, column);
        for (rg, distinct) in distinct_per_group(&vals) {
            let row = &info[&(rg, column.to_string())];
            let n = distinct.len() as f64;
            assert!(
                (row.implied - n).abs() <= 0.05 * n + 5.0,
                "{column} rg {rg}: implied {} for {n}",
                row.implied
            );
        }
        assert_no_false_negatives(&file, column, &vals);
        // DuckDB prunes exactly as check says, for present and absent values.
        let mut probe: Vec<String> = present.into_iter().take(150).collect();
        probe.extend(absent.iter().take(600).cloned());
        assert_same_pruning(
            &format!("{} {}", "file", column),
            &probe,
            &duckdb_probe(&py, dir.path(), &file, column, &probe),
            &check(&file, column, &probe),
        );
        // Absent values: false positives at the rate the fill predicts.
        assert_false_positive_rates(&file, column, &absent, &info);
    }
}

// ---------------------------------------------------------------- add-filters

#[test]
fn added_filters_keep_the_data_and_prune_as_duckdb_and_parquet_rs_do() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.parquet");
    let out = dir.path().join("filtered.parquet");
    peers(
        &py,
        &[
            "write-pyarrow",
            s(&plain),
            "30000",
            "10000",
            "0",
            "0.01",
            "nofilter",
        ],
    );
    let before = std::fs::read(&plain).unwrap();
    let added = ok(bloomkit(
        &[
            "parquet",
            "add-filters",
            s(&plain),
            "-o",
            s(&out),
            "--column",
            "id,name,day",
            "--column",
            "price",
            "--column",
            "ts",
            "--fpp",
            "0.02",
        ],
        None,
    ));
    assert!(added.is_empty(), "the report goes to standard error");
    assert_eq!(
        std::fs::read(&plain).unwrap(),
        before,
        "the input is untouched"
    );
    // pyarrow and DuckDB read the same rows from both.
    assert_eq!(
        peers(&py, &["same-data", s(&plain), s(&out)]).trim(),
        "30000"
    );
    // The data before the footer is byte for byte the input's.
    let written = std::fs::read(&out).unwrap();
    let footer_len = u32::from_le_bytes(
        before[before.len() - 8..before.len() - 4]
            .try_into()
            .unwrap(),
    ) as usize;
    let data_end = before.len() - 8 - footer_len;
    assert_eq!(&written[..data_end], &before[..data_end]);

    let rows = info(&out);
    for column in ["id", "name", "day", "price", "ts"] {
        let vals = values(&py, &out, column);
        for (rg, distinct) in distinct_per_group(&vals) {
            let row = &rows[&(rg, column.to_string())];
            assert!(row.filter);
            let n = distinct.len() as f64;
            assert!(
                (row.implied - n).abs() <= 0.03 * n + 5.0,
                "{column} rg {rg}"
            );
            // Sized for the chunk's distinct values at ε = 2%: the fill's rate is near 2%.
            assert!(
                row.fpr > 0.01 && row.fpr < 0.025,
                "{column} rg {rg}: {}",
                row.fpr
            );
        }
        assert_no_false_negatives(&out, column, &vals);
    }
    for column in ["score", "small"] {
        assert!(
            !rows[&(0, column.to_string())].filter,
            "{column} was not asked for"
        );
    }
    // DuckDB prunes with the new filters exactly as check says.
    // (DuckDB answers one value a query, ~10 ms each: 400–500 values a column give each
    // column's three row groups some 20 false positives to agree on at ε = 2%, in ~20 s.)
    // DuckDB's parquet_bloom_probe and `check` prune the copy's column alike.
    let prunes_alike = |column: &str, values: &[String]| {
        assert_same_pruning(
            &format!("out {column}"),
            values,
            &duckdb_probe(&py, dir.path(), &out, column, values),
            &check(&out, column, values),
        )
    };
    let ids: Vec<String> = (0..500).map(|i| (i * 15).to_string()).collect();
    prunes_alike("id", &ids);
    let names: Vec<String> = (0..400).map(|i| format!("name-{}", i * 91)).collect();
    prunes_alike("name", &names);
    let days: Vec<String> = (0..400)
        .map(|i| format!("20{:02}-{:02}-{:02}", i % 30, 1 + i % 12, 1 + i % 28))
        .collect();
    prunes_alike("day", &days);
    // The timestamps too (pyarrow's TIMESTAMP(MICROS), written as text in the column's unit).
    // Row j holds 2024-01-01 00:00:00 plus j·1001 µs: probe i is row 3i's stamp, a
    // microsecond later when i is odd.
    let stamps: Vec<String> = (0..400)
        .map(|i| {
            let micros = i * 3003 + i % 2;
            format!(
                "2024-01-01 00:00:{:02}.{:06}",
                micros / 1_000_000,
                micros % 1_000_000
            )
        })
        .collect();
    prunes_alike("ts", &stamps);
    // DuckDB 2.0.1 uses no Bloom filter of a FIXED_LEN_BYTE_ARRAY decimal (not pyarrow's
    // either: it excludes nothing), so for `price` only check's own answers are judged:
    // every value found above, and absent ones ruled out at the filter's rate.
    let prices: Vec<String> = (0..400)
        .map(|i| format!("{i}.{:02}", (i * 37 + 1) % 100))
        .collect();
    let theirs = duckdb_probe(&py, dir.path(), &out, "price", &prices);
    assert!(
        theirs.iter().all(|a| a == &vec![0, 1, 2]),
        "DuckDB now prunes decimals: compare them"
    );
    let ours = check(&out, "price", &prices);
    assert!(
        ours.iter().filter(|a| a.is_empty()).count() > 250,
        "absent prices are ruled out"
    );
    // And so does parquet-rs's reader, with its own Sbbf.
    let reader = parquet_rs_reader(&out);
    let answers = check(&out, "id", &ids);
    for (v, ours) in ids.iter().zip(&answers) {
        let v: i64 = v.parse().unwrap();
        let theirs: Vec<usize> = (0..reader.num_row_groups())
            .filter(|&rg| {
                let group = reader.get_row_group(rg).unwrap();
                group
                    .get_column_bloom_filter(0)
                    .expect("a filter")
                    .check(&v)
            })
            .collect();
        assert_eq!(&theirs, ours, "id {v}");
    }

    // Replacing: a file with pyarrow's filters, given new ones for `id` at ε = 0.1%.
    let with = dir.path().join("with.parquet");
    let replaced = dir.path().join("replaced.parquet");
    peers(
        &py,
        &["write-pyarrow", s(&with), "30000", "10000", "10000", "0.01"],
    );
    let out2 = bloomkit(
        &[
            "parquet",
            "add-filters",
            s(&with),
            "-o",
            s(&replaced),
            "--column",
            "id",
            "--ndv",
            "20000",
            "--fpp",
            "0.001",
        ],
        None,
    );
    assert!(out2.status.success());
    assert!(String::from_utf8_lossy(&out2.stderr).contains("(replaced)"));
    let (info_before, info2) = (info(&with), info(&replaced));
    let old = ParquetBloomFile::open(&with).unwrap();
    let new = ParquetBloomFile::open(&replaced).unwrap();
    for rg in 0..3 {
        // pyarrow's 16 KiB for ndv 10,000 at 1%; ours for 20,000 at 0.1%: 16.9 bits each.
        let (was, now) = (
            &info_before[&(rg, "id".to_string())],
            &info2[&(rg, "id".to_string())],
        );
        assert_eq!(was.bytes, 16_384);
        assert!(now.bytes > 40_000 && now.bytes < 44_000, "{}", now.bytes);
        // The other columns' filters are the old ones, at their old offsets.
        let name = old.column("name").unwrap().index();
        assert_eq!(
            old.bloom_filter(rg, name).unwrap().unwrap().offset,
            new.bloom_filter(rg, name).unwrap().unwrap().offset
        );
    }
    assert_eq!(
        peers(&py, &["same-data", s(&with), s(&replaced)]).trim(),
        "30000"
    );
    assert_same_pruning(
        "replaced id",
        &ids,
        &duckdb_probe(&py, dir.path(), &replaced, "id", &ids),
        &check(&replaced, "id", &ids),
    );
}

#[test]
fn add_filters_refuses_bad_requests_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rs.parquet");
    write_parquet_rs(&file, false);
    let err = |args: &[&str]| {
        let out = bloomkit(args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!e.contains("panicked"), "{e}");
        e
    };
    // `parquet add-filters INPUT -o OUTPUT --column ...`, which must fail.
    let add_filters = |input: &Path, output: &Path, column: &[&str]| {
        let mut args = vec![
            "parquet",
            "add-filters",
            s(input),
            "-o",
            s(output),
            "--column",
        ];
        args.extend_from_slice(column);
        err(&args)
    };
    let out = dir.path().join("out.parquet");
    assert!(add_filters(&file, &file, &["id"]).contains("is the input"));
    assert!(add_filters(&file, &out, &["nope"])
        .contains("no column \"nope\"; its columns are id, name"));
    assert!(add_filters(&file, &out, &["id", "--fpp", "1.5"]).contains("1.5"));
    assert!(add_filters(&file, &out, &["id", "--ndv", "0"]).contains("at least 1"));
    assert!(!out.exists(), "nothing was written");
    let text = dir.path().join("text.parquet");
    std::fs::write(&text, "id,name\n1,a\n").unwrap();
    assert!(err(&["parquet", "info", s(&text)]).contains("not a readable Parquet file"));
    assert!(
        err(&["parquet", "check", s(&file), "--column", "id", "x"]).contains("expected an integer")
    );
    // A file without filters: nothing rules a row group out, so every value is "maybe" in
    // every row group (and `info` says there is no filter).
    let out_check = bloomkit(
        &["parquet", "check", s(&file), "--column", "id", "5", "-1"],
        None,
    );
    assert_eq!(ok(out_check), "5\tmaybe\t0,1\n-1\tmaybe\t0,1\n");
    assert!(info(&file).values().all(|row| !row.filter));
    // A failed add-filters leaves an existing output as it was.
    std::fs::write(&out, b"old").unwrap();
    add_filters(&text, &out, &["id"]);
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
}

// ---------------------------------------------------------------- parquet-rs

/// Two row groups of 3,000 rows: `id` INT64 0, 3, 6, …; `name` strings; parquet-rs's own
/// filters on both (ndv 3,000, ε 1%) when `filters`.
fn write_parquet_rs(path: &Path, filters: bool) {
    let schema = Arc::new(
        parse_message_type("message m { required int64 id; optional binary name (UTF8); }")
            .unwrap(),
    );
    // (Setting the ndv or ε turns filters on, so they are set only when wanted.)
    let props = if filters {
        WriterProperties::builder()
            .set_bloom_filter_max_ndv(3000)
            .set_bloom_filter_fpp(0.01)
            .build()
    } else {
        WriterProperties::builder().build()
    };
    let mut writer = SerializedFileWriter::new(
        std::fs::File::create(path).unwrap(),
        schema,
        Arc::new(props),
    )
    .unwrap();
    for rg in 0..2i64 {
        let ids: Vec<i64> = (0..3000).map(|i| 3 * (rg * 3000 + i)).collect();
        let names: Vec<ByteArray> = ids
            .iter()
            .filter(|i| *i % 2 == 0)
            .map(|i| ByteArray::from(format!("n{i}").as_str()))
            .collect();
        let defs: Vec<i16> = ids.iter().map(|i| (i % 2 == 0) as i16).collect();
        let mut group = writer.next_row_group().unwrap();
        let mut c = group.next_column().unwrap().unwrap();
        c.typed::<Int64Type>()
            .write_batch(&ids, None, None)
            .unwrap();
        c.close().unwrap();
        let mut c = group.next_column().unwrap().unwrap();
        c.typed::<ByteArrayType>()
            .write_batch(&names, Some(&defs), None)
            .unwrap();
        c.close().unwrap();
        group.close().unwrap();
    }
    writer.close().unwrap();
}

#[test]
fn parquet_rs_files_answer_as_parquet_rs_checks() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rs.parquet");
    write_parquet_rs(&file, true);
    let reader = parquet_rs_reader(&file);
    let info = info(&file);
    let ids: Vec<String> = (0..20_000).map(|i| i.to_string()).collect();
    let names: Vec<String> = (0..20_000).map(|i| format!("n{i}")).collect();
    let id_answers = check(&file, "id", &ids);
    let name_answers = check(&file, "name", &names);
    for rg in 0..2 {
        let group = reader.get_row_group(rg).unwrap();
        let (id_filter, name_filter) = (
            group.get_column_bloom_filter(0).unwrap(),
            group.get_column_bloom_filter(1).unwrap(),
        );
        assert_eq!(
            info[&(rg, "id".to_string())].bytes,
            32 * id_filter.num_blocks() as u64
        );
        assert_eq!(
            info[&(rg, "id".to_string())].bytes,
            arrow_bytes(3000, 0.01),
            "parquet-rs's sizing"
        );
        for (i, v) in ids.iter().enumerate() {
            let theirs = id_filter.check(&v.parse::<i64>().unwrap());
            assert_eq!(id_answers[i].contains(&rg), theirs, "id {v} rg {rg}");
            if (i as i64) % 3 == 0 && (i as i64) / 3 / 3000 == rg as i64 {
                assert!(theirs, "present id {v}");
            }
        }
        for (i, v) in names.iter().enumerate() {
            assert_eq!(
                name_answers[i].contains(&rg),
                name_filter.check(v.as_str()),
                "name {v} rg {rg}"
            );
        }
    }
}

// ---------------------------------------------------------------- hostile input

/// Reads everything the library can read from `path`; errors are fine, panics are not (the
/// caller counts them with a panic hook).
fn read_all(path: &Path) -> usize {
    let Ok(file) = ParquetBloomFile::open(path) else {
        return 0;
    };
    let mut read = 0;
    for rg in 0..file.num_row_groups() {
        for c in 0..file.columns().len() {
            if let Ok(Some(f)) = file.bloom_filter(rg, c) {
                read += f.might_contain(b"x") as usize + 1;
            }
            let _ = file.value_hashes(rg, c);
        }
        if let Ok(col) = file.column("id") {
            let _ = file.row_groups_maybe_holding(&col, &7i64.to_le_bytes());
        }
    }
    read
}

#[test]
fn truncated_and_mutated_files_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.parquet");
    write_parquet_rs(&good, true);
    let bytes = std::fs::read(&good).unwrap();
    assert!(
        read_all(&good) >= 4,
        "the good file's four filters are read"
    );
    // Panics are counted by where they happen: in this project's code (must be none), or
    // inside arrow-rs's page decoder, which asserts on some damaged pages; the library
    // catches those (its `guard`) and returns an error, which `read_all` checks it gets.
    static OURS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static THEIRS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        let file = info
            .location()
            .map(|l| l.file().to_string())
            .unwrap_or_default();
        if file.contains("/parquet-") {
            THEIRS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        } else {
            OURS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            eprintln!("panic: {info}");
        }
    }));
    let bad = dir.path().join("bad.parquet");
    let mut cases = 0;
    // Every cut in the footer and the filters' region, and every 97th byte elsewhere.
    let tail = bytes.len().saturating_sub(1500);
    for cut in (0..bytes.len()).filter(|&c| c >= tail || c % 97 == 0) {
        std::fs::write(&bad, &bytes[..cut]).unwrap();
        read_all(&bad);
        cases += 1;
    }
    // Single-byte mutations, a fixed-seed generator; half in the last 1,500 bytes (footer,
    // filter headers and bitsets), half anywhere (pages).
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..1500 {
        let mut m = bytes.clone();
        let at = if i % 2 == 0 {
            tail + next() as usize % (bytes.len() - tail)
        } else {
            next() as usize % bytes.len()
        };
        m[at] ^= 1u8 << (next() % 8);
        if i % 3 == 0 {
            m[at] = next() as u8;
        }
        std::fs::write(&bad, &m).unwrap();
        read_all(&bad);
        // add-filters reads the values and writes a copy (a synced file): every 10th case.
        if i % 10 == 0 {
            let copy = dir.path().join("copy.parquet");
            let _ = add_filters(&bad, &copy, &["id", "name"], FilterSizing::distinct(0.01));
        }
        cases += 1;
    }
    std::panic::set_hook(previous);
    let ours = OURS.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        ours, 0,
        "{ours} of {cases} damaged files panicked in bloomkit"
    );
    eprintln!(
        "{cases} damaged files: arrow-rs's reader panicked on {} (caught, reported as errors)",
        THEIRS.load(std::sync::atomic::Ordering::SeqCst)
    );
    // The CLI on a truncated file: exit code 2 and an error, not a panic.
    std::fs::write(&bad, &bytes[..bytes.len() - 3]).unwrap();
    let out = bloomkit(&["parquet", "info", s(&bad)], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: "));
}

#[test]
fn damaged_filter_headers_are_named_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rs.parquet");
    write_parquet_rs(&file, true);
    let opened = ParquetBloomFile::open(&file).unwrap();
    let offset = opened.bloom_filter(0, 0).unwrap().unwrap().offset as usize;
    let bytes = std::fs::read(&file).unwrap();
    let bad = dir.path().join("bad.parquet");
    // The header's numBytes field (zigzag varint after the 0x15 field byte): made 33.
    let mut m = bytes.clone();
    assert_eq!(m[offset], 0x15);
    let len = m[offset + 1..].iter().position(|b| b & 0x80 == 0).unwrap() + 1;
    // 33 as zigzag 66, in a varint of the same length (padded with continuation bytes).
    m[offset + 1] = 66 | if len > 1 { 0x80 } else { 0 };
    for i in 2..=len {
        m[offset + i] = if i < len { 0x80 } else { 0 };
    }
    std::fs::write(&bad, &m).unwrap();
    let out = bloomkit(&["parquet", "info", s(&bad)], None);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.contains("row group 0, column id: damaged Bloom filter"),
        "{e}"
    );
}

/// parquet-rs's own reader of `path`, with its Bloom filters read.
fn parquet_rs_reader(path: &std::path::Path) -> SerializedFileReader<std::fs::File> {
    SerializedFileReader::new_with_options(
        std::fs::File::open(path).unwrap(),
        ReadOptionsBuilder::new()
            .with_reader_properties(
                ReaderProperties::builder()
                    .set_read_bloom_filter(true)
                    .build(),
            )
            .build(),
    )
    .unwrap()
}
