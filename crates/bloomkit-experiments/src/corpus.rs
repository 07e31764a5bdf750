//! Word lists for the studies: a file of words, or a built-in corpus of pseudo-words; and
//! the Caesar shift that turns words into (mostly) absent items.
//!
//! The built-in corpus stands in for the seed's `words.txt` (58 110 words), which is not
//! shipped: 58 110 distinct lowercase pseudo-words of 3 to 12 letters, made of syllables
//! chosen by a fixed-seed SplitMix64 generator. It depends on nothing but integer
//! arithmetic, so it is the same on every run and every platform.

use std::collections::HashSet;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// The number of words in the built-in corpus, as in the seed's word list.
pub const BUILTIN_SIZE: usize = 58_110;

/// The seed of the generator behind the built-in corpus.
const BUILTIN_SEED: u64 = 0x000B_100F_5EED_0000;

/// Syllable onsets (the empty one makes vowel-initial syllables).
const ONSETS: &[&str] = &[
    "", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
    "bl", "br", "ch", "cl", "cr", "dr", "fl", "fr", "gl", "gr", "kn", "pl", "pr", "qu", "sc", "sh",
    "sl", "sp", "st", "str", "th", "tr", "wh",
];

/// Syllable nuclei.
const VOWELS: &[&str] = &[
    "a", "e", "i", "o", "u", "y", "ai", "au", "ea", "ee", "ie", "oa", "oo", "ou",
];

/// Syllable codas; the repeated empty coda makes open syllables the most common.
const CODAS: &[&str] = &[
    "", "", "", "", "", "n", "r", "s", "t", "l", "m", "ck", "nd", "ng", "nt", "rd", "st", "x",
];

/// The SplitMix64 generator (Steele, Lea & Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): a 64-bit counter stepped by the golden-ratio constant and
/// scrambled by two multiply-xorshift rounds.
#[derive(Debug, Clone)]
pub struct SplitMix64(bloomkit::hash::SplitMix64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(bloomkit::hash::SplitMix64::new(seed))
    }

    /// The next 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A value in `[0, n)` (multiply-shift on the high bits; `n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// A uniform value in [0, 1) with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// One element of a non-empty slice.
    fn pick<'a>(&mut self, choices: &[&'a str]) -> &'a str {
        choices[self.below(choices.len())]
    }
}

/// Distinct pseudo-random 64-bit keys: key i is the first output of a SplitMix64 seeded
/// with i (a bijection of i), the keys the Bloomier and compressed studies store.
pub fn key(i: u64) -> u64 {
    bloomkit::hash::SplitMix64::new(i).next_u64()
}

/// The built-in corpus: [`BUILTIN_SIZE`] distinct pseudo-words, always the same ones in the
/// same order.
pub fn builtin() -> Vec<Vec<u8>> {
    let mut rng = SplitMix64::new(BUILTIN_SEED);
    let mut seen = HashSet::with_capacity(BUILTIN_SIZE);
    let mut words = Vec::with_capacity(BUILTIN_SIZE);
    while words.len() < BUILTIN_SIZE {
        // One to four syllables, two and three the most common.
        let syllables = [1, 2, 2, 2, 3, 3, 3, 4][rng.below(8)];
        let mut word = String::new();
        for _ in 0..syllables {
            word.push_str(rng.pick(ONSETS));
            word.push_str(rng.pick(VOWELS));
            word.push_str(rng.pick(CODAS));
        }
        if (3..=12).contains(&word.len()) && seen.insert(word.clone()) {
            words.push(word.into_bytes());
        }
    }
    words
}

/// `count` distinct random user names: a lowercase letter, then 5 to 11 lowercase letters
/// and digits, drawn from a SplitMix64 generator started at `seed` (the same names for the
/// same seed, on every platform).
pub fn random_names(count: usize, seed: u64) -> Vec<Vec<u8>> {
    const FIRST: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
    const REST: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = SplitMix64::new(seed);
    let mut seen = HashSet::with_capacity(count);
    let mut names = Vec::with_capacity(count);
    while names.len() < count {
        let len = 6 + rng.below(7);
        let mut name = Vec::with_capacity(len);
        name.push(FIRST[rng.below(FIRST.len())]);
        for _ in 1..len {
            name.push(REST[rng.below(REST.len())]);
        }
        if seen.insert(name.clone()) {
            names.push(name);
        }
    }
    names
}

/// A seed for one part of a study, mixed from the study's seed and the part's numbers, so
/// that parts draw unrelated random values.
pub fn subseed(seed: u64, parts: &[u64]) -> u64 {
    let mut rng = SplitMix64::new(seed);
    let mut state = rng.next_u64();
    for &part in parts {
        let mut mix = SplitMix64::new(state ^ part.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        state = mix.next_u64();
    }
    state
}

/// Reads a word list: one word per line, surrounding whitespace trimmed, empty lines
/// skipped, duplicates dropped (the first occurrence is kept). Words are bytes; they need
/// not be UTF-8.
pub fn load_words(path: &Path) -> Result<Vec<Vec<u8>>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let words = distinct_words(&bytes);
    if words.is_empty() {
        bail!("{} holds no words", path.display());
    }
    Ok(words)
}

/// The distinct non-empty trimmed lines of `text`, in order of first occurrence.
pub fn distinct_words(text: &[u8]) -> Vec<Vec<u8>> {
    let mut seen = HashSet::new();
    text.split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|word| !word.is_empty() && seen.insert(*word))
        .map(<[u8]>::to_vec)
        .collect()
}

/// The Caesar shift of a word by `shift` letters: `a`–`z` and `A`–`Z` rotate within their
/// alphabet, every other byte is kept.
///
/// ```text
/// caesar(b"dist", 2) == b"fkuv"      caesar(b"Zoo's", 2) == b"Bqq'u"
/// ```
pub fn caesar(word: &[u8], shift: u8) -> Vec<u8> {
    let shift = shift % 26;
    word.iter()
        .map(|&b| match b {
            b'a'..=b'z' => b'a' + (b - b'a' + shift) % 26,
            b'A'..=b'Z' => b'A' + (b - b'A' + shift) % 26,
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // The first outputs of the reference implementation seeded with 0.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn builtin_corpus_is_word_like_distinct_and_fixed() {
        let words = builtin();
        assert_eq!(words.len(), BUILTIN_SIZE);
        let distinct: HashSet<&Vec<u8>> = words.iter().collect();
        assert_eq!(distinct.len(), BUILTIN_SIZE);
        for w in &words {
            assert!((3..=12).contains(&w.len()), "{w:?}");
            assert!(w.iter().all(u8::is_ascii_lowercase), "{w:?}");
        }
        // Pinned: a change here changes every number the fpr study prints.
        let mut all = Vec::new();
        for w in &words {
            all.extend_from_slice(w);
            all.push(b'\n');
        }
        let digest = bloomkit::hash::murmur3_x64_128(&all, 0);
        assert_eq!(
            (String::from_utf8_lossy(&words[0]).as_ref(), digest),
            (FIRST_WORD, CORPUS_DIGEST)
        );
    }

    const FIRST_WORD: &str = "the";
    const CORPUS_DIGEST: u128 = 0x3b07_774f_a0e7_3c2a_d117_854e_19c4_44e0;

    #[test]
    fn word_lists_are_trimmed_and_deduplicated_in_order() {
        let words = distinct_words(b"  b\r\na\n\n b \n\t\nc\xe9\na");
        assert_eq!(words, vec![b"b".to_vec(), b"a".to_vec(), b"c\xe9".to_vec()]);
    }

    /// Counts of each value, as a map.
    fn histogram<T: Ord>(
        values: impl IntoIterator<Item = T>,
    ) -> std::collections::BTreeMap<T, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for v in values {
            *counts.entry(v).or_insert(0) += 1;
        }
        counts
    }

    #[test]
    fn random_names_are_distinct_name_like_and_spread() {
        const N: usize = 5_000;
        let names = random_names(N, 7);
        let distinct: HashSet<&Vec<u8>> = names.iter().collect();
        assert_eq!(distinct.len(), N);
        for name in &names {
            assert!((6..=12).contains(&name.len()), "{name:?}");
            assert!(name[0].is_ascii_lowercase(), "{name:?}");
            assert!(
                name.iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                "{name:?}"
            );
        }
        // Lengths are uniform over 6..=12: N/7 ≈ 714 each, σ ≈ 25; allow 5σ.
        let lengths = histogram(names.iter().map(Vec::len));
        assert_eq!(
            lengths.keys().copied().collect::<Vec<_>>(),
            (6..=12).collect::<Vec<_>>()
        );
        for (&len, &count) in &lengths {
            assert!((590..=840).contains(&count), "length {len}: {count} of {N}");
        }
        // Every letter starts about N/26 ≈ 192 names (σ ≈ 14).
        let firsts = histogram(names.iter().map(|n| n[0]));
        assert_eq!(firsts.len(), 26, "{firsts:?}");
        for (&first, &count) in &firsts {
            assert!((120..=265).contains(&count), "{}: {count}", first as char);
        }
        // After the first letter, 10 of the 36 symbols are digits.
        let rest: Vec<u8> = names.iter().flat_map(|n| n[1..].iter().copied()).collect();
        let digits = rest.iter().filter(|b| b.is_ascii_digit()).count() as f64;
        let share = digits / rest.len() as f64;
        assert!((0.26..=0.30).contains(&share), "digit share {share}");
    }

    #[test]
    fn random_names_and_subseeds_depend_on_their_seed_only() {
        // Pinned, so the names (and every number of the studies that draw them) are the
        // same on every platform and in every version.
        let names = random_names(5_000, 7);
        let joined = names.join(&b'\n');
        assert_eq!(
            (
                String::from_utf8_lossy(&names[0]).as_ref(),
                bloomkit::hash::murmur3_x64_128(&joined, 0)
            ),
            (FIRST_NAME, NAMES_DIGEST)
        );
        // A prefix of the same seed's names; other seeds give other names.
        assert_eq!(random_names(10, 7), names[..10]);
        assert_ne!(random_names(10, 8), names[..10]);
        assert_eq!(
            [
                subseed(1, &[2, 3]),
                subseed(1, &[3, 2]),
                subseed(2, &[2, 3]),
                subseed(1, &[])
            ],
            SUBSEEDS
        );
        let distinct: HashSet<u64> = SUBSEEDS.into_iter().collect();
        assert_eq!(distinct.len(), SUBSEEDS.len());
    }

    const FIRST_NAME: &str = "a6uqiqle";
    const NAMES_DIGEST: u128 = 0x1d8a_c183_cf71_6555_5b0f_707f_a60c_0619;
    /// Computed by an independent transcription of SplitMix64 and `subseed` (Python).
    const SUBSEEDS: [u64; 4] = [
        0xAC22_1E7A_C649_2D70,
        0x12A2_F594_DE89_E608,
        0xBA18_0955_363D_9886,
        0x910A_2DEC_8902_5CC1,
    ];

    #[test]
    fn caesar_rotates_letters_only() {
        assert_eq!(caesar(b"dist", 2), b"fkuv");
        assert_eq!(caesar(b"Zoo's", 2), b"Bqq'u");
        assert_eq!(caesar(b"xyz-XYZ 09\xe9", 2), b"zab-ZAB 09\xe9");
        assert_eq!(caesar(b"abc", 28), b"cde");
    }
}
