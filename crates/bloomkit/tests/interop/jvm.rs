//! Compiling and running the Java side of the interop tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `java` runs here. The tests skip (saying so) only when it does not; scripts/test
/// installs a JDK, so CI never skips.
pub fn java_present() -> bool {
    let ok = Command::new("java")
        .arg("-version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("SKIPPED: no `java` on this machine (scripts/test installs a JDK)");
    }
    ok
}

/// The Java source `name` of this directory compiled against `classpath` into `dir`.
pub fn compile(name: &str, classpath: &str, dir: &Path) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(name);
    let out = Command::new("javac")
        .args(["-encoding", "UTF-8", "-nowarn", "-cp", classpath, "-d"])
        .arg(dir)
        .arg(&source)
        .output()
        .expect("javac runs (install a JDK: openjdk-17-jdk-headless)");
    assert!(
        out.status.success(),
        "javac {}: {}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs class `main` with `classpath` plus `dir` on the jobs file.
pub fn run(main: &str, classpath: &str, dir: &Path, jobs: &Path) {
    let cp = format!("{classpath}:{}", dir.display());
    let out = Command::new("java")
        .args(["-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", &cp, main])
        .arg(jobs)
        .output()
        .expect("java runs");
    assert!(
        out.status.success(),
        "java {main}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A jar from an environment variable, else the first of `candidates` that exists.
pub fn jar(var: &str, candidates: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(var) {
        return Some(PathBuf::from(path));
    }
    candidates.iter().map(PathBuf::from).find(|p| p.exists())
}

/// The '0'/'1' answers a Java job wrote, as booleans.
pub fn answers(path: &Path) -> Vec<bool> {
    std::fs::read(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .iter()
        .map(|&b| b == b'1')
        .collect()
}

/// Panics, naming the first few items, unless `ours` and `theirs` agree everywhere; also
/// checks that the probes are not vacuous (all inserted items present, some absent ones
/// answered each way).
pub fn assert_same(what: &str, inserted: usize, ours: &[bool], theirs: &[bool]) {
    assert_eq!(ours.len(), theirs.len(), "{what}: probe counts");
    let differ: Vec<usize> = (0..ours.len()).filter(|&i| ours[i] != theirs[i]).collect();
    assert!(
        differ.is_empty(),
        "{what}: {} of {} answers differ (items {:?}…)",
        differ.len(),
        ours.len(),
        &differ[..differ.len().min(10)]
    );
    assert!(
        ours[..inserted].iter().all(|&b| b),
        "{what}: a false negative"
    );
    let absent = &ours[inserted..];
    assert!(
        absent.iter().any(|&b| b) && absent.iter().any(|&b| !b),
        "{what}: the absent probes should meet false positives and true negatives"
    );
}

/// The funnels (item types) every format is tested with.
pub const FUNNELS: [&str; 3] = ["utf8", "long", "bytes"];

/// The absent items probed after the inserted ones.
pub const ABSENT: usize = 3000;

/// Item `i` of a funnel, as `GuavaRoundTrip.item` and `SparkRoundTrip` make it.
pub enum Item {
    Str(String),
    Long(i64),
    Bytes(Vec<u8>),
}

pub fn item(funnel: &str, i: usize) -> Item {
    match funnel {
        "utf8" => Item::Str(format!("item-{i}{}", ["-é", "-😀", ""][i % 3])),
        "long" => Item::Long((i as i64).wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as i64)),
        "bytes" => Item::Bytes((0..i % 37).map(|j| (i * 31 + j * 7) as u8).collect()),
        _ => unreachable!(),
    }
}

/// Inserts an item into a bloomkit filter as the Java formats hash it: a string as its
/// UTF-8 bytes, a long as its 8 little-endian bytes, a byte array as itself (what `bloomkit
/// import --from guava|spark` files answer for).
pub fn insert_any(f: &mut bloomkit::AnyFilter, item: &Item) {
    use bloomkit::Filter;
    match item {
        Item::Str(s) => f.try_insert(s.as_str()),
        Item::Long(v) => f.try_insert(v),
        Item::Bytes(b) => f.try_insert(&b[..]),
    }
    .expect("a classic filter takes every item");
}

/// A bloomkit filter's answers for items 0 … probes − 1 of `funnel`, hashed as
/// [`insert_any`] hashes them.
pub fn probe_any(f: &bloomkit::AnyFilter, funnel: &str, probes: usize) -> Vec<bool> {
    use bloomkit::Filter;
    (0..probes)
        .map(|i| match item(funnel, i) {
            Item::Str(s) => f.contains(s.as_str()),
            Item::Long(v) => f.contains(&v),
            Item::Bytes(b) => f.contains(&b[..]),
        })
        .collect()
}

/// A filter through a bloomkit file and back: what `import` writes and `check` reads.
pub fn through_file(f: bloomkit::AnyFilter) -> bloomkit::AnyFilter {
    use bloomkit::Persist;
    bloomkit::AnyFilter::from_bytes(&f.to_bytes()).expect("a saved filter loads")
}
