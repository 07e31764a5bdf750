//! Guava's `BloomFilter` (Debian's libguava-java) against `bloomkit::interop::guava`, both ways:
//! filters Guava writes read here answer as Guava's `mightContain` does, and filters written here
//! are read by Guava's `readFrom` and answer alike; created with the same n and ε, the two
//! filters are byte for byte the same.

use bloomkit::interop::guava::GuavaBloomFilter;

use crate::jvm::{self, item, Item};

const CONFIGS: [(usize, f64); 2] = [(2000, 0.03), (300, 0.2)];

fn put(f: &mut GuavaBloomFilter, item: &Item) {
    match item {
        Item::Str(s) => f.put_str(s),
        Item::Long(v) => f.put_long(*v),
        Item::Bytes(b) => f.put_bytes(b),
    };
}

fn might_contain(f: &GuavaBloomFilter, item: &Item) -> bool {
    match item {
        Item::Str(s) => f.might_contain_str(s),
        Item::Long(v) => f.might_contain_long(*v),
        Item::Bytes(b) => f.might_contain_bytes(b),
    }
}

fn probe(f: &GuavaBloomFilter, funnel: &str, probes: usize) -> Vec<bool> {
    (0..probes)
        .map(|i| might_contain(f, &item(funnel, i)))
        .collect()
}

#[test]
fn guava_reads_ours_and_we_read_guavas() {
    if !jvm::java_present() {
        return;
    }
    let guava = jvm::jar("BLOOMKIT_GUAVA_JAR", &["/usr/share/java/guava.jar"])
        .expect("Guava's jar: apt-get install libguava-java, or set BLOOMKIT_GUAVA_JAR");
    let guava = guava.to_str().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    jvm::compile("GuavaRoundTrip.java", &guava, d);

    // Ours, written first; then one JVM does every job.
    let mut jobs = String::new();
    let mut cases = Vec::new();
    for funnel in jvm::FUNNELS {
        for (c, &(n, fpp)) in CONFIGS.iter().enumerate() {
            let mut ours = GuavaBloomFilter::with_capacity(n as u64, fpp).unwrap();
            for i in 0..n {
                put(&mut ours, &item(funnel, i));
            }
            let tag = format!("{funnel}-{c}");
            let probes = n + jvm::ABSENT;
            std::fs::write(d.join(format!("ours.bin-{tag}")), ours.to_bytes()).unwrap();
            let p = |name: &str| d.join(format!("{name}-{tag}")).display().to_string();
            jobs += &format!(
                "write {funnel} {n} {fpp} {} {} {probes}\n",
                p("theirs.bin"),
                p("theirs.txt")
            );
            jobs += &format!(
                "read {funnel} {} {} {probes}\n",
                p("ours.bin"),
                p("ours.txt")
            );
            cases.push((funnel, n, fpp, tag, ours));
        }
    }
    let jobs_file = d.join("jobs.txt");
    std::fs::write(&jobs_file, jobs).unwrap();
    jvm::run("GuavaRoundTrip", &guava, d, &jobs_file);

    for (funnel, n, fpp, tag, ours) in cases {
        let probes = n + jvm::ABSENT;
        let expected = probe(&ours, funnel, probes);
        // Guava read our bytes and answers as we do.
        let guava_on_ours = jvm::answers(&d.join(format!("ours.txt-{tag}")));
        jvm::assert_same(
            &format!("Guava reading ours ({tag})"),
            n,
            &expected,
            &guava_on_ours,
        );
        // We read Guava's bytes and answer as Guava does.
        let bytes = std::fs::read(d.join(format!("theirs.bin-{tag}"))).unwrap();
        let theirs = GuavaBloomFilter::read_from(&bytes).unwrap();
        let guava_answers = jvm::answers(&d.join(format!("theirs.txt-{tag}")));
        jvm::assert_same(
            &format!("ours reading Guava's ({tag})"),
            n,
            &probe(&theirs, funnel, probes),
            &guava_answers,
        );
        // Same n, ε and items: the same filter, byte for byte (sizing and hashing alike).
        assert_eq!(
            theirs.num_hash_functions(),
            ours.num_hash_functions(),
            "{tag}: k"
        );
        assert_eq!(theirs.bit_size(), ours.bit_size(), "{tag}: m");
        assert!(theirs == ours, "{tag}: Guava's filter and ours differ");
        assert_eq!(bytes, ours.to_bytes(), "{tag}: bytes");
        // The paths of `bloomkit import --from guava` and `export --to guava`: Guava's filter
        // as a bloomkit file answers as Guava does, and a bloomkit filter with Guava's
        // hashing, filled through the bloomkit API, exports to the bytes Guava wrote.
        let imported = jvm::through_file(theirs.clone().into_filter().unwrap());
        jvm::assert_same(
            &format!("Guava's filter imported as a bloomkit file ({tag})"),
            n,
            &jvm::probe_any(&imported, funnel, probes),
            &guava_answers,
        );
        let mut built = GuavaBloomFilter::with_capacity(n as u64, fpp)
            .unwrap()
            .into_filter()
            .unwrap();
        for i in 0..n {
            jvm::insert_any(&mut built, &item(funnel, i));
        }
        let exported = GuavaBloomFilter::from_filter(&jvm::through_file(built)).unwrap();
        assert_eq!(exported.to_bytes(), bytes, "{tag}: exported bytes");
    }
}
