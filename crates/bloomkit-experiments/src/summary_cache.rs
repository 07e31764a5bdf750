//! Summary Cache (Fan, Cao, Almeida & Broder, "Summary Cache: A Scalable Wide-Area Web
//! Cache Sharing Protocol", IEEE/ACM ToN 8(3), 2000): cooperating web proxies tell each
//! other what they cache with Bloom filter summaries instead of URL lists.
//!
//! Seed 003 (003_d5d061be399466f4.txt, 7.1 "Web-Proxy-Caching") describes it — "Im Summary
//! Cache Protokoll tauschen Proxies periodisch Bloom Filter untereinander aus, die den Inhalt
//! ihres Caches zusammenfassen" (in the Summary Cache protocol proxies periodically exchange
//! Bloom filters that summarize the content of their caches) — and seed 001
//! (001_ddd529f7662cd0cb.txt) names Squid, which uses it; seed 004 lists web caches.
//!
//! The simulation: P proxies, each an LRU cache of C documents, serve a stream of requests
//! for URLs drawn with Zipf frequencies (weight 1/rank), each request arriving at a random
//! proxy. Each proxy keeps a counting Bloom filter of its cache (insert on admission,
//! remove on eviction: the reason the paper needs counters). When a share of its cache is
//! new since its last summary (the paper's update threshold), it sends a summary to every
//! peer: the counting filter in bloomkit's file format, which is the wire format here — the
//! peer decodes it with `from_bytes`, which checks the header and checksum. On a local miss
//! a proxy asks the peers whose summary says "maybe", in turn, until one has the document:
//!
//! * a **remote hit**: a peer had it;
//! * a **false hit**: a peer was asked and did not have it (a false positive of its
//!   summary, or a document evicted since the summary was sent);
//! * a **missed hit**: some peer had it but no summary said so (a document cached since the
//!   last summary: summaries have no false negatives of their own).
//!
//! The same stream is run against the two exact alternatives: sending the URL list of the
//! cache at the same moments (no false positives; the same staleness), and ICP, asking
//! every peer on every miss (no staleness; P − 1 messages per miss). Bytes exchanged count
//! what crosses the network for the directory: summaries or lists, times the P − 1 peers.
//! Each proxy also merges the summaries it holds into one union (counting filters add their
//! counters): when the union says "no", no peer can, and the per-peer checks are skipped.

use std::collections::{BTreeMap, HashMap, HashSet};

use anyhow::{Context, Result};
use bloomkit::{CountingBloomFilter, Mergeable, Persist};
use clap::Args;

use super::corpus::{self, SplitMix64};
use super::report::{Report, ReportTable};
use super::{sig, StudyArgs, Table};
use bloomkit::stats::Zipf;

/// The proxies.
pub const PROXIES: usize = 4;

/// The false-positive probability each summary is sized for at a full cache.
pub const FPP: f64 = 0.01;

/// The update threshold: a proxy sends a new summary once this share of its cache is new.
pub const THRESHOLD: f64 = 0.05;

/// Arguments of `bloomkit experiment summary-cache`.
#[derive(Debug, Args)]
pub struct SummaryCacheArgs {
    /// The options every study has.
    #[command(flatten)]
    pub common: StudyArgs,
}

/// A URL of the simulated web, by number.
pub fn url(id: u32) -> String {
    format!("http://host{}.example/page/{id}.html", id % 97)
}

/// One proxy: an LRU cache, its counting filter, and what it has told its peers.
struct Proxy {
    /// Document → last use.
    cache: HashMap<u32, u64>,
    /// Last use → document (the eviction order).
    order: BTreeMap<u64, u32>,
    filter: CountingBloomFilter,
    /// Documents admitted and evicted since the last summary.
    added: Vec<u32>,
    removed: Vec<u32>,
    /// The URL list as last sent (the exact alternative's view of this proxy).
    sent_list: HashSet<u32>,
}

impl Proxy {
    fn touch(&mut self, doc: u32, clock: u64) {
        if let Some(old) = self.cache.insert(doc, clock) {
            self.order.remove(&old);
        }
        self.order.insert(clock, doc);
    }
}

/// Counts of one run.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    /// Requests served.
    pub requests: u64,
    /// Found in the proxy's own cache.
    pub local_hits: u64,
    /// Found at a peer.
    pub remote_hits: u64,
    /// Peers asked that did not have the document.
    pub false_hits: u64,
    /// Local misses where a peer had the document but was not asked.
    pub missed_hits: u64,
    /// Messages to peers (queries).
    pub queries: u64,
    /// Bytes of directory updates sent (summaries or lists, to every peer).
    pub bytes: u64,
    /// Directory updates sent (per proxy and moment, not per peer).
    pub updates: u64,
}

/// The results of one simulation: Summary Cache, URL lists, URL deltas, ICP.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Summary Cache with counting-filter summaries in the file format.
    pub summary: Counts,
    /// The same moments, sending the full URL list.
    pub lists: Counts,
    /// Bytes if only the URLs added and removed since the last update were sent.
    pub delta_bytes: u64,
    /// Bytes if the summaries were bit arrays (m/8 plus the same header) instead of
    /// 4-bit counters: what Fan et al. send.
    pub bit_summary_bytes: u64,
    /// ICP: every peer asked on every local miss.
    pub icp: Counts,
    /// Misses where the union of the held summaries said "no" (no per-peer check needed).
    pub union_skips: u64,
    /// Local misses.
    pub misses: u64,
    /// Bytes of one summary in the file format.
    pub summary_len: usize,
}

/// Runs the simulation: `requests` requests over `universe` URLs, caches of `capacity`.
pub fn simulate(requests: u64, universe: u32, capacity: usize, seed: u64) -> Result<Outcome> {
    let template = CountingBloomFilter::builder()
        .capacity(capacity as u64)
        .fpp(FPP)
        .seed(corpus::subseed(seed, &[90]))
        .build()?;
    let mut proxies: Vec<Proxy> = (0..PROXIES)
        .map(|_| Proxy {
            cache: HashMap::new(),
            order: BTreeMap::new(),
            filter: template.clone(),
            added: Vec::new(),
            removed: Vec::new(),
            sent_list: HashSet::new(),
        })
        .collect();
    // held[i][j]: the last summary proxy i received from proxy j (decoded from the wire).
    let mut held: Vec<Vec<CountingBloomFilter>> = vec![vec![template.clone(); PROXIES]; PROXIES];
    let mut unions: Vec<CountingBloomFilter> = vec![template.clone(); PROXIES];

    let zipf = Zipf::new(universe as usize, 1.0);
    let mut rng = SplitMix64::new(corpus::subseed(seed, &[91]));

    let peers = (PROXIES - 1) as u64;
    let mut out = Outcome {
        summary: Counts::default(),
        lists: Counts::default(),
        delta_bytes: 0,
        bit_summary_bytes: 0,
        icp: Counts::default(),
        union_skips: 0,
        misses: 0,
        summary_len: template.to_bytes().len(),
    };
    let header = out.summary_len as u64 - template.num_counters().div_ceil(2);
    let threshold = ((capacity as f64 * THRESHOLD).ceil() as usize).max(1);
    for clock in 0..requests {
        let doc = zipf.rank(rng.unit()) as u32;
        let at = rng.below(PROXIES);
        for counts in [&mut out.summary, &mut out.lists, &mut out.icp] {
            counts.requests += 1;
        }
        if proxies[at].cache.contains_key(&doc) {
            for counts in [&mut out.summary, &mut out.lists, &mut out.icp] {
                counts.local_hits += 1;
            }
            proxies[at].touch(doc, clock);
            continue;
        }
        out.misses += 1;
        let holders: Vec<usize> = (0..PROXIES)
            .filter(|&j| j != at && proxies[j].cache.contains_key(&doc))
            .collect();
        let key = url(doc);
        // ICP: every peer asked.
        out.icp.queries += peers;
        out.icp.false_hits += peers - holders.len() as u64;
        if !holders.is_empty() {
            out.icp.remote_hits += 1;
        }
        // Summary Cache: the union first, then the peers whose summary says "maybe".
        if !unions[at].contains(&key) {
            out.union_skips += 1;
        }
        route(
            &mut out.summary,
            &holders,
            (0..PROXIES).filter(|&j| j != at && held[at][j].contains(&key)),
        );
        // URL lists: the peers whose last list had it.
        route(
            &mut out.lists,
            &holders,
            (0..PROXIES).filter(|&j| j != at && proxies[j].sent_list.contains(&doc)),
        );
        // Admit the document (from a peer or the origin), evicting the least recent.
        let proxy = &mut proxies[at];
        if proxy.cache.len() >= capacity {
            if let Some((_, old)) = proxy.order.pop_first() {
                proxy.cache.remove(&old);
                proxy.filter.remove(&url(old))?;
                proxy.removed.push(old);
            }
        }
        proxy.touch(doc, clock);
        proxy.filter.insert(&key);
        proxy.added.push(doc);
        if proxy.added.len() >= threshold {
            // A new summary: the counting filter in the file format, to every peer.
            let wire = proxy.filter.to_bytes();
            let list_bytes: u64 = proxy.cache.keys().map(|&d| url(d).len() as u64 + 1).sum();
            let delta: u64 = proxy
                .added
                .iter()
                .chain(&proxy.removed)
                .map(|&d| url(d).len() as u64 + 2)
                .sum();
            out.summary.bytes += wire.len() as u64 * peers;
            out.summary.updates += 1;
            out.lists.bytes += list_bytes * peers;
            out.lists.updates += 1;
            out.delta_bytes += delta * peers;
            out.bit_summary_bytes += (header + template.num_counters().div_ceil(8)) * peers;
            proxy.sent_list = proxy.cache.keys().copied().collect();
            proxy.added.clear();
            proxy.removed.clear();
            // Every peer receives the same bytes: decoded once, held by each.
            let received = CountingBloomFilter::from_bytes(&wire)
                .context("decoding a summary from the wire")?;
            for (j, held_by) in held.iter_mut().enumerate() {
                if j != at {
                    held_by[at] = received.clone();
                }
            }
            // Every peer rebuilds its union of the summaries it holds.
            for (j, union) in unions.iter_mut().enumerate() {
                if j != at {
                    let mut merged = template.clone();
                    for (i, summary) in held[j].iter().enumerate() {
                        if i != j {
                            merged.union(summary)?;
                        }
                    }
                    *union = merged;
                }
            }
        }
    }
    Ok(out)
}

/// One local miss routed by a directory: ask the candidates in turn until one holds the
/// document; count remote, false and missed hits.
fn route(counts: &mut Counts, holders: &[usize], candidates: impl Iterator<Item = usize>) {
    for peer in candidates {
        counts.queries += 1;
        if holders.contains(&peer) {
            counts.remote_hits += 1;
            return;
        }
        counts.false_hits += 1;
    }
    if !holders.is_empty() {
        counts.missed_hits += 1;
    }
}

/// Runs the study.
pub fn study(args: &SummaryCacheArgs) -> Result<Report> {
    let start = super::stopwatch();
    let size = args.common.size();
    let seed = args.common.seed;
    let requests: u64 = size.pick(20_000, 400_000, 2_000_000);
    let universe: u32 = size.pick(20_000, 200_000, 1_000_000);
    let capacity: usize = size.pick(500, 4_000, 20_000);
    let out = simulate(requests, universe, capacity, seed)?;

    let mut table = Table::new([
        "directory",
        "local hits",
        "remote hits (% of misses)",
        "false hits (% of queries to peers)",
        "missed hits (% of misses)",
        "queries to peers",
        "updates",
        "bytes exchanged",
        "bytes ÷ summaries",
    ]);
    let per = |x: u64| {
        format!(
            "{x} ({}%)",
            sig(100.0 * x as f64 / out.misses.max(1) as f64, 3)
        )
    };
    // A false hit is one query to a peer that did not have the document (Fan et al.): a
    // share of the queries, not of the misses (ICP asks every peer, so its false hits
    // outnumber its misses).
    let share = |x: u64, of: u64| format!("{x} ({}%)", sig(100.0 * x as f64 / of.max(1) as f64, 3));
    // `bytes`: None for the run's own count, Some(None) for no directory bytes at all.
    let row = |name: &str, c: &Counts, bytes: Option<Option<u64>>| {
        let bytes = bytes.unwrap_or(Some(c.bytes));
        vec![
            name.to_owned(),
            c.local_hits.to_string(),
            per(c.remote_hits),
            share(c.false_hits, c.queries),
            per(c.missed_hits),
            c.queries.to_string(),
            c.updates.to_string(),
            bytes.map_or("— (queries only)".into(), |b| b.to_string()),
            match bytes {
                Some(b) if out.summary.bytes > 0 => sig(b as f64 / out.summary.bytes as f64, 3),
                _ => String::new(),
            },
        ]
    };
    table.push(row(
        "Summary Cache (counting filters, file format)",
        &out.summary,
        None,
    ));
    table.push(row(
        "  same, bit-array summaries (computed)",
        &out.summary,
        Some(Some(out.bit_summary_bytes)),
    ));
    table.push(row("URL lists at the same moments", &out.lists, None));
    table.push(row(
        "  same, only URLs added and removed",
        &out.lists,
        Some(Some(out.delta_bytes)),
    ));
    table.push(row(
        "ICP (ask every peer on every miss; false hits = peers that said no)",
        &out.icp,
        Some(None),
    ));

    let mut report = Report {
        study: "summary-cache",
        title: "summary-cache — Fan et al.'s Summary Cache: proxies share counting-filter \
                summaries"
            .into(),
        summary: "Seed 003 (003_d5d061be399466f4.txt, 7.1: \"Im Summary Cache Protokoll tauschen \
                  Proxies periodisch Bloom Filter untereinander aus\", in the Summary Cache \
                  protocol proxies periodically exchange Bloom filters), seed 001 \
                  (001_ddd529f7662cd0cb.txt: Squid) and seed 004 (web caches): proxies route \
                  their misses by each other's summaries, against sharing URL lists and \
                  against asking every peer."
            .into(),
        command: args.common.command("summary-cache"),
        facts: vec![
            format!(
                "{PROXIES} proxies, LRU caches of {capacity} documents, {requests} requests for \
                 {universe} URLs with Zipf frequencies (weight 1/rank), each at a random proxy; \
                 seed {seed}."
            ),
            format!(
                "Summaries: counting Bloom filters (4-bit counters) sized for {capacity} \
                 documents at ε = {FPP}, {} bytes each in bloomkit's file format, sent to every \
                 peer once {}% of the cache is new (the paper's update threshold) and decoded \
                 there with CountingBloomFilter::from_bytes.",
                out.summary_len,
                THRESHOLD * 100.0
            ),
            format!(
                "Local misses: {}. Remote and missed hits below are shares of the local misses; \
                     false hits (queries to a peer that did not have the document) are shares \
                     of the queries to peers.",
                out.misses
            ),
        ],
        tables: vec![ReportTable {
            name: "main".into(),
            title: "Hits, wasted queries and bytes exchanged, per way of sharing the directory"
                .into(),
            display: table.clone(),
            csv: table,
        }],
        figures: Vec::new(),
        verdicts: Vec::new(),
        notes: vec![
            format!(
                "Summaries against full URL lists: {}× fewer bytes, for {} more false hits per \
                 100 misses (the summaries' false positives); the missed hits are the same kind \
                 (documents cached since the last update) and about as many. Lists of only the \
                 URLs added and removed cost {}× the counting-filter summaries' bytes — less, \
                 because a counting filter spends 4 bits per counter; bit-array summaries, \
                 which is what Fan et al. send (the counters stay home), cost {}×, the least of \
                 all.",
                sig(out.lists.bytes as f64 / out.summary.bytes.max(1) as f64, 3),
                sig(
                    100.0 * (out.summary.false_hits as f64 - out.lists.false_hits as f64)
                        / out.misses.max(1) as f64,
                    2
                ),
                sig(out.delta_bytes as f64 / out.summary.bytes.max(1) as f64, 3),
                sig(
                    out.bit_summary_bytes as f64 / out.summary.bytes.max(1) as f64,
                    3
                ),
            ),
            format!(
                "Against ICP: {} queries to peers instead of {}, for {} fewer remote hits per 100 \
                 misses (the missed hits).",
                out.summary.queries,
                out.icp.queries,
                sig(
                    100.0 * (out.icp.remote_hits as f64 - out.summary.remote_hits as f64)
                        / out.misses.max(1) as f64,
                    2
                ),
            ),
            format!(
                "The union of the held summaries (counting filters merged by adding counters) \
                 said \"no\" for {} of {} misses ({}%): those misses went to the origin after \
                 one filter lookup instead of {}.",
                out.union_skips,
                out.misses,
                sig(100.0 * out.union_skips as f64 / out.misses.max(1) as f64, 3),
                PROXIES - 1
            ),
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
    fn the_directories_agree_where_they_must() {
        let out = simulate(20_000, 5_000, 300, 1).unwrap();
        let (s, l, i) = (&out.summary, &out.lists, &out.icp);
        // Every request is a local hit or a miss, the same in each run.
        assert_eq!(s.local_hits, l.local_hits);
        assert_eq!(s.local_hits + out.misses, s.requests);
        // ICP never misses a peer's copy; a miss that some peer could serve is a remote or
        // a missed hit for the others.
        assert_eq!(i.missed_hits, 0);
        assert_eq!(s.remote_hits + s.missed_hits, i.remote_hits);
        assert_eq!(l.remote_hits + l.missed_hits, i.remote_hits);
        // Summaries say "maybe" wherever the list of the same moment has the URL, so they
        // find at least what the lists find; lists have no false positives of their own.
        assert!(s.remote_hits >= l.remote_hits);
        assert!(s.missed_hits > 0 && s.false_hits > 0);
        // And cost fewer bytes than full lists.
        assert!(s.bytes < l.bytes, "{} {}", s.bytes, l.bytes);
        assert!(out.union_skips > 0 && out.union_skips <= out.misses);
    }
}
