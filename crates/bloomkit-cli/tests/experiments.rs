//! End-to-end tests of `bloomkit experiment`: every study at its hidden tiny size, its CSV
//! columns, and its figures as valid SVG and PNG files; and `experiment all`, whose
//! index.html must reference every figure and table.
//!
//! The figures need a TrueType font (scripts/test installs Debian's fonts-dejavu-core).

use std::path::Path;
use std::process::{Command, Output};

/// Each study: its name, the columns of its CSV files (the main one first, then
/// `STUDY_NAME.csv`), and its figures.
struct Study {
    name: &'static str,
    tables: &'static [(&'static str, &'static [&'static str])],
    figures: &'static [&'static str],
}

/// The columns of both of the compressed study's tables.
const COMPRESSED_COLUMNS: &[&str] = &[
    "fpp",
    "filter",
    "n",
    "m",
    "k",
    "sent_bits_per_item",
    "theory_bits_per_item",
    "entropy_bound",
    "false_positives",
    "queries",
    "theory_fpp",
];

const STUDIES: &[Study] = &[
    Study {
        name: "fpr",
        tables: &[
            (
                "",
                &[
                    "fpp",
                    "m",
                    "k",
                    "false_positives",
                    "negatives",
                    "measured",
                    "wilson_low",
                    "wilson_high",
                    "theory",
                ],
            ),
            (
                "seed000",
                &[
                    "fpp",
                    "seed_m",
                    "our_m",
                    "seed_k_implied",
                    "our_k",
                    "seed_false_positives",
                    "our_false_positives",
                    "seed_rate_per_word",
                    "our_rate_per_word",
                    "our_negatives",
                    "our_rate_per_negative",
                    "seed_printed_rate",
                ],
            ),
            (
                "seed000_k",
                &[
                    "fpp",
                    "m",
                    "real_k",
                    "false_positives",
                    "k_round",
                    "expected_round",
                    "z_round",
                    "k_ceil",
                    "expected_ceil",
                    "z_ceil",
                ],
            ),
        ],
        figures: &["fpr_measured", "fpr_ratio"],
    },
    Study {
        name: "rho",
        tables: &[
            (
                "",
                &[
                    "n",
                    "rho",
                    "m",
                    "k",
                    "repetitions",
                    "false_positives",
                    "negatives",
                    "measured",
                    "sd",
                    "ci_low",
                    "ci_high",
                    "theory",
                ],
            ),
            (
                "cuadro1",
                &[
                    "rho",
                    "band",
                    "hypothesis",
                    "measured",
                    "ci_low",
                    "ci_high",
                    "theory_min",
                    "theory_max",
                    "holds",
                ],
            ),
        ],
        figures: &["rho_theory", "rho_fpr"],
    },
    Study {
        name: "disk",
        tables: &[
            (
                "",
                &[
                    "n",
                    "rho",
                    "m",
                    "k",
                    "queries",
                    "present",
                    "disk_lookups",
                    "expected_lookups",
                    "lookups_low",
                    "lookups_high",
                    "reads_saved",
                    "false_positives",
                    "theory_fpp",
                    "filter_bytes",
                    "filter_query_ns",
                    "filter_query_ns_sd",
                    "disk_lookup_us",
                    "disk_lookup_us_sd",
                    "bytes_read",
                ],
            ),
            (
                "seed002",
                &[
                    "quantity",
                    "seed 002 says",
                    "bloomkit measured",
                    "why they differ",
                ],
            ),
        ],
        figures: &[
            "disk_reads",
            "disk_size",
            "disk_time_lookup",
            "disk_time_filter",
        ],
    },
    Study {
        name: "claims",
        tables: &[(
            "",
            &["seed 003 says", "translation", "bloomkit computes", "holds"],
        )],
        figures: &[],
    },
    Study {
        name: "spellcheck",
        tables: &[(
            "",
            &[
                "fpp",
                "m",
                "k",
                "filter_bytes",
                "dictionary_bytes",
                "misspellings",
                "flagged",
                "let_through",
                "distinct_misspellings",
                "distinct_let_through",
                "rate",
                "ci_low",
                "ci_high",
                "theory",
            ],
        )],
        figures: &["spellcheck_through"],
    },
    Study {
        name: "summary-cache",
        tables: &[(
            "",
            &[
                "directory",
                "local hits",
                "remote hits (% of misses)",
                "false hits (% of queries to peers)",
                "missed hits (% of misses)",
                "queries to peers",
                "updates",
                "bytes exchanged",
                "bytes ÷ summaries",
            ],
        )],
        figures: &[],
    },
    Study {
        name: "timing",
        tables: &[(
            "",
            &[
                "kind",
                "n",
                "passes",
                "memory_bytes",
                "insert_ns_median",
                "insert_ns_q1",
                "insert_ns_q3",
                "insert_ns_mean",
                "insert_ns_sd",
                "query_ns_median",
                "query_ns_q1",
                "query_ns_q3",
            ],
        )],
        figures: &["timing_insert", "timing_query"],
    },
    Study {
        name: "variants",
        tables: &[(
            "",
            &[
                "fpp",
                "kind",
                "n",
                "repetitions",
                "refused",
                "false_positives",
                "queries",
                "measured",
                "ci_low",
                "ci_high",
                "theory",
                "theory_is_limit",
                "memory_bytes",
            ],
        )],
        figures: &["variants_fpr_1pct", "variants_fpr_5pct"],
    },
    Study {
        name: "deletion",
        tables: &[
            (
                "",
                &[
                    "scheme",
                    "regions_choice",
                    "r",
                    "m",
                    "k",
                    "n",
                    "repetitions",
                    "measured",
                    "ci_low",
                    "ci_high",
                    "theory",
                ],
            ),
            (
                "removes",
                &[
                    "kind",
                    "inserted",
                    "removed",
                    "kept",
                    "errors",
                    "false_negatives",
                    "removed_still_present",
                ],
            ),
            (
                "saturation",
                &[
                    "kind",
                    "counter_bits",
                    "k",
                    "load",
                    "counters",
                    "saturated",
                    "expected_saturated",
                    "deviation",
                    "any_saturated_bound",
                ],
            ),
        ],
        figures: &[
            "deletion_fraction",
            "deletion_fraction_seeded",
            "deletion_saturation",
        ],
    },
    Study {
        name: "hashing",
        tables: &[(
            "",
            &[
                "hash",
                "scheme",
                "fpp",
                "m",
                "k",
                "n",
                "false_positives",
                "queries",
                "measured",
                "ci_low",
                "ci_high",
                "theory",
                "insert_ns",
                "query_ns",
            ],
        )],
        figures: &["hashing_fpr", "hashing_insert_cost", "hashing_query_cost"],
    },
    Study {
        name: "sstable",
        tables: &[(
            "",
            &[
                "runs",
                "present",
                "filters",
                "lookups",
                "reads",
                "reads_per_lookup",
                "ci_low",
                "ci_high",
                "expected_per_lookup",
                "formula_per_lookup",
                "filter_fpp",
                "lookup_us",
                "lookup_us_sd",
            ],
        )],
        figures: &["sstable_reads", "sstable_time"],
    },
    Study {
        name: "spectral",
        tables: &[(
            "",
            &[
                "method",
                "stream",
                "distinct",
                "wrong",
                "low",
                "measured",
                "ci_low",
                "ci_high",
                "theory_ms",
                "mean_relative_error",
            ],
        )],
        figures: &["spectral_errors"],
    },
    Study {
        name: "generalized",
        tables: &[(
            "",
            &[
                "reset_hashes",
                "set_hashes",
                "m",
                "n",
                "false_positives",
                "queries",
                "fpr",
                "fpr_theory",
                "lost",
                "fnr",
                "fnr_theory",
            ],
        )],
        figures: &["generalized_fpr", "generalized_fnr"],
    },
    Study {
        name: "bloomier",
        tables: &[(
            "",
            &[
                "n",
                "layout",
                "value_bits",
                "check_bits",
                "cells",
                "bits_per_key",
                "theory_bits_per_key",
                "build_ns_per_key",
                "query_ns",
                "attempts",
                "passed",
                "queries",
                "theory_fpp",
            ],
        )],
        figures: &["bloomier_bits"],
    },
    Study {
        name: "compressed",
        tables: &[("", COMPRESSED_COLUMNS), ("paper", COMPRESSED_COLUMNS)],
        figures: &["compressed_sent"],
    },
    Study {
        name: "robust",
        tables: &[(
            "",
            &[
                "fpp",
                "n",
                "queries",
                "robust_bits_per_item",
                "robust_false_positives",
                "robust_theory",
                "classic_bits_per_item",
                "classic_false_positives",
                "classic_theory",
                "classic_bits_at_robust_rate",
            ],
        )],
        figures: &["robust_fpr"],
    },
    Study {
        name: "ssd",
        tables: &[(
            "",
            &[
                "batch",
                "pages",
                "inserts",
                "page_reads",
                "page_writes",
                "reads_per_insert",
                "theory",
                "low",
                "high",
                "queries",
                "query_reads",
            ],
        )],
        figures: &["ssd_io"],
    },
];

fn bloomkit(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bloomkit"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the bloomkit binary runs")
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let output = bloomkit(dir, args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "bloomkit {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn study(name: &str) -> &'static Study {
    STUDIES
        .iter()
        .find(|s| s.name == name)
        .expect("a known study")
}

/// The CSV file of table `table` of `study`.
fn csv_name(study: &str, table: &str) -> String {
    if table.is_empty() {
        format!("{study}.csv")
    } else {
        format!("{study}_{table}.csv")
    }
}

/// Checks a CSV file: the header, at least one row, and as many cells in every row.
fn check_csv(path: &Path, columns: &[&str]) {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut lines = text.lines();
    let header = cells(lines.next().expect("a header"));
    assert_eq!(header, columns, "{}", path.display());
    let rows: Vec<&str> = lines.collect();
    assert!(!rows.is_empty(), "{} has no rows", path.display());
    for row in rows {
        assert_eq!(cells(row).len(), columns.len(), "{}: {row}", path.display());
    }
}

/// The cells of one CSV line (RFC 4180 quoting; no cell of these tables spans lines).
fn cells(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cell)),
            (c, _) => cell.push(c),
        }
    }
    cells.push(cell);
    cells
}

/// A small well-formedness check of an XML document: tags nest and close, and the root
/// element is `<svg>`.
fn check_svg(path: &Path) {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut stack: Vec<String> = Vec::new();
    let mut root = None;
    let mut rest = text.as_str();
    while let Some(open) = rest.find('<') {
        let close = rest[open..]
            .find('>')
            .unwrap_or_else(|| panic!("{}: unclosed tag", path.display()));
        let tag = &rest[open + 1..open + close];
        rest = &rest[open + close + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            let top = stack.pop();
            assert_eq!(top.as_deref(), Some(name.trim()), "{}", path.display());
            continue;
        }
        let name: String = tag
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '/')
            .collect();
        assert!(!name.is_empty(), "{}: empty tag", path.display());
        if root.is_none() {
            root = Some(name.clone());
        } else {
            assert!(
                !stack.is_empty(),
                "{}: a second root element",
                path.display()
            );
        }
        if !tag.ends_with('/') {
            stack.push(name);
        }
    }
    assert_eq!(root.as_deref(), Some("svg"), "{}", path.display());
    assert!(stack.is_empty(), "{}: unclosed {stack:?}", path.display());
    assert!(text.contains("<text"), "{}: no text", path.display());
}

/// Checks a PNG file: signature, IHDR first, a figure-sized image, not a blank one.
fn check_png(path: &Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{}",
        path.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR", "{}", path.display());
    let word =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let (width, height) = (word(16), word(20));
    assert!(
        width >= 400 && height >= 300,
        "{}: {width}×{height}",
        path.display()
    );
    assert!(
        bytes.len() > 10_000,
        "{}: only {} bytes",
        path.display(),
        bytes.len()
    );
    assert!(
        bytes.ends_with(b"IEND\xaeB`\x82"),
        "{}: no IEND",
        path.display()
    );
}

/// Runs one study at the tiny size into a fresh directory and checks its files.
fn run_study(name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let printed = ok(
        dir.path(),
        &[
            "experiment",
            name,
            "--tiny",
            "--out",
            "out",
            "--csv",
            "main.csv",
        ],
    );
    let spec = study(name);
    let out = dir.path().join("out");
    for (table, columns) in spec.tables {
        check_csv(&out.join(csv_name(name, table)), columns);
    }
    check_csv(&dir.path().join("main.csv"), spec.tables[0].1);
    for figure in spec.figures {
        check_svg(&out.join(format!("{figure}.svg")));
        check_png(&out.join(format!("{figure}.png")));
    }
    // Nothing else is drawn that the test does not know of.
    let mut drawn: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".svg"))
        .collect();
    drawn.sort();
    let mut known: Vec<String> = spec.figures.iter().map(|f| format!("{f}.svg")).collect();
    known.sort();
    assert_eq!(drawn, known);
    assert!(printed.contains("== "), "{printed}");
}

#[test]
fn fpr_study() {
    run_study("fpr");
}

#[test]
fn rho_study() {
    run_study("rho");
}

#[test]
fn disk_study() {
    run_study("disk");
}

#[test]
fn timing_study() {
    run_study("timing");
}

#[test]
fn variants_study() {
    run_study("variants");
}

#[test]
fn deletion_study() {
    run_study("deletion");
}

#[test]
fn hashing_study() {
    run_study("hashing");
}

#[test]
fn spellcheck_study() {
    run_study("spellcheck");
}

#[test]
fn summary_cache_study() {
    run_study("summary-cache");
}

#[test]
fn claims_study() {
    run_study("claims");
}

#[test]
fn sstable_study() {
    run_study("sstable");
}

#[test]
fn spectral_study() {
    run_study("spectral");
}

#[test]
fn generalized_study() {
    run_study("generalized");
}

#[test]
fn bloomier_study() {
    run_study("bloomier");
}

#[test]
fn compressed_study() {
    run_study("compressed");
}

#[test]
fn studies_are_deterministic_by_seed() {
    let dir = tempfile::tempdir().unwrap();
    for (seed, file) in [("3", "a.csv"), ("3", "b.csv"), ("4", "c.csv")] {
        ok(
            dir.path(),
            &["experiment", "rho", "--tiny", "--seed", seed, "--csv", file],
        );
    }
    let read = |f: &str| std::fs::read(dir.path().join(f)).unwrap();
    assert_eq!(read("a.csv"), read("b.csv"));
    assert_ne!(read("a.csv"), read("c.csv"));
}

#[test]
fn all_writes_an_index_of_every_table_and_figure() {
    let dir = tempfile::tempdir().unwrap();
    let printed = ok(
        dir.path(),
        &["experiment", "all", "--tiny", "--out", "report"],
    );
    let count = bloomkit_experiments::all::STUDIES.len();
    assert!(
        printed.contains(&format!("All {count} studies")),
        "{printed}"
    );
    let report = dir.path().join("report");
    let index = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(index.starts_with("<!DOCTYPE html>"));
    check_glance(&index);
    assert!(index.contains("bloomkit experiment all --tiny --out report"));
    for spec in STUDIES {
        assert!(
            index.contains(&format!("<section id=\"{}\">", spec.name)),
            "no section for {}",
            spec.name
        );
        assert!(
            index.contains(&format!(
                "bloomkit experiment {} --tiny --out report",
                spec.name
            )),
            "no command for {}",
            spec.name
        );
        for (table, columns) in spec.tables {
            let csv = csv_name(spec.name, table);
            check_csv(&report.join(&csv), columns);
            assert!(index.contains(&format!("href=\"{csv}\"")), "{csv}");
        }
        for figure in spec.figures {
            assert!(index.contains(&format!("src=\"{figure}.svg\"")), "{figure}");
            assert!(
                index.contains(&format!("href=\"{figure}.png\"")),
                "{figure}"
            );
            check_svg(&report.join(format!("{figure}.svg")));
            check_png(&report.join(format!("{figure}.png")));
        }
    }
}

/// The values of `attribute` in the tags of `html` that start with `tag`, in order.
fn attribute_values(html: &str, tag: &str, attribute: &str) -> Vec<String> {
    html.match_indices(tag)
        .map(|(at, _)| {
            let rest = &html[at..];
            let rest = &rest[..rest.find('>').unwrap()];
            let key = format!("{attribute}=\"");
            let start = rest.find(&key).unwrap_or_else(|| panic!("{rest}")) + key.len();
            rest[start..start + rest[start..].find('"').unwrap()].to_owned()
        })
        .collect()
}

/// The page opens with the rule, the whole page's χ² and a table of verdicts that has one
/// row per verdict box, in the same order, linking to it, with the same verdict.
fn check_glance(index: &str) {
    let glance_at = index
        .find("<section id=\"verdicts\">")
        .expect("no table of verdicts");
    let first_study = index.find("<section id=\"fpr\">").unwrap();
    assert!(
        glance_at < first_study,
        "the verdicts come after the studies"
    );
    let (head, body) = index.split_at(first_study);
    assert!(head.contains("class=\"rule\"") && head.contains("α = 0.001"));
    assert!(head.contains("class=\"page-chi2\""));
    // Rows: <tr data-verdict="…"><td …><a href="#anchor">.
    let row_words = attribute_values(head, "<tr data-verdict=", "data-verdict");
    let row_links: Vec<String> = head
        .match_indices("<tr data-verdict=")
        .map(|(at, _)| {
            let rest = &head[at..];
            let start = rest.find("href=\"#").unwrap() + "href=\"#".len();
            rest[start..start + rest[start..].find('"').unwrap()].to_owned()
        })
        .collect();
    let box_ids = attribute_values(body, "<li class=\"verdict\"", "id");
    let box_words = attribute_values(body, "<li class=\"verdict\"", "data-verdict");
    assert!(!box_ids.is_empty(), "no verdict boxes");
    assert_eq!(row_links, box_ids, "the table's rows are not the boxes");
    assert_eq!(row_words, box_words, "the table and the boxes disagree");
    // Each box's sentence says the verdict its attribute names.
    for (id, word) in box_ids.iter().zip(&box_words) {
        let at = body.find(&format!("id=\"{id}\"")).unwrap();
        let sentence = &body[at..at + body[at..].find("</li>").unwrap()];
        let said = if sentence.contains(": NOT on theory") {
            "NOT on theory"
        } else if sentence.contains(": on theory") {
            "on theory"
        } else {
            "nothing to judge"
        };
        assert_eq!(said, word, "{sentence}");
    }
}

#[test]
fn without_a_font_the_tables_are_still_written() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_bloomkit"))
        .args(["experiment", "rho", "--tiny", "--out", "out"])
        .env("BLOOMKIT_FONT", "")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("fonts-dejavu-core"), "{err}");
    assert!(dir.path().join("out/rho.csv").is_file());
    assert!(!dir.path().join("out/rho_fpr.png").exists());
}

#[test]
fn a_bad_font_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("not-a-font.ttf"), b"hello").unwrap();
    let output = bloomkit(
        dir.path(),
        &[
            "experiment",
            "all",
            "--tiny",
            "--out",
            "out",
            "--font",
            "not-a-font.ttf",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("not-a-font.ttf"), "{err}");
}

#[test]
fn robust_study() {
    run_study("robust");
}

#[test]
fn ssd_study() {
    run_study("ssd");
}

/// A study told to write where it cannot — `--out` naming a file, `--csv` naming a
/// directory, a `--font` that is not a font — fails at once, naming the option, before it
/// runs: not after the study (minutes with `--full`) with "creating F: File exists".
#[test]
fn outputs_that_cannot_be_written_are_refused_before_a_study_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a-file"), b"x").unwrap();
    std::fs::write(d.join("not-a-font.ttf"), b"hello").unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["rho", "--out", "a-file"],
            "--out a-file: that is a file, not a directory",
        ),
        (&["rho", "--csv", "."], "--csv .: that is a directory"),
        (
            &["spellcheck", "--out", "figures", "--font", "not-a-font.ttf"],
            "not-a-font.ttf",
        ),
        (
            &["all", "--tiny", "--out", "a-file"],
            "--out a-file: that is a file, not a directory",
        ),
    ];
    for (args, says) in cases {
        let output = bloomkit(d, &[&["experiment"][..], args].concat());
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(output.stdout.is_empty(), "{args:?} ran the study first");
    }
    assert_eq!(std::fs::read(d.join("a-file")).unwrap(), b"x");
}
