//! Doubles in and out of the commands, byte for byte as Redis reads and writes them, on a
//! shorter path for the common cases.
//!
//! * Out: Redis's `RedisModule_ReplyWithDouble` answers a RESP2 client with a bulk string
//!   of C's `%.17g` (`addReplyDouble`), through glibc's `snprintf`, whose exact
//!   multi-precision conversion (`__printf_fp`) took about 2 500–4 300 of the ~3 600–7 400
//!   instructions of a whole `TDIGEST.MAX` or `TDIGEST.QUANTILE` under callgrind.
//!   [`format_g17`] writes the same bytes from Rust's exact float formatting (`{:.16e}`:
//!   the 17 significant digits correctly rounded, ties to even, as glibc rounds them in
//!   the default rounding mode), laid out by C's `%g` rules (ISO C 7.21.6.1: style `e` when
//!   the exponent `X` is below −4 or at least the precision 17, else style `f` with
//!   `17 − 1 − X` decimals; trailing zeros and a bare decimal point removed; an exponent of
//!   at least two digits). The tests hold it against the C library's `snprintf`.
//! * In: `RedisModule_StringToDouble` is `strtod` with Redis's checks (`string2d`: not
//!   empty, no leading space, every byte consumed, no overflow or underflow to zero, no
//!   NaN), about 640 instructions for a short number. [`parse_plain`] reads the plain
//!   decimals that commands are given (`[+-]digits[.digits]`, no exponent, at most
//!   [`PLAIN_MAX`] bytes) exactly as `strtod` does: such a number is never out of range, and
//!   with at most 15 significant digits and 22 decimals it is the quotient of two exactly
//!   representable doubles, which IEEE 754 division rounds correctly (Clinger, "How to
//!   Read Floating Point Numbers Accurately", PLDI 1990, the "fast path"); anything else is
//!   left to Redis.

use std::fmt::Write;

/// The longest [`format_g17`] output: a sign, 17 digits, a point, `e-308`.
pub const G17_MAX: usize = 24;

/// `%.17g` of a finite `value` (C's `printf`), written into `buf`; `None` for infinities
/// and NaN (left to Redis, which answers them in its own words).
///
/// ```no_run
/// // (Not run: this crate's global allocator is Redis's, absent outside a server.)
/// use bloomkit_redis::numbers::format_g17;
///
/// let mut buf = [0; bloomkit_redis::numbers::G17_MAX];
/// assert_eq!(format_g17(0.1, &mut buf), Some(&b"0.10000000000000001"[..]));
/// assert_eq!(format_g17(2.5e-7, &mut buf), Some(&b"2.4999999999999999e-07"[..]));
/// assert_eq!(format_g17(-42.0, &mut buf), Some(&b"-42"[..]));
/// assert_eq!(format_g17(f64::NAN, &mut buf), None);
/// ```
pub fn format_g17(value: f64, buf: &mut [u8; G17_MAX]) -> Option<&[u8]> {
    if !value.is_finite() {
        return None;
    }
    let (digits, exponent) = match digits17(value.abs()) {
        Some(found) => found,
        None => digits17_formatted(value.abs())?,
    };
    let mut digits = digits;
    let mut text = [0u8; 17];
    for slot in text.iter_mut().rev() {
        *slot = b'0' + (digits % 10) as u8;
        digits /= 10;
    }
    Some(layout(value.is_sign_negative(), &text, exponent, buf))
}

/// `10^k` for `k` up to 21.
const POW10_U128: [u128; 22] = {
    let mut table = [1u128; 22];
    let mut k = 1;
    while k < table.len() {
        table[k] = table[k - 1] * 10;
        k += 1;
    }
    table
};

/// 10¹⁶ and 10¹⁷: the range of 17-digit numbers.
const LOW17: u128 = 10_000_000_000_000_000;
const HIGH17: u128 = 100_000_000_000_000_000;

/// The 17 significant digits of a positive finite `value` correctly rounded (ties to
/// even), as one integer in `[10¹⁶, 10¹⁷)`, and its decimal exponent `X`
/// (`value ≈ digits · 10^(X − 16)`), in 128-bit integer arithmetic: exact where it
/// applies, a normal `value` from about 10⁻⁵ to 10¹⁷ (the digits of `value = m·2^e`
/// are `round(m·10^k / 2^−e)` with `k = 16 − X`); `None` elsewhere (and for 0).
fn digits17(value: f64) -> Option<(u64, i32)> {
    let bits = value.to_bits();
    let biased = (bits >> 52) as i32;
    if biased == 0 || biased == 0x7ff {
        return None;
    }
    let mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
    let e = biased - 1075; // value = mantissa · 2^e
                           // value ∈ [2^E, 2^(E+1)) with E = e + 52: X is ⌊E·log₁₀2⌋ or one more (78913/2¹⁸
                           // is log₁₀2 to within 2⁻²⁰, exact enough for |E| < 1000).
    let mut x = ((e + 52) * 78913) >> 18;
    for _ in 0..2 {
        let k = 16 - x;
        if !(0..POW10_U128.len() as i32).contains(&k) || e < -120 {
            return None;
        }
        let scaled = mantissa as u128 * POW10_U128[k as usize];
        let (quotient, rounded_up) = if e >= 0 {
            // An integer value: exact (here value < 10¹⁷ < 2⁵⁷, so the shift fits).
            (scaled << e, false)
        } else {
            let shift = (-e) as u32;
            let quotient = scaled >> shift;
            let rest = scaled & ((1u128 << shift) - 1);
            let half = 1u128 << (shift - 1);
            let up = rest > half || (rest == half && quotient & 1 == 1);
            (quotient, up)
        };
        if quotient >= HIGH17 {
            // X was one more: scale by a tenth less.
            x += 1;
            continue;
        }
        if quotient < LOW17 {
            return None;
        }
        let digits = quotient + rounded_up as u128;
        // 99…9.5 rounds up to 10¹⁷: one more in the exponent, digits 10¹⁶.
        return Some(if digits == HIGH17 {
            (LOW17 as u64, x + 1)
        } else {
            (digits as u64, x)
        });
    }
    None
}

/// [`digits17`] by Rust's exact formatting (`{:.16e}`), for any finite value.
fn digits17_formatted(value: f64) -> Option<(u64, i32)> {
    // "d.dddddddddddddddde-X": 17 digits, an exponent without padding or '+'.
    let mut exact = Exact::default();
    write!(exact, "{:.16e}", value).ok()?;
    let text = &exact.buf[..exact.len];
    let e_at = text.iter().position(|&b| b == b'e')?;
    let (mantissa, exponent) = (&text[..e_at], &text[e_at + 1..]);
    let mut digits = 0u64;
    let mut n = 0;
    for &b in mantissa.iter().filter(|&&b| b != b'.') {
        if !b.is_ascii_digit() {
            return None;
        }
        digits = digits * 10 + (b - b'0') as u64;
        n += 1;
        if n > 17 {
            return None;
        }
    }
    let exponent: i32 = std::str::from_utf8(exponent).ok()?.parse().ok()?;
    (n == 17).then_some((digits, exponent))
}

/// C's `%.17g` layout of 17 significant digits `digits` with decimal exponent `exponent`.
fn layout<'a>(
    negative: bool,
    digits: &[u8; 17],
    exponent: i32,
    buf: &'a mut [u8; G17_MAX],
) -> &'a [u8] {
    // The significant digits left after %g drops the trailing zeros (at least one).
    let kept = 17
        - digits
            .iter()
            .rev()
            .take_while(|&&d| d == b'0')
            .count()
            .min(16);
    let mut out = Out { buf, len: 0 };
    if negative {
        out.push(b'-');
    }
    if !(-4..17).contains(&exponent) {
        out.push(digits[0]);
        if kept > 1 {
            out.push(b'.');
            out.extend(&digits[1..kept]);
        }
        out.push(b'e');
        out.push(if exponent < 0 { b'-' } else { b'+' });
        let e = exponent.unsigned_abs();
        if e >= 100 {
            out.push(b'0' + (e / 100) as u8);
        }
        out.push(b'0' + (e / 10 % 10) as u8);
        out.push(b'0' + (e % 10) as u8);
    } else if exponent >= 0 {
        // X + 1 digits before the point, the rest after it.
        let whole = exponent as usize + 1;
        out.extend(&digits[..whole]);
        if kept > whole {
            out.push(b'.');
            out.extend(&digits[whole..kept]);
        }
    } else {
        // 0.000ddd: −X − 1 zeros after the point, then the digits.
        out.extend(b"0.");
        for _ in 0..(-exponent - 1) {
            out.push(b'0');
        }
        out.extend(&digits[..kept]);
    }
    let len = out.len;
    &buf[..len]
}

/// Rust's formatting output, on the stack.
#[derive(Default)]
struct Exact {
    buf: [u8; 32],
    len: usize,
}

impl Write for Exact {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(std::fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// The bytes written so far into a [`format_g17`] buffer (never past its end: the
/// layouts above write at most [`G17_MAX`] bytes).
struct Out<'a> {
    buf: &'a mut [u8; G17_MAX],
    len: usize,
}

impl Out<'_> {
    fn push(&mut self, byte: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = byte;
            self.len += 1;
        }
    }

    fn extend(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.push(b);
        }
    }
}

/// The longest argument [`parse_plain`] reads itself.
pub const PLAIN_MAX: usize = 24;

/// A plain decimal argument (`[+-]digits[.digits]`, at most [`PLAIN_MAX`] bytes, at most
/// 15 significant digits in all and 22 after the point), read exactly as C's `strtod` reads
/// it (see the module docs); `None` for anything else, which the caller reads the general
/// way.
///
/// ```no_run
/// // (Not run: this crate's global allocator is Redis's, absent outside a server.)
/// use bloomkit_redis::numbers::parse_plain;
///
/// assert_eq!(parse_plain(b"0.5"), Some(0.5));
/// assert_eq!(parse_plain(b"-17"), Some(-17.0));
/// assert_eq!(parse_plain(b"1e3"), None); // an exponent: read by Redis
/// assert_eq!(parse_plain(b" 1"), None); // so is a leading space (Redis refuses it)
/// ```
pub fn parse_plain(bytes: &[u8]) -> Option<f64> {
    /// The powers of ten that are exact doubles: 10^k = 2^k·5^k, and 5^k < 2⁵³ up to k = 22.
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    if bytes.len() > PLAIN_MAX {
        return None;
    }
    let (negative, rest) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, bytes),
    };
    let mut mantissa: u64 = 0;
    let mut significant = 0usize;
    let mut whole_digits = 0usize;
    let mut fraction_digits = 0usize;
    let mut point = false;
    for &b in rest {
        match b {
            b'0'..=b'9' => {
                if significant > 0 || b != b'0' {
                    significant += 1;
                    if significant > 15 {
                        return None;
                    }
                }
                mantissa = mantissa * 10 + (b - b'0') as u64;
                if point {
                    fraction_digits += 1;
                } else {
                    whole_digits += 1;
                }
            }
            b'.' if !point => point = true,
            _ => return None,
        }
    }
    // Digits on both sides of a point; at most 15 significant digits, so the mantissa
    // (below 10¹⁵ < 2⁵³) is exact; at most 22 decimals, so the divisor is too.
    if whole_digits == 0 || (point && fraction_digits == 0) {
        return None;
    }
    if fraction_digits >= POW10.len() {
        return None;
    }
    let magnitude = mantissa as f64 / POW10[fraction_digits];
    Some(if negative { -magnitude } else { magnitude })
}

// The tests call the C library itself (snprintf, strtod: `crate::clib`) as the reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::clib;

    /// The C library's `strtod` with Redis's `string2d` checks.
    fn c_string2d(text: &[u8]) -> Option<f64> {
        let (value, consumed) = clib::strtod(text)?;
        let ok = !text.is_empty()
            && !text[0].is_ascii_whitespace()
            && consumed == text.len()
            && value.is_finite()
            && !value.is_nan();
        ok.then_some(value)
    }

    fn check_format(value: f64) {
        let mut buf = [0; G17_MAX];
        let ours = format_g17(value, &mut buf).map(<[u8]>::to_vec);
        if value.is_finite() {
            let c = clib::snprintf_g17(value);
            assert_eq!(
                ours.as_deref(),
                Some(&c[..]),
                "{value:e} ({:#x}): ours {:?}, C {:?}",
                value.to_bits(),
                ours.as_ref()
                    .map(|o| String::from_utf8_lossy(o).into_owned()),
                String::from_utf8_lossy(&c)
            );
        } else {
            assert_eq!(ours, None);
        }
    }

    /// A fixed-seed SplitMix64 stream.
    fn stream(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    #[test]
    fn g17_matches_the_c_library_on_edges_and_every_layout() {
        let edges = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            0.5,
            1e-4,
            1.5e-4,
            f64::from_bits(1e-4_f64.to_bits() - 1),
            1e-5,
            1e16,
            1e17,
            f64::from_bits(1e17_f64.to_bits() - 1),
            123456789012345678.0,
            f64::MAX,
            -f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            f64::from_bits(f64::MIN_POSITIVE.to_bits() - 1),
            1e100,
            1e-100,
            1e300,
            1e-300,
            std::f64::consts::PI,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for v in edges {
            check_format(v);
        }
        // Every power of ten and its neighbours (the layout switches at 1e-4 and 1e17).
        for e in -325..=308 {
            let v: f64 = format!("1e{e}").parse().unwrap();
            for bits in [v.to_bits().wrapping_sub(1), v.to_bits(), v.to_bits() + 1] {
                check_format(f64::from_bits(bits));
                check_format(-f64::from_bits(bits));
            }
        }
    }

    /// Short dyadic fractions m / 2^k have exact decimal expansions, many of them exactly
    /// halfway between two 17-digit numbers: the rounding of ties (to even) must match.
    #[test]
    fn g17_rounds_ties_as_the_c_library() {
        for k in 0..64 {
            for m in 1..2048u64 {
                check_format(m as f64 / (1u64 << k) as f64);
                check_format((m as f64 + (1u64 << 52) as f64) / (1u64 << k) as f64);
            }
        }
    }

    #[test]
    fn g17_matches_the_c_library_on_random_doubles() {
        let mut next = stream(17);
        for _ in 0..200_000 {
            check_format(f64::from_bits(next()));
        }
        // Values as the t-digest answers them: moderate magnitudes with long fractions.
        for _ in 0..100_000 {
            let v = (next() >> 11) as f64 / (1u64 << 53) as f64 * 1e6;
            check_format(v);
        }
    }

    /// The integer path (values from about 10⁻⁵ to 10¹⁷) against Rust's exact formatting
    /// and the C library, over every binary exponent it covers; it must cover them.
    #[test]
    fn the_integer_path_agrees_with_exact_formatting_where_it_applies() {
        let mut next = stream(99);
        let mut taken = 0;
        let total = 300_000;
        for _ in 0..total {
            let biased = 1023 - 16 + next() % (16 + 56);
            let value = f64::from_bits(biased << 52 | next() >> 12);
            if let Some(fast) = digits17(value) {
                taken += 1;
                assert_eq!(Some(fast), digits17_formatted(value), "{value:e}");
            }
            check_format(value);
        }
        assert_eq!(
            taken, total,
            "values from 2^-16 to 2^56 all take the integer path"
        );
        for value in [
            1e-5,
            9.9e-6,
            1e17 - 16.0,
            99999999999999999.0,
            0.99999999999999999,
        ] {
            check_format(value);
        }
    }

    fn check_parse(text: &[u8]) {
        if let Some(ours) = parse_plain(text) {
            let c = c_string2d(text);
            assert_eq!(
                c.map(f64::to_bits),
                Some(ours.to_bits()),
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn plain_decimals_read_as_strtod_reads_them() {
        for text in [
            &b"0"[..],
            b"-0",
            b"+0",
            b"0.5",
            b"-0.5",
            b"1.0",
            b"123456",
            b"999999999999999",
            b"0.1",
            b"0.99",
            b"000000000000000000001.5",
            b"0.0000000000000000000001",
            b"3.14159265358979",
            b"-987654.321",
        ] {
            assert!(parse_plain(text).is_some(), "{text:?}");
            check_parse(text);
        }
        let mut next = stream(5);
        for _ in 0..200_000 {
            let r = next();
            let digits = 1 + (r % 15) as usize;
            let point = (r >> 8) as usize % (digits + 1);
            let mut text = Vec::new();
            if r >> 20 & 1 == 1 {
                text.push(b'-');
            }
            for i in 0..digits {
                if i == point && i > 0 {
                    text.push(b'.');
                }
                text.push(b'0' + (next() % 10) as u8);
            }
            check_parse(&text);
        }
    }

    /// What the plain reader leaves to Redis: the general grammar and every form Redis
    /// refuses, so a refusal always comes from Redis's own check.
    #[test]
    fn anything_but_a_plain_decimal_is_left_to_redis() {
        for text in [
            &b""[..],
            b" 1",
            b"1 ",
            b"-",
            b"+",
            b".5",
            b"5.",
            b"1e3",
            b"1E3",
            b"0x10",
            b"inf",
            b"nan",
            b"1.2.3",
            b"--1",
            b"1234567890123456",
            b"0.12345678901234567",
            b"0.00000000000000000000001",
            b"1\0",
            b"0000000000000000000000001",
        ] {
            assert_eq!(
                parse_plain(text),
                None,
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
    }
}
