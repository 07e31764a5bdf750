//! A binary arithmetic coder (a range coder in the style of LZMA's, written here) with one
//! fixed probability for every bit: what the compressed Bloom filter sends its bit array
//! with.
//!
//! # Why it compresses to the entropy
//!
//! An arithmetic coder keeps an interval `[low, low + range)` and, for each bit, keeps the
//! part of it that the bit's probability gives: a 0 keeps the fraction `p₀`, a 1 the rest.
//! After m bits the interval has width `range₀ · Π p(bitᵢ)`, and naming a number inside it
//! takes `−Σ log₂ p(bitᵢ)` bits, plus a few. For a bit array with a fraction q of ones
//! coded with `p₁ = q`, that is `m · H(q)` bits, `H(q) = −q log₂ q − (1 − q) log₂(1 − q)`:
//! the entropy, which no code for i.i.d. bits can beat (Shannon). The bits of a Bloom
//! filter are close to i.i.d. with `q = 1 − e^(−kn/m)`, so this is the size Mitzenmacher's
//! analysis assumes ([`params::compressed_bits_per_item`](crate::params::compressed_bits_per_item)).
//!
//! # The coder
//!
//! 32-bit `range`, 33-bit `low` (the carry bit), probabilities of [`PROB_BITS`] = 12 bits
//! (`p₀ = P/4096`, `1 ≤ P ≤ 4095`). Per bit: `bound = (range >> 12) · P`; a 0 sets
//! `range = bound`, a 1 adds `bound` to `low` and takes it from `range`. When `range` drops
//! below 2²⁴ it is shifted up a byte and the top byte of `low` goes out — held back while
//! it is 0xFF, since a later carry could still change it (the "cache" of LZMA's encoder).
//! Five final shifts flush `low`. The decoder mirrors it with `code − low` in place of
//! `low`, reading one byte per shift; a valid stream is read exactly to its end.
//!
//! # Limits a decoder can rely on
//!
//! A bit costs at least `−log₂(4095/4096) ≈ 3.5·10⁻⁴` bits of output, whatever the
//! probability stored, so L bytes cannot hold more than about `8L / 3.5·10⁻⁴ ≈ 22 700·L`
//! bits. [`max_bits_in`] gives the bound; the compressed filter's decoder refuses a stated
//! size beyond it before it allocates anything.

use crate::error::DecodeError;

/// Bits of precision of the probability: `p₀ = P / 2¹²`.
pub const PROB_BITS: u32 = 12;
/// `2^PROB_BITS`, the denominator of every probability.
const PROB_ONE: u32 = 1 << PROB_BITS;
/// Below this `range` is renormalised (shifted up a byte).
const TOP: u32 = 1 << 24;

/// The probability of a 0 bit in units of 2⁻¹², for bit arrays with `ones` ones among
/// `total` bits: `round((1 − ones/total) · 4096)`, clamped to 1..=4095 so both bits stay
/// codable.
///
/// ```
/// use bloomkit::arith::prob_zero_for;
/// assert_eq!(prob_zero_for(1, 4), 3072);
/// assert_eq!(prob_zero_for(0, 100), 4095);
/// assert_eq!(prob_zero_for(100, 100), 1);
/// ```
pub fn prob_zero_for(ones: u64, total: u64) -> u16 {
    let zeros = total.saturating_sub(ones) as f64 / total.max(1) as f64;
    ((zeros * f64::from(PROB_ONE)).round() as u16).clamp(1, PROB_ONE as u16 - 1)
}

/// Checks a stored probability of 0: it must be in 1..=4095.
pub fn check_prob_zero(prob_zero: u16) -> Result<u32, DecodeError> {
    if prob_zero == 0 || u32::from(prob_zero) >= PROB_ONE {
        return Err(crate::codec::invalid(
            "probability of 0",
            format!("{prob_zero} is not in 1..={}", PROB_ONE - 1),
        ));
    }
    Ok(u32::from(prob_zero))
}

/// The most bits that `bytes` bytes of output can code with probability of 0
/// `prob_zero`/4096: every bit costs at least `−log₂(max(p₀, p₁))` bits, and the coder
/// writes at least `cost/8 + 4` bytes for a total cost (see the module docs).
pub fn max_bits_in(bytes: u64, prob_zero: u32) -> u64 {
    let likely = prob_zero.max(PROB_ONE - prob_zero);
    let cheapest = -(f64::from(likely) / f64::from(PROB_ONE)).log2();
    let bound = 8.0 * (bytes as f64 + 1.0) / cheapest;
    if bound >= u64::MAX as f64 {
        u64::MAX
    } else {
        bound.ceil() as u64
    }
}

/// Codes `count` bits, given by `bit(i)` for i in 0..count, with probability of 0
/// `prob_zero`/4096 (1..=4095), appending the code to `out`.
pub fn encode(count: u64, bit: impl Fn(u64) -> bool, prob_zero: u32, out: &mut Vec<u8>) {
    debug_assert!((1..PROB_ONE).contains(&prob_zero));
    let mut e = Encoder {
        low: 0,
        range: u32::MAX,
        cache: 0,
        pending: 1,
        out,
    };
    for i in 0..count {
        let bound = (e.range >> PROB_BITS) * prob_zero;
        if bit(i) {
            e.low += u64::from(bound);
            e.range -= bound;
        } else {
            e.range = bound;
        }
        while e.range < TOP {
            e.range <<= 8;
            e.shift_low();
        }
    }
    for _ in 0..5 {
        e.shift_low();
    }
}

struct Encoder<'a> {
    /// The low end of the interval; bit 32 is a carry not yet added to the output.
    low: u64,
    range: u32,
    /// The last byte out of `low`, not yet written (a carry may still add 1 to it).
    cache: u8,
    /// `cache` plus the 0xFF bytes after it, all waiting for the carry to be known.
    pending: u64,
    out: &'a mut Vec<u8>,
}

impl Encoder<'_> {
    /// Moves the top byte of the 32-bit `low` out: written at once (with the carry) unless
    /// it is 0xFF and no carry happened, in which case it waits with the others.
    fn shift_low(&mut self) {
        if (self.low as u32) < 0xFF00_0000 || self.low >> 32 != 0 {
            let carry = (self.low >> 32) as u8;
            let mut byte = self.cache;
            while self.pending > 0 {
                self.out.push(byte.wrapping_add(carry));
                byte = 0xFF;
                self.pending -= 1;
            }
            self.cache = (self.low >> 24) as u8;
        }
        self.pending += 1;
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }
}

/// Decodes `count` bits coded by [`encode`] with the same probability, calling `set(i)`
/// for every bit i that is 1. The stream must be read exactly to its end: a stream that
/// runs out early is [`DecodeError::Truncated`], one with bytes left over is an
/// [`DecodeError::InvalidField`]. The caller bounds `count` by [`max_bits_in`] first, so
/// the work is bounded by the input.
pub fn decode(
    bytes: &[u8],
    count: u64,
    prob_zero: u32,
    mut set: impl FnMut(u64),
) -> Result<(), DecodeError> {
    let mut d = Decoder {
        code: 0,
        range: u32::MAX,
        bytes,
        at: 0,
        missing: 0,
    };
    // The first byte is the encoder's initial cache, always 0; then four bytes of code.
    if d.next() != 0 {
        return Err(crate::codec::invalid(
            "compressed bits",
            "the stream does not start with 0".into(),
        ));
    }
    for _ in 0..4 {
        d.code = (d.code << 8) | u32::from(d.next());
    }
    for i in 0..count {
        let bound = (d.range >> PROB_BITS) * prob_zero;
        if d.code < bound {
            d.range = bound;
        } else {
            d.code -= bound;
            d.range -= bound;
            set(i);
        }
        while d.range < TOP {
            d.range <<= 8;
            d.code = (d.code << 8) | u32::from(d.next());
        }
        if d.missing > 0 {
            break;
        }
    }
    if d.missing > 0 {
        return Err(DecodeError::Truncated {
            offset: bytes.len(),
            needed: d.missing,
            available: 0,
        });
    }
    if d.at != bytes.len() {
        return Err(crate::codec::invalid(
            "compressed bits",
            format!("{} bytes left after the last bit", bytes.len() - d.at),
        ));
    }
    Ok(())
}

struct Decoder<'a> {
    code: u32,
    range: u32,
    bytes: &'a [u8],
    at: usize,
    /// Bytes asked for past the end (read as 0).
    missing: u64,
}

impl Decoder<'_> {
    fn next(&mut self) -> u8 {
        match self.bytes.get(self.at) {
            Some(&b) => {
                self.at += 1;
                b
            }
            None => {
                self.missing += 1;
                0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::SplitMix64;

    fn random_bits(count: u64, ones_in_1000: u64, seed: u64) -> Vec<bool> {
        let mut rng = SplitMix64::new(seed);
        (0..count)
            .map(|_| rng.next_u64() % 1000 < ones_in_1000)
            .collect()
    }

    fn round_trip(bits: &[bool], prob_zero: u32) -> Vec<u8> {
        let mut out = Vec::new();
        encode(bits.len() as u64, |i| bits[i as usize], prob_zero, &mut out);
        let mut back = vec![false; bits.len()];
        decode(&out, bits.len() as u64, prob_zero, |i| {
            back[i as usize] = true
        })
        .unwrap();
        assert_eq!(back, bits);
        out
    }

    #[test]
    fn bits_round_trip_at_every_density_and_compress_to_the_entropy() {
        for (ones, seed) in [
            (0, 1),
            (1, 2),
            (10, 3),
            (100, 4),
            (500, 5),
            (900, 6),
            (1000, 7),
        ] {
            let bits = random_bits(100_000, ones, seed);
            let count = bits.iter().filter(|&&b| b).count() as u64;
            let p0 = u32::from(prob_zero_for(count, bits.len() as u64));
            let out = round_trip(&bits, p0);
            let q = count as f64 / bits.len() as f64;
            let entropy = if q == 0.0 || q == 1.0 {
                0.0
            } else {
                -(q * q.log2() + (1.0 - q) * (1.0 - q).log2())
            };
            // Within 1% of m·H(q) (plus the 12-bit probability's floor and 5 flush bytes).
            let floor = bits.len() as f64 * -(4095.0f64 / 4096.0).log2();
            let ideal = (bits.len() as f64 * entropy).max(floor);
            let got = out.len() as f64 * 8.0;
            assert!(
                got <= ideal * 1.01 + 48.0,
                "q = {q}: {got} bits, ideal {ideal}"
            );
            assert!(
                out.len() as u64 * 8 + 8 >= (ideal as u64).saturating_sub(64),
                "{got}"
            );
            assert!(max_bits_in(out.len() as u64, p0) >= bits.len() as u64);
        }
        round_trip(&[], 2048);
        round_trip(&[true], 1);
        round_trip(&[false; 70], 4095);
    }

    #[test]
    fn damaged_streams_are_errors_never_panics() {
        let bits = random_bits(5_000, 300, 9);
        let out = round_trip(&bits, 2867);
        for cut in 0..out.len() {
            assert!(decode(&out[..cut], 5_000, 2867, |_| ()).is_err(), "{cut}");
        }
        let mut longer = out.clone();
        longer.push(0);
        assert!(decode(&longer, 5_000, 2867, |_| ()).is_err());
        // Any bytes decode to something or fail; none panics.
        let mut rng = SplitMix64::new(3);
        for len in 0..64 {
            let junk: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let _ = decode(&junk, 1_000, 1 + (rng.next_u64() % 4095) as u32, |_| ());
        }
        assert!(check_prob_zero(0).is_err() && check_prob_zero(4096).is_err());
        assert_eq!(check_prob_zero(4095).unwrap(), 4095);
    }
}
