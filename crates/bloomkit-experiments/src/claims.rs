//! Seed 003's statements in numbers: each sentence of the seed that makes a quantitative
//! claim, quoted in German with a translation, next to what bloomkit computes for it.
//!
//! Seed 003 (003_d5d061be399466f4.txt) is a German seminar paper. Its claims:
//!
//! * under 10 bits per item at about 1% — the optimum is `m/n = −ln ε / (ln 2)²`, 9.585
//!   bits at ε = 0.01 (Bloom 1970; the form of Broder & Mitzenmacher 2004);
//! * about 120 MB for 10⁸ URLs at 1%, against over a gigabyte for a hash table — the same
//!   formula times 10⁸ bits, and the seed's own 64 bits or more per hash-table entry;
//! * a counting filter costs 3–4× the memory — 4-bit counters in place of bits with the
//!   same m and k are 4×, by bloomkit's own `memory_bytes`;
//! * 4-bit counters overflow past 15 — a counter's count after n insertions with k hashes
//!   into m counters is Binomial(nk, 1/m) ≈ Poisson(λ = nk/m); at the optimal k, λ = ln 2,
//!   and `P(X ≥ 16)` is about 10⁻¹⁶ per counter (Fan et al. 2000 bound it by
//!   `(e ln 2 / 16)^16 ≈ 1.4·10⁻¹⁵`).

use anyhow::Result;
use bloomkit::params::{counter_overflow_bound, optimal_num_bits, optimal_num_hashes};
use bloomkit::{BloomFilter, CountingBloomFilter, Filter};
use clap::Args;

use super::deletion::poisson_tail;
use super::report::{Report, ReportTable};
use super::{sig, StudyArgs, Table};

/// Arguments of `bloomkit experiment claims`.
#[derive(Debug, Args)]
pub struct ClaimsArgs {
    /// The options every study has.
    #[command(flatten)]
    pub common: StudyArgs,
}

/// One claim: the seed's words, their translation, bloomkit's number, and whether it holds.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The seed's sentence, in German, as printed.
    pub quote: &'static str,
    /// Its translation.
    pub translation: &'static str,
    /// What bloomkit computes.
    pub computed: String,
    /// Whether the claim holds.
    pub holds: bool,
}

/// The items the memory claims are computed for (a filter of this size is built).
const BUILT: u64 = 1_000_000;

/// Seed 003's claims, computed.
pub fn claims() -> Result<Vec<Claim>> {
    let ln2 = std::f64::consts::LN_2;
    let bits_per_item = -(0.01f64.ln()) / (ln2 * ln2);
    let bloom = BloomFilter::with_capacity(BUILT, 0.01)?;
    let built_bits = bloom.num_bits() as f64 / BUILT as f64;

    let urls = 100_000_000u64;
    let url_bits = optimal_num_bits(urls, 0.01)?;
    let url_bytes = url_bits.div_ceil(8) as f64;

    let counting = CountingBloomFilter::with_capacity(BUILT, 0.01)?;
    let ratio = counting.memory_bytes() as f64 / bloom.memory_bytes() as f64;

    let m = counting.num_counters();
    let k = counting.num_hashes();
    let lambda = k as f64 * BUILT as f64 / m as f64;
    let per_counter = poisson_tail(lambda, 16);
    let bound = counter_overflow_bound(m, k, BUILT, 16);
    let twice = poisson_tail(2.0 * lambda, 16) * m as f64;
    let eight = poisson_tail(8.0 * lambda, 15) * m as f64;
    Ok(vec![
        Claim {
            quote: "Bei einer Fehlerrate von etwa 1 % benötigt ein Bloom Filter weniger als 10 \
                    Bits pro Element.",
            translation: "At an error rate of about 1% a Bloom filter needs fewer than 10 bits \
                          per element.",
            computed: format!(
                "−ln 0.01 / (ln 2)² = {bits_per_item:.3} bits per item; BloomFilter for 10⁶ \
                 items at 1%: {built_bits:.3} bits per item (k = {})",
                bloom.num_hashes()
            ),
            holds: bits_per_item < 10.0 && built_bits < 10.0,
        },
        Claim {
            quote: "Für 100 Millionen URLs benötigt ein Bloom Filter bei einer Fehlerrate von 1% \
                    rund 120 Megabyte. Eine Hash-Tabelle mit denselben Einträgen würde hingegen \
                    über ein Gigabyte beanspruchen.",
            translation: "For 100 million URLs a Bloom filter at an error rate of 1% needs about \
                          120 megabytes. A hash table with the same entries would take over a \
                          gigabyte.",
            computed: format!(
                "m = {url_bits} bits = {:.1} MB (10⁶ bytes) = {:.1} MiB, k = {}; a hash table at \
                 the seed's own \"64 Bits oder mehr pro Element\" (64 bits or more per element) \
                 is ≥ {:.0} MB before the URLs themselves, which at 50 bytes each add {:.0} MB",
                url_bytes / 1e6,
                url_bytes / 1_048_576.0,
                optimal_num_hashes(url_bits, urls),
                urls as f64 * 8.0 / 1e6,
                urls as f64 * 50.0 / 1e6
            ),
            holds: (url_bytes / 1e6 - 120.0).abs() < 5.0,
        },
        Claim {
            quote: "Bei gleicher Genauigkeit benötigt ein Counting Bloom Filter somit ungefähr \
                    das Drei- bis Vierfache an Speicher im Vergleich zum klassischen Bloom \
                    Filter.",
            translation: "At the same accuracy a counting Bloom filter thus needs roughly three \
                          to four times the memory of the classic Bloom filter.",
            computed: format!(
                "CountingBloomFilter for 10⁶ items at 1%: {} bytes; BloomFilter: {} bytes; \
                 ratio {ratio:.3} (4-bit counters, same m and k)",
                counting.memory_bytes(),
                bloom.memory_bytes()
            ),
            holds: (3.0..=4.05).contains(&ratio),
        },
        Claim {
            quote: "Typischerweise sind diese Zähler 4 Bit groß und können somit Werte von 0 bis \
                    15 speichern. […] Wenn mehr als 15 Elemente auf dieselbe Position hashen, \
                    reichen 4 Bits nicht mehr aus.",
            translation: "Typically these counters are 4 bits wide and can thus store values \
                          from 0 to 15. […] If more than 15 elements hash to the same position, \
                          4 bits are no longer enough.",
            computed: format!(
                "At capacity (λ = nk/m = {lambda:.3}): P(a counter ≥ 16) = {} per counter \
                 (Poisson tail), {} expected over all {m} counters; Fan et al.'s bound on any \
                 counter: {}. Overfilled: at 2× capacity {} counters expected at ≥ 16; at 8× \
                 capacity {} expected at 15 or more (the deletion study measures these)",
                sig(per_counter, 3),
                sig(per_counter * m as f64, 3),
                sig(bound, 3),
                sig(twice, 3),
                sig(eight, 4)
            ),
            holds: true,
        },
    ])
}

/// Runs the study.
pub fn study(args: &ClaimsArgs) -> Result<Report> {
    let start = super::stopwatch();
    let claims = claims()?;
    let mut display = Table::new(["seed 003 says", "translation", "bloomkit computes", "holds"]);
    for claim in &claims {
        display.push(vec![
            claim.quote.into(),
            claim.translation.into(),
            claim.computed.clone(),
            if claim.holds { "yes" } else { "no" }.into(),
        ]);
    }
    let held = claims.iter().filter(|c| c.holds).count();
    let mut report = Report {
        study: "claims",
        title: "claims — seed 003's statements, computed".into(),
        summary: "Seed 003 (003_d5d061be399466f4.txt, German) makes four quantitative claims \
                  about memory and counters; each is quoted with a translation next to what \
                  bloomkit's formulas and filters give."
            .into(),
        command: args.common.command("claims"),
        facts: vec![format!(
            "Memory figures are bloomkit's memory_bytes of filters built for {BUILT} items at \
             ε = 1%; the 10⁸-URL figure is the sizing formula (no 120 MB filter is built)."
        )],
        tables: vec![ReportTable {
            name: "main".into(),
            title: "Seed 003's claims and bloomkit's numbers".into(),
            display: display.clone(),
            csv: display,
        }],
        figures: Vec::new(),
        verdicts: Vec::new(),
        notes: vec![
            format!("{held} of {} claims hold as stated.", claims.len()),
            "The last claim is true and rarely matters: more than 15 items on one counter has \
             the per-counter probability above at capacity, which is why Fan et al. chose 4 \
             bits; counters saturate in numbers only when a filter is overfilled several times \
             (the deletion study's saturation table and curve)."
                .into(),
        ],
        seconds: 0.0,
    };
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_claims_compute() {
        let claims = claims().unwrap();
        assert_eq!(claims.len(), 4);
        assert!(claims[0].computed.starts_with("−ln 0.01 / (ln 2)² = 9.585"));
        assert!(
            claims[1].computed.contains("119.8 MB"),
            "{}",
            claims[1].computed
        );
        assert!(
            claims[2].computed.contains("ratio 4.0"),
            "{}",
            claims[2].computed
        );
        assert!(claims.iter().all(|c| c.holds));
    }
}
