//! End-to-end tests of the `bloomkit` binary: each runs the real executable in a temporary
//! directory and checks its output, files and exit codes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use bloomkit::{AnyFilter, Filter, Persist};
use tempfile::TempDir;

/// Runs `bloomkit` with `args` in `dir`, feeding `stdin` (empty if `None`).
fn run_with_stdin(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloomkit"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the bloomkit binary runs");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    // A command that fails before reading its input closes the pipe early; that is fine.
    if let Err(e) = pipe.write_all(stdin.unwrap_or_default()) {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "writing stdin: {e}"
        );
    }
    drop(pipe);
    child.wait_with_output().expect("bloomkit finishes")
}

fn run(dir: &Path, args: &[&str]) -> Output {
    run_with_stdin(dir, args, None)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs a command that must succeed and returns its standard output.
fn ok(dir: &Path, args: &[&str]) -> String {
    ok_with_stdin(dir, args, b"")
}

/// [`ok`], feeding `stdin`.
fn ok_with_stdin(dir: &Path, args: &[&str], stdin: &[u8]) -> String {
    let output = run_with_stdin(dir, args, Some(stdin));
    assert_eq!(
        output.status.code(),
        Some(0),
        "bloomkit {args:?} failed: {}",
        stderr(&output)
    );
    stdout(&output)
}

/// Runs a command that must fail as the CLI fails (exit code 2, no panic) and returns its
/// standard error.
fn fails_with_stdin(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> String {
    let output = run_with_stdin(dir, args, stdin);
    let message = stderr(&output);
    assert_eq!(
        output.status.code(),
        Some(2),
        "bloomkit {args:?}: {message}"
    );
    assert!(
        !message.contains("panicked"),
        "bloomkit {args:?}: {message}"
    );
    message
}

/// [`fails_with_stdin`] with nothing on standard input.
/// Starts `bloomkit ARGS` in `dir` (standard input closed) and checks that 300 ms later it
/// is still running: waiting, as the caller expects, for a lock the test holds.
fn spawn_waiting(dir: &Path, args: &[&str]) -> std::process::Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloomkit"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the bloomkit binary runs");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "`bloomkit {}` did not wait",
        args.join(" ")
    );
    child
}

fn fails(dir: &Path, args: &[&str]) -> String {
    fails_with_stdin(dir, args, None)
}

/// Runs a command that must fail (as [`fails`]) with a message that says `says`.
fn refuses(dir: &Path, args: &[&str], says: &str) {
    let message = fails(dir, args);
    assert!(message.contains(says), "bloomkit {args:?}: {message}");
}

/// Names joined as the CLI's messages join them: "a, b or c".
fn english_list(names: Vec<&str>) -> String {
    match names.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The kinds that declare an option of this name, in registry order.
fn registry_list(option: &str) -> String {
    english_list(
        bloomkit::registry::kinds_taking(option)
            .iter()
            .map(|k| k.name())
            .collect(),
    )
}

fn temp() -> TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

/// A classic filter for 1000 items at ε = 0.1% in `dir`, named `name`, holding `items`.
fn filter_with(dir: &Path, name: &str, items: &[&str]) -> PathBuf {
    let create = ["create", "--capacity", "1000", "--fpp", "0.001", "-o", name];
    created_with(dir, &create, items)
}

/// The filter that `create` (its arguments, ending in `-o NAME`) makes in `dir`, holding
/// `items` (added when there are any).
fn created_with(dir: &Path, create: &[&str], items: &[&str]) -> PathBuf {
    ok(dir, create);
    let name = create.last().expect("-o NAME");
    if !items.is_empty() {
        let mut args = vec!["add", name];
        args.extend_from_slice(items);
        ok(dir, &args);
    }
    dir.join(name)
}

#[test]
fn create_add_check_round_trip_with_exit_codes() {
    let dir = temp();
    let d = dir.path();
    let created = ok(
        d,
        &[
            "create",
            "--capacity",
            "1000",
            "--fpp",
            "0.01",
            "-o",
            "f.bk",
        ],
    );
    assert!(created.contains("m = 9586 bits, k = 7"), "{created}");
    assert!(d.join("f.bk").is_file());

    let added = ok(d, &["add", "f.bk", "dist", "bloom", "dist"]);
    assert!(added.contains("added 2, already present 1"), "{added}");
    let again = ok(d, &["add", "f.bk", "bloom"]);
    assert!(again.contains("added 0, already present 1"), "{again}");

    let maybe = run(d, &["check", "f.bk", "dist"]);
    assert_eq!(maybe.status.code(), Some(0));
    assert_eq!(stdout(&maybe), "dist\tmaybe\n");

    let no = run(d, &["check", "f.bk", "cuckoo"]);
    assert_eq!(no.status.code(), Some(1), "{}", stderr(&no));
    assert_eq!(stdout(&no), "cuckoo\tno\n");

    // Several items: the answers are in the output, the exit code is 0.
    let both = run(d, &["check", "f.bk", "cuckoo", "bloom"]);
    assert_eq!(both.status.code(), Some(0));
    assert_eq!(stdout(&both), "cuckoo\tno\nbloom\tmaybe\n");

    // Errors are 2, distinct from "no".
    refuses(d, &["check", "missing.bk", "dist"], "missing.bk");
    fails(d, &["check"]);
}

#[test]
fn items_come_from_stdin_and_from_files() {
    let dir = temp();
    let d = dir.path();
    ok(d, &["create", "-n", "1000", "-o", "f.bk"]);
    let added = run_with_stdin(d, &["add", "f.bk"], Some(b"alpha\r\nbeta\ngamma"));
    assert_eq!(added.status.code(), Some(0), "{}", stderr(&added));
    assert!(stdout(&added).contains("added 3, already present 0"));

    // Items are bytes: a line that is not UTF-8 is an item like any other.
    std::fs::write(d.join("more.txt"), b"delta\n\xff\xfe\n").unwrap();
    assert!(ok(d, &["add", "f.bk", "--from", "more.txt"]).contains("added 2"));

    let checked = run_with_stdin(
        d,
        &["check", "f.bk"],
        Some(b"alpha\nbeta\ngamma\ndelta\n\xff\xfe\nomega\n"),
    );
    assert_eq!(checked.status.code(), Some(0));
    assert_eq!(
        checked.stdout,
        b"alpha\tmaybe\nbeta\tmaybe\ngamma\tmaybe\ndelta\tmaybe\n\xff\xfe\tmaybe\nomega\tno\n"
    );
}

#[test]
fn present_and_absent_print_only_the_matching_items() {
    let dir = temp();
    let d = dir.path();
    filter_with(d, "f.bk", &["red", "green"]);
    let input: &[u8] = b"red\nblue\ngreen\nyellow\n";
    let present = run_with_stdin(d, &["check", "f.bk", "--present"], Some(input));
    assert_eq!(stdout(&present), "red\ngreen\n");
    let absent = run_with_stdin(d, &["check", "f.bk", "--absent"], Some(input));
    assert_eq!(stdout(&absent), "blue\nyellow\n");
    assert_eq!(absent.status.code(), Some(0));
    // A single argument still answers through the exit code.
    let single = run(d, &["check", "f.bk", "--present", "blue"]);
    assert_eq!(
        (single.status.code(), stdout(&single)),
        (Some(1), String::new())
    );
    // The two are exclusive.
    fails(d, &["check", "f.bk", "--present", "--absent", "red"]);
}

#[test]
fn build_sizes_for_the_lines_and_finds_every_one() {
    let dir = temp();
    let d = dir.path();
    let mut lines = String::new();
    for i in 0..20_000 {
        lines.push_str(&format!("line-{i}\n"));
    }
    lines.push_str("last line without a newline");
    std::fs::write(d.join("input.txt"), &lines).unwrap();

    let built = ok(d, &["build", "input.txt", "-o", "f.bk", "--fpp", "0.001"]);
    assert!(built.contains("from 20001 lines"), "{built}");

    // No line is reported absent.
    let absent = ok(d, &["check", "f.bk", "--absent", "--from", "input.txt"]);
    assert_eq!(absent, "");
    let present = ok(d, &["check", "f.bk", "--present", "--from", "input.txt"]);
    assert_eq!(present.lines().count(), 20_001);

    // Lines that were not in the input are mostly absent (ε = 0.1%).
    let others: String = (0..10_000).map(|i| format!("other-{i}\n")).collect();
    let found = run_with_stdin(d, &["check", "f.bk", "--present"], Some(others.as_bytes()));
    let false_positives = stdout(&found).lines().count();
    assert!(false_positives < 40, "{false_positives} false positives");

    let info = ok(d, &["info", "f.bk"]);
    assert!(
        info.contains("Number of elements in filter:          20001\n"),
        "{info}"
    );
    assert!(info.contains("Items inserted:"), "{info}");

    let empty = d.join("empty.txt");
    std::fs::write(&empty, b"").unwrap();
    refuses(d, &["build", "empty.txt", "-o", "e.bk"], "empty");
    assert!(!d.join("e.bk").exists());
}

/// `build` fills the blocked and split-block kinds on all cores (partitioned by block); the
/// file must be the one `create` + `add` write line by line, repeated lines included.
#[test]
fn build_of_the_block_kinds_equals_adding_line_by_line() {
    let dir = temp();
    let d = dir.path();
    let lines: String = (0..30_000).map(|i| format!("w{}\n", i % 25_000)).collect();
    std::fs::write(d.join("in.txt"), &lines).unwrap();
    for kind in ["blocked", "sbbf"] {
        ok(d, &["build", "in.txt", "--kind", kind, "-o", "built.bk"]);
        ok(
            d,
            &["create", "--kind", kind, "-n", "30000", "-o", "added.bk"],
        );
        ok(d, &["add", "added.bk", "--from", "in.txt"]);
        let (built, added) = (
            std::fs::read(d.join("built.bk")).unwrap(),
            std::fs::read(d.join("added.bk")).unwrap(),
        );
        assert_eq!(built, added, "{kind}");
    }
}

#[test]
fn info_prints_the_seed_parameters_block() {
    let dir = temp();
    let d = dir.path();
    ok(
        d,
        &[
            "create",
            "--capacity",
            "58110",
            "--fpp",
            "0.001",
            "-o",
            "f.bk",
        ],
    );
    ok(d, &["add", "f.bk", "dist", "bloom"]);
    let info = ok(d, &["info", "f.bk"]);
    let expected = "----- PARAMETERS -----\n\
                    Number of elements in filter:          58110\n\
                    Calibrated probability of false positives: 0.001000\n\
                    Amount of hash functions:             10\n\
                    Filter size:                          835482\n\
                    -----\n";
    assert!(info.starts_with(expected), "{info}");
    for line in [
        "Kind:                                 bloom\n",
        "Size in bytes:                        104440 (102.0 KiB)\n",
        "Hash function:                        murmur3-x64-128\n",
        "Index scheme:                         enhanced-double\n",
        "Seed:                                 0\n",
        "Items inserted:                       2\n",
        "Estimated items (Swamidass-Baldi):    2.0\n",
    ] {
        assert!(info.contains(line), "missing {line:?} in\n{info}");
    }

    let json = ok(d, &["info", "--json", "f.bk"]);
    assert!(json.contains("\"num_bits\": 835482"), "{json}");
    assert!(json.contains("\"len\": 2"), "{json}");

    // Explicit sizing and hashing show up too.
    ok(
        d,
        &[
            "create", "--bits", "4096", "--hashes", "3", "--hash", "xxh3", "--scheme", "seeded",
            "--seed", "42", "-o", "g.bk",
        ],
    );
    let info = ok(d, &["info", "g.bk"]);
    for line in [
        "Amount of hash functions:             3\n",
        "Filter size:                          4096\n",
        "Hash function:                        xxh3-128\n",
        "Index scheme:                         seeded-k\n",
        "Seed:                                 42\n",
    ] {
        assert!(info.contains(line), "missing {line:?} in\n{info}");
    }
}

#[test]
fn merge_unions_compatible_filters_and_refuses_others() {
    let dir = temp();
    let d = dir.path();
    filter_with(d, "a.bk", &["apple", "apricot"]);
    filter_with(d, "b.bk", &["banana"]);
    ok(d, &["merge", "a.bk", "b.bk", "-o", "c.bk"]);
    let answers = ok(
        d,
        &["check", "c.bk", "apple", "apricot", "banana", "cherry"],
    );
    assert_eq!(
        answers,
        "apple\tmaybe\napricot\tmaybe\nbanana\tmaybe\ncherry\tno\n"
    );
    // The inputs are unchanged.
    assert_eq!(run(d, &["check", "a.bk", "banana"]).status.code(), Some(1));

    ok(d, &["create", "--capacity", "50", "-o", "small.bk"]);
    refuses(
        d,
        &["merge", "a.bk", "small.bk", "-o", "bad.bk"],
        "not compatible",
    );
    assert!(!d.join("bad.bk").exists());

    ok(
        d,
        &[
            "create",
            "-n",
            "1000",
            "-e",
            "0.001",
            "--seed",
            "7",
            "-o",
            "seeded.bk",
        ],
    );
    fails(d, &["merge", "a.bk", "seeded.bk", "-o", "bad.bk"]);
}

#[test]
fn damaged_files_are_reported_and_never_overwritten() {
    let dir = temp();
    let d = dir.path();
    let path = filter_with(d, "f.bk", &["dist"]);
    let bytes = std::fs::read(&path).unwrap();

    std::fs::write(d.join("truncated.bk"), &bytes[..bytes.len() / 2]).unwrap();
    refuses(
        d,
        &["check", "truncated.bk", "dist"],
        "truncated.bk is not a valid filter file: truncated",
    );

    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x10;
    std::fs::write(d.join("flipped.bk"), &flipped).unwrap();
    refuses(
        d,
        &["check", "flipped.bk", "dist"],
        "flipped.bk is not a valid filter file: checksum mismatch",
    );

    // Adding to a damaged file fails and leaves it exactly as it was.
    fails(d, &["add", "flipped.bk", "new"]);
    assert_eq!(std::fs::read(d.join("flipped.bk")).unwrap(), flipped);
    fails_with_stdin(d, &["add", "truncated.bk"], Some(b"new\n"));
    assert_eq!(
        std::fs::read(d.join("truncated.bk")).unwrap(),
        &bytes[..bytes.len() / 2]
    );

    // Not a filter at all.
    std::fs::write(d.join("text.bk"), b"just some text\n").unwrap();
    refuses(d, &["info", "text.bk"], "bad magic");
}

#[test]
fn bad_parameters_are_errors_not_panics() {
    let dir = temp();
    let d = dir.path();
    for args in [
        &["create", "-o", "f.bk"][..],
        &["create", "--capacity", "0", "-o", "f.bk"],
        &["create", "--capacity", "10", "--fpp", "1.5", "-o", "f.bk"],
        &["create", "--capacity", "10", "--fpp", "nan", "-o", "f.bk"],
        &["create", "--bits", "0", "-o", "f.bk"],
        &[
            "create",
            "--capacity",
            "10",
            "--kind",
            "no-such-kind",
            "-o",
            "f.bk",
        ],
        // Beyond what 16-bit fingerprints reach: the library's error, not a panic.
        &[
            "create", "--kind", "cuckoo", "-n", "10", "--fpp", "1e-5", "-o", "f.bk",
        ],
        &[
            "create", "--kind", "scalable", "-n", "10", "--growth", "3", "-o", "f.bk",
        ],
        &[
            "create",
            "--kind",
            "vi-counting",
            "-n",
            "10",
            "--increment-base",
            "8",
            "--counter-width",
            "4",
            "-o",
            "f.bk",
        ],
        &[
            "create",
            "--kind",
            "deletable",
            "--bits",
            "10",
            "--regions",
            "6",
            "-o",
            "f.bk",
        ],
        &[
            "create",
            "--capacity",
            "10",
            "--seed",
            "1",
            "--random-seed",
            "-o",
            "f.bk",
        ],
        &["create", "--capacity", "10", "-o", "no-such-dir/f.bk"],
    ] {
        refuses(d, args, "error");
    }
    assert!(!d.join("f.bk").exists());
}

/// Every kind, by its name on the command line.
const KINDS: [&str; 13] = [
    "bloom",
    "blocked",
    "counting",
    "vi-counting",
    "deletable",
    "scalable",
    "stable",
    "cuckoo",
    "sbbf",
    "spectral",
    "weighted",
    "generalized",
    "robust",
];

/// The kinds that can remove items.
const REMOVABLE: [&str; 5] = ["counting", "vi-counting", "deletable", "cuckoo", "spectral"];

/// Runs a command with `stdin` that must succeed and returns its standard output.
/// Lines `prefix-0` to `prefix-(n-1)`, each ended by a newline.
fn numbered(prefix: &str, n: usize) -> String {
    (0..n).map(|i| format!("{prefix}-{i}\n")).collect()
}

/// A filter of `kind` for 1000 items at ε = 1% in `dir`, holding `items`.
fn kind_with(dir: &Path, kind: &str, name: &str, items: &[&str]) -> PathBuf {
    let create = [
        "create", "--kind", kind, "-n", "1000", "-e", "0.01", "-o", name,
    ];
    created_with(dir, &create, items)
}

#[test]
fn every_kind_creates_adds_checks_and_reports_info() {
    let dir = temp();
    let d = dir.path();
    let items = numbered("item", 200);
    let others = numbered("other", 2000);
    for kind in KINDS {
        let name = format!("{kind}.bk");
        let created = ok(
            d,
            &[
                "create", "--kind", kind, "-n", "1000", "-e", "0.01", "-o", &name,
            ],
        );
        assert!(
            created.starts_with(&format!("created {name}: {kind} filter: ")),
            "{created}"
        );
        let added = ok_with_stdin(d, &["add", &name], items.as_bytes());
        assert!(
            added.contains("added 200, already present 0"),
            "{kind}: {added}"
        );

        // Every item added is found; items never added are mostly not (ε = 1% at
        // capacity, far less with 200 items in).
        let absent = ok_with_stdin(d, &["check", &name, "--absent"], items.as_bytes());
        if kind == "generalized" {
            // False negatives by design: later inserts reset earlier items' bits (with
            // k0 = 1, m = 9 586, an item loses one of its 7 ones to each later insert with
            // probability about 7/9 586: some 7% of 200 items), never the last one.
            let lost = absent.lines().count();
            assert!((1..40).contains(&lost), "{kind}: {lost} lost");
            assert!(!absent.lines().any(|l| l == "item-199"), "{absent}");
        } else {
            assert_eq!(absent, "", "{kind}: items lost");
            let checked = ok_with_stdin(d, &["check", &name], items.as_bytes());
            assert_eq!(checked.matches("\tmaybe\n").count(), 200, "{kind}");
        }
        let found = ok_with_stdin(d, &["check", &name, "--present"], others.as_bytes());
        let false_positives = found.lines().count();
        assert!(
            false_positives < 20,
            "{kind}: {false_positives} false positives"
        );

        // info: the kind, its memory and bits per item, and every one of its properties.
        let filter = AnyFilter::load(d.join(&name)).expect("the file loads");
        let info = ok(d, &["info", &name]);
        let line = |label: &str, value: &str| format!("{:<38}{value}\n", format!("{label}:"));
        let memory = filter.memory_bytes();
        for expected in [
            line("Kind", kind),
            line("Bits per item", &format!("{:.2}", filter.bits_per_item())),
        ] {
            assert!(
                info.contains(&expected),
                "{kind}: no {expected:?} in\n{info}"
            );
        }
        let size = format!("{:<38}{memory} (", "Size in bytes:");
        assert!(info.contains(&size), "{kind}: no {size:?} in\n{info}");
        assert!(memory > 0, "{kind}");
        let properties = filter.properties();
        assert!(!properties.is_empty(), "{kind} has no properties");
        if kind == "bloom" {
            // The classic filter's properties are the seeds' PARAMETERS block.
            assert!(info.starts_with("----- PARAMETERS -----\n"), "{info}");
            assert!(info.contains("Filter size:                          9586\n"));
            assert!(info.contains("Fill ratio:"), "{info}");
        } else {
            for (label, value) in &properties {
                let mut label = label.to_string();
                label[..1].make_ascii_uppercase();
                assert!(
                    info.contains(&line(&label, value)),
                    "{kind}: no {label} = {value} in\n{info}"
                );
            }
        }
        let json = ok(d, &["info", "--json", &name]);
        assert!(json.contains(&format!("\"kind\": \"{kind}\"")), "{json}");
        assert!(
            json.contains(&format!("\"memory_bytes\": {memory},")),
            "{json}"
        );
        assert!(json.contains("\"bits_per_item\": "), "{json}");
        for (label, value) in &properties {
            assert!(
                json.contains(&format!("    \"{label}\": \"{value}\"")),
                "{kind}: no {label} in\n{json}"
            );
        }
    }
}

#[test]
fn removable_kinds_remove_added_items_and_report_absent_ones() {
    let dir = temp();
    let d = dir.path();
    for kind in REMOVABLE {
        let name = format!("{kind}.bk");
        kind_with(d, kind, &name, &["alpha", "beta", "gamma"]);

        let output = run(d, &["remove", &name, "alpha"]);
        assert_eq!(output.status.code(), Some(0), "{kind}: {}", stderr(&output));
        let answer = stdout(&output);
        let check = run(d, &["check", &name, "alpha"]);
        if kind == "deletable" && answer == "alpha\tkept\n" {
            // Every bit in a collided region: still reported present.
            assert_eq!(check.status.code(), Some(0), "{kind}");
            assert!(stderr(&output).contains("kept 1"), "{}", stderr(&output));
        } else {
            assert_eq!(answer, "alpha\tremoved\n", "{kind}");
            assert_eq!(stdout(&check), "alpha\tno\n", "{kind}");
            assert_eq!(check.status.code(), Some(1), "{kind}");
            assert!(
                stderr(&output).contains(&format!("{name}: removed 1, kept 0, absent 0")),
                "{}",
                stderr(&output)
            );
        }
        // The other items are still there.
        assert_eq!(
            ok(d, &["check", &name, "beta", "gamma"]),
            "beta\tmaybe\ngamma\tmaybe\n",
            "{kind}"
        );

        // An item that was never added: absent, and the file is untouched.
        let before = std::fs::read(d.join(&name)).unwrap();
        let output = run_with_stdin(d, &["remove", &name], Some(b"delta\nepsilon\n"));
        assert_eq!(output.status.code(), Some(0), "{kind}: {}", stderr(&output));
        assert_eq!(
            stdout(&output),
            "delta\tabsent\nepsilon\tabsent\n",
            "{kind}"
        );
        assert!(
            stderr(&output).contains("removed 0, kept 0, absent 2 (file unchanged)"),
            "{}",
            stderr(&output)
        );
        assert_eq!(std::fs::read(d.join(&name)).unwrap(), before, "{kind}");

        // Several items at once, from a file: one removed, one absent.
        std::fs::write(d.join("gone.txt"), b"beta\nzeta\n").unwrap();
        let output = ok(d, &["remove", &name, "--from", "gone.txt"]);
        assert!(
            output == "beta\tremoved\nzeta\tabsent\n" || output == "beta\tkept\nzeta\tabsent\n",
            "{kind}: {output}"
        );
        assert_eq!(ok(d, &["check", &name, "gamma"]), "gamma\tmaybe\n");
    }
}

#[test]
fn check_count_prints_how_often_a_spectral_filter_saw_each_item() {
    let dir = temp();
    let d = dir.path();
    for method in ["ms", "mi", "rm"] {
        let name = format!("{method}.bk");
        ok(
            d,
            &[
                "create", "--kind", "spectral", "-n", "100", "--method", method, "-o", &name,
            ],
        );
        ok_with_stdin(d, &["add", &name], b"to\nbe\nor\nnot\nto\nbe\nto\n");
        assert_eq!(
            ok(d, &["check", &name, "--count", "to", "be", "or", "hamlet"]),
            "to\t3\nbe\t2\nor\t1\nhamlet\t0\n",
            "{method}"
        );
        let info = ok(d, &["info", &name]);
        assert!(
            info.contains(&format!("{:<38}{method}\n", "Method:")),
            "{info}"
        );
        // One absent item: the exit code says no, as for check without --count.
        assert_eq!(
            run(d, &["check", &name, "--count", "hamlet"]).status.code(),
            Some(1)
        );
    }
    refuses(d, &["remove", "mi.bk", "to"], "minimal increase");
    assert_eq!(ok(d, &["check", "mi.bk", "--count", "to"]), "to\t3\n");
    ok(d, &["remove", "rm.bk", "to"]);
    assert_eq!(ok(d, &["check", "rm.bk", "--count", "to"]), "to\t2\n");

    let bloom = kind_with(d, "bloom", "bloom.bk", &["to"]);
    refuses(
        d,
        &["check", bloom.to_str().unwrap(), "--count", "to"],
        "--count is for --kind spectral",
    );
}

/// A spectral filter is created in the compact layout unless `--counter-layout fixed` asks
/// for every counter at its full width; both count the same, `info` names the layout, and
/// the fixed file is four times the compact one's size.
#[test]
fn a_spectral_filter_takes_the_layout_asked_for() {
    let dir = temp();
    let d = dir.path();
    let mut sizes = Vec::new();
    for layout in ["compact", "fixed"] {
        let name = format!("{layout}.bk");
        ok(
            d,
            &[
                "create",
                "--kind",
                "spectral",
                "-n",
                "10000",
                "--counter-layout",
                layout,
                "-o",
                &name,
            ],
        );
        let hot = "hot\n".repeat(20);
        ok_with_stdin(d, &["add", &name], format!("{hot}cold\n").as_bytes());
        assert_eq!(
            ok(d, &["check", &name, "--count", "hot", "cold", "absent"]),
            "hot\t20\ncold\t1\nabsent\t0\n",
            "{layout}"
        );
        let info = ok(d, &["info", &name]);
        assert!(info.contains(layout), "{info}");
        sizes.push(std::fs::metadata(d.join(&name)).unwrap().len());
    }
    assert!(4 * sizes[0] < sizes[1] + 4096, "{sizes:?}");
    refuses(
        d,
        &[
            "create",
            "--kind",
            "spectral",
            "-n",
            "100",
            "--counter-layout",
            "packed",
            "-o",
            "x.bk",
        ],
        "compact",
    );
}

#[test]
fn a_weighted_filter_gives_frequent_items_more_hash_functions() {
    let dir = temp();
    let d = dir.path();
    std::fs::write(
        d.join("weights.tsv"),
        b"home\t128\nsearch\t8\t0.5\nrare\t0.125\n",
    )
    .unwrap();
    let created = ok(
        d,
        &[
            "create",
            "--kind",
            "weighted",
            "-n",
            "1000",
            "--universe",
            "100000",
            "--weights",
            "weights.tsv",
            "-o",
            "w.bk",
        ],
    );
    assert!(
        created.contains("k = 7 for ordinary items, 3 weighted items"),
        "{created}"
    );
    ok(d, &["add", "w.bk", "home", "about"]);
    assert_eq!(
        ok(d, &["check", "w.bk", "home", "about"]),
        "home\tmaybe\nabout\tmaybe\n"
    );
    let filter = AnyFilter::load(d.join("w.bk")).unwrap();
    let AnyFilter::Weighted(w) = filter else {
        panic!("not weighted")
    };
    assert_eq!(w.num_hashes_of("home"), 14);
    assert_eq!(w.num_hashes_of("rare"), 4);
    for (content, message) in [
        (
            &b"home\tlots\n"[..],
            "line 1: the query frequency is not a number",
        ),
        (b"home\n", "line 1: expected ITEM<TAB>QUERY-FREQUENCY"),
        (b"a\t1\nb\t-2\n", "invalid query frequency"),
    ] {
        std::fs::write(d.join("bad.tsv"), content).unwrap();
        refuses(
            d,
            &[
                "create",
                "--kind",
                "weighted",
                "-n",
                "10",
                "--weights",
                "bad.tsv",
                "-o",
                "x.bk",
            ],
            message,
        );
    }
}

#[test]
fn a_deletable_filter_keeps_items_whose_regions_all_collided() {
    let dir = temp();
    let d = dir.path();
    // One region: the first collision marks it, and no bit can be cleared after that.
    ok(
        d,
        &[
            "create",
            "--kind",
            "deletable",
            "--bits",
            "64",
            "--hashes",
            "3",
            "--regions",
            "1",
            "-o",
            "d.bk",
        ],
    );
    ok_with_stdin(d, &["add", "d.bk"], numbered("item", 20).as_bytes());
    let before = std::fs::read(d.join("d.bk")).unwrap();
    let output = run(d, &["remove", "d.bk", "item-3"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "item-3\tkept\n");
    assert!(stderr(&output).contains("removed 0, kept 1, absent 0"));
    assert_eq!(ok(d, &["check", "d.bk", "item-3"]), "item-3\tmaybe\n");
    assert_eq!(std::fs::read(d.join("d.bk")).unwrap(), before);
}

#[test]
fn kinds_that_cannot_remove_refuse_and_keep_the_file() {
    let dir = temp();
    let d = dir.path();
    for kind in ["bloom", "scalable", "stable"] {
        let name = format!("{kind}.bk");
        let path = kind_with(d, kind, &name, &["alpha"]);
        let before = std::fs::read(&path).unwrap();
        let output = run_with_stdin(d, &["remove", &name], Some(b"alpha\n"));
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{kind}: {message}");
        assert!(
            message.contains(&format!(
                "a {kind} filter cannot remove; use --kind counting, vi-counting, deletable, \
                 cuckoo or spectral"
            )),
            "{message}"
        );
        assert_eq!(stdout(&output), "");
        assert_eq!(std::fs::read(&path).unwrap(), before, "{kind}");
        assert_eq!(ok(d, &["check", &name, "alpha"]), "alpha\tmaybe\n");
    }

    // A damaged file of a removable kind: an error, and the file stays as it was.
    let path = kind_with(d, "counting", "c.bk", &["alpha"]);
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    refuses(d, &["remove", "c.bk", "alpha"], "checksum mismatch");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn kind_specific_options_apply_to_their_kinds_only() {
    let dir = temp();
    let d = dir.path();
    for (kind, option, value, for_kinds) in [
        (
            "bloom",
            "--counter-width",
            "8",
            "counting, vi-counting or spectral",
        ),
        ("counting", "--method", "mi", "spectral"),
        ("bloom", "--universe", "1000", "weighted"),
        ("counting", "--reset-hashes", "2", "generalized"),
        ("deletable", "--increment-base", "2", "vi-counting"),
        ("counting", "--regions", "10", "deletable"),
        ("bloom", "--growth", "4", "scalable"),
        ("cuckoo", "--tightening", "0.8", "scalable"),
        ("stable", "--max-layers", "3", "scalable"),
        ("counting", "--cell-width", "2", "stable"),
        ("scalable", "--decrements", "5", "stable"),
        ("bloom", "--bucket-size", "8", "cuckoo"),
        ("vi-counting", "--fingerprint-bits", "16", "cuckoo"),
        ("stable", "--max-kicks", "100", "cuckoo"),
        ("bloom", "--max-bits-per-item", "40", "compressed"),
        ("cuckoo", "--scheme", "seeded", "the registry"),
        ("scalable", "--hashes", "3", "the registry"),
        ("cuckoo", "--bits", "1024", "the registry"),
    ] {
        // The options every array-shaped kind shares name the kinds that take them as the
        // registry declares them, so that a new kind is listed without a change here.
        let for_kinds = if for_kinds == "the registry" {
            registry_list(option.trim_start_matches("--"))
        } else {
            for_kinds.to_string()
        };
        let args = [
            "create", "--kind", kind, "-n", "100", option, value, "-o", "f.bk",
        ];
        let message = fails(d, &args);
        assert!(
            message.contains(&format!("{option} does not apply to a {kind} filter"))
                && message.contains(&format!("it is for --kind {for_kinds}")),
            "{args:?}: {message}"
        );
        // build refuses them the same way.
        std::fs::write(d.join("lines.txt"), b"a\nb\n").unwrap();
        fails(
            d,
            &[
                "build",
                "lines.txt",
                "--kind",
                kind,
                option,
                value,
                "-o",
                "f.bk",
            ],
        );
        assert!(!d.join("f.bk").exists(), "{args:?}");
    }

    // Each option does what it says for its own kinds.
    for (args, expected) in [
        (
            &["--kind", "counting", "-n", "100", "--counter-width", "8"][..],
            &["Counter width:                        8 bits\n"][..],
        ),
        (
            &["--kind", "counting", "--bits", "5000", "--hashes", "4"],
            &[
                "Counters (m):                         5000\n",
                "Hash functions (k):                   4\n",
            ],
        ),
        (
            &[
                "--kind",
                "vi-counting",
                "-n",
                "100",
                "--counter-width",
                "4",
                "--increment-base",
                "2",
            ],
            &[
                "Counter width:                        4 bits\n",
                "Increments (D_L):                     L = 2: 2..=3\n",
            ],
        ),
        (
            &["--kind", "deletable", "-n", "100", "--regions", "100"],
            &["Regions (r):                          100\n"],
        ),
        (
            &[
                "--kind",
                "scalable",
                "-n",
                "100",
                "--growth",
                "4",
                "--tightening",
                "0.8",
                "--max-layers",
                "3",
                "--scheme",
                "seeded",
            ],
            &[
                "Growth factor (s):                    4\n",
                "Tightening ratio (r):                 0.8\n",
                "Max layers:                           3\n",
                "Index scheme:                         seeded-k\n",
            ],
        ),
        (
            &[
                "--kind",
                "stable",
                "--bits",
                "5000",
                "--hashes",
                "3",
                "--cell-width",
                "2",
                "--decrements",
                "5",
            ],
            &[
                "Cells (m):                            5000\n",
                "Cell width (d):                       2\n",
                "Decrements per insertion (P):         5\n",
            ],
        ),
        (
            &[
                "--kind",
                "cuckoo",
                "-n",
                "100",
                "--bucket-size",
                "8",
                "--fingerprint-bits",
                "16",
                "--max-kicks",
                "100",
                "--hash",
                "xxh3",
                "--seed",
                "9",
            ],
            &[
                "Bucket size (b):                      8\n",
                "Fingerprint bits (f):                 16\n",
                "Max kicks:                            100\n",
                "Hash function:                        xxh3-128\n",
                "Seed:                                 9\n",
            ],
        ),
    ] {
        let mut create = vec!["create", "-o", "f.bk"];
        create.extend_from_slice(args);
        ok(d, &create);
        let info = ok(d, &["info", "f.bk"]);
        for line in expected {
            assert!(info.contains(line), "{args:?}: no {line:?} in\n{info}");
        }
    }
}

#[test]
fn a_full_filter_keeps_the_items_added_before_the_failure() {
    let dir = temp();
    let d = dir.path();
    // Two buckets of 4 slots (one for n = 1, and the small-table margin): the items fill
    // them and the victim slot, then one fails.
    ok(d, &["create", "--kind", "cuckoo", "-n", "1", "-o", "c.bk"]);
    let input: String = (1..=20).map(|i| format!("{i}\n")).collect();
    let message = fails_with_stdin(d, &["add", "c.bk"], Some(input.as_bytes()));
    let failed: u32 = message
        .split("could not add \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|item| item.parse().ok())
        .unwrap_or_else(|| panic!("no failed item in {message}"));
    assert!((6..=10).contains(&failed), "{message}");
    assert!(
        message.contains(&format!(
            "c.bk: could not add \"{failed}\": the cuckoo filter is full"
        )) && message.contains(&format!(
            "Saved, from before it: {} added, 0 already present",
            failed - 1
        )),
        "{message}"
    );
    let kept: Vec<String> = (1..failed).map(|i| i.to_string()).collect();
    let mut check = vec!["check", "c.bk"];
    check.extend(kept.iter().map(String::as_str));
    let expected: String = kept.iter().map(|i| format!("{i}\tmaybe\n")).collect();
    assert_eq!(ok(d, &check), expected);
    // Full from the first item: an error, and the file is untouched.
    let before = std::fs::read(d.join("c.bk")).unwrap();
    refuses(d, &["add", "c.bk", "9"], "Nothing was added");
    assert_eq!(std::fs::read(d.join("c.bk")).unwrap(), before);
    // A remove makes room again.
    assert_eq!(ok(d, &["remove", "c.bk", "1"]), "1\tremoved\n");
    ok(d, &["add", "c.bk", "9"]);

    // A scalable filter at its layer limit: the same.
    ok(
        d,
        &[
            "create",
            "--kind",
            "scalable",
            "-n",
            "2",
            "--max-layers",
            "1",
            "-o",
            "s.bk",
        ],
    );
    ok(d, &["add", "s.bk", "old"]);
    let message = fails_with_stdin(d, &["add", "s.bk"], Some(b"old\nnew\nnewer\n"));
    assert!(
        message.contains("could not add \"newer\": the scalable filter is full")
            && message.contains("Saved, from before it: 1 added, 1 already present"),
        "{message}"
    );
    assert_eq!(
        ok(d, &["check", "s.bk", "old", "new"]),
        "old\tmaybe\nnew\tmaybe\n"
    );
}

#[test]
fn merge_works_for_mergeable_kinds_only() {
    let dir = temp();
    let d = dir.path();
    kind_with(d, "counting", "a.bk", &["apple", "apricot"]);
    kind_with(d, "counting", "b.bk", &["banana"]);
    let merged = ok(d, &["merge", "a.bk", "b.bk", "-o", "c.bk"]);
    assert!(merged.contains("counting filter"), "{merged}");
    assert_eq!(
        ok(
            d,
            &["check", "c.bk", "apple", "apricot", "banana", "cherry"]
        ),
        "apple\tmaybe\napricot\tmaybe\nbanana\tmaybe\ncherry\tno\n"
    );
    // Counters add up: removing one item leaves the others.
    assert_eq!(ok(d, &["remove", "c.bk", "apple"]), "apple\tremoved\n");
    assert_eq!(
        ok(d, &["check", "c.bk", "apple", "apricot", "banana"]),
        "apple\tno\napricot\tmaybe\nbanana\tmaybe\n"
    );

    for kind in ["scalable", "stable", "cuckoo", "generalized"] {
        kind_with(d, kind, "x.bk", &["apple"]);
        kind_with(d, kind, "y.bk", &["banana"]);
        let message = fails(d, &["merge", "x.bk", "y.bk", "-o", "z.bk"]);
        assert!(
            message.contains(&format!(
                "cannot merge x.bk and y.bk: a {kind} filter cannot merge; merge works for \
                 {} filters",
                english_list(
                    bloomkit::Kind::ALL
                        .iter()
                        .filter(|k| k.can_merge())
                        .map(|k| k.name())
                        .collect()
                )
            )),
            "{message}"
        );
        assert!(!d.join("z.bk").exists());
    }

    // Two kinds that do not match.
    kind_with(d, "bloom", "p.bk", &["apple"]);
    refuses(
        d,
        &["merge", "p.bk", "a.bk", "-o", "z.bk"],
        "a bloom filter cannot be merged with a counting filter",
    );
}

/// Parses the study's CSV into its header and rows of numbers.
fn read_csv(path: &Path) -> (String, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).expect("the CSV file was written");
    let mut lines = text.lines();
    let header = lines.next().expect("a header row").to_owned();
    let rows = lines
        .map(|line| {
            line.split(',')
                .map(|cell| cell.parse::<f64>().expect("numeric cell"))
                .collect()
        })
        .collect();
    (header, rows)
}

const CSV_HEADER: &str = "fpp,m,k,false_positives,negatives,measured,wilson_low,wilson_high,theory";

#[test]
fn fpr_study_on_the_builtin_corpus_writes_plausible_rates() {
    let dir = temp();
    let d = dir.path();
    let printed = ok(
        d,
        &["experiment", "fpr", "--limit", "20000", "--csv", "fpr.csv"],
    );
    assert_eq!(printed.matches("----- PARAMETERS -----").count(), 5);
    assert_eq!(printed.matches("----- RESULTS -----").count(), 5);
    assert!(printed.contains("Number of elements in filter:          20000\n"));
    assert!(printed.contains("95% Wilson interval"), "{printed}");

    let (header, rows) = read_csv(&d.join("fpr.csv"));
    assert_eq!(header, CSV_HEADER);
    assert_eq!(rows.len(), 5);
    let fpps: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(fpps, [0.2, 0.05, 0.01, 0.001, 0.0001]);
    for row in &rows {
        let [fpp, m, k, fp, negatives, measured, low, high, theory] = row[..] else {
            panic!("9 columns expected: {row:?}");
        };
        assert!(m > 0.0 && k >= 1.0, "{row:?}");
        assert!((19_000.0..=20_000.0).contains(&negatives), "{row:?}");
        assert!((measured - fp / negatives).abs() < 1e-12, "{row:?}");
        assert!(low <= measured && measured <= high, "{row:?}");
        assert!(
            (theory / fpp - 1.0).abs() < 0.1,
            "theory far from ε: {row:?}"
        );
        // Plausible: within a factor of 3 of ε where enough false positives are expected,
        // and never far above it.
        if fpp >= 0.001 {
            assert!(measured > fpp / 3.0 && measured < fpp * 3.0, "{row:?}");
        } else {
            assert!(measured < fpp * 10.0, "{row:?}");
        }
    }

    // The built-in corpus is the same on every run.
    ok(
        d,
        &[
            "experiment",
            "fpr",
            "--limit",
            "20000",
            "--csv",
            "again.csv",
        ],
    );
    assert_eq!(
        std::fs::read(d.join("fpr.csv")).unwrap(),
        std::fs::read(d.join("again.csv")).unwrap()
    );
}

#[test]
fn fpr_study_on_the_system_word_list_agrees_with_theory() {
    // Not skipped when missing: scripts/test installs it (Debian's wamerican).
    let words = Path::new("/usr/share/dict/words");
    assert!(
        words.is_file(),
        "{} is missing: install Debian's wamerican (scripts/test does)",
        words.display()
    );
    let dir = temp();
    let d = dir.path();
    let printed = ok(
        d,
        &[
            "experiment",
            "fpr",
            "--words",
            "/usr/share/dict/words",
            "--csv",
            "words.csv",
        ],
    );
    let (header, rows) = read_csv(&d.join("words.csv"));
    assert_eq!(header, CSV_HEADER);
    assert_eq!(rows.len(), 5);
    // The CSV carries the 95% interval; a different word list would miss it in about one
    // row of four runs by chance, so the test judges at 99.9% from the raw counts.
    for row in &rows {
        let (fp, negatives, theory) = (row[3], row[4], row[8]);
        let (low, high) =
            bloomkit::stats::wilson_interval(fp as u64, negatives as u64, bloomkit::stats::Z_99_9);
        assert!(
            low <= theory && theory <= high,
            "theory {theory} outside [{low}, {high}]:\n{printed}"
        );
    }
}

#[test]
fn fpr_study_rejects_a_missing_word_list() {
    let dir = temp();
    refuses(
        dir.path(),
        &["experiment", "fpr", "--words", "no-such-words.txt"],
        "no-such-words.txt",
    );
}

/// `build` fills the classic filter on all cores, a block of lines at a time; the file it
/// writes must be exactly the filter of inserting every line, one by one, with the library.
#[test]
fn build_writes_the_filter_the_library_builds_from_the_same_lines() {
    use bloomkit::{BloomFilter, Filter, HashFunction, IndexScheme, Persist};

    let dir = temp();
    let d = dir.path();
    // Awkward lines: CRLF endings, empty lines, bytes that are not UTF-8, a lone \r inside
    // a line, duplicates, and a last line without a newline.
    let mut input = Vec::new();
    for i in 0..30_000u32 {
        match i % 6 {
            0 => input.extend_from_slice(format!("crlf-{i}\r\n").as_bytes()),
            1 => input.extend_from_slice(b"\n"),
            2 => input.extend_from_slice(&[0xff, 0x80 | (i % 128) as u8, b'\r', b'x', b'\n']),
            3 => input.extend_from_slice(format!("dup-{}\n", i % 100).as_bytes()),
            _ => input.extend_from_slice(format!("{i:08x}\n").as_bytes()),
        }
    }
    input.extend_from_slice(b"the end");
    std::fs::write(d.join("in.txt"), &input).unwrap();
    let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    for line in &mut lines {
        *line = line.strip_suffix(b"\r").unwrap_or(line);
    }

    for (hash, scheme, function, index_scheme) in [
        (
            "murmur3",
            "double",
            HashFunction::Murmur3,
            IndexScheme::EnhancedDoubleHashing,
        ),
        (
            "xxh3",
            "seeded",
            HashFunction::Xxh3,
            IndexScheme::SeededHashes,
        ),
        (
            "fold2",
            "double",
            HashFunction::Fold2,
            IndexScheme::EnhancedDoubleHashing,
        ),
    ] {
        let built = ok(
            d,
            &[
                "build", "in.txt", "-o", "f.bk", "--fpp", "0.001", "--hash", hash, "--scheme",
                scheme, "--seed", "42",
            ],
        );
        assert!(built.contains("from 30001 lines"), "{built}");
        let from_cli = BloomFilter::load(d.join("f.bk")).unwrap();

        let mut expected = BloomFilter::builder()
            .capacity(lines.len() as u64)
            .fpp(0.001)
            .hash_function(function)
            .index_scheme(index_scheme)
            .seed(42)
            .build()
            .unwrap();
        for line in &lines {
            expected.insert(*line);
        }
        // The same bits, parameters and count of new lines: the same file, byte for byte
        // (format version 2, the CLI's default for a new file).
        assert_eq!(Filter::len(&from_cli), Filter::len(&expected));
        assert!(
            std::fs::read(d.join("f.bk")).unwrap() == expected.to_bytes_chunked(),
            "{hash}/{scheme}"
        );
        assert!(
            built.contains(&format!("({} of them new", Filter::len(&expected))),
            "{built}"
        );

        // `check` answers on all cores too, and keeps the order of the lines.
        let checked = run(d, &["check", "f.bk", "--from", "in.txt"]);
        assert_eq!(checked.status.code(), Some(0));
        let mut answers = Vec::new();
        for line in &lines {
            answers.extend_from_slice(line);
            let maybe = expected.contains(*line);
            answers.extend_from_slice(if maybe { b"\tmaybe\n" } else { b"\tno\n" });
        }
        assert!(checked.stdout == answers, "{hash}/{scheme}: check output");
    }
}

/// `build` reads its file as a set: every distinct line goes into the filter exactly once,
/// whatever the filter answers for it at that moment. If the filter's own "maybe" decided
/// what is a repeat, a line that is a false positive when it is read would be skipped, and
/// removing the lines it collides with would make it answer "no". Here every removable kind
/// is built from 40,000 distinct lines (plus repeats) at ε = 1% — about a hundred of them
/// are false positives when they are read — then a random half is removed through the CLI,
/// and every kept line must still answer "maybe".
#[test]
fn build_then_remove_never_loses_a_kept_line_in_any_removable_kind() {
    let dir = temp();
    let d = dir.path();
    let distinct: Vec<String> = (0..40_000)
        .map(|i| format!("word-{i:05}-{}", i * 7919 % 40_000))
        .collect();
    // A fixed-seed xorshift chooses the repeats and the lines to remove.
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut input = String::new();
    for (i, line) in distinct.iter().enumerate() {
        input.push_str(line);
        input.push('\n');
        if i % 20 == 0 {
            // A repeat, somewhere earlier in the file.
            input.push_str(&distinct[(next() % (i as u64 + 1)) as usize]);
            input.push('\n');
        }
    }
    std::fs::write(d.join("input.txt"), &input).unwrap();
    let (mut removed, mut kept) = (String::new(), String::new());
    for line in &distinct {
        let target = if next() % 2 == 0 {
            &mut removed
        } else {
            &mut kept
        };
        target.push_str(line);
        target.push('\n');
    }
    std::fs::write(d.join("removed.txt"), &removed).unwrap();
    std::fs::write(d.join("kept.txt"), &kept).unwrap();

    for kind in ["counting", "vi-counting", "deletable", "cuckoo"] {
        let file = format!("{kind}.bk");
        let built = ok(d, &["build", "input.txt", "--kind", kind, "-o", &file]);
        // Every distinct line was inserted once: none was taken for a repeat. (A deletable
        // filter counts only the insertions that set a new bit, so its count is lower.)
        if kind != "deletable" {
            assert!(
                built.contains(&format!("({} of them new to the filter)", distinct.len())),
                "{kind}: {built}"
            );
        }
        ok(d, &["remove", &file, "--from", "removed.txt"]);
        let lost = ok(d, &["check", &file, "--absent", "--from", "kept.txt"]);
        assert_eq!(
            lost.lines().count(),
            0,
            "{kind}: kept lines answer \"no\" after the others were removed:\n{lost}"
        );
    }
}

#[test]
fn bloomier_builds_from_key_value_lines_and_gets_the_values() {
    let dir = temp();
    let mut tsv = String::new();
    for i in 0..300u32 {
        tsv.push_str(&format!("key\t{i}\t{}\n", i * 7 % 1000));
    }
    std::fs::write(dir.path().join("kv.tsv"), &tsv).unwrap();
    ok(
        dir.path(),
        &[
            "bloomier",
            "build",
            "kv.tsv",
            "-o",
            "t.bmr",
            "--check-bits",
            "12",
        ],
    );
    // The key is everything before the last tab.
    let out = ok(
        dir.path(),
        &["bloomier", "get", "t.bmr", "key\t5", "key\t299", "nope"],
    );
    assert_eq!(out, "key\t5\t35\nkey\t299\t93\nnope\tabsent\n");
    let absent = run(dir.path(), &["bloomier", "get", "t.bmr", "nope"]);
    assert_eq!(absent.status.code(), Some(1));
    let from_stdin = ok_with_stdin(dir.path(), &["bloomier", "get", "t.bmr"], b"key\t1\n");
    assert_eq!(from_stdin, "key\t1\t7\n");

    // Membership mode, from standard input.
    ok_with_stdin(
        dir.path(),
        &[
            "bloomier",
            "build",
            "-",
            "--keys-only",
            "-e",
            "0.001",
            "-o",
            "m.bmr",
        ],
        b"a\nb\nc\n",
    );
    assert_eq!(ok(dir.path(), &["bloomier", "get", "m.bmr", "b"]), "b\t0\n");
    // Without --hash, each table takes the library's default hash for its mode.
    let hash_of = |file: &str| {
        bloomkit::BloomierFilter::load(dir.path().join(file))
            .unwrap()
            .hashing()
            .function
    };
    let library_default = |value_bits| {
        bloomkit::BloomierFilter::builder()
            .value_bits(value_bits)
            .build([(&b"a"[..], 0u64)])
            .unwrap()
            .hashing()
            .function
    };
    assert_eq!(hash_of("m.bmr"), library_default(0));
    assert_eq!(hash_of("t.bmr"), library_default(10));
    assert_ne!(library_default(0), library_default(10));

    // Either layout on request, with the same answers; by default the one of fewer cells,
    // at 300 keys three segments (1.34 cells per key against the fuse layout's 1.49).
    for layout in ["three-segments", "fuse"] {
        ok(
            dir.path(),
            &[
                "bloomier",
                "build",
                "kv.tsv",
                "-o",
                &format!("{layout}.bmr"),
                "--check-bits",
                "12",
                "--layout",
                layout,
            ],
        );
        let again = ok(
            dir.path(),
            &[
                "bloomier",
                "get",
                &format!("{layout}.bmr"),
                "key\t5",
                "key\t299",
                "nope",
            ],
        );
        assert_eq!(again, out, "{layout}");
    }
    let file = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    assert_eq!(file("t.bmr"), file("three-segments.bmr"));
    assert!(file("fuse.bmr").len() > file("t.bmr").len());

    // Errors: a line without a value, a value too wide, conflicting values, a filter file
    // given to `get`, a Bloomier file given to `check`.
    std::fs::write(dir.path().join("bad.tsv"), "a\t1\nb\n").unwrap();
    refuses(
        dir.path(),
        &["bloomier", "build", "bad.tsv", "-o", "x"],
        "line 2",
    );
    std::fs::write(dir.path().join("wide.tsv"), "a\t300\n").unwrap();
    let e = run(
        dir.path(),
        &[
            "bloomier",
            "build",
            "wide.tsv",
            "--value-bits",
            "8",
            "-o",
            "x",
        ],
    );
    assert!(stderr(&e).contains("does not fit"), "{}", stderr(&e));
    std::fs::write(dir.path().join("dup.tsv"), "a\t1\na\t2\n").unwrap();
    let e = run(dir.path(), &["bloomier", "build", "dup.tsv", "-o", "x"]);
    assert!(stderr(&e).contains("twice"), "{}", stderr(&e));
    let bloom = filter_with(dir.path(), "f.bloom", &["a"]);
    fails(
        dir.path(),
        &["bloomier", "get", bloom.to_str().unwrap(), "a"],
    );
    let e = run(dir.path(), &["check", "t.bmr", "a"]);
    assert!(stderr(&e).contains("Bloomier"), "{}", stderr(&e));
    assert!(!dir.path().join("x").exists());
}

#[test]
fn export_compressed_is_read_back_by_every_command() {
    let dir = temp();
    let lines = numbered("w", 2_000);
    std::fs::write(dir.path().join("words"), &lines).unwrap();
    ok(
        dir.path(),
        &["build", "words", "-o", "f.bloom", "--kind", "compressed"],
    );
    ok(dir.path(), &["export", "f.bloom", "-o", "plain.bloom"]);
    let said = ok(
        dir.path(),
        &["export", "--compressed", "plain.bloom", "-o", "g.bloom"],
    );
    assert!(said.contains("compressed filter"), "{said}");
    let plain = std::fs::metadata(dir.path().join("plain.bloom"))
        .unwrap()
        .len();
    let sent = std::fs::metadata(dir.path().join("g.bloom")).unwrap().len();
    // k = 2, m/n ≈ 19: about 8.9 bits per item sent instead of 19 in memory.
    assert!(sent * 2 < plain, "{sent} vs {plain}");
    let g = AnyFilter::load(dir.path().join("g.bloom")).unwrap();
    assert_eq!(g.kind().name(), "compressed");
    assert!(ok(dir.path(), &["check", "g.bloom", "w-17"]).contains("maybe"));
    assert!(ok(dir.path(), &["info", "g.bloom"]).contains("compressed"));
    ok(dir.path(), &["add", "g.bloom", "new item"]);
    assert!(ok(dir.path(), &["check", "g.bloom", "new item"]).contains("maybe"));
    ok(
        dir.path(),
        &["merge", "g.bloom", "f.bloom", "-o", "both.bloom"],
    );
    // Only classic filters export.
    let counting = kind_with(dir.path(), "counting", "c.bloom", &["a"]);
    refuses(
        dir.path(),
        &[
            "export",
            "--compressed",
            counting.to_str().unwrap(),
            "-o",
            "x",
        ],
        "counting",
    );
}

#[test]
fn ssd_builds_adds_and_checks_an_on_disk_filter() {
    let dir = temp();
    let d = dir.path();
    std::fs::write(d.join("lines.txt"), numbered("line", 20_000)).unwrap();
    let built = ok(
        d,
        &[
            "ssd",
            "build",
            "lines.txt",
            "-o",
            "f.bkb",
            "--memory",
            "16KiB",
        ],
    );
    assert!(
        built.starts_with("built f.bkb from 20000 lines of lines.txt in "),
        "{built}"
    );
    assert!(built.contains("buffered filter on disk: "), "{built}");
    assert!(built.contains("buffer 16.0 KiB (1024 inserts)"), "{built}");
    // 20 batches of 1 024 inserts over a few pages: far below a read per insert.
    let reads: f64 = built
        .split(" and ")
        .next()
        .and_then(|s| s.rsplit('(').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no reads per insert in {built}"));
    assert!(reads < 0.1, "{built}");

    let present = ok_with_stdin(
        d,
        &["ssd", "check", "f.bkb"],
        numbered("line", 20_000).as_bytes(),
    );
    assert_eq!(present.matches("\tmaybe\n").count(), 20_000);
    let output = run(d, &["ssd", "check", "f.bkb", "never-added"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(stdout(&output), "never-added\tno\n");
    assert!(
        stderr(&output).contains("page reads 1, page writes 0"),
        "{}",
        stderr(&output)
    );

    let output = run(d, &["ssd", "add", "f.bkb", "never-added", "--memory", "0"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("page reads 1, page writes 1"));
    ok(d, &["ssd", "check", "f.bkb", "never-added"]);

    // Not an on-disk filter, a bad size: errors, exit 2.
    ok(d, &["create", "-n", "10", "-o", "plain.bk"]);
    fails(d, &["ssd", "check", "plain.bk", "x"]);
    fails(
        d,
        &[
            "ssd",
            "build",
            "lines.txt",
            "-o",
            "g.bkb",
            "--memory",
            "lots",
        ],
    );
    assert!(!d.join("g.bkb").exists());
}

/// A lone "-" as the item argument is standard input, as `build -` and `--from -` read
/// it: `cat items | bloomkit add F -` added the single item "-" and dropped every piped
/// line, and `check F -` answered for "-" alone.
#[test]
fn a_lone_dash_reads_the_items_from_standard_input() {
    let dir = temp();
    let d = dir.path();
    ok(
        d,
        &["create", "--kind", "counting", "-n", "1000", "-o", "f.bk"],
    );
    let added = ok_with_stdin(d, &["add", "f.bk", "-"], b"alice\r\nbob\n");
    assert_eq!(added, "f.bk: added 2, already present 0\n");
    let answers = ok_with_stdin(d, &["check", "f.bk", "-"], b"alice\nbob\n-\n");
    assert_eq!(answers, "alice\tmaybe\nbob\tmaybe\n-\tno\n");
    let removed = ok_with_stdin(d, &["remove", "f.bk", "-"], b"bob\n");
    assert_eq!(removed, "bob\tremoved\n");
    assert_eq!(
        ok(d, &["check", "f.bk", "alice", "bob"]),
        "alice\tmaybe\nbob\tno\n"
    );

    std::fs::write(d.join("lines.txt"), "one\ntwo\n").unwrap();
    ok(d, &["ssd", "build", "lines.txt", "-o", "s.bkb"]);
    let output = run_with_stdin(d, &["ssd", "add", "s.bkb", "-"], Some(b"three\n"));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("s.bkb: added 1"),
        "{}",
        stderr(&output)
    );
    // Lines of standard input: exit 0 whatever the last answer (1 is for a single item).
    let output = run_with_stdin(d, &["ssd", "check", "s.bkb", "-"], Some(b"three\nfour\n"));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "three\tmaybe\nfour\tno\n");
}

/// `ssd check` or `ssd add` given an ordinary filter file (which `create` writes in format
/// version 2, or version 1 on request) says what the file is and which verb reads it,
/// rather than "unsupported format version 2" (a version this build does read) or a bare
/// kind tag; the file is left as it was.
#[test]
fn ssd_verbs_name_an_ordinary_filter_file_for_what_it_is() {
    let dir = temp();
    let d = dir.path();
    ok(
        d,
        &["create", "--kind", "counting", "-n", "10", "-o", "v2.bk"],
    );
    ok(
        d,
        &["create", "-n", "10", "-o", "v1.bk", "--format-version", "1"],
    );
    for (file, kind, version) in [("v2.bk", "counting", 2), ("v1.bk", "bloom", 1)] {
        let before = std::fs::read(d.join(file)).unwrap();
        for verb in ["check", "add"] {
            let error = fails(d, &["ssd", verb, file, "x"]);
            let says = format!(
                "the file is a {kind} filter in bloomkit's format version {version}, loaded \
                 whole (ask it with `bloomkit check`"
            );
            assert!(error.contains(&says), "ssd {verb} {file}: {error}");
            assert!(
                error.contains("not a buffered Bloom filter on disk"),
                "{error}"
            );
            assert!(!error.contains("unsupported format version"), "{error}");
        }
        assert_eq!(std::fs::read(d.join(file)).unwrap(), before, "{file}");
    }
}

/// Two writers of one file at once (two cron jobs feeding one filter): each run reads the
/// file, adds, and saves. Both processes are started, and both have had time to read the
/// file, before either gets its items — so without the lock the second save always replaces
/// the first one's, and half of the items are lost. With it the second waits, reads what
/// the first saved, and every item of both answers "maybe".
#[test]
fn concurrent_writers_of_one_file_lose_nothing() {
    let dir = temp();
    ok(
        dir.path(),
        &[
            "create", "--kind", "counting", "-n", "60000", "--fpp", "0.001", "-o", "f.bloom",
        ],
    );
    let batch = |tag: &str| -> Vec<u8> {
        (0..20_000)
            .flat_map(|i| format!("{tag}-{i}\n").into_bytes())
            .collect()
    };
    let spawn = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_bloomkit"))
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the bloomkit binary runs")
    };
    let mut writers = [
        (spawn(&["add", "f.bloom"]), batch("first")),
        (spawn(&["add", "f.bloom"]), batch("second")),
        (spawn(&["add", "f.bloom"]), batch("third")),
    ];
    std::thread::sleep(std::time::Duration::from_millis(300));
    // One feeder thread per writer: a writer waiting for the lock reads nothing yet.
    let feeders: Vec<_> = writers
        .iter_mut()
        .map(|(child, input)| {
            let mut pipe = child.stdin.take().expect("stdin is piped");
            let input = std::mem::take(input);
            std::thread::spawn(move || pipe.write_all(&input).expect("writing stdin"))
        })
        .collect();
    for feeder in feeders {
        feeder.join().unwrap();
    }
    for (child, _) in writers {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let filter = AnyFilter::load(dir.path().join("f.bloom")).unwrap();
    for tag in ["first", "second", "third"] {
        let lost = (0..20_000)
            .filter(|i| !filter.contains(format!("{tag}-{i}").as_str()))
            .count();
        assert_eq!(lost, 0, "items of the {tag} writer answer no");
    }
}

/// A writer waits while another holds the file, then does its work; with `--no-wait` it
/// fails at once with a clear error and changes nothing. Covers every rewriting verb.
#[test]
fn a_writer_waits_for_the_lock_or_fails_at_once_with_no_wait() {
    let dir = temp();
    ok(
        dir.path(),
        &[
            "create", "--kind", "counting", "-n", "1000", "-o", "f.bloom",
        ],
    );
    ok(dir.path(), &["add", "f.bloom", "kept", "gone"]);
    ok(
        dir.path(),
        &[
            "create", "--kind", "counting", "-n", "1000", "-o", "g.bloom",
        ],
    );
    ok(dir.path(), &["add", "g.bloom", "from-g"]);
    let path = dir.path().join("f.bloom");
    let held = bloomkit::FileLock::exclusive(&path).unwrap();
    for args in [
        &["add", "--no-wait", "f.bloom", "x"][..],
        &["remove", "--no-wait", "f.bloom", "gone"],
        &["merge", "--no-wait", "f.bloom", "g.bloom", "-o", "f.bloom"],
    ] {
        refuses(
            dir.path(),
            args,
            "another bloomkit command is changing this file",
        );
    }
    let waiting = spawn_waiting(
        dir.path(),
        &["merge", "f.bloom", "g.bloom", "-o", "f.bloom"],
    );
    drop(held);
    let output = waiting.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("waiting for another bloomkit command"));
    let filter = AnyFilter::load(&path).unwrap();
    for item in ["kept", "gone", "from-g"] {
        assert!(filter.contains(item), "{item}");
    }
    assert!(!filter.contains("x"), "the refused add changed the file");
}

/// 20 000 words into a classic filter made for 1 000: every bit ends up set. The command
/// must not report the items it could not tell apart as "already present" and stay quiet:
/// it warns that the filter is full, with its rate now and what to do.
#[test]
fn adding_past_capacity_warns_that_the_filter_is_full() {
    let dir = temp();
    ok(dir.path(), &["create", "-n", "1000", "-o", "small.bk"]);
    let words: Vec<u8> = (0..20_000)
        .flat_map(|i| format!("word-{i}\n").into_bytes())
        .collect();
    let output = run_with_stdin(dir.path(), &["add", "small.bk"], Some(&words));
    assert!(output.status.success(), "{}", stderr(&output));
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(out.contains("answered maybe-present"), "{out}");
    assert!(!out.contains("already present"), "{out}");
    assert!(err.contains("warning: the filter is full"), "{err}");
    assert!(err.contains("past the 1000 it was built for"), "{err}");
    assert!(err.contains("--kind scalable"), "{err}");

    // Within capacity: no warning, the usual words.
    ok(dir.path(), &["create", "-n", "1000", "-o", "roomy.bk"]);
    let output = run_with_stdin(dir.path(), &["add", "roomy.bk"], Some(&words[..5000]));
    assert!(
        stdout(&output).contains("already present"),
        "{}",
        stdout(&output)
    );
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
    // A scalable filter grows: never full.
    ok(
        dir.path(),
        &[
            "create", "--kind", "scalable", "-n", "1000", "-o", "grows.bk",
        ],
    );
    let output = run_with_stdin(dir.path(), &["add", "grows.bk"], Some(&words));
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
}

/// A cuckoo filter in RedisBloom's layout with an expansion grows by sub-filters, as its
/// `CF.RESERVE … EXPANSION` twin does: adding past the first sub-filter is not "full" (the
/// cuckoo kind as a whole does not grow; this filter does). Only when growing has raised
/// its rate past twice its ε does `add` warn, and then it says the filter grew.
#[test]
fn a_growing_redisbloom_cuckoo_filter_is_not_called_full() {
    let dir = temp();
    let d = dir.path();
    let create = [
        "create",
        "--kind",
        "cuckoo",
        "--layout",
        "redisbloom",
        "--expansion",
        "1",
        "-n",
        "166",
        "-o",
        "grows.bk",
    ];
    ok(d, &create);
    // 256 slots in the first sub-filter, ε its rate at 166 items (load 0.65): 300 items
    // need a second sub-filter, and their summed load (300/256) keeps the rate under 2ε.
    let output = run_with_stdin(d, &["add", "grows.bk"], Some(numbered("a", 300).as_bytes()));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("already present"),
        "{}",
        stdout(&output)
    );
    let info = ok(d, &["info", "grows.bk"]);
    let sub_filters = info.lines().find(|l| l.starts_with("Sub-filters:"));
    assert_eq!(
        sub_filters.map(|l| l.split_whitespace().last()),
        Some(Some("2")),
        "{info}"
    );

    // 1000 more: five sub-filters' worth, the rate is several times ε.
    let output = run_with_stdin(
        d,
        &["add", "grows.bk"],
        Some(numbered("b", 1000).as_bytes()),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("warning: the filter grew past the 166 items"),
        "{err}"
    );
    assert!(
        !err.contains("full") && !err.contains("a kind that grows"),
        "{err}"
    );

    // Expansion 0 never grows: past its capacity it is full, as before.
    ok(
        d,
        &[
            "create",
            "--kind",
            "cuckoo",
            "--redisbloom",
            "-n",
            "100",
            "-o",
            "fixed.bk",
        ],
    );
    let output = run_with_stdin(d, &["add", "fixed.bk"], Some(numbered("a", 150).as_bytes()));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("warning: the filter is full"),
        "{}",
        stderr(&output)
    );
}

/// `info` of a cuckoo filter in RedisBloom's layout reports that layout's facts (as
/// `CF.INFO` does: sub-filters, expansion, buckets, bucket size, max iterations, items and
/// deletes), not the paper layout's target load and victim slot, which it has not; the
/// paper's layout keeps them.
#[test]
fn info_of_a_redisbloom_cuckoo_filter_shows_its_own_layouts_facts() {
    let dir = temp();
    let d = dir.path();
    let create = [
        "create",
        "--kind",
        "cuckoo",
        "--layout",
        "redisbloom",
        "--expansion",
        "2",
        "-n",
        "100",
        "-o",
        "rc.bk",
    ];
    ok(d, &create);
    ok_with_stdin(d, &["add", "rc.bk"], numbered("r", 400).as_bytes());
    ok_with_stdin(d, &["remove", "rc.bk"], numbered("r", 3).as_bytes());
    let info = ok(d, &["info", "rc.bk"]);
    for absent in ["Target load", "Victim slot", "Max kicks"] {
        assert!(!info.contains(absent), "{absent}: {info}");
    }
    let line = |label: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("{label}:")))
            .unwrap_or_else(|| panic!("no {label}: {info}"))
            .trim()
            .to_owned()
    };
    assert_eq!(line("Layout"), "redisbloom");
    assert_eq!(line("Sub-filters"), "2");
    assert!(line("Expansion").starts_with("2 "), "{info}");
    assert_eq!(line("Buckets (first sub-filter)"), "128");
    assert_eq!(line("Buckets (all sub-filters)"), "384");
    assert_eq!(line("Bucket size (b)"), "2");
    assert_eq!(line("Max iterations"), "500");
    assert_eq!(line("Items (CF.INFO's items inserted)"), "397");
    assert_eq!(line("Items deleted"), "3");

    ok(
        d,
        &["create", "--kind", "cuckoo", "-n", "100", "-o", "paper.bk"],
    );
    let info = ok(d, &["info", "paper.bk"]);
    for present in [
        "Target load",
        "Victim slot:                          empty",
        "Max kicks",
    ] {
        assert!(info.contains(present), "{present}: {info}");
    }
    assert!(!info.contains("Sub-filters"), "{info}");
}

/// `cat log | bloomkit build - -o f`: standard input is spooled (build reads its input
/// twice) and the filter is the one the same lines in a file give; the spool is removed.
#[test]
fn build_reads_standard_input() {
    let dir = temp();
    let lines: Vec<u8> = (0..5000)
        .flat_map(|i| format!("line-{i}\n").into_bytes())
        .collect();
    std::fs::write(dir.path().join("lines.txt"), &lines).unwrap();
    ok(dir.path(), &["build", "lines.txt", "-o", "from-file.bk"]);
    let output = run_with_stdin(
        dir.path(),
        &["build", "-", "-o", "from-stdin.bk"],
        Some(&lines),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("5000 lines of standard input"),
        "{}",
        stdout(&output)
    );
    assert_eq!(
        std::fs::read(dir.path().join("from-stdin.bk")).unwrap(),
        std::fs::read(dir.path().join("from-file.bk")).unwrap()
    );
    let output = run_with_stdin(
        dir.path(),
        &["ssd", "build", "-", "-o", "disk.bk", "--memory", "1MiB"],
        Some(&lines),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".bloomkit-stdin-"))
        .collect();
    assert!(left.is_empty(), "spool files left behind: {left:?}");
    let output = run_with_stdin(dir.path(), &["build", "-", "-o", "empty.bk"], Some(b""));
    assert!(
        stderr(&output).contains("standard input is empty"),
        "{}",
        stderr(&output)
    );
}

/// Every kind of the library's registry — not a list kept here — is made by `create --kind`
/// and described by `create`, `info` and `info --json`; `--kind`'s help offers each.
#[test]
fn every_registered_kind_is_created_and_described() {
    use bloomkit::Kind;
    let dir = temp();
    let d = dir.path();
    let help = ok(d, &["create", "--help"]);
    for &kind in Kind::ALL {
        let name = kind.name();
        assert!(
            help.contains(&format!("- {name}:")) && help.contains(kind.summary()),
            "{name} not offered by --kind:\n{help}"
        );
        let file = format!("{name}.bk");
        let created = ok(d, &["create", "--kind", name, "-n", "1000", "-o", &file]);
        let filter = AnyFilter::load(d.join(&file)).expect("the file loads");
        assert_eq!(filter.kind(), kind);
        assert_eq!(created, format!("created {file}: {}\n", filter.describe()));
        assert!(
            created.starts_with(&format!("created {file}: {name} filter: ")),
            "{created}"
        );
        ok(d, &["add", &file, "one", "two"]);
        let info = ok(d, &["info", &file]);
        assert!(
            info.contains(&format!("{:<38}{name}\n", "Kind:")),
            "{name}: {info}"
        );
        assert!(
            info.contains(&format!("Estimated items ({})", kind.estimate_method())),
            "{info}"
        );
        let json = ok(d, &["info", "--json", &file]);
        assert!(json.contains(&format!("\"kind\": \"{name}\"")), "{json}");
        assert!(json.contains("\"len\": 2,"), "{name}: {json}");
    }
    // The verbs that work for some kinds list them from the registry.
    let names = |test: fn(Kind) -> bool| -> Vec<&str> {
        Kind::ALL
            .iter()
            .filter(|k| test(**k))
            .map(|k| k.name())
            .collect()
    };
    for (verb, kinds) in [
        ("merge", names(Kind::can_merge)),
        ("remove", names(Kind::can_remove)),
        ("export", names(Kind::exports)),
    ] {
        let help = ok(d, &[verb, "--help"]);
        let listed = kinds.join(", ");
        let (rest, last) = listed.rsplit_once(", ").unwrap_or(("", &listed));
        assert!(
            help.contains(&format!("{rest} or {last}")) || kinds.len() == 1,
            "{verb} --help does not list {kinds:?}:\n{help}"
        );
    }
}

/// Every option a kind declares is a flag of `create` and `build`; a kind that takes it
/// builds with the declared example value, and every other kind refuses it, naming (from
/// the registry) exactly the kinds that take it.
#[test]
fn an_option_is_refused_by_the_kinds_that_do_not_take_it_naming_those_that_do() {
    use bloomkit::registry::{kinds_taking, ValueType, BITS, HASHES};
    use bloomkit::Kind;
    let dir = temp();
    let d = dir.path();
    std::fs::write(d.join("lines.txt"), numbered("line", 100)).unwrap();
    let help = ok(d, &["create", "--help"]);
    let mut options: Vec<_> = Kind::ALL.iter().flat_map(|k| k.options()).collect();
    options.sort_by_key(|o| o.name);
    options.dedup_by_key(|o| o.name);
    for option in options {
        let flag = format!("--{}", option.name);
        assert!(help.contains(&format!("{flag} <")), "no {flag} in\n{help}");
        let value = match option.value {
            ValueType::File => {
                std::fs::write(d.join("option-file"), option.example).unwrap();
                "option-file".to_owned()
            }
            // The command line's own names for these.
            ValueType::HashFunction => "xxh3".to_owned(),
            ValueType::IndexScheme => "seeded".to_owned(),
            _ => option.example.to_owned(),
        };
        let takers: Vec<Kind> = kinds_taking(option.name);
        let names: Vec<&str> = takers.iter().map(|k| k.name()).collect();
        let for_kinds = match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => unreachable!("{flag} is declared by some kind"),
        };
        for &kind in Kind::ALL {
            let create = [
                "create",
                "--kind",
                kind.name(),
                "-n",
                "100",
                &flag,
                &value,
                "-o",
                "f.bk",
            ];
            let build = [
                "build",
                "lines.txt",
                "--kind",
                kind.name(),
                &flag,
                &value,
                "-o",
                "f.bk",
            ];
            // build sizes the filter for its lines: it has no m or k to take.
            let sizing = [BITS, HASHES].contains(&option.name);
            let verbs = if sizing {
                &[&create[..]][..]
            } else {
                &[&create[..], &build[..]]
            };
            for args in verbs {
                let _ = std::fs::remove_file(d.join("f.bk"));
                if takers.contains(&kind) {
                    ok(d, args);
                    continue;
                }
                let message = fails(d, args);
                assert!(
                    message.contains(&format!("{flag} does not apply to a {} filter", kind))
                        && message.contains(&format!("; it is for --kind {for_kinds}\n")),
                    "{args:?}: {message}"
                );
                assert!(!d.join("f.bk").exists(), "{args:?}");
            }
        }
    }
}

/// `build` fills a kind that counts ([`bloomkit::Kind::counts`]) with every line, repeats
/// included, as `add` does: `check --count` then says how often each line occurs. (It once
/// inserted each distinct line once, so every word of a Zipf text counted 1.)
#[test]
fn build_of_a_kind_that_counts_counts_every_line() {
    use bloomkit::Kind;
    let dir = temp();
    let d = dir.path();
    // Zipf's law: the word of rank r occurs ⌊5000 / r⌋ times, in a shuffled order.
    let words: Vec<(String, usize)> = (1..=300).map(|r| (format!("w{r}"), 5_000 / r)).collect();
    let mut lines: Vec<&str> = words
        .iter()
        .flat_map(|(w, n)| std::iter::repeat_n(w.as_str(), *n))
        .collect();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..lines.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        lines.swap(i, (state % (i as u64 + 1)) as usize);
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(d.join("zipf.txt"), &text).unwrap();
    let expected: String = words.iter().map(|(w, n)| format!("{w}\t{n}\n")).collect();
    let asked: String = words.iter().map(|(w, _)| format!("{w}\n")).collect();
    std::fs::write(d.join("words.txt"), &asked).unwrap();

    let counting: Vec<&Kind> = Kind::ALL.iter().filter(|k| k.counts()).collect();
    assert!(!counting.is_empty());
    for kind in counting {
        let name = kind.name();
        let built = ok(d, &["build", "zipf.txt", "--kind", name, "-o", "built.bk"]);
        assert!(
            built.contains(&format!("from {} lines", lines.len())),
            "{built}"
        );
        let counts = ok(d, &["check", "built.bk", "--count", "--from", "words.txt"]);
        assert_eq!(counts, expected, "{name}: build counted lines wrongly");
        // The same file as `create` for as many items, then `add` of every line.
        let n = lines.len().to_string();
        ok(d, &["create", "--kind", name, "-n", &n, "-o", "added.bk"]);
        ok(d, &["add", "added.bk", "--from", "zipf.txt"]);
        assert!(
            std::fs::read(d.join("built.bk")).unwrap()
                == std::fs::read(d.join("added.bk")).unwrap(),
            "{name}: build and add differ"
        );
    }
}

/// `check` on a list of lines (stdin), as one bool per line.
fn answers(dir: &Path, args: &[&str], lines: &str) -> Vec<bool> {
    ok_with_stdin(dir, args, lines.as_bytes())
        .lines()
        .map(|l| l.ends_with("\tmaybe"))
        .collect()
}

#[test]
fn guava_and_spark_files_are_checked_directly_imported_and_exported_back() {
    use bloomkit::interop::guava::GuavaBloomFilter;
    use bloomkit::interop::spark::{SparkBloomFilter, SparkVersion};
    let dir = temp();
    let d = dir.path();
    // Guava, strings (the default funnel): written by the library as Guava writes it.
    let mut g = GuavaBloomFilter::with_capacity(1000, 0.02).unwrap();
    for i in 0..1000 {
        g.put_str(&format!("g-{i}"));
    }
    std::fs::write(d.join("g.bin"), g.to_bytes()).unwrap();
    let queries = numbered("g", 3000);
    let want: Vec<bool> = queries.lines().map(|q| g.might_contain_str(q)).collect();
    let direct = answers(d, &["check", "--format", "guava", "g.bin"], &queries);
    assert_eq!(direct, want);
    assert!(want[..1000].iter().all(|&a| a) && want[1000..].iter().any(|&a| !a));
    let info = ok(d, &["info", "--format", "guava", "g.bin"]);
    assert!(
        info.contains("Hash functions (k):") && info.contains("Guava"),
        "{info}"
    );
    ok(d, &["import", "--from", "guava", "g.bin", "-o", "g.bloom"]);
    assert_eq!(answers(d, &["check", "g.bloom"], &queries), want);
    ok(d, &["export", "--to", "guava", "g.bloom", "-o", "g2.bin"]);
    assert_eq!(std::fs::read(d.join("g2.bin")).unwrap(), g.to_bytes());

    // Spark version 2 with a seed, longs: `--items long` reads each line as a long.
    let bits = bloomkit::interop::spark::optimal_num_of_bits(500, 0.03);
    let mut s = SparkBloomFilter::create(SparkVersion::V2, 500, bits, -7).unwrap();
    for i in 0..500i64 {
        s.put_long(i * 7919);
    }
    std::fs::write(d.join("s.bin"), s.to_bytes()).unwrap();
    let longs: String = (0..2000i64).map(|i| format!("{}\n", i * 7919)).collect();
    let want: Vec<bool> = (0..2000i64)
        .map(|i| s.might_contain_long(i * 7919))
        .collect();
    let args = ["check", "--format", "spark", "--items", "long", "s.bin"];
    assert_eq!(answers(d, &args, &longs), want);
    assert!(ok(d, &["info", "--format", "spark", "s.bin"]).contains("Seed:"));
    ok(d, &["import", "--from", "spark", "s.bin", "-o", "s.bloom"]);
    ok(d, &["export", "--to", "spark", "s.bloom", "-o", "s2.bin"]);
    assert_eq!(std::fs::read(d.join("s2.bin")).unwrap(), s.to_bytes());

    // Wrong input: clear errors, exit 2.
    for (args, says) in [
        (
            &[
                "check", "--format", "spark", "--items", "long", "s.bin", "x",
            ][..],
            "not a long",
        ),
        (
            &["check", "--format", "guava", "s.bin", "x"][..],
            "not a valid Guava filter",
        ),
        (
            &["check", "--items", "long", "g.bloom", "x"][..],
            "--items is for --format",
        ),
        (
            &["import", "--from", "spark", "g.bin", "-o", "x"][..],
            "not a valid Spark filter",
        ),
        (
            &["export", "--to", "spark", "g.bloom", "-o", "x"][..],
            "not as Spark does",
        ),
        (
            &["export", "--key", "k", "g.bloom", "-o", "x"][..],
            "--key and --expansion are for --to redis",
        ),
    ] {
        refuses(d, args, says);
    }
    assert!(!d.join("x").exists());
}

#[test]
fn redisbloom_exports_round_trip_and_what_redis_cannot_hold_is_refused() {
    let dir = temp();
    let d = dir.path();
    let made = ok(
        d,
        &[
            "create",
            "--redisbloom",
            "-n",
            "1000",
            "-e",
            "0.01",
            "-o",
            "r.bloom",
        ],
    );
    // BF.RESERVE k 0.01 1000 NONSCALING: ⌊1000 · 9.585⌋ bits rounded up to 64, k = 7.
    assert!(
        made.contains("m = 9600 bits, k = 7") && made.contains("murmur64a-pair"),
        "{made}"
    );
    ok_with_stdin(d, &["add", "r.bloom"], numbered("r", 1000).as_bytes());
    let stream = run(d, &["export", "--to", "redis", "--key", "users", "r.bloom"]);
    assert_eq!(stream.status.code(), Some(0));
    assert!(stream
        .stdout
        .starts_with(b"*4\r\n$12\r\nBF.LOADCHUNK\r\n$5\r\nusers\r\n$1\r\n1\r\n$73\r\n"));
    ok(d, &["export", "--to", "redis", "r.bloom", "-o", "r.dump"]);
    ok(
        d,
        &["import", "--from", "redis", "r.dump", "-o", "back.bloom"],
    );
    let queries = numbered("r", 3000);
    let want = answers(d, &["check", "r.bloom"], &queries);
    assert_eq!(answers(d, &["check", "back.bloom"], &queries), want);
    // The command stream is itself a dump that imports.
    std::fs::write(d.join("r.resp"), &stream.stdout).unwrap();
    ok(
        d,
        &["import", "--from", "redis", "r.resp", "-o", "again.bloom"],
    );
    assert_eq!(answers(d, &["check", "again.bloom"], &queries), want);

    // A cuckoo filter of RedisBloom's layout, sized for 1000 items in 65% of its slots:
    // 1024 buckets of 2 (CF.RESERVE 1539's).
    let made = ok(
        d,
        &[
            "create",
            "--kind",
            "cuckoo",
            "--redisbloom",
            "-n",
            "1000",
            "-o",
            "rc.bloom",
        ],
    );
    assert!(
        made.contains("1024 buckets of 2 slots, 8-bit fingerprints (RedisBloom's CF layout)"),
        "{made}"
    );
    ok_with_stdin(d, &["add", "rc.bloom"], numbered("r", 600).as_bytes());
    let stream = run(d, &["export", "--to", "redis", "--key", "seen", "rc.bloom"]);
    assert!(stream
        .stdout
        .starts_with(b"*4\r\n$12\r\nCF.LOADCHUNK\r\n$4\r\nseen\r\n$1\r\n1\r\n$38\r\n"));
    std::fs::write(d.join("rc.resp"), &stream.stdout).unwrap();
    ok(
        d,
        &[
            "import",
            "--from",
            "redis",
            "rc.resp",
            "-o",
            "rc-back.bloom",
        ],
    );
    let want = answers(d, &["check", "rc.bloom"], &queries);
    assert_eq!(answers(d, &["check", "rc-back.bloom"], &queries), want);

    let plain = filter_with(d, "plain.bloom", &["a"]);
    let cuckoo = kind_with(d, "cuckoo", "c.bloom", &["a"]);
    let dump = std::fs::read(d.join("r.dump")).unwrap();
    std::fs::write(d.join("cut.dump"), &dump[..dump.len() - 30]).unwrap();
    for (args, says) in [
        (
            vec![
                "export",
                "--to",
                "redis",
                "--key",
                "k",
                plain.to_str().unwrap(),
            ],
            "--redisbloom",
        ),
        (
            vec![
                "export",
                "--to",
                "redis",
                "--key",
                "k",
                cuckoo.to_str().unwrap(),
            ],
            "cuckoo",
        ),
        (
            vec!["import", "--from", "redis", "cut.dump", "-o", "x"],
            "not a valid RedisBloom dump",
        ),
        (
            vec!["import", "--from", "redis", "plain.bloom", "-o", "x"],
            "not a valid RedisBloom dump",
        ),
        (
            vec![
                "create",
                "--redisbloom",
                "--kind",
                "blocked",
                "-n",
                "10",
                "-o",
                "x",
            ],
            "index scheme",
        ),
        (
            vec![
                "create",
                "--redisbloom",
                "--kind",
                "cuckoo",
                "-n",
                "1000",
                "-e",
                "0.001",
                "-o",
                "x",
            ],
            "RedisBloom's one-byte fingerprints",
        ),
    ] {
        refuses(d, &args, says);
    }
    assert!(!d.join("x").exists());
}

/// `check` of every kind the library can view reads only the chunks its items touch, and
/// `info` answers through the same view: with one chunk in the middle of a version-2 file
/// damaged, `check` of an item that does not touch it answers (some of ten items do, at
/// every kind), where `check --load`, which reads the whole file, refuses the same item;
/// `check` of an item that touches it names the file and the chunk; `info` refuses the file
/// (a summary reads every chunk). A kind that `check` answered by loading would fail every
/// item here.
#[test]
fn check_of_every_viewable_kind_reads_only_the_chunks_its_items_touch() {
    use bloomkit::Kind;
    let dir = temp();
    let d = dir.path();
    let viewable: Vec<Kind> = Kind::ALL.iter().copied().filter(|k| k.can_view()).collect();
    for needed in [
        "counting",
        "deletable",
        "spectral",
        "stable",
        "vi-counting",
        "generalized",
        "robust",
        "weighted",
    ] {
        assert!(
            viewable.iter().any(|k| k.name() == needed),
            "{needed} is not viewable: {viewable:?}"
        );
    }
    for kind in viewable {
        let name = "big.bk";
        ok(
            d,
            &[
                "create",
                "--kind",
                kind.name(),
                "-n",
                "400000",
                "-e",
                "0.01",
                "-o",
                name,
            ],
        );
        let items = numbered("item", 200);
        ok_with_stdin(d, &["add", name], items.as_bytes());
        let mut bytes = std::fs::read(d.join(name)).unwrap();
        assert_eq!(bytes[8], 2, "{kind}: version");
        // A byte in the middle of the payload (the header is a few KiB at most).
        let at = bytes.len() / 2 + bytes.len() / 16;
        bytes[at] ^= 0xff;
        std::fs::write(d.join(name), &bytes).unwrap();
        let (mut answered, mut refused) = (0, 0);
        for i in 0..10 {
            let item = format!("item-{i}");
            let output = run(d, &["check", name, &item]);
            if output.status.code() == Some(0) {
                assert_eq!(stdout(&output), format!("{item}\tmaybe\n"), "{kind}");
                answered += 1;
                let load = fails(d, &["check", "--load", name, &item]);
                assert!(load.contains("chunk"), "{kind}: {load}");
            } else {
                let message = stderr(&output);
                assert!(
                    message.contains(name) && message.contains("chunk"),
                    "{kind}: {message}"
                );
                refused += 1;
            }
        }
        assert!(answered > 0, "{kind}: every item refused ({refused})");
        if kind.counts() {
            // --count reads through the view too: an item that touches only good chunks
            // is counted (where loading refuses the file), one that touches the damaged
            // chunk is an error naming it, never a count of 0.
            let mut counted = 0;
            for i in 0..10 {
                let item = format!("item-{i}");
                let output = run(d, &["check", "--count", name, &item]);
                if output.status.code() == Some(0) {
                    assert_eq!(stdout(&output), format!("{item}\t1\n"), "{kind}");
                    counted += 1;
                    let load = fails(d, &["check", "--count", "--load", name, &item]);
                    assert!(load.contains("chunk"), "{kind}: {load}");
                } else {
                    let message = stderr(&output);
                    assert!(message.contains("chunk"), "{kind} --count: {message}");
                }
            }
            assert!(counted > 0, "{kind}: every count refused");
        }
        let info = fails(d, &["info", name]);
        assert!(info.contains("chunk"), "{kind}: {info}");
    }
}

/// `check` answers the kinds the library can view from a read-only map of the file: the
/// same output as loading the filter (`--load`), for files in format version 1
/// (`--format-version 1`) and in version 2 (the default; `--chunked`, its old spelling, too;
/// `add` keeps a file's version). A corrupted chunk of a version-2 file is an error that
/// names the file and the chunk, never an answer.
#[test]
fn check_through_a_view_answers_as_loading_and_refuses_a_corrupted_chunk() {
    use bloomkit::Kind;
    let dir = temp();
    let d = dir.path();
    let added = numbered("item", 3000);
    let mut probes = added.clone();
    probes.push_str(&numbered("other", 3000));
    let viewable: Vec<Kind> = Kind::ALL.iter().copied().filter(|k| k.can_view()).collect();
    assert!(viewable.len() >= 3, "{viewable:?}");
    for kind in viewable {
        for (name, version, flag) in [
            ("v1.bk", 1, Some(&["--format-version", "1"][..])),
            ("v2.bk", 2, None),
            ("v2-asked.bk", 2, Some(&["--chunked"][..])),
        ] {
            let mut create = vec![
                "create",
                "--kind",
                kind.name(),
                "-n",
                "60000",
                "-e",
                "0.01",
                "-o",
                name,
            ];
            create.extend(flag.unwrap_or_default());
            ok(d, &create);
            ok_with_stdin(d, &["add", name], added.as_bytes());
            let bytes = std::fs::read(d.join(name)).unwrap();
            assert_eq!(bytes[8], version, "{kind} {name}");
            let viewed = ok_with_stdin(d, &["check", name], probes.as_bytes());
            let loaded = ok_with_stdin(d, &["check", "--load", name], probes.as_bytes());
            assert_eq!(viewed, loaded, "{kind} {name}");
            assert_eq!(viewed.lines().count(), 6000, "{kind} {name}");
            assert!(viewed.contains("item-2999\tmaybe"), "{kind} {name}");
            let args = ["check", name, "item-7", "other-8"];
            assert_eq!(ok(d, &args), ok(d, &[&args[..], &["--load"]].concat()));
            if kind.counts() {
                // Counts through the view, as loaded.
                let viewed = ok_with_stdin(d, &["check", "--count", name], probes.as_bytes());
                let loaded =
                    ok_with_stdin(d, &["check", "--count", "--load", name], probes.as_bytes());
                assert_eq!(viewed, loaded, "{kind} {name}: --count");
                assert!(viewed.contains("item-2999\t1"), "{kind} {name}: --count");
            }
        }
        // One byte near the end of the payload (the last bytes of a version-2 file).
        let mut bytes = std::fs::read(d.join("v2.bk")).unwrap();
        let at = bytes.len() - 40;
        bytes[at] ^= 0xff;
        std::fs::write(d.join("v2.bk"), &bytes).unwrap();
        let output = run_with_stdin(d, &["check", "v2.bk"], Some(probes.as_bytes()));
        assert_ne!(output.status.code(), Some(0), "{kind}");
        let message = stderr(&output);
        assert!(
            message.contains("v2.bk") && message.contains("chunk"),
            "{kind}: {message}"
        );
        assert!(!message.contains("panicked"), "{kind}: {message}");
    }
}

/// `bloomkit build users.txt -o users.txt` (a slip of the output name) replaced the list of
/// users with a filter of its lines: the items' file was gone. Every verb that builds from a
/// file of lines refuses an output that is that file, under any name (a symlink or a hard
/// link to it), before writing anything.
#[test]
fn build_refuses_to_write_its_filter_over_its_own_input() {
    let dir = temp();
    let lines = b"alice\t1\nbob\t2\ncarol\t3\n";
    std::fs::write(dir.path().join("users.txt"), lines).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("users.txt", dir.path().join("link.txt")).unwrap();
    std::fs::hard_link(dir.path().join("users.txt"), dir.path().join("hard.txt")).unwrap();
    let mut outputs = vec!["users.txt", "./users.txt", "hard.txt"];
    if cfg!(unix) {
        outputs.push("link.txt");
    }
    for output in outputs {
        for verb in [
            &["build", "users.txt", "-o", output][..],
            &["ssd", "build", "users.txt", "-o", output],
            &["bloomier", "build", "users.txt", "-o", output],
        ] {
            let out = run(dir.path(), verb);
            assert_eq!(out.status.code(), Some(2), "{verb:?}: {}", stderr(&out));
            assert!(
                stderr(&out).contains("is the input"),
                "{verb:?}: {}",
                stderr(&out)
            );
            assert_eq!(std::fs::read(dir.path().join("users.txt")).unwrap(), lines);
        }
    }
    // Standard input redirected from the output file (`build - -o users.txt < users.txt`).
    #[cfg(target_os = "linux")]
    for verb in [
        &["build", "-", "-o", "users.txt"][..],
        &["ssd", "build", "-", "-o", "users.txt"],
        &["bloomier", "build", "-", "-o", "users.txt"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_bloomkit"))
            .args(verb)
            .current_dir(dir.path())
            .stdin(std::fs::File::open(dir.path().join("users.txt")).unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{verb:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("is the input (standard input)"),
            "{verb:?}: {}",
            stderr(&out)
        );
        assert_eq!(std::fs::read(dir.path().join("users.txt")).unwrap(), lines);
    }
    // A different output still builds, from a file or from a pipe.
    ok(dir.path(), &["build", "users.txt", "-o", "users.bloom"]);
    ok_with_stdin(dir.path(), &["build", "-", "-o", "piped.bloom"], lines);
}

/// `ssd check` may change the file (it replays or removes the journal an interrupted flush
/// left), so while another command holds the file's lock (an `ssd add` flushing) it waits,
/// or with `--no-wait` refuses, as a second writer does: it never touches a journal being
/// written.
#[test]
fn ssd_check_waits_for_a_writer_of_the_file() {
    let dir = temp();
    let d = dir.path();
    std::fs::write(d.join("lines.txt"), "one\ntwo\n").unwrap();
    ok(d, &["ssd", "build", "lines.txt", "-o", "s.bkb"]);
    let held = bloomkit::FileLock::exclusive(d.join("s.bkb")).unwrap();
    refuses(
        d,
        &["ssd", "check", "--no-wait", "s.bkb", "one"],
        "another bloomkit command is changing this file",
    );
    let waiting = spawn_waiting(d, &["ssd", "check", "s.bkb", "one"]);
    drop(held);
    let output = waiting.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "one\tmaybe\n");
}

/// The library's open locks an on-disk filter for a command's whole run (`ssd add`
/// exclusively, `ssd check` shared, no lock of the command's own beside it, which would
/// conflict with the library's): a check runs beside another reader, an add refuses
/// (`--no-wait`) or says it waits, and waits, until the reader is gone.
#[test]
fn ssd_commands_share_a_file_only_between_readers() {
    let dir = temp();
    let d = dir.path();
    std::fs::write(d.join("lines.txt"), "one\ntwo\n").unwrap();
    ok(d, &["ssd", "build", "lines.txt", "-o", "s.bkb"]);
    let reader = bloomkit::BufferedBloomFilter::options()
        .read_only(true)
        .open(d.join("s.bkb"))
        .unwrap();
    assert_eq!(
        ok(d, &["ssd", "check", "--no-wait", "s.bkb", "one"]),
        "one\tmaybe\n"
    );
    refuses(
        d,
        &["ssd", "add", "--no-wait", "s.bkb", "three"],
        "another bloomkit command is changing this file",
    );
    let waiting = spawn_waiting(d, &["ssd", "add", "s.bkb", "three"]);
    drop(reader);
    let output = waiting.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("waiting for another bloomkit command"));
    assert_eq!(ok(d, &["ssd", "check", "s.bkb", "three"]), "three\tmaybe\n");
}

/// `ssd check` of a file it cannot write (mode 0444; run as another user when the tests
/// run as root, whom the mode does not stop) answers, where it used to fail opening the
/// file for writing. If an interrupted flush left a journal, it says that someone who can
/// write the file must complete it, and such a user's check does.
#[cfg(unix)]
#[test]
fn ssd_check_reads_a_file_it_cannot_write() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::os::unix::process::CommandExt;
    let dir = temp();
    let d = dir.path();
    std::fs::write(d.join("lines.txt"), "one\ntwo\n").unwrap();
    ok(d, &["ssd", "build", "lines.txt", "-o", "s.bkb"]);
    let path = d.join("s.bkb");
    let mode = |mode: u32| {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    mode(0o444);
    let root = std::fs::metadata(&path).unwrap().uid() == 0;
    let as_reader = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_bloomkit"));
        command.args(args).current_dir(d).stdin(Stdio::null());
        if root {
            command.uid(65534).gid(65534);
        }
        command.output().unwrap()
    };
    // The reader really cannot write the file.
    let add = as_reader(&["ssd", "add", "s.bkb", "three"]);
    assert_eq!(add.status.code(), Some(2), "{}", stderr(&add));
    let output = as_reader(&["ssd", "check", "s.bkb", "one"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "one\tmaybe\n");

    // A flush interrupted mid-write leaves its journal.
    mode(0o644);
    let mut writer = bloomkit::BufferedBloomFilter::open(&path, 1 << 20).unwrap();
    for i in 0..2_000 {
        writer.insert(format!("item {i}").as_str()).unwrap();
    }
    writer.fail_in_place_writes_after(1);
    assert!(writer.flush().is_err());
    writer.abandon();
    mode(0o444);
    let journal = bloomkit::buffered::journal_of(&path);
    let output = as_reader(&["ssd", "check", "s.bkb", "one"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("was interrupted") && message.contains("as a user who can write it"),
        "{message}"
    );
    // And why this user's check could not complete the write: the system's own words.
    assert!(
        message.contains("could not open it for writing: Permission denied"),
        "{message}"
    );
    assert!(journal.exists());
    // Someone who can write it completes the flush.
    if !root {
        mode(0o644);
    }
    assert_eq!(
        ok(d, &["ssd", "check", "s.bkb", "item 7"]),
        "item 7\tmaybe\n"
    );
    assert!(!journal.exists());
}

/// `--seed 5` is a weak MurmurHash3 seed, hashed (and stored) as 5 + 2⁶³; `create` and
/// `info` showed only 9223372036854775813, a number the user never typed. They show the
/// seed given, and the one hashed with beside it.
#[test]
fn a_weak_seed_is_shown_as_given_with_the_seed_hashed_with() {
    let dir = temp();
    let d = dir.path();
    let created = ok(d, &["create", "-n", "100", "--seed", "5", "-o", "w.bloom"]);
    assert!(created.contains("seed 5 (hashed as 5 + 2⁶³)"), "{created}");
    let info = ok(d, &["info", "w.bloom"]);
    let seed_line = info
        .lines()
        .find(|l| l.starts_with("Seed:"))
        .expect("a Seed line");
    assert!(
        seed_line.contains(" 5 (hashed as 5 + 2⁶³ = 9223372036854775813"),
        "{seed_line}"
    );
    let json = ok(d, &["info", "--json", "w.bloom"]);
    assert!(json.contains("\"seed\": 5,"), "{json}");
    assert!(
        json.contains("\"hashed_seed\": 9223372036854775813,"),
        "{json}"
    );
    // A seed hashed as given is shown alone.
    ok(d, &["create", "-n", "100", "--seed", "42", "-o", "p.bloom"]);
    let info = ok(d, &["info", "p.bloom"]);
    assert!(
        info.lines()
            .any(|l| l.starts_with("Seed:") && l.ends_with(" 42")),
        "{info}"
    );
    let help = ok(d, &["create", "--help"]);
    assert!(help.contains("2⁶³"), "{help}");
}

/// A scalable filter created with `--max-layers` refuses items once its layers are full;
/// the error named the library's builder options (`max_layers or max_bits`), which the
/// command line does not have. It says what a command-line user can do.
#[test]
fn a_full_scalable_filter_says_which_flag_to_create_a_larger_one_with() {
    let dir = temp();
    let d = dir.path();
    ok(
        d,
        &[
            "create",
            "--kind",
            "scalable",
            "-n",
            "10",
            "--max-layers",
            "2",
            "-o",
            "s.bloom",
        ],
    );
    let items: String = (0..200).map(|i| format!("item {i}\n")).collect();
    let message = fails_with_stdin(d, &["add", "s.bloom"], Some(items.as_bytes()));
    assert!(message.contains("all 2 layers are full"), "{message}");
    assert!(message.contains("--max-layers"), "{message}");
    assert!(!message.contains("max_bits"), "{message}");
    assert!(!message.contains("max_layers"), "{message}");
    // The items before the refused one were kept.
    assert!(message.contains("Saved, from before it"), "{message}");
    assert_eq!(ok(d, &["check", "s.bloom", "item 0"]), "item 0\tmaybe\n");
}

/// `build --kind stable` of a file of a few lines was refused ("cannot reach ε": the
/// classic m for 4 items is too few cells for any number of decrements); it builds, and
/// holds the lines.
#[test]
fn a_stable_filter_builds_from_a_file_of_four_lines_and_says_it_forgets() {
    let dir = temp();
    let d = dir.path();
    std::fs::write(d.join("four.txt"), "a\nb\nc\nd\n").unwrap();
    let built = run(
        d,
        &["build", "four.txt", "--kind", "stable", "-o", "st.bloom"],
    );
    assert_eq!(built.status.code(), Some(0), "{}", stderr(&built));
    // A kind that forgets says so when it is built from a file (and only such a kind).
    assert!(
        stderr(&built).contains("forgets by design"),
        "{}",
        stderr(&built)
    );
    let classic = run(d, &["build", "four.txt", "-o", "classic.bloom"]);
    assert!(stderr(&classic).is_empty(), "{}", stderr(&classic));
    assert_eq!(ok(d, &["check", "st.bloom", "d"]), "d\tmaybe\n");
    let info = ok(d, &["info", "st.bloom"]);
    assert!(info.contains("Kind:") && info.contains("stable"), "{info}");
}

/// `bloomkit info FILE` of a Spark sketch (or `check` of one) without `--format` said only
/// "not a bloomkit filter (bad magic bytes)"; it says how the command line reads the
/// foreign filters it may be.
#[test]
fn info_of_a_foreign_file_without_format_says_how_to_read_it() {
    let dir = temp();
    let d = dir.path();
    let spark = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bloomkit/tests/fixtures/spark/bytes-V2-seed0.bin");
    std::fs::copy(&spark, d.join("sketch.bin")).unwrap();
    for args in [
        &["info", "sketch.bin"][..],
        &["check", "sketch.bin", "x"],
        &["add", "sketch.bin", "x"],
    ] {
        let message = fails(d, args);
        assert!(message.contains("bad magic bytes"), "{args:?}: {message}");
        assert!(
            message.contains("--format spark|guava")
                && message.contains("import --from spark|guava|redis"),
            "{args:?}: {message}"
        );
    }
    assert!(ok(d, &["info", "--format", "spark", "sketch.bin"]).contains("Spark"));
    // A bloomkit file that is damaged is not sent to the foreign formats.
    std::fs::write(d.join("cut.bloom"), b"BLOOMKIT").unwrap();
    let message = fails(d, &["info", "cut.bloom"]);
    assert!(!message.contains("--format"), "{message}");
}

/// The `"key": value` of `info --json` (or `ssd info --json`) output, as written.
fn json_field<'a>(json: &'a str, key: &str) -> &'a str {
    let at = json
        .find(&format!("\"{key}\": "))
        .unwrap_or_else(|| panic!("no {key} in {json}"));
    let rest = &json[at + key.len() + 4..];
    rest[..rest.find([',', '\n']).unwrap_or(rest.len())].trim()
}

/// `-n 1e6` was refused with "invalid digit found in string". Every count — the capacity,
/// m, k, the seed, the kinds' own counts (`--max-layers`) — reads `1e6`, `2.5e3` and
/// `1_000_000` as the whole numbers they are, and refuses what is not one (`1.5`, `1e-3`,
/// `-1`, `1e400`) naming the option, what is wrong and what it takes.
#[test]
fn counts_are_read_in_scientific_and_underscore_notation() {
    let dir = temp();
    let d = dir.path();
    for (given, capacity) in [
        ("1e6", "1000000"),
        ("1_000_000", "1000000"),
        ("2.5e3", "2500"),
        ("1E+3", "1000"),
    ] {
        ok(d, &["create", "-n", given, "-e", "0.01", "-o", "f.bk"]);
        let info = ok(d, &["info", "--json", "f.bk"]);
        assert_eq!(json_field(&info, "capacity"), capacity, "-n {given}");
    }
    ok(
        d,
        &[
            "create", "-m", "1e4", "-k", "1e1", "--seed", "4.2e1", "-o", "f.bk",
        ],
    );
    let info = ok(d, &["info", "--json", "f.bk"]);
    assert_eq!(json_field(&info, "num_bits"), "10000", "{info}");
    assert_eq!(json_field(&info, "num_hashes"), "10", "{info}");
    assert_eq!(json_field(&info, "seed"), "42", "{info}");
    // A kind's own count, read by the library.
    ok(
        d,
        &[
            "create",
            "--kind",
            "scalable",
            "-n",
            "1e2",
            "--max-layers",
            "2e0",
            "-o",
            "s.bk",
        ],
    );
    let info = ok(d, &["info", "--json", "s.bk"]);
    assert!(info.contains("\"max layers\": \"2\""), "{info}");

    for (option, value, why) in [
        ("--capacity", "1.5", "1.5 is not a whole number"),
        ("--capacity", "1e-3", "1e-3 is not a whole number"),
        ("--capacity", "-1", "-1 is negative"),
        (
            "--capacity",
            "1e400",
            "1e400 is more than 18446744073709551615",
        ),
        ("--capacity", "lots", "lots is not a number"),
        ("--hashes", "5e9", "5e9 is more than 4294967295"),
        ("--max-layers", "1.5", "1.5 is not a whole number"),
        ("--growth", "-2", "-2 is negative"),
    ] {
        let message = fails(
            d,
            &[
                "create", "--kind", "scalable", option, value, "-o", "bad.bk",
            ],
        );
        assert!(
            message.contains(&format!("invalid value '{value}' for '{option} <")),
            "{option} {value}: {message}"
        );
        assert!(message.contains(why), "{option} {value}: {message}");
        assert!(
            message.contains("expected a whole number from 0 to"),
            "{option} {value}: {message}"
        );
        assert!(message.contains("1e6"), "{option} {value}: {message}");
        assert!(!d.join("bad.bk").exists());
    }
}

/// `bloomkit experiment … --seed 4.2e1` and `--limit 2e3` were refused by clap's integer
/// parsing ("invalid digit found in string") where every other count reads them: the
/// studies' counts go through the same parser, and refuse what is not one in its words.
#[test]
fn experiment_counts_are_read_as_every_other_count() {
    let dir = temp();
    let d = dir.path();
    let study = |limit: &str, seed: &str, csv: &str| {
        let printed = ok(
            d,
            &[
                "experiment",
                "fpr",
                "--limit",
                limit,
                "--seed",
                seed,
                "--csv",
                csv,
            ],
        );
        assert!(
            printed.contains("Number of elements in filter:          2000\n"),
            "{printed}"
        );
        std::fs::read_to_string(d.join(csv)).unwrap()
    };
    assert_eq!(study("2e3", "4.2e1", "a.csv"), study("2000", "42", "b.csv"));
    assert_eq!(study("2_000", "42", "c.csv"), study("2000", "42", "b.csv"));
    for (option, value, why) in [
        ("--limit", "1.5", "1.5 is not a whole number"),
        ("--seed", "-1", "-1 is negative"),
    ] {
        let message = fails(d, &["experiment", "fpr", option, value]);
        assert!(message.contains(why), "{option} {value}: {message}");
        assert!(
            message.contains("expected a whole number from 0 to"),
            "{message}"
        );
    }
}

/// `-e -0.5` was taken for a flag ("unexpected argument '-0'"): a negative number given as
/// a value reaches the check that says what is wrong with it. A lone `-` is still standard
/// input, and an item that looks like a negative number is an item.
#[test]
fn a_negative_number_is_a_value_refused_for_what_it_is() {
    let dir = temp();
    let d = dir.path();
    std::fs::write(d.join("lines.txt"), "a\nb\n").unwrap();
    let between = "must be strictly between 0 and 1, got -0.5";
    for args in [
        &["create", "-n", "100", "-e", "-0.5", "-o", "bad.bk"][..],
        &["build", "lines.txt", "-e", "-0.5", "-o", "bad.bk"],
        &["ssd", "build", "lines.txt", "--fpp", "-0.5", "-o", "bad.bk"],
    ] {
        let message = fails(d, args);
        assert!(message.contains(between), "{args:?}: {message}");
        assert!(
            !message.contains("unexpected argument"),
            "{args:?}: {message}"
        );
        assert!(!d.join("bad.bk").exists());
    }
    // A kind's own number: the library says what the option takes.
    let message = fails(
        d,
        &[
            "create", "--kind", "scalable", "-n", "10", "--growth", "-2", "-o", "bad.bk",
        ],
    );
    assert!(!message.contains("unexpected argument"), "{message}");
    assert!(message.contains("-2"), "{message}");
    // `build -` reads standard input, and `add F -5` adds the item "-5".
    ok_with_stdin(d, &["build", "-", "-e", "0.01", "-o", "f.bk"], b"x\ny\n");
    ok(d, &["add", "f.bk", "-5"]);
    assert_eq!(
        ok(d, &["check", "f.bk", "x", "-5", "y"]),
        "x\tmaybe\n-5\tmaybe\ny\tmaybe\n"
    );
}

/// `create -n 18446744073709551615` said "a filter of 18446744073709551615 bits is too
/// large": a size saturated at u64::MAX, not what was asked. The error names the capacity
/// and ε asked and the limit they pass.
#[test]
fn a_capacity_past_the_size_limit_is_refused_in_its_own_words() {
    let dir = temp();
    let d = dir.path();
    for kind in ["bloom", "blocked", "cuckoo", "robust", "sbbf", "compressed"] {
        let message = fails(
            d,
            &[
                "create",
                "--kind",
                kind,
                "-n",
                "18446744073709551615",
                "-e",
                "0.01",
                "-o",
                "f.bk",
            ],
        );
        assert!(
            message.contains("a filter for 18446744073709551615 items at ε = 0.01 is too large"),
            "{kind}: {message}"
        );
        assert!(
            !message.contains("18446744073709551615 bits"),
            "{kind}: {message}"
        );
    }
}

/// `merge` took exactly two inputs: it takes two or more, folded into the first, with the
/// same checks; a failure leaves an existing output file as it was.
#[test]
fn merge_unions_any_number_of_compatible_filters() {
    let dir = temp();
    let d = dir.path();
    filter_with(d, "a.bk", &["apple"]);
    filter_with(d, "b.bk", &["banana"]);
    filter_with(d, "c.bk", &["cherry"]);
    filter_with(d, "d.bk", &["date"]);
    let merged = ok(
        d,
        &["merge", "a.bk", "b.bk", "c.bk", "d.bk", "-o", "all.bk"],
    );
    assert!(
        merged.starts_with("merged a.bk, b.bk, c.bk and d.bk into all.bk: "),
        "{merged}"
    );
    assert_eq!(
        ok(
            d,
            &["check", "all.bk", "apple", "banana", "cherry", "date", "fig"]
        ),
        "apple\tmaybe\nbanana\tmaybe\ncherry\tmaybe\ndate\tmaybe\nfig\tno\n"
    );
    // One input is not a merge.
    fails(d, &["merge", "a.bk", "-o", "one.bk"]);
    assert!(!d.join("one.bk").exists());
    // A third input of another shape: refused, naming it, and the old output is kept.
    ok(d, &["create", "--capacity", "50", "-o", "small.bk"]);
    let before = std::fs::read(d.join("all.bk")).unwrap();
    let message = fails(d, &["merge", "a.bk", "b.bk", "small.bk", "-o", "all.bk"]);
    assert!(
        message.contains("cannot merge a.bk and small.bk"),
        "{message}"
    );
    assert!(message.contains("not compatible"), "{message}");
    assert_eq!(std::fs::read(d.join("all.bk")).unwrap(), before);
    let help = ok(d, &["merge", "--help"]);
    assert!(help.contains("two or more"), "{help}");
}

/// The README said that a file `merge -o` writes is in format version 2, while `merge`
/// kept an existing output's version. A new output is in the current format (2); merging
/// into an existing file (`merge a b -o a`, or over the last run's output) updates that
/// file, as `add` does: it keeps the file's version, so the bloomkit builds that needed
/// version 1 to read it still do.
#[test]
fn merge_writes_a_new_file_in_version_2_and_keeps_an_existing_files_version() {
    let dir = temp();
    let d = dir.path();
    let version = |name: &str| std::fs::read(d.join(name)).unwrap()[8];
    let v1 = |name: &'static str, items: &[&str]| {
        let create = [
            "create",
            "--capacity",
            "1000",
            "--format-version",
            "1",
            "-o",
            name,
        ];
        created_with(d, &create, items);
        assert_eq!(version(name), 1, "{name}");
    };
    v1("a.bk", &["apple"]);
    v1("b.bk", &["banana"]);
    ok(d, &["merge", "a.bk", "b.bk", "-o", "new.bk"]);
    assert_eq!(version("new.bk"), 2, "a new output");
    v1("week.bk", &[]);
    ok(d, &["merge", "new.bk", "b.bk", "-o", "week.bk"]);
    assert_eq!(version("week.bk"), 1, "an existing output");
    ok(d, &["merge", "a.bk", "b.bk", "-o", "a.bk"]);
    assert_eq!(version("a.bk"), 1, "the first input");
    ok(d, &["merge", "new.bk", "a.bk", "-o", "new.bk"]);
    assert_eq!(version("new.bk"), 2, "an existing version-2 output");
    for name in ["a.bk", "week.bk", "new.bk"] {
        assert_eq!(
            ok(d, &["check", name, "apple", "banana", "cherry"]),
            "apple\tmaybe\nbanana\tmaybe\ncherry\tno\n",
            "{name}"
        );
    }
}

/// A filter saved in format version 1 (the library's default, and the CLI's before version
/// 2) had no way to version 2 but through `merge`, which needs two inputs and adds counters
/// for the counting kinds. `export FILE -o OUT --format-version N` writes any kind in
/// version N, in place too (under the file's lock), and the filter answers as before.
#[test]
fn export_rewrites_any_kind_in_the_asked_format_version() {
    let dir = temp();
    let d = dir.path();
    let version = |name: &str| std::fs::read(d.join(name)).unwrap()[8];
    let items = ["apple", "banana", "apple"];
    for kind in ["counting", "cuckoo", "bloom", "spectral"] {
        let name = format!("{kind}.bk");
        let create = [
            "create",
            "--kind",
            kind,
            "--capacity",
            "1000",
            "--format-version",
            "1",
            "-o",
            &name,
        ];
        created_with(d, &create, &items);
        assert_eq!(version(&name), 1, "{kind}");
        let query = |file: &str| ok(d, &["check", file, "apple", "banana", "cherry"]);
        let answers = query(&name);
        assert!(answers.contains("cherry\tno"), "{kind}: {answers}");

        let copy = format!("{kind}-v2.bk");
        ok(d, &["export", &name, "-o", &copy, "--format-version", "2"]);
        assert_eq!(version(&copy), 2, "{kind}: a new output");
        assert_eq!(
            query(&copy),
            answers,
            "{kind}: the copy answers as the original"
        );

        ok(d, &["export", &name, "-o", &name, "--format-version", "2"]);
        assert_eq!(version(&name), 2, "{kind}: in place");
        assert_eq!(query(&name), answers, "{kind}: in place");

        ok(d, &["export", &copy, "-o", &copy, "--format-version", "1"]);
        assert_eq!(version(&copy), 1, "{kind}: back to version 1");
        assert_eq!(query(&copy), answers, "{kind}: back to version 1");
    }
    // A kind without a compressed twin still cannot be compressed, and without
    // --format-version export says what it can do; the file is left as it was.
    let before = std::fs::read(d.join("counting.bk")).unwrap();
    let message = fails(
        d,
        &["export", "counting.bk", "-o", "counting.bk", "--compressed"],
    );
    assert!(message.contains("--format-version"), "{message}");
    fails(d, &["export", "counting.bk", "-o", "other.bk"]);
    assert!(!d.join("other.bk").exists());
    assert_eq!(std::fs::read(d.join("counting.bk")).unwrap(), before);
    let message = fails(
        d,
        &[
            "export",
            "bloom.bk",
            "--to",
            "guava",
            "--format-version",
            "2",
            "-o",
            "g.bin",
        ],
    );
    assert!(message.contains("--format-version"), "{message}");
}

/// `ssd build --seed` was never shown back: `ssd info` shows the seed as `info` does — as
/// given and, for a weak MurmurHash3 seed the library moved, as hashed with — in text and
/// in JSON.
#[test]
fn ssd_info_shows_the_seed_as_given_and_as_hashed() {
    let dir = temp();
    let d = dir.path();
    std::fs::write(d.join("lines.txt"), numbered("line", 100)).unwrap();
    for (seed, hashed, text) in [
        ("42", "42", "42".to_owned()),
        (
            "5",
            "9223372036854775813",
            "5 (hashed as 5 + 2⁶³ = 9223372036854775813".to_owned(),
        ),
    ] {
        ok(
            d,
            &["ssd", "build", "lines.txt", "-o", "f.bkb", "--seed", seed],
        );
        let info = ok(d, &["ssd", "info", "f.bkb"]);
        assert!(
            info.contains(&format!("{:<38}{text}", "Seed:")),
            "--seed {seed}: {info}"
        );
        assert!(info.contains("Capacity:"), "{info}");
        assert!(
            info.contains(&format!("{:<38}100\n", "Items inserted:")),
            "{info}"
        );
        let json = ok(d, &["ssd", "info", "--json", "f.bkb"]);
        assert_eq!(json_field(&json, "seed"), seed, "{json}");
        assert_eq!(json_field(&json, "hashed_seed"), hashed, "{json}");
        assert_eq!(json_field(&json, "len"), "100", "{json}");
    }
}
