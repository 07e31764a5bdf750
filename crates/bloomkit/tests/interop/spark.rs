//! Spark's `util.sketch.BloomFilter` against `bloomkit::interop::spark`, versions 1 and 2.
//!
//! * Always: the filters and `mightContain…` answers Spark 4.3.0's `spark-sketch` jar wrote
//!   once into `tests/fixtures/spark/` (regenerate: run the live test with
//!   `BLOOMKIT_WRITE_SPARK_VECTORS=1`) are read here and answered alike, and filters built here
//!   with the same parameters are the same bytes.
//! * Live, when `BLOOMKIT_SPARK_SKETCH_JAR` names the jar (scripts/test takes it out of
//!   pyspark's source distribution): both ways, as the Guava test does.

use std::path::{Path, PathBuf};

use bloomkit::interop::spark::{optimal_num_of_bits, SparkBloomFilter, SparkVersion};

use crate::jvm::{self, item, Item};

/// (version, seed) pairs tested; the vectors use n = 300, ε = 0.05.
const VERSIONS: [(SparkVersion, &str, i32); 3] = [
    (SparkVersion::V1, "V1", 0),
    (SparkVersion::V2, "V2", 0),
    (SparkVersion::V2, "V2", -7),
];
const VECTOR_N: usize = 300;
const VECTOR_FPP: f64 = 0.05;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spark")
}

fn ours(funnel: &str, version: SparkVersion, seed: i32, n: usize, fpp: f64) -> SparkBloomFilter {
    let bits = optimal_num_of_bits(n as u64, fpp);
    let mut f = SparkBloomFilter::create(version, n as u64, bits, seed).unwrap();
    for i in 0..n {
        match item(funnel, i) {
            Item::Str(s) => f.put_str(&s),
            Item::Long(v) => f.put_long(v),
            Item::Bytes(b) => f.put_bytes(&b),
        };
    }
    f
}

fn probe(f: &SparkBloomFilter, funnel: &str, probes: usize) -> Vec<bool> {
    (0..probes)
        .map(|i| match item(funnel, i) {
            Item::Str(s) => f.might_contain_str(&s),
            Item::Long(v) => f.might_contain_long(v),
            Item::Bytes(b) => f.might_contain_bytes(&b),
        })
        .collect()
}

/// Spark's filter `bytes` with its `answers`, against ours built alike.
fn check_sparks(
    tag: &str,
    funnel: &str,
    n: usize,
    ours: &SparkBloomFilter,
    bytes: &[u8],
    answers: &[bool],
) {
    let theirs = SparkBloomFilter::read_from(bytes).unwrap();
    let probes = n + jvm::ABSENT;
    jvm::assert_same(
        &format!("ours reading Spark's ({tag})"),
        n,
        &probe(&theirs, funnel, probes),
        answers,
    );
    assert_eq!(
        theirs.num_hash_functions(),
        ours.num_hash_functions(),
        "{tag}: k"
    );
    assert_eq!(theirs.bit_size(), ours.bit_size(), "{tag}: m");
    assert!(&theirs == ours, "{tag}: Spark's filter and ours differ");
    assert_eq!(bytes, ours.to_bytes(), "{tag}: bytes");
    // The paths of `bloomkit import --from spark` and `export --to spark`: Spark's filter as
    // a bloomkit file answers as Spark does, and a bloomkit filter with Spark's hashing,
    // filled through the bloomkit API, exports to the bytes Spark wrote.
    let imported = jvm::through_file(theirs.clone().into_filter().unwrap());
    jvm::assert_same(
        &format!("Spark's filter imported as a bloomkit file ({tag})"),
        n,
        &jvm::probe_any(&imported, funnel, probes),
        answers,
    );
    let empty = SparkBloomFilter::from_words(
        theirs.version(),
        u64::from(theirs.num_hash_functions()),
        theirs.seed(),
        vec![0; theirs.words().len()],
    )
    .unwrap();
    let mut built = empty.into_filter().unwrap();
    for i in 0..n {
        jvm::insert_any(&mut built, &item(funnel, i));
    }
    let exported = SparkBloomFilter::from_filter(&jvm::through_file(built)).unwrap();
    assert_eq!(exported.to_bytes(), bytes, "{tag}: exported bytes");
}

#[test]
fn spark_vectors_read_and_rebuilt_alike() {
    for funnel in jvm::FUNNELS {
        for (version, name, seed) in VERSIONS {
            let tag = format!("{funnel}-{name}-seed{seed}");
            let bytes = std::fs::read(fixtures().join(format!("{tag}.bin"))).unwrap();
            let answers = jvm::answers(&fixtures().join(format!("{tag}.txt")));
            let ours = ours(funnel, version, seed, VECTOR_N, VECTOR_FPP);
            check_sparks(&tag, funnel, VECTOR_N, &ours, &bytes, &answers);
        }
    }
}

#[test]
fn spark_reads_ours_and_we_read_sparks() {
    let Some(jar) = std::env::var_os("BLOOMKIT_SPARK_SKETCH_JAR") else {
        eprintln!("SKIPPED: set BLOOMKIT_SPARK_SKETCH_JAR to Spark's spark-sketch jar (scripts/test does)");
        return;
    };
    if !jvm::java_present() {
        return;
    }
    let jar = jar.to_str().unwrap().to_string();
    assert!(Path::new(&jar).exists(), "{jar} does not exist");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    jvm::compile("SparkRoundTrip.java", &jar, d);

    let mut jobs = String::new();
    let mut cases = Vec::new();
    for funnel in jvm::FUNNELS {
        for (version, name, seed) in VERSIONS {
            for (n, fpp) in [(VECTOR_N, VECTOR_FPP), (2000, 0.03)] {
                let f = ours(funnel, version, seed, n, fpp);
                let tag = format!("{funnel}-{name}-seed{seed}-n{n}");
                let probes = n + jvm::ABSENT;
                let p = |what: &str| d.join(format!("{what}-{tag}")).display().to_string();
                std::fs::write(p("ours.bin"), f.to_bytes()).unwrap();
                jobs += &format!(
                    "write {funnel} {name} {n} {fpp} {seed} {} {} {probes}\n",
                    p("theirs.bin"),
                    p("theirs.txt")
                );
                jobs += &format!(
                    "read {funnel} {} {} {probes}\n",
                    p("ours.bin"),
                    p("ours.txt")
                );
                cases.push((funnel, name, seed, n, tag, f));
            }
        }
    }
    let jobs_file = d.join("jobs.txt");
    std::fs::write(&jobs_file, jobs).unwrap();
    jvm::run("SparkRoundTrip", &jar, d, &jobs_file);

    let write_vectors = std::env::var_os("BLOOMKIT_WRITE_SPARK_VECTORS").is_some();
    for (funnel, name, seed, n, tag, ours) in cases {
        let probes = n + jvm::ABSENT;
        let spark_on_ours = jvm::answers(&d.join(format!("ours.txt-{tag}")));
        jvm::assert_same(
            &format!("Spark reading ours ({tag})"),
            n,
            &probe(&ours, funnel, probes),
            &spark_on_ours,
        );
        let bytes = std::fs::read(d.join(format!("theirs.bin-{tag}"))).unwrap();
        let answers_path = d.join(format!("theirs.txt-{tag}"));
        check_sparks(&tag, funnel, n, &ours, &bytes, &jvm::answers(&answers_path));
        if write_vectors && n == VECTOR_N {
            let stem = format!("{funnel}-{name}-seed{seed}");
            std::fs::create_dir_all(fixtures()).unwrap();
            std::fs::write(fixtures().join(format!("{stem}.bin")), &bytes).unwrap();
            std::fs::copy(&answers_path, fixtures().join(format!("{stem}.txt"))).unwrap();
        }
    }
}
