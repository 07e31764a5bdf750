//! The report's opening: which seed each section answers, the kinds of filter (from the
//! library's registry, so a new kind appears without an edit here), and the seeds'
//! applications — which are demonstrated and which are not.

use std::fmt::Write as _;

use bloomkit::{AnyFilter, Filter, Kind};

use super::report::escape;
use super::Table;

/// The five seeds: file, what it is, and the sections that answer it.
pub const SEEDS: [(&str, &str, &str); 5] = [
    (
        "000_02f71fb1b6dcd284.txt",
        "German report (Grützner, Möller, Weber 2021): a Java Bloom filter on words.txt, its \
         table 1 of ε against measured rates",
        "fpr, hashing",
    ),
    (
        "001_ddd529f7662cd0cb.txt",
        "German Wikipedia article \"Bloomfilter\": principle, variants, applications (Squid, \
         Bigtable/HBase/Cassandra, Chrome, Bitcoin)",
        "spellcheck, summary-cache, sstable, hashing",
    ),
    (
        "002_ee4b1f30388e0c8c.txt",
        "Spanish report (Escobar, López, Valderrama 2020): false positives against ρ = m/n, a \
         filter in front of a file on disk, times and sizes",
        "rho, disk",
    ),
    (
        "003_d5d061be399466f4.txt",
        "German seminar paper (Jambura, Pürstinger, Schnappauf, Thiele 2026): theory, memory \
         claims, counting/scalable/cuckoo filters, web-proxy caching, Bigtable",
        "claims, deletion, variants, summary-cache, sstable",
    ),
    (
        "004_e380dc037116baf2.txt",
        "German slides (TU Bergakademie Freiberg): insert times, \"Floom-Filter\" (deletable) \
         with 12 and 16 regions, variants, applications",
        "timing, variants, deletion, spellcheck, summary-cache",
    ),
];

/// The seeds a study answers, by file name, for the line under its heading.
pub fn credit(study: &str) -> Option<String> {
    let files: Vec<&str> = SEEDS
        .iter()
        .filter(|(_, _, studies)| studies.split(", ").any(|s| s == study))
        .map(|(file, _, _)| *file)
        .collect();
    (!files.is_empty()).then(|| files.join(", "))
}

/// The seeds' applications: what, which seeds name it, and where this report shows it
/// (empty: not demonstrated).
pub const APPLICATIONS: [(&str, &str, &str); 16] = [
    ("Spell checking (Bloom 1970)", "001, 004", "spellcheck"),
    (
        "Web-proxy cache sharing: Summary Cache, Squid",
        "001, 003, 004",
        "summary-cache",
    ),
    (
        "Avoiding disk reads for absent keys: Bigtable, HBase, Cassandra",
        "001, 003, 004",
        "sstable",
    ),
    (
        "A filter in front of a file (forgotten password)",
        "002",
        "disk",
    ),
    ("E-mail address already taken (Gmail)", "000", ""),
    ("End-of-line hyphenation (Bloom 1970)", "001", ""),
    ("Safe Browsing in Google Chrome", "001, 003", ""),
    ("Bitcoin lightweight clients (SPV)", "001", ""),
    (
        "Network routing, loop prevention, IP traceback",
        "001, 004",
        "",
    ),
    ("Preventing DDoS attacks", "004", ""),
    ("Intrusion detection, deep packet inspection", "004", ""),
    ("Encrypted search", "004", ""),
    ("Longest prefix matching", "004", ""),
    ("Search engines", "004", ""),
    (
        "Ruling out a person in a search without plain personal data",
        "001",
        "",
    ),
    ("Buffered Bloom filters on SSDs", "001", "ssd"),
];

/// The kinds table, from `Kind::ALL`: what each can do and its memory at a common size.
pub fn kinds_table() -> Table {
    const N: u64 = 10_000;
    const FPP: f64 = 0.01;
    let mut table = Table::new([
        "kind",
        "what it is",
        "remove",
        "merge",
        "grows",
        "forgets",
        "bits per item (10 000 items at ε = 1%)",
    ]);
    let yes = |b: bool| if b { "yes" } else { "no" }.to_owned();
    for &kind in Kind::ALL {
        let bits = AnyFilter::with_capacity(kind, N, FPP)
            .map(|f| format!("{:.1}", f.memory_bytes() as f64 * 8.0 / N as f64))
            .unwrap_or_else(|e| format!("({e})"));
        table.push(vec![
            kind.name().to_owned(),
            kind.summary().to_owned(),
            yes(kind.can_remove()),
            yes(kind.can_merge()),
            yes(kind.can_grow()),
            yes(kind.forgets()),
            bits,
        ]);
    }
    // The two structures outside the registry: built once from their keys, or living in
    // their file rather than in memory (not `Filter`s, so not in `Kind::ALL`).
    let bloomier = bloomkit::BloomierFilter::membership(0..N, FPP)
        .map(|f| format!("{:.1}", f.bits_per_key()))
        .unwrap_or_else(|e| format!("({e})"));
    table.push(vec![
        "bloomier (bloomkit bloomier)".into(),
        "Bloomier filter: a static key → r-bit value table by hypergraph peeling (here in \
         membership mode); built once from all its keys"
            .into(),
        yes(false),
        yes(false),
        yes(false),
        yes(false),
        bloomier,
    ]);
    let page_size = bloomkit::buffered::DEFAULT_PAGE_SIZE;
    let page_bits = bloomkit::buffered::page_data_bits(page_size);
    let on_disk = bloomkit::params::buffered_dimensions(N, FPP, page_bits)
        .map(|(pages, _)| {
            let file_bits = pages * 8 * page_size as u64;
            format!("{:.1} on disk", file_bits as f64 / N as f64)
        })
        .unwrap_or_else(|e| format!("({e})"));
    table.push(vec![
        "buffered (bloomkit ssd)".into(),
        "buffered Bloom filter on SSD: pages on disk, each item's bits in one page, inserts \
         buffered in memory and written in batches"
            .into(),
        yes(false),
        yes(false),
        yes(false),
        yes(false),
        on_disk,
    ]);
    table
}

/// The opening section of the page, linking to the studies that ran (`studies`).
pub fn html(studies: &[&str], table_html: impl Fn(&Table) -> String) -> String {
    let link = |name: &str| {
        if studies.contains(&name) {
            format!("<a href=\"#{name}\">{name}</a>")
        } else {
            escape(name)
        }
    };
    let mut html = String::from(
        "<section id=\"overview\">\n<h2>The seeds, the kinds, the applications</h2>\n",
    );
    let mut seeds = Table::new(["seed file", "what it is", "answered in"]);
    for (file, what, answered) in SEEDS {
        seeds.push(vec![file.into(), what.into(), answered.into()]);
    }
    html.push_str("<h3>The five seed documents</h3>\n");
    html.push_str(&linked(&table_html(&seeds), studies, &link));
    html.push_str(
        "<h3>The kinds (from the library's registry, <code>bloomkit::Kind::ALL</code>)</h3>\n",
    );
    html.push_str(&table_html(&kinds_table()));
    let mut apps = Table::new(["application", "named by seed", "demonstrated"]);
    for (what, seeds, study) in APPLICATIONS {
        apps.push(vec![
            what.into(),
            seeds.into(),
            if study.is_empty() {
                "not demonstrated".into()
            } else {
                study.into()
            },
        ]);
    }
    let shown = APPLICATIONS.iter().filter(|a| !a.2.is_empty()).count();
    let _ = writeln!(
        html,
        "<h3>The seeds' applications</h3>\n<p>{shown} of the {} applications the seeds name are \
         demonstrated below; the others are listed so that the coverage is plain.</p>",
        APPLICATIONS.len()
    );
    html.push_str(&linked(&table_html(&apps), studies, &link));
    html.push_str("</section>\n");
    html
}

/// A table's HTML with each cell that names studies (`rho, disk`) turned into links to
/// their sections.
fn linked(html: &str, studies: &[&str], link: &impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find("<td") {
        let Some(open) = rest[start..].find('>') else {
            break;
        };
        let content = start + open + 1;
        let Some(close) = rest[content..].find("</td>") else {
            break;
        };
        let cell = &rest[content..content + close];
        out.push_str(&rest[..content]);
        let names: Vec<&str> = cell.split(", ").collect();
        if !cell.is_empty() && names.iter().all(|n| studies.contains(n)) {
            let links: Vec<String> = names.iter().map(|n| link(n)).collect();
            out.push_str(&links.join(", "));
        } else {
            out.push_str(cell);
        }
        rest = &rest[content + close..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_the_registry_has_a_row() {
        let table = kinds_table();
        assert_eq!(table.rows.len(), Kind::ALL.len() + 2);
        assert!(table.rows.iter().any(|r| r[0] == "bloom" && r[6] == "9.6"));
    }

    #[test]
    fn credits_name_the_seed_files() {
        assert_eq!(credit("rho").as_deref(), Some("002_ee4b1f30388e0c8c.txt"));
        let cache = credit("summary-cache").unwrap();
        assert!(cache.contains("001_") && cache.contains("003_") && cache.contains("004_"));
        assert_eq!(credit("nothing"), None);
        // Every study the seeds name exists in the report.
        for (_, _, studies) in SEEDS {
            for study in studies.split(", ") {
                assert!(super::super::all::STUDIES.contains(&study), "{study}");
            }
        }
    }

    #[test]
    fn study_names_in_cells_become_links() {
        let html = "<tr><td>x</td><td class=\"text\">rho, disk</td><td>not demonstrated</td></tr>";
        let out = linked(html, &["rho", "disk"], &|n: &str| {
            format!("<a href=\"#{n}\">{n}</a>")
        });
        assert_eq!(
            out,
            "<tr><td>x</td><td class=\"text\"><a href=\"#rho\">rho</a>, \
             <a href=\"#disk\">disk</a></td><td>not demonstrated</td></tr>"
        );
    }
}
