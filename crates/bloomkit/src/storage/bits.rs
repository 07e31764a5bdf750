//! Bit storage shared by the filters.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Error;

/// `count` zero words, or [`Error::OutOfMemory`] if they cannot be allocated. From a zeroed
/// allocation ([`arch::zeroed_words`](crate::arch::zeroed_words)): an empty filter's pages
/// cost memory only once it writes to them.
fn zero_words(count: u64) -> Result<Vec<u64>, Error> {
    let bytes = count.saturating_mul(8);
    usize::try_from(count)
        .ok()
        .and_then(crate::arch::zeroed_words)
        .ok_or(Error::OutOfMemory { bytes })
}

/// The 64-bit words of a little-endian image (whole words: the callers checked the length),
/// or `None` if they cannot be allocated. An array decoded from a file is written whole, so
/// it comes from [`arch::reserved_vec`](crate::arch::reserved_vec): advised to use huge pages
/// before its first write when it spans one (the huge-page policy, in
/// [`arch`](crate::arch)), and each page written once.
fn words_from_le_bytes(bytes: &[u8]) -> Option<Vec<u64>> {
    let mut words = crate::arch::reserved_vec(bytes.len() / 8)?;
    words.extend(
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8"))),
    );
    Some(words)
}

/// The decoding error of a payload whose array cannot be allocated.
fn payload_out_of_memory(bytes: usize) -> crate::error::DecodeError {
    invalid_payload(
        Error::OutOfMemory {
            bytes: bytes as u64,
        }
        .to_string(),
    )
}

/// Appends 64-bit words as little-endian bytes: the on-disk form of every storage here.
fn write_words(words: &[u64], out: &mut Vec<u8>) {
    out.reserve(words.len() * 8);
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// The decoding checks shared by the packed arrays: a cell width in `1..=max` (else an
/// error on `field`), and the error for a payload that does not fit.
fn check_width(field: &'static str, width: u32, max: u32) -> Result<(), crate::error::DecodeError> {
    if (1..=max).contains(&width) {
        Ok(())
    } else {
        Err(crate::error::DecodeError::InvalidField {
            field,
            reason: format!("{width} is not in 1..={max}"),
        })
    }
}

/// A stored payload that is not what its parameters say.
fn invalid_payload(reason: String) -> crate::error::DecodeError {
    crate::error::DecodeError::InvalidField {
        field: "payload",
        reason,
    }
}

/// A fixed-size array of bits, stored in 64-bit words.
///
/// Bit `i` is bit `i % 64` of word `i / 64`; on disk the words are little-endian, so the
/// byte layout is the same on every platform. Bits past `len` in the last word are always
/// zero (every operation keeps them so), which makes `count_ones` and equality exact.
/// The default is the empty vector.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct BitVec {
    words: Vec<u64>,
    len: u64,
}

impl BitVec {
    /// A vector of `len` zero bits. Allocation failure is an error, not an abort.
    pub fn zeros(len: u64) -> Result<Self, Error> {
        Ok(Self {
            words: zero_words(len.div_ceil(64))?,
            len,
        })
    }

    /// The number of bits.
    #[inline]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the vector has no bits at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sets bit `index` and returns whether it was 0 before.
    #[inline]
    pub fn set(&mut self, index: u64) -> bool {
        debug_assert!(index < self.len);
        let word = &mut self.words[(index >> 6) as usize];
        let mask = 1u64 << (index & 63);
        let was_clear = *word & mask == 0;
        *word |= mask;
        was_clear
    }

    /// Sets bit `index` when `flag` is 1 and leaves it when 0, with no branch on `flag`: its
    /// word is read and written either way (an OR of 0 when `flag` is 0).
    /// For a flag the data decides (a bit just read), where a branch would be mispredicted
    /// about as often as it is taken: the deletable filter's insert marks a position's
    /// region collided when its bit was set already.
    #[inline(always)]
    pub(crate) fn set_when(&mut self, index: u64, flag: u64) {
        debug_assert!(index < self.len && flag <= 1);
        self.words[(index >> 6) as usize] |= flag << (index & 63);
    }

    /// Sets bit `index` and returns what it was before, 0 or 1 (as [`set`](Self::set), as a
    /// number for arithmetic without a branch).
    #[inline(always)]
    pub(crate) fn set_and_get(&mut self, index: u64) -> u64 {
        debug_assert!(index < self.len);
        let word = &mut self.words[(index >> 6) as usize];
        let old = (*word >> (index & 63)) & 1;
        *word |= 1u64 << (index & 63);
        old
    }

    /// Resets bit `index` to 0 and returns whether it was 1 before.
    #[inline]
    pub fn unset(&mut self, index: u64) -> bool {
        debug_assert!(index < self.len);
        let word = &mut self.words[(index >> 6) as usize];
        let mask = 1u64 << (index & 63);
        let was_set = *word & mask != 0;
        *word &= !mask;
        was_set
    }

    /// Whether bit `index` is 1.
    #[inline]
    pub fn get(&self, index: u64) -> bool {
        debug_assert!(index < self.len);
        self.words[(index >> 6) as usize] & (1u64 << (index & 63)) != 0
    }

    /// Asks the CPU to bring the word of bit `index` into the cache ahead of a
    /// [`get`](Self::get) or [`set`](Self::set) (a hint; changes nothing).
    #[inline]
    pub fn prefetch(&self, index: u64) {
        if let Some(word) = self.words.get((index >> 6) as usize) {
            crate::arch::prefetch(word);
        }
    }

    /// [`prefetch`](Self::prefetch) of every bit in `indexes` (a query's or an insert's
    /// positions, ahead of the lookahead window's step).
    #[inline(always)]
    pub(crate) fn prefetch_all(&self, indexes: &[u64]) {
        for &index in indexes {
            self.prefetch(index);
        }
    }

    /// The number of bits that are 1.
    pub fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// Sets every bit to 0.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// The words (bit `i` is bit `i % 64` of word `i / 64`).
    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words, for code that splits the vector into disjoint ranges (bit `i` is bit
    /// `i % 64` of word `i / 64`). Callers must leave the padding bits past `len` zero.
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// Advises huge pages for the array ahead of `writes` writes at random places (a batch
    /// insert), when they touch most of its pages
    /// ([`arch::advise_bulk_write`](crate::arch::advise_bulk_write)); the bytes advised.
    pub(crate) fn advise_bulk_write(&mut self, writes: u64) -> usize {
        crate::arch::advise_bulk_write(&mut self.words, writes)
    }

    /// Bitwise OR with another vector of the same length.
    pub fn union_with(&mut self, other: &BitVec) {
        debug_assert_eq!(self.len, other.len);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// Bitwise AND with another vector of the same length.
    pub fn intersect_with(&mut self, other: &BitVec) {
        debug_assert_eq!(self.len, other.len);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }

    /// The size of the storage in bytes.
    pub fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// The number of bytes [`BitVec::write_le_bytes`] writes for `len` bits.
    pub fn encoded_len(len: u64) -> u64 {
        len.div_ceil(64) * 8
    }

    /// Appends the words as little-endian bytes.
    pub fn write_le_bytes(&self, out: &mut Vec<u8>) {
        write_words(&self.words, out);
    }

    /// Copies the bytes `offset .. offset + out.len()` of the little-endian byte image (the
    /// bytes [`BitVec::write_le_bytes`] writes) into `out`, without building the whole image:
    /// for dumping a large vector in chunks. `None` if the range passes the end.
    ///
    /// ```
    /// use bloomkit::bits::BitVec;
    /// let mut v = BitVec::zeros(128).unwrap();
    /// v.set(9);
    /// let mut out = [0u8; 2];
    /// v.read_le_bytes_at(1, &mut out).unwrap();
    /// assert_eq!(out, [0b10, 0]);
    /// assert!(v.read_le_bytes_at(15, &mut out).is_none());
    /// ```
    pub fn read_le_bytes_at(&self, offset: u64, out: &mut [u8]) -> Option<()> {
        let end = offset.checked_add(out.len() as u64)?;
        if end > self.words.len() as u64 * 8 {
            return None;
        }
        for (j, byte) in out.iter_mut().enumerate() {
            let at = offset + j as u64;
            *byte = (self.words[(at >> 3) as usize] >> ((at & 7) * 8)) as u8;
        }
        Some(())
    }

    /// Overwrites the bytes `offset .. offset + bytes.len()` of the little-endian byte image
    /// with `bytes`: for restoring a vector chunk by chunk. Fails, changing nothing, if the
    /// range passes the end or would set a padding bit past `len`. The whole image in one
    /// call is an array loaded whole, advised to use huge pages first when it spans them, as
    /// [`from_le_bytes`](Self::from_le_bytes) does (see [`arch`](crate::arch)).
    ///
    /// ```
    /// use bloomkit::bits::BitVec;
    /// let mut v = BitVec::zeros(70).unwrap();
    /// v.write_le_bytes_at(1, &[0b10]).unwrap();
    /// assert!(v.get(9));
    /// assert!(v.write_le_bytes_at(8, &[0x80]).is_err()); // bit 71 is past the end
    /// assert!(v.write_le_bytes_at(16, &[1]).is_err());
    /// ```
    pub fn write_le_bytes_at(
        &mut self,
        offset: u64,
        bytes: &[u8],
    ) -> Result<(), crate::error::DecodeError> {
        use crate::error::DecodeError;
        let image = self.words.len() as u64 * 8;
        let end = offset
            .checked_add(bytes.len() as u64)
            .filter(|&e| e <= image);
        let Some(end) = end else {
            return Err(DecodeError::InvalidField {
                field: "offset",
                reason: format!(
                    "{} bytes at offset {offset} pass the end of a {image}-byte bit array",
                    bytes.len()
                ),
            });
        };
        let tail_bits = self.len % 64;
        if tail_bits != 0 && end > image - 8 {
            // The range reaches the last word: its bits past `len` must stay zero.
            let mut last = self.words[self.words.len() - 1];
            for (j, &byte) in bytes.iter().enumerate() {
                let at = offset + j as u64;
                if at >= image - 8 {
                    let shift = (at & 7) * 8;
                    last = (last & !(0xff << shift)) | ((byte as u64) << shift);
                }
            }
            if last >> tail_bits != 0 {
                return Err(DecodeError::InvalidField {
                    field: "payload",
                    reason: "bits set past the end of the bit array".into(),
                });
            }
        }
        if offset == 0 && end == image {
            // The whole image at once (an array loaded whole): huge pages when it spans them
            // (the policy, in `arch`).
            crate::arch::advise_whole_write(&mut self.words);
        }
        for (j, &byte) in bytes.iter().enumerate() {
            let at = offset + j as u64;
            let shift = (at & 7) * 8;
            let word = &mut self.words[(at >> 3) as usize];
            *word = (*word & !(0xff << shift)) | ((byte as u64) << shift);
        }
        Ok(())
    }

    /// Reads `len` bits from exactly [`BitVec::encoded_len`]`(len)` little-endian bytes.
    /// Fails if the length is wrong or if a padding bit past `len` is set.
    pub fn from_le_bytes(len: u64, bytes: &[u8]) -> Result<Self, crate::error::DecodeError> {
        Self::check_encoded_len(len, bytes.len())?;
        let words = words_from_le_bytes(bytes).ok_or_else(|| payload_out_of_memory(bytes.len()))?;
        if let Some(&last) = words.last() {
            Self::check_last_word(len, last)?;
        }
        Ok(Self { words, len })
    }

    /// Fails unless `bytes` is [`BitVec::encoded_len`]`(len)`: the check of a payload's length
    /// before it is read.
    pub(crate) fn check_encoded_len(
        len: u64,
        bytes: usize,
    ) -> Result<(), crate::error::DecodeError> {
        if bytes as u64 != Self::encoded_len(len) {
            return Err(invalid_payload(format!(
                "{bytes} bytes cannot hold exactly {len} bits"
            )));
        }
        Ok(())
    }

    /// Fails if the last word of a vector of `len` bits sets a padding bit past `len`.
    pub(crate) fn check_last_word(len: u64, last: u64) -> Result<(), crate::error::DecodeError> {
        let tail_bits = len % 64;
        if tail_bits != 0 && last >> tail_bits != 0 {
            return Err(invalid_payload(
                "bits set past the end of the filter".into(),
            ));
        }
        Ok(())
    }
}

impl std::fmt::Debug for BitVec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BitVec")
            .field("len", &self.len)
            .field("ones", &self.count_ones())
            .finish()
    }
}

/// A fixed-size array of bits that many threads can set at once, through `&self`.
///
/// The layout is [`BitVec`]'s (bit `i` is bit `i % 64` of word `i / 64`, padding bits
/// zero), and the two convert into each other without copying bits one by one: the words
/// move from one vector to the other in a single pass, in place where `u64` and `AtomicU64`
/// have the same layout (as on every 64-bit target), so the conversion allocates nothing.
///
/// # Memory ordering
///
/// Every operation is `Relaxed`. Bits are only ever set (never cleared through `&self`),
/// so each bit changes at most once, from 0 to 1, and an atomic `fetch_or` can never lose
/// another thread's bit in the same word. What `Relaxed` gives up is ordering *between*
/// different bits or words: a thread that sees one bit of another thread's insert need not
/// see its other bits yet. So a reader is guaranteed to see a bit when the `set` of that
/// bit *happens before* the `get` — for instance when the reader joined the setting
/// thread, received a message it sent afterwards (a channel, a mutex, an `Arc` handed over,
/// a `Release` store read with `Acquire`), or is the setting thread itself (program
/// order). A `get` racing with the `set` may see 0 or 1; it eventually sees 1. Stronger
/// orderings would cost a fence on every operation and buy nothing a set-only vector can
/// use, since no reader reasons about *which* bits were set in which order.
///
/// ```
/// use bloomkit::bits::{AtomicBitVec, BitVec};
///
/// let bits = AtomicBitVec::zeros(1000)?;
/// std::thread::scope(|s| {
///     s.spawn(|| bits.set(3));
///     s.spawn(|| bits.set(900));
/// });
/// // Both threads were joined, so both bits are visible.
/// assert!(bits.get(3) && bits.get(900));
/// let plain: BitVec = bits.into();
/// assert_eq!(plain.count_ones(), 2);
/// # Ok::<(), bloomkit::Error>(())
/// ```
pub struct AtomicBitVec {
    words: Vec<AtomicU64>,
    len: u64,
}

impl AtomicBitVec {
    /// A vector of `len` zero bits. Allocation failure is an error, not an abort.
    pub fn zeros(len: u64) -> Result<Self, Error> {
        BitVec::zeros(len).map(Self::from)
    }

    /// The number of bits.
    #[inline]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the vector has no bits at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sets bit `index` and returns whether it was 0 before. Of several threads setting
    /// the same bit at once, exactly one sees `true`.
    #[inline]
    pub fn set(&self, index: u64) -> bool {
        debug_assert!(index < self.len);
        let mask = 1u64 << (index & 63);
        self.words[(index >> 6) as usize].fetch_or(mask, Ordering::Relaxed) & mask == 0
    }

    /// Whether bit `index` is 1 (see the type's docs for which `set`s a `get` sees).
    #[inline]
    pub fn get(&self, index: u64) -> bool {
        debug_assert!(index < self.len);
        self.words[(index >> 6) as usize].load(Ordering::Relaxed) & (1u64 << (index & 63)) != 0
    }

    /// The number of bits that are 1. While other threads set bits, the count is some
    /// value between the counts before and after their sets.
    pub fn count_ones(&self) -> u64 {
        self.words
            .iter()
            .map(|w| w.load(Ordering::Relaxed).count_ones() as u64)
            .sum()
    }

    /// ORs `other` (of the same length) in, word by word, while other threads may go on
    /// setting bits: each word's OR is atomic, so no bit set by anyone is lost.
    pub fn union_with(&self, other: &BitVec) {
        debug_assert_eq!(self.len, other.len);
        for (a, &b) in self.words.iter().zip(&other.words) {
            if b != 0 {
                a.fetch_or(b, Ordering::Relaxed);
            }
        }
    }

    /// Sets every bit to 0 (`&mut self`: no other thread can be setting bits meanwhile).
    pub fn clear(&mut self) {
        for word in &mut self.words {
            *word.get_mut() = 0;
        }
    }

    /// A plain copy of the current bits, taken word by word while other threads may go on
    /// setting bits (each word is read atomically; bits set meanwhile may or may not be in).
    pub fn snapshot(&self) -> BitVec {
        BitVec {
            words: self
                .words
                .iter()
                .map(|w| w.load(Ordering::Relaxed))
                .collect(),
            len: self.len,
        }
    }

    /// The size of the storage in bytes.
    pub fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

impl From<BitVec> for AtomicBitVec {
    /// Moves the words over, in place where the layouts agree.
    fn from(bits: BitVec) -> Self {
        Self {
            words: bits.words.into_iter().map(AtomicU64::new).collect(),
            len: bits.len,
        }
    }
}

impl From<AtomicBitVec> for BitVec {
    /// Moves the words back, in place where the layouts agree.
    fn from(bits: AtomicBitVec) -> Self {
        Self {
            words: bits.words.into_iter().map(AtomicU64::into_inner).collect(),
            len: bits.len,
        }
    }
}

impl std::fmt::Debug for AtomicBitVec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtomicBitVec")
            .field("len", &self.len)
            .field("ones", &self.count_ones())
            .finish()
    }
}

/// An array of small unsigned counters of `width` bits each (1 to 16), packed into 64-bit
/// words. A counter never straddles two words: each word holds `⌊64 / width⌋` counters, so
/// widths that divide 64 (1, 2, 4, 8, 16) waste nothing and the others waste at most a few
/// bits per word.
///
/// Counters saturate: an increment past the maximum `2^width − 1` leaves the counter at the
/// maximum. Callers decide what a saturated counter means (a counting filter never
/// decrements one again, since its true value is unknown).
#[derive(Clone, PartialEq, Eq)]
pub struct PackedCounters {
    words: Vec<u64>,
    len: u64,
    width: u32,
    per_word: u64,
    /// ⌊2⁶⁴ / per_word⌋ + 1: `index / per_word` is `(index · magic) >> 64` for every index
    /// below 2⁶⁴ / per_word (Granlund & Montgomery 1994; Lemire, Kaser & Kurz 2019), which a
    /// table of at most 2⁴⁰ bits stays far below. A 64-bit division costs tens of cycles on
    /// every slot a cuckoo query reads; a widening multiply costs three.
    magic: u64,
    /// 1 at the lowest bit of each counter of a word, for the word-at-a-time operations.
    low_bits: u64,
}

/// Where a counter of a [`PackedCounters`] lies: the index of its word and the shift of its
/// lowest bit in it. Two ways, with the same answers (a property test holds them to it):
/// [`ByDivision`] for any width, [`ByShifts`] for a width that is a power of two, which a
/// caller chooses once ([`PackedCounters::by_shifts`]) for many counters.
pub(crate) trait Locate: Copy {
    /// Counter `index`'s word and shift.
    fn locate(self, index: u64) -> (usize, u32);
    /// The counters' maximum, `2^w − 1`.
    fn max_value(self) -> u32;
    /// Counter `index`'s word and its slot there (the counters before it in the word):
    /// [`locate`](Self::locate) before the slot becomes a shift.
    fn word_and_slot(self, index: u64) -> (usize, u32);
    /// The counters' width w in bits.
    fn width(self) -> u32;
    /// 1 at the lowest bit of each counter of a word, for the word-at-a-time operations.
    fn low_bits(self) -> u64;
    /// The counter at `place` (from [`locate`](Self::locate)) in `words`.
    #[inline(always)]
    fn read(self, words: &[u64], (word, shift): (usize, u32)) -> u32 {
        ((words[word] >> shift) as u32) & self.max_value()
    }
    /// Adds `delta` to the counter at `place` in `words`, which the caller knows keeps it
    /// at most the maximum (so the add stays in the counter's bits).
    #[inline(always)]
    fn add(self, words: &mut [u64], (word, shift): (usize, u32), delta: u32) {
        words[word] += u64::from(delta) << shift;
    }
}

/// [`Locate`] for counters of any width w: ⌊64/w⌋ to a word, so counter i is in word
/// `i / per_word` ([`div_rem`]'s widening multiply, a multiply and a subtraction for the
/// remainder) at bit `(i mod per_word) · w` (another multiply).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ByDivision {
    per_word: u64,
    magic: u64,
    width: u32,
    low_bits: u64,
}

impl Locate for ByDivision {
    #[inline(always)]
    fn locate(self, index: u64) -> (usize, u32) {
        let (word, slot) = self.word_and_slot(index);
        (word, slot * self.width)
    }
    #[inline(always)]
    fn max_value(self) -> u32 {
        (1u32 << self.width) - 1
    }
    #[inline(always)]
    fn word_and_slot(self, index: u64) -> (usize, u32) {
        let (word, slot) = div_rem(index, self.per_word, self.magic);
        (word as usize, slot as u32)
    }
    #[inline(always)]
    fn width(self) -> u32 {
        self.width
    }
    #[inline(always)]
    fn low_bits(self) -> u64 {
        self.low_bits
    }
}

/// [`ByDivision`] for counters of `W` bits, `W` known when compiled (the stable filter's
/// default 3; from [`PackedCounters::by_constant_division`], which checks the array's
/// width): the same multiply and answers, with the divisor ⌊64/W⌋, its magic, the width
/// and the counters' low bits constants, which take no register and turn the multiplies
/// by the divisor and the width into shifts and adds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ByConstantDivision<const W: u32>(());

impl<const W: u32> ByConstantDivision<W> {
    const PER_WORD: u64 = (64 / W) as u64;
    const MAGIC: u64 = u64::MAX / Self::PER_WORD + 1;
    const LOW_BITS: u64 = low_bits(W);
}

impl<const W: u32> Locate for ByConstantDivision<W> {
    #[inline(always)]
    fn locate(self, index: u64) -> (usize, u32) {
        let (word, slot) = self.word_and_slot(index);
        (word, slot * W)
    }
    #[inline(always)]
    fn max_value(self) -> u32 {
        (1u32 << W) - 1
    }
    #[inline(always)]
    fn word_and_slot(self, index: u64) -> (usize, u32) {
        let (word, slot) = div_rem(index, Self::PER_WORD, Self::MAGIC);
        (word as usize, slot as u32)
    }
    #[inline(always)]
    fn width(self) -> u32 {
        W
    }
    #[inline(always)]
    fn low_bits(self) -> u64 {
        Self::LOW_BITS
    }
}

/// 1 at the lowest bit of each of the ⌊64/w⌋ counters of `w` bits of a word.
const fn low_bits(width: u32) -> u64 {
    let mut bits = 0u64;
    let mut slot = 0;
    while slot < 64 / width {
        bits |= 1 << (slot * width);
        slot += 1;
    }
    bits
}

/// [`Locate`] for counters of `W` bits, W a power of two (1, 2, 4, 8 or 16; from
/// [`PackedCounters::by_shifts`], which checks the array's width): 64/W = 2^j to a word,
/// so `i / per_word` is `i >> j` and the bit `(i mod per_word) · W` is
/// `(i & (2^j − 1)) << log₂ W` — a shift, a mask and a shift by constants (for 8-bit
/// counters `i >> 3` and `(i & 7) << 3`) where [`ByDivision`] multiplies three times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ByShifts<const W: u32>(());

impl<const W: u32> Locate for ByShifts<W> {
    #[inline(always)]
    fn locate(self, index: u64) -> (usize, u32) {
        let (word, slot) = self.word_and_slot(index);
        (word, slot << W.trailing_zeros())
    }
    #[inline(always)]
    fn max_value(self) -> u32 {
        (1u32 << W) - 1
    }
    #[inline(always)]
    fn word_and_slot(self, index: u64) -> (usize, u32) {
        let per_word_log2 = (64 / W).trailing_zeros();
        let slot = (index & ((1 << per_word_log2) - 1)) as u32;
        ((index >> per_word_log2) as usize, slot)
    }
    #[inline(always)]
    fn width(self) -> u32 {
        W
    }
    #[inline(always)]
    fn low_bits(self) -> u64 {
        low_bits(W)
    }
    /// For 8-bit counters, byte `shift / 8` of the word's little-endian bytes: the
    /// compiler loads that byte, where a shift by a variable amount needs the amount in a
    /// register of its own on x86-64 (without BMI2).
    #[inline(always)]
    fn read(self, words: &[u64], (word, shift): (usize, u32)) -> u32 {
        if W == 8 {
            u32::from(words[word].to_le_bytes()[(shift / 8) as usize])
        } else {
            ((words[word] >> shift) as u32) & self.max_value()
        }
    }
}

/// A computation over counters found by some [`Locate`], which
/// [`LocateChoice::run`] runs with the one chosen for the array (a closure cannot be generic
/// over the type of its argument, so the computation is a value of a type with a generic
/// method). The counters it reads or writes go in its fields.
pub(crate) trait WithLocate {
    /// What the computation answers.
    type Out;
    /// The computation with the counters found by `at`.
    fn run(self, at: impl Locate) -> Self::Out;
}

/// Which [`Locate`] an array's counters take, chosen once for many of them: `L`, a faster
/// one for one width ([`PackedCounters::locate_choice`]: [`ByShifts`] when they are `W` bits
/// wide, `W` a power of two; [`PackedCounters::constant_choice`]: [`ByConstantDivision`]),
/// else [`ByDivision`]. It borrows nothing, so a computation that writes the array can take
/// the array after the choice is made.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LocateChoice<L> {
    /// The counters have the width `L` is for.
    Fast(L),
    /// Any other width.
    Division(ByDivision),
}

impl<L: Locate> LocateChoice<L> {
    /// `f` with the counters found by the chosen [`Locate`]: the one place where "the fast
    /// way for this width, else by division" becomes two compiled copies of `f`.
    #[inline(always)]
    pub(crate) fn run<F: WithLocate>(self, f: F) -> F::Out {
        match self {
            Self::Fast(at) => f.run(at),
            Self::Division(at) => f.run(at),
        }
    }
}

impl ByShifts<8> {
    /// Counter `index` of 8-bit counters in `words`: the low byte of word `index >> 3`
    /// rotated right by `8·index` bits — a rotate takes its count mod 64, so the count needs
    /// no mask, where [`locate`](Locate::locate)'s shift is `(index & 7) << 3` (a shift by
    /// `8·index` mod 64 written as such keeps the mask, as `and $0x38`).
    #[inline(always)]
    pub(crate) fn byte(self, words: &[u64], index: u64) -> u32 {
        u32::from(words[(index >> 3) as usize].rotate_right((index as u32) << 3) as u8)
    }

    /// `delta` (at most 255) placed at counter `index`'s byte of its word, by the same
    /// rotate as [`byte`](Self::byte): what adding it to the word adds to that counter.
    #[inline(always)]
    fn placed(self, index: u64, delta: u32) -> u64 {
        debug_assert!(delta <= 255);
        u64::from(delta).rotate_left((index as u32) << 3)
    }
}

/// The 8-bit counters of a [`PackedCounters`], eight to a word, as one slice of its words
/// ([`PackedCounters::bytes_mut`]), for a caller that reads several counters of one item and
/// then raises them: the slice's length is held once, so that a raise's bounds check is the
/// read's (the same word index against the same length) and goes; each counter is found by
/// [`ByShifts::byte`]'s rotate.
pub(crate) struct ByteCounters<'a>(&'a mut [u64], ByShifts<8>);

impl ByteCounters<'_> {
    /// The value of counter `index`.
    #[inline(always)]
    pub(crate) fn get(&self, index: u64) -> u32 {
        self.1.byte(self.0, index)
    }

    /// Adds `delta` to counter `index`, which the caller knows keeps it at most 255 (so the
    /// add stays in the counter's byte).
    #[inline(always)]
    pub(crate) fn add(&mut self, index: u64, delta: u32) {
        debug_assert!(self.get(index) + delta <= 255);
        self.0[(index >> 3) as usize] += self.1.placed(index, delta);
    }

    /// Adds `delta` to counter `index`, stopping at 255.
    #[inline(always)]
    pub(crate) fn saturating_add(&mut self, index: u64, delta: u32) {
        let old = self.get(index);
        let raised = old.saturating_add(delta).min(255);
        self.0[(index >> 3) as usize] += self.1.placed(index, raised - old);
    }
}

/// `(index / divisor, index % divisor)`, with `magic = ⌊2⁶⁴ / divisor⌋ + 1`, by one widening
/// multiply; exact for every index below 2⁶⁴ / divisor.
#[inline]
fn div_rem(index: u64, divisor: u64, magic: u64) -> (u64, u64) {
    let quotient = ((index as u128 * magic as u128) >> 64) as u64;
    (quotient, index - quotient * divisor)
}

impl PackedCounters {
    /// `len` counters of `width` bits, all zero. Allocation failure is an error.
    pub fn zeros(len: u64, width: u32) -> Result<Self, Error> {
        if !(1..=16).contains(&width) {
            return Err(Error::InvalidCounterWidth(width));
        }
        let per_word = (64 / width) as u64;
        Ok(Self::with_words(
            len,
            width,
            zero_words(len.div_ceil(per_word))?,
        ))
    }

    /// `len` counters of `width` bits (in 1..=16) in `words`, which hold them all.
    fn with_words(len: u64, width: u32, words: Vec<u64>) -> Self {
        let per_word = (64 / width) as u64;
        Self {
            words,
            len,
            width,
            per_word,
            magic: u64::MAX / per_word + 1,
            low_bits: low_bits(width),
        }
    }

    /// The number of counters.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Advises huge pages for the array ahead of `writes` writes at random places (a batch
    /// insert), when they touch most of its pages
    /// ([`arch::advise_bulk_write`](crate::arch::advise_bulk_write)); the bytes advised.
    pub(crate) fn advise_bulk_write(&mut self, writes: u64) -> usize {
        crate::arch::advise_bulk_write(&mut self.words, writes)
    }

    /// Whether there are no counters.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The width of one counter in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The largest value a counter holds, `2^width − 1`.
    pub fn max_value(&self) -> u32 {
        (1u32 << self.width) - 1
    }

    #[inline]
    fn locate(&self, index: u64) -> (usize, u32) {
        debug_assert!(index < self.len);
        self.by_division().locate(index)
    }

    /// The general [`Locate`] of this array's counters, for any width.
    #[inline(always)]
    pub(crate) fn by_division(&self) -> ByDivision {
        ByDivision {
            per_word: self.per_word,
            magic: self.magic,
            width: self.width,
            low_bits: self.low_bits,
        }
    }

    /// The [`Locate`] by constants when the counters are `W` bits wide (any width up to 16),
    /// else `None`.
    #[inline(always)]
    pub(crate) fn by_constant_division<const W: u32>(&self) -> Option<ByConstantDivision<W>> {
        const { assert!(W >= 1 && W <= 16) };
        (self.width == W).then_some(ByConstantDivision(()))
    }

    /// The [`Locate`] by shifts when the counters are `W` bits wide (`W` a power of two up
    /// to 16), else `None`: a caller tests the width once and then locates many counters.
    #[inline(always)]
    pub(crate) fn by_shifts<const W: u32>(&self) -> Option<ByShifts<W>> {
        const { assert!(W.is_power_of_two() && W <= 16) };
        (self.width == W).then_some(ByShifts(()))
    }

    /// [`by_shifts`](Self::by_shifts) when the counters are `W` bits wide (`W` a power of
    /// two), else [`by_division`](Self::by_division): the width tested once, then
    /// [`LocateChoice::run`] runs a computation with the one chosen.
    #[inline(always)]
    pub(crate) fn locate_choice<const W: u32>(&self) -> LocateChoice<ByShifts<W>> {
        self.choice(self.by_shifts::<W>())
    }

    /// [`by_constant_division`](Self::by_constant_division) when the counters are `W` bits
    /// wide, else [`by_division`](Self::by_division), as [`locate_choice`](Self::locate_choice).
    #[inline(always)]
    pub(crate) fn constant_choice<const W: u32>(&self) -> LocateChoice<ByConstantDivision<W>> {
        self.choice(self.by_constant_division::<W>())
    }

    /// `fast` if this array's width has it, else by division.
    #[inline(always)]
    fn choice<L: Locate>(&self, fast: Option<L>) -> LocateChoice<L> {
        match fast {
            Some(at) => LocateChoice::Fast(at),
            None => LocateChoice::Division(self.by_division()),
        }
    }

    /// The value of counter `index`, found by `at` (which must be one of this array's
    /// [`by_division`](Self::by_division) or [`by_shifts`](Self::by_shifts)).
    #[inline(always)]
    pub(crate) fn get_by(&self, at: impl Locate, index: u64) -> u32 {
        debug_assert!(index < self.len);
        self.value_at(at, at.locate(index))
    }

    /// The value of the counter at `place` (from `at.locate`).
    #[inline(always)]
    pub(crate) fn value_at(&self, at: impl Locate, place: (usize, u32)) -> u32 {
        at.read(&self.words, place)
    }

    /// [`value_at`](Self::value_at) by a shift of its word, whatever the width.
    #[inline(always)]
    pub(crate) fn value_in_word(&self, at: impl Locate, (word, shift): (usize, u32)) -> u32 {
        ((self.words[word] >> shift) as u32) & at.max_value()
    }

    /// Sets the counter at `place` (from `at.locate`) to the maximum: an OR of all-ones into
    /// its bits, with no mask of the old value.
    #[inline(always)]
    pub(crate) fn saturate_at(&mut self, at: impl Locate, (word, shift): (usize, u32)) {
        self.words[word] |= u64::from(at.max_value()) << shift;
    }

    /// Adds `delta` to the counter at `place` (from a [`Locate`]) without a check: the
    /// caller knows that the sum stays at most [`max_value`](Self::max_value), so the add
    /// stays in the counter's bits.
    #[inline(always)]
    pub(crate) fn add_at(&mut self, at: impl Locate, place: (usize, u32), delta: u32) {
        debug_assert!(self.value_at(at, place) + delta <= self.max_value());
        at.add(&mut self.words, place, delta);
    }

    /// [`saturating_add`](Self::saturating_add) of the counter at `place` (from `at.locate`):
    /// the counter read again from its word, so that a counter named twice adds both.
    #[inline(always)]
    pub(crate) fn saturating_add_at(&mut self, at: impl Locate, place: (usize, u32), delta: u32) {
        let (max, old) = (at.max_value(), self.value_at(at, place));
        let value = old.saturating_add(delta).min(max);
        self.words[place.0] += u64::from(value - old) << place.1;
    }

    /// The 8-bit counters as [`ByteCounters`], `at` (from [`by_shifts`](Self::by_shifts))
    /// the proof of their width.
    #[inline(always)]
    pub(crate) fn bytes_mut(&mut self, at: ByShifts<8>) -> ByteCounters<'_> {
        ByteCounters(&mut self.words, at)
    }

    /// Counter `index` of 8-bit counters ([`ByShifts::byte`]), `at` the proof of their width.
    #[inline(always)]
    pub(crate) fn byte(&self, at: ByShifts<8>, index: u64) -> u32 {
        debug_assert!(index < self.len);
        at.byte(&self.words, index)
    }

    /// [`prefetch_all_by`](Self::prefetch_all_by) of counters that are in the array (a
    /// filter's positions, below [`len`](Self::len)), each word's index by `at` and
    /// prefetched without a bounds check ([`arch::prefetch_at`](crate::arch::prefetch_at)):
    /// a shift and a prefetch a counter.
    #[inline(always)]
    pub(crate) fn prefetch_in_range(&self, at: impl Locate, indexes: &[u64]) {
        for &index in indexes {
            debug_assert!(index < self.len);
            crate::arch::prefetch_at(&self.words, at.locate(index).0);
        }
    }

    /// Asks the CPU to bring the word of counter `index` into the cache ahead of a
    /// [`get`](Self::get) or [`set`](Self::set) (a hint; changes nothing).
    #[inline]
    pub fn prefetch(&self, index: u64) {
        if let Some(word) = self.words.get(self.locate(index).0) {
            crate::arch::prefetch(word);
        }
    }

    /// [`prefetch`](Self::prefetch) of every counter in `indexes` (a query's or an
    /// insert's positions, ahead of the lookahead window's step).
    #[inline(always)]
    pub(crate) fn prefetch_all(&self, indexes: &[u64]) {
        for &index in indexes {
            self.prefetch(index);
        }
    }

    /// [`prefetch_all`](Self::prefetch_all) with each counter's word found by `at` (one of
    /// this array's [`by_division`](Self::by_division) or [`by_shifts`](Self::by_shifts)):
    /// by shifts, a shift a counter where [`prefetch`](Self::prefetch) multiplies.
    #[inline(always)]
    pub(crate) fn prefetch_all_by(&self, at: impl Locate, indexes: &[u64]) {
        for &index in indexes {
            if let Some(word) = self.words.get(at.locate(index).0) {
                crate::arch::prefetch(word);
            }
        }
    }

    /// The value of counter `index`.
    #[inline]
    pub fn get(&self, index: u64) -> u32 {
        let (word, shift) = self.locate(index);
        CounterSpan::value_in(self.words[word], shift, self.width)
    }

    /// Sets counter `index` to `value`, which must be at most [`PackedCounters::max_value`].
    #[inline]
    pub fn set(&mut self, index: u64, value: u32) {
        debug_assert!(value <= self.max_value());
        let (word, shift) = self.locate(index);
        let mask = (self.max_value() as u64) << shift;
        let w = &mut self.words[word];
        *w = (*w & !mask) | ((value as u64) << shift);
    }

    /// Adds `delta` to counter `index`, stopping at the maximum. Returns the new value.
    #[inline]
    pub fn saturating_add(&mut self, index: u64, delta: u32) -> u32 {
        let (word, shift) = self.locate(index);
        let (width, max) = (self.width, self.max_value());
        let w = &mut self.words[word];
        let old = CounterSpan::value_in(*w, shift, width);
        let value = old.saturating_add(delta).min(max);
        // `value − old` fits the counter's bits and leaves the others: one add where `set`
        // masks the counter out and ors the new value in.
        *w += u64::from(value - old) << shift;
        value
    }

    /// Adds 1 to counter `index` unless it is at the maximum; returns the value it had. One
    /// locate, one read and one write of the word, where `get` then `saturating_add` locate
    /// the counter twice (the spectral filter's insert: one pass over its counters).
    #[inline]
    pub(crate) fn increment(&mut self, index: u64) -> u32 {
        let (word, shift) = self.locate(index);
        let max = self.max_value();
        let w = &mut self.words[word];
        let old = ((*w >> shift) as u32) & max;
        *w += u64::from(old != max) << shift;
        old
    }

    /// [`increment`](Self::increment) of counter `index`, found by `at` (one of this array's
    /// [`by_division`](Self::by_division) or [`by_shifts`](Self::by_shifts)).
    #[inline(always)]
    pub(crate) fn increment_by(&mut self, at: impl Locate, index: u64) -> u32 {
        debug_assert!(index < self.len);
        let place = at.locate(index);
        let old = at.read(&self.words, place);
        self.words[place.0] += u64::from(old != at.max_value()) << place.1;
        old
    }

    /// [`increment`](Self::increment) of the counters at `indexes` in turn (each raised
    /// by 1 unless at the maximum; a counter named twice rises twice); the smallest value
    /// they had, `u32::MAX` for none. 16-bit counters, four to a word (the spectral
    /// filter's default), are found by shifts where `locate` multiplies.
    #[inline(always)]
    pub(crate) fn increment_each<const K: usize>(&mut self, indexes: &[u64; K]) -> u32 {
        if self.width == 16 {
            indexes.iter().fold(u32::MAX, |min, &index| {
                debug_assert!(index < self.len);
                let w = &mut self.words[(index >> 2) as usize];
                let shift = (index as u32 & 3) * 16;
                let old = (*w >> shift) as u32 & 0xffff;
                *w += u64::from(old != 0xffff) << shift;
                min.min(old)
            })
        } else {
            indexes
                .iter()
                .fold(u32::MAX, |min, &index| min.min(self.increment(index)))
        }
    }

    /// Subtracts `delta` from counter `index`, stopping at zero. Returns the new value.
    #[inline]
    pub fn saturating_sub(&mut self, index: u64, delta: u32) -> u32 {
        let value = self.get(index).saturating_sub(delta);
        self.set(index, value);
        value
    }

    /// The number of counters that are not zero.
    pub fn count_nonzero(&self) -> u64 {
        (0..self.len).filter(|&i| self.get(i) != 0).count() as u64
    }

    /// The number of counters at the maximum value.
    pub fn count_saturated(&self) -> u64 {
        let max = self.max_value();
        (0..self.len).filter(|&i| self.get(i) == max).count() as u64
    }

    /// Sets every counter to zero.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Adds each counter of `other` (same length and width) to the counter at the same
    /// index, stopping at the maximum: the union of two counting filters.
    pub fn saturating_add_all(&mut self, other: &PackedCounters) {
        debug_assert!(self.len == other.len && self.width == other.width);
        for i in 0..self.len.min(other.len) {
            self.saturating_add(i, other.get(i));
        }
    }

    /// Lowers each counter to the counter of `other` (same length and width) at the same
    /// index where that one is smaller: the element-wise minimum.
    pub fn min_with(&mut self, other: &PackedCounters) {
        debug_assert!(self.len == other.len && self.width == other.width);
        for i in 0..self.len.min(other.len) {
            let theirs = other.get(i);
            if theirs < self.get(i) {
                self.set(i, theirs);
            }
        }
    }

    /// Takes 1 from each non-zero counter of `start .. start + count` (zero counters stay
    /// at zero): the stable Bloom filter's decrements, which hit P consecutive counters per
    /// insert. Word by word, every counter of a word at once (SWAR): with H the top bit of
    /// each field and F all fields' bits, `((x & !H) + (F & !H)) | x` has a field's top bit
    /// set exactly when the field is not zero (its low bits plus all-ones carry into the
    /// top bit when any is set, and never past it); shifted down to the fields' low bits
    /// and subtracted, it lowers each non-zero field by one with no borrow between fields.
    /// One word costs about ten instructions where a counter at a time cost about thirty
    /// per counter. `count` is clamped to the counters there are.
    pub fn decrement_nonzero_run(&mut self, start: u64, count: u64) {
        self.decrement_nonzero_run_by(self.by_division(), start, count);
    }

    /// [`decrement_nonzero_run`](Self::decrement_nonzero_run) with the counters found by
    /// `at` (one of this array's [`by_division`](Self::by_division),
    /// [`by_constant_division`](Self::by_constant_division) or
    /// [`by_shifts`](Self::by_shifts)). Inlined: the stable filter's insert calls it once
    /// (a call cost it about 25 instructions).
    #[inline(always)]
    pub(crate) fn decrement_nonzero_run_by(&mut self, at: impl Locate, start: u64, count: u64) {
        let end = start.saturating_add(count).min(self.len);
        if start >= end {
            return;
        }
        let w = at.width();
        // 1 at the lowest bit of each field of a word; the fields' top bits; and the bits of
        // each field below its top (`F & !H` above; no borrow crosses a field).
        let ones = at.low_bits();
        let tops = ones << (w - 1);
        let below_tops = tops - ones;
        let (first_word, first_slot) = at.word_and_slot(start);
        let (last_word, last_slot) = at.word_and_slot(end - 1);
        // Lowers each non-zero field of `x` that `in_run` marks (its low bit) by one.
        let lowered = |x: u64, in_run: u64| {
            let nonzero = (((x & !tops) + below_tops) | x) & tops;
            x - ((nonzero >> (w - 1)) & in_run)
        };
        // The run's fields in its first word (from `first_slot` on: the bits from its low
        // bit up) and its last word (up to `last_slot`: the bits up to its low bit), every
        // field of the words between; the masks once per run, not per word (245
        // instructions per stable insert, P = 64 three-bit cells, before), and by shifts
        // of all-ones, with no branch (the low bit of a field is at most bit 63).
        let from_first = ones & (u64::MAX << (first_slot * w));
        let to_last = ones & (u64::MAX >> (63 - last_slot * w));
        // One loop over the run's words but its last, the first word's mask then every
        // field's; the last word's mask cut at `last_slot` (a run in one word: both masks).
        if let Some((last, init)) = self.words[first_word..=last_word].split_last_mut() {
            let mut in_run = from_first;
            for x in init {
                *x = lowered(*x, in_run);
                in_run = ones;
            }
            *last = lowered(*last, in_run & to_last);
        }
    }

    /// The size of the storage in bytes.
    pub fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// The number of bytes [`PackedCounters::write_le_bytes`] writes.
    pub fn encoded_len(len: u64, width: u32) -> u64 {
        len.div_ceil((64 / width.clamp(1, 64)) as u64) * 8
    }

    /// Appends the words as little-endian bytes.
    pub fn write_le_bytes(&self, out: &mut Vec<u8>) {
        write_words(&self.words, out);
    }

    /// Fails unless `bytes` is [`PackedCounters::encoded_len`]`(len, width)`: the check of
    /// a payload's length before it is read.
    pub(crate) fn check_encoded_len(
        len: u64,
        width: u32,
        bytes: usize,
    ) -> Result<(), crate::error::DecodeError> {
        if bytes as u64 != Self::encoded_len(len, width) {
            return Err(invalid_payload(format!(
                "{bytes} bytes cannot hold exactly {len} counters of {width} bits"
            )));
        }
        Ok(())
    }

    /// Reads `len` counters of `width` bits from exactly
    /// [`PackedCounters::encoded_len`] little-endian bytes; unused bits must be zero.
    pub fn from_le_bytes(
        len: u64,
        width: u32,
        bytes: &[u8],
    ) -> Result<Self, crate::error::DecodeError> {
        check_width("counter width", width, 16)?;
        Self::check_encoded_len(len, width, bytes.len())?;
        let span = CounterSpan { at: 0, len, width };
        span.check_words(0, bytes)?;
        let words = words_from_le_bytes(bytes).ok_or_else(|| payload_out_of_memory(bytes.len()))?;
        Ok(Self::with_words(len, width, words))
    }
}

/// Where an array of `len` packed counters of `width` bits lies in a payload, as
/// [`PackedCounters::write_le_bytes`] wrote it: from byte `at` (a multiple of 8), 64-bit
/// little-endian words of ⌊64/width⌋ counters each, the bits past the last counter of a
/// word zero. The one description of that layout that loading
/// ([`PackedCounters::from_le_bytes`]) and a read-only view of the file
/// ([`format::view`](crate::format::view), which reads single counters and checks the
/// words a chunk holds) share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CounterSpan {
    pub(crate) at: usize,
    pub(crate) len: u64,
    pub(crate) width: u32,
}

impl CounterSpan {
    /// The counters a word holds, ⌊64/width⌋.
    fn per_word(&self) -> u64 {
        (64 / self.width) as u64
    }

    /// The bytes the array takes ([`PackedCounters::encoded_len`]).
    pub(crate) fn bytes(&self) -> usize {
        PackedCounters::encoded_len(self.len, self.width) as usize
    }

    /// Counter `index`: the payload offset of its word, and its shift in the word.
    #[inline]
    pub(crate) fn locate(&self, index: u64) -> (usize, u32) {
        let per_word = self.per_word();
        let (word, slot) = (index / per_word, index % per_word);
        (self.at + word as usize * 8, slot as u32 * self.width)
    }

    /// The counter of `width` bits at `shift` in `word`.
    #[inline(always)]
    pub(crate) fn value_in(word: u64, shift: u32, width: u32) -> u32 {
        ((word >> shift) as u32) & ((1u32 << width) - 1)
    }

    /// How many counters word `word` of the array holds: ⌊64/width⌋, fewer in the last.
    fn counters_in(&self, word: u64) -> u64 {
        let per_word = self.per_word();
        self.len.saturating_sub(word * per_word).min(per_word)
    }

    /// Checks the words of the array among `bytes`, the payload's bytes from `offset` (a
    /// multiple of 8; bytes outside the array are not looked at): no bit set outside a
    /// counter — what loading refuses in every word. Local to each word, so a view checks
    /// it chunk by chunk.
    pub(crate) fn check_words(
        &self,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), crate::error::DecodeError> {
        for (word, value) in self.words_in(offset, bytes) {
            let used = self.counters_in(word) * self.width as u64;
            if used < 64 && value >> used != 0 {
                return Err(invalid_payload("bits set outside any counter".into()));
            }
        }
        Ok(())
    }

    /// Calls `each` with the value of every counter of the array whose word lies in
    /// `bytes` (the payload's bytes from `offset`, a multiple of 8), in order.
    pub(crate) fn for_each_in(&self, offset: usize, bytes: &[u8], mut each: impl FnMut(u32)) {
        for (word, value) in self.words_in(offset, bytes) {
            let mut shift = 0;
            for _ in 0..self.counters_in(word) {
                each(Self::value_in(value, shift, self.width));
                shift += self.width;
            }
        }
    }

    /// The words of the array in `bytes` (the payload's bytes from `offset`): their index
    /// in the array and their value.
    fn words_in<'a>(
        &self,
        offset: usize,
        bytes: &'a [u8],
    ) -> impl Iterator<Item = (u64, u64)> + 'a + use<'a> {
        let (start, end) = (self.at, self.at + self.bytes());
        let from = start.max(offset);
        let to = end.min(offset + bytes.len());
        let slice = if from < to {
            &bytes[from - offset..to - offset]
        } else {
            &[]
        };
        let first = (from.saturating_sub(start) / 8) as u64;
        slice
            .chunks_exact(8)
            .zip(first..)
            .map(|(w, i)| (i, u64::from_le_bytes(w.try_into().expect("chunks of 8"))))
    }
}

impl std::fmt::Debug for PackedCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedCounters")
            .field("len", &self.len)
            .field("width", &self.width)
            .finish()
    }
}

/// An array of `len` cells of `width` bits each (1 to 64), packed densely: cell `i` is bits
/// `i·width .. (i+1)·width` of the little-endian bit stream, so a cell may straddle two
/// 64-bit words and no bit is wasted between cells. This is the storage of a structure
/// whose size per key is the point (the Bloomier filter's `1.23·w` bits per key): a
/// [`PackedCounters`] of 12-bit cells would waste 4 of every 64 bits. Bits past the last
/// cell are always zero.
#[derive(Clone, PartialEq, Eq)]
pub struct PackedCells {
    words: Vec<u64>,
    len: u64,
    width: u32,
}

impl PackedCells {
    /// `len` zero cells of `width` bits; a width outside 1..=64 is
    /// [`Error::InvalidParameter`], a size that cannot be allocated [`Error::OutOfMemory`].
    pub fn zeros(len: u64, width: u32) -> Result<Self, Error> {
        if !(1..=64).contains(&width) {
            return Err(Error::InvalidParameter {
                parameter: "cell width",
                reason: format!("{width} is not in 1..=64 bits"),
            });
        }
        let words = Self::word_count(len, width).ok_or(Error::OutOfMemory { bytes: u64::MAX })?;
        Ok(Self {
            words: zero_words(words)?,
            len,
            width,
        })
    }

    /// ⌈len·width / 64⌉, if it fits.
    fn word_count(len: u64, width: u32) -> Option<u64> {
        Some(len.checked_mul(u64::from(width))?.div_ceil(64))
    }

    /// The number of cells.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are no cells.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The width of one cell in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The mask of the low `width` bits.
    #[inline]
    fn mask(&self) -> u64 {
        u64::MAX >> (64 - self.width)
    }

    /// The value of cell `index` (below [`len`](Self::len)), without a branch on whether the
    /// cell straddles two words.
    ///
    /// A cell of w bits at bit `shift` of its word straddles when `shift + w > 64`, which
    /// for random cells happens with probability `(w − 1)/64`: as a branch, a 7-bit table's
    /// query (three cells) mispredicted 0.31 times (`valgrind --tool=callgrind
    /// --branch-sim=yes`, `examples/bloomier_cost.rs` with c = 7). Instead the next word is
    /// always read and shifted up by `64 − shift` (in two steps, so that `shift = 0` shifts
    /// by 64 without overflow and yields 0): its bits land at or above bit `64 − shift`,
    /// which is below w only when the cell straddles, so the mask keeps exactly the bits
    /// the cell has there. A cell in the last word never straddles, so the next index is
    /// clamped to the last word, whose bits the mask then drops.
    #[inline]
    pub fn get(&self, index: u64) -> u64 {
        debug_assert!(index < self.len);
        let bit = index * u64::from(self.width);
        let (word, shift) = ((bit / 64) as usize, (bit % 64) as u32);
        let low = self.words[word] >> shift;
        let next = self.words[(word + 1).min(self.words.len() - 1)];
        let high = (next << 1) << (63 - shift);
        (low | high) & self.mask()
    }

    /// [`get`](Self::get) for cells of `W` bits, `W` a power of two that divides 64 and
    /// equals the width: a cell never straddles two words, so it is one load and one shift
    /// (`W` known at compile time). Gives the same value as `get`.
    #[inline]
    pub fn get_aligned<const W: u32>(&self, index: u64) -> u64 {
        debug_assert!(self.width == W && 64 % W == 0 && index < self.len);
        let per_word = u64::from(64 / W);
        let word = self.words[(index / per_word) as usize];
        (word >> ((index % per_word) * u64::from(W))) & (u64::MAX >> (64 - W))
    }

    /// Sets cell `index` to the low `width` bits of `value`.
    #[inline]
    pub fn set(&mut self, index: u64, value: u64) {
        debug_assert!(index < self.len);
        let value = value & self.mask();
        let bit = index * u64::from(self.width);
        let (word, shift) = ((bit / 64) as usize, (bit % 64) as u32);
        let low_mask = self.mask() << shift;
        self.words[word] = (self.words[word] & !low_mask) | (value << shift);
        if shift + self.width > 64 {
            let spill = shift + self.width - 64;
            let high_mask = u64::MAX >> (64 - spill);
            let w = &mut self.words[word + 1];
            *w = (*w & !high_mask) | (value >> (64 - shift));
        }
    }

    /// The size of the storage in bytes.
    pub fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// Appends the words as little-endian bytes.
    pub fn write_le_bytes(&self, out: &mut Vec<u8>) {
        write_words(&self.words, out);
    }

    /// Reads `len` cells of `width` bits from exactly `⌈len·width/64⌉` little-endian words;
    /// the length is checked before anything is allocated, and bits past the last cell
    /// must be zero.
    pub fn from_le_bytes(
        len: u64,
        width: u32,
        bytes: &[u8],
    ) -> Result<Self, crate::error::DecodeError> {
        let invalid = invalid_payload;
        check_width("cell width", width, 64)?;
        let words = Self::word_count(len, width)
            .filter(|&w| w.checked_mul(8) == Some(bytes.len() as u64))
            .ok_or_else(|| {
                invalid(format!(
                    "{} bytes cannot hold exactly {len} cells of {width} bits",
                    bytes.len()
                ))
            })?;
        let cells = Self {
            words: words_from_le_bytes(bytes).ok_or_else(|| payload_out_of_memory(bytes.len()))?,
            len,
            width,
        };
        let used = len * u64::from(width) % 64;
        if words > 0 && used != 0 && cells.words[words as usize - 1] >> used != 0 {
            return Err(invalid("bits set past the last cell".into()));
        }
        Ok(cells)
    }
}

impl std::fmt::Debug for PackedCells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedCells")
            .field("len", &self.len)
            .field("width", &self.width)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    /// `get` reads exactly the cell's bits of the little-endian stream, for every width,
    /// wherever the cell lies: within a word, straddling two, or in the last word (whose
    /// next word does not exist). The reference reads the stream bit by bit from bytes the
    /// test writes itself, independent of `set`.
    #[test]
    fn packed_cells_read_every_cell_bit_for_bit_from_the_stream() {
        for width in 1u32..=64 {
            for len in [1u64, 2, 63, 64, 65, 129] {
                let bits = len * u64::from(width);
                let mut bytes: Vec<u8> = (0..bits.div_ceil(64) * 8)
                    .map(|i| crate::hash::mix64(i ^ u64::from(width) << 32) as u8)
                    .collect();
                // Padding past the last cell must be zero.
                for bit in bits..bytes.len() as u64 * 8 {
                    bytes[(bit / 8) as usize] &= !(1 << (bit % 8));
                }
                let cells = PackedCells::from_le_bytes(len, width, &bytes).unwrap();
                for i in 0..len {
                    let want = (0..u64::from(width)).fold(0u64, |v, b| {
                        let bit = i * u64::from(width) + b;
                        v | u64::from(bytes[(bit / 8) as usize] >> (bit % 8) & 1) << b
                    });
                    assert_eq!(cells.get(i), want, "width {width}, len {len}, cell {i}");
                }
            }
        }
    }

    /// `set` changes exactly the cell's bits of the stream, for every width and every
    /// position (within a word or across two): after overwriting
    /// cells in a scattered order, every cell holds what a plain model holds and the bytes
    /// written are the model's stream, built bit by bit.
    #[test]
    fn packed_cells_set_only_their_own_bits() {
        for width in 1u32..=64 {
            let len = 67u64;
            let mask = u64::MAX >> (64 - width);
            let mut cells = PackedCells::zeros(len, width).unwrap();
            let mut model = vec![0u64; len as usize];
            for round in 0..3u64 {
                for j in 0..len {
                    let i = (j * 29 + round * 7) % len;
                    let v = crate::hash::mix64(i ^ round << 40 ^ u64::from(width) << 20) & mask;
                    cells.set(i, v);
                    model[i as usize] = v;
                }
            }
            for (i, &want) in model.iter().enumerate() {
                assert_eq!(cells.get(i as u64), want, "width {width}, cell {i}");
            }
            let mut stream = vec![0u8; (len * u64::from(width)).div_ceil(64) as usize * 8];
            for (i, &v) in model.iter().enumerate() {
                for b in 0..u64::from(width) {
                    let bit = i as u64 * u64::from(width) + b;
                    stream[(bit / 8) as usize] |= ((v >> b & 1) as u8) << (bit % 8);
                }
            }
            let mut written = Vec::new();
            cells.write_le_bytes(&mut written);
            assert_eq!(written, stream, "width {width}");
        }
    }

    #[test]
    fn packed_cells_straddle_words_and_round_trip() {
        for width in [1u32, 7, 8, 12, 16, 32, 33, 64] {
            let len = 150;
            let mut cells = PackedCells::zeros(len, width).unwrap();
            let mask = u64::MAX >> (64 - width);
            let value = |i: u64| crate::hash::mix64(i) & mask;
            for i in 0..len {
                cells.set(i, value(i));
            }
            for i in 0..len {
                assert_eq!(cells.get(i), value(i), "width {width}, cell {i}");
                let aligned = match width {
                    8 => cells.get_aligned::<8>(i),
                    16 => cells.get_aligned::<16>(i),
                    32 => cells.get_aligned::<32>(i),
                    64 => cells.get_aligned::<64>(i),
                    _ => cells.get(i),
                };
                assert_eq!(aligned, value(i), "width {width}, cell {i}");
            }
            // A neighbour's write never changes a cell.
            cells.set(3, 0);
            assert_eq!((cells.get(2), cells.get(4)), (value(2), value(4)));
            let mut bytes = Vec::new();
            cells.write_le_bytes(&mut bytes);
            assert_eq!(
                bytes.len() as u64,
                (len * u64::from(width)).div_ceil(64) * 8
            );
            assert_eq!(
                PackedCells::from_le_bytes(len, width, &bytes).unwrap(),
                cells
            );
            assert!(PackedCells::from_le_bytes(len, width, &bytes[1..]).is_err());
            if len * u64::from(width) % 64 != 0 {
                let last = bytes.len() - 1;
                bytes[last] |= 0x80;
                assert!(PackedCells::from_le_bytes(len, width, &bytes).is_err());
            }
        }
        assert!(PackedCells::zeros(10, 0).is_err() && PackedCells::zeros(10, 65).is_err());
        assert!(PackedCells::from_le_bytes(u64::MAX, 64, &[]).is_err());
    }

    #[test]
    fn counter_sums_saturate_and_minimums_are_element_wise() {
        let mut a = PackedCounters::zeros(20, 4).unwrap();
        let mut b = PackedCounters::zeros(20, 4).unwrap();
        for i in 0..20 {
            a.set(i, (i % 16) as u32);
            b.set(i, ((i * 7) % 16) as u32);
        }
        let mut sum = a.clone();
        sum.saturating_add_all(&b);
        let mut min = a.clone();
        min.min_with(&b);
        for i in 0..20 {
            let (x, y) = (a.get(i), b.get(i));
            assert_eq!(sum.get(i), (x + y).min(15), "{i}");
            assert_eq!(min.get(i), x.min(y), "{i}");
        }
    }

    #[test]
    fn counters_saturate_and_never_spill_into_neighbours() {
        for width in [1u32, 3, 4, 5, 8, 16] {
            let mut c = PackedCounters::zeros(100, width).unwrap();
            let max = c.max_value();
            for _ in 0..(max + 3) {
                c.saturating_add(41, 1);
            }
            assert_eq!(c.get(41), max, "width {width}");
            assert_eq!(c.get(40), 0);
            assert_eq!(c.get(42), 0);
            assert_eq!(c.count_saturated(), 1);
            assert_eq!(c.saturating_sub(41, max + 10), 0);
            assert_eq!(c.count_nonzero(), 0);
        }
    }

    #[test]
    fn counters_round_trip_and_stray_bits_are_rejected() {
        let mut c = PackedCounters::zeros(23, 3).unwrap(); // 21 per word: 2 words
        for i in 0..23 {
            c.set(i, (i % 8) as u32);
        }
        let mut bytes = Vec::new();
        c.write_le_bytes(&mut bytes);
        assert_eq!(bytes.len(), 16);
        let back = PackedCounters::from_le_bytes(23, 3, &bytes).unwrap();
        assert!((0..23).all(|i| back.get(i) == c.get(i)));
        let mut bad = bytes.clone();
        bad[7] |= 0x80; // bit 63 of word 0 belongs to no counter
        assert!(PackedCounters::from_le_bytes(23, 3, &bad).is_err());
        assert!(PackedCounters::from_le_bytes(23, 0, &bytes).is_err());
        assert!(PackedCounters::from_le_bytes(23, 3, &bytes[..8]).is_err());
    }

    use super::*;

    /// Counters of `W` bits (`len` of them, a third each at zero, at the maximum and
    /// anything, from `seed`): `by_shifts::<W>` locates every one where `by_division` does,
    /// `get_by` through either reads what `get` reads, and `saturating_add_at` (either way)
    /// and `add_at` (where the sum fits) leave the array as `saturating_add` does, at every
    /// position, including the last counter of each word and of the array.
    fn shifts_are_division<const W: u32>(
        len: u64,
        seed: u64,
        deltas: &[u32],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut fast = PackedCounters::zeros(len, W).unwrap();
        let mut rng = seed;
        let mut draw = || {
            rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
            (rng ^ (rng >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9)
        };
        for i in 0..len {
            let r = draw();
            let value = match r % 3 {
                0 => 0,
                1 => fast.max_value(),
                _ => (r >> 8) as u32 & fast.max_value(),
            };
            fast.set(i, value);
        }
        let shifts = fast.by_shifts::<W>().expect("the width is W");
        let division = fast.by_division();
        proptest::prop_assert_eq!(shifts.max_value(), fast.max_value());
        proptest::prop_assert_eq!(division.max_value(), fast.max_value());
        for i in 0..len {
            proptest::prop_assert_eq!(shifts.locate(i), division.locate(i), "counter {}", i);
            proptest::prop_assert_eq!(fast.get_by(shifts, i), fast.get(i));
            proptest::prop_assert_eq!(fast.get_by(division, i), fast.get(i));
        }
        let mut slow = fast.clone();
        for (j, &delta) in deltas.iter().enumerate() {
            let i = draw() % len;
            let delta = delta & fast.max_value();
            let place = shifts.locate(i);
            if fast.get(i) + delta <= fast.max_value() && j % 2 == 0 {
                fast.add_at(shifts, place, delta);
            } else if j % 3 == 0 {
                fast.saturating_add_at(division, division.locate(i), delta);
            } else {
                fast.saturating_add_at(shifts, place, delta);
            }
            slow.saturating_add(i, delta);
            proptest::prop_assert_eq!(&fast, &slow);
        }
        Ok(())
    }

    proptest::proptest! {
        /// [`shifts_are_division`] for every width that is a power of two, and `by_shifts`
        /// is `None` for every other width.
        #[test]
        fn counters_by_shifts_are_counters_by_division(
            len in 1..300u64,
            seed: u64,
            deltas in proptest::collection::vec(proptest::num::u32::ANY, 0..60),
            width in 1..=16u32,
        ) {
            shifts_are_division::<1>(len, seed, &deltas)?;
            shifts_are_division::<2>(len, seed, &deltas)?;
            shifts_are_division::<4>(len, seed, &deltas)?;
            shifts_are_division::<8>(len, seed, &deltas)?;
            shifts_are_division::<16>(len, seed, &deltas)?;
            let c = PackedCounters::zeros(len, width).unwrap();
            proptest::prop_assert_eq!(c.by_shifts::<8>().is_some(), width == 8);
            proptest::prop_assert_eq!(c.by_shifts::<16>().is_some(), width == 16);
            proptest::prop_assert_eq!(c.by_shifts::<4>().is_some(), width == 4);
        }
        /// 8-bit counters read by [`ByShifts::byte`]'s rotate (through the array and through
        /// [`ByteCounters`]) are `get`'s, at every position of a few words (each byte of a
        /// word, the last counter of the array); [`ByteCounters::add`] (where the sum fits)
        /// and [`ByteCounters::saturating_add`] leave the array as `saturating_add` does,
        /// the neighbours in the word untouched.
        #[test]
        fn byte_counters_are_the_counters(
            len in 1..100u64,
            values in proptest::collection::vec(proptest::num::u8::ANY, 100),
            adds in proptest::collection::vec((0..100u64, 0..=255u32), 0..60),
        ) {
            let mut fast = PackedCounters::zeros(len, 8).unwrap();
            for i in 0..len {
                fast.set(i, u32::from(values[i as usize]));
            }
            let at = fast.by_shifts::<8>().unwrap();
            for i in 0..len {
                proptest::prop_assert_eq!(fast.byte(at, i), fast.get(i), "counter {}", i);
                proptest::prop_assert_eq!(fast.bytes_mut(at).get(i), fast.get(i), "counter {}", i);
            }
            let mut slow = fast.clone();
            for (j, &(i, delta)) in adds.iter().enumerate() {
                let i = i % len;
                if fast.get(i) + delta <= 255 && j % 2 == 0 {
                    fast.bytes_mut(at).add(i, delta);
                } else {
                    fast.bytes_mut(at).saturating_add(i, delta);
                }
                slow.saturating_add(i, delta);
                proptest::prop_assert_eq!(&fast, &slow);
            }
        }
        /// `increment` (one locate) against `get` then `saturating_add`, for every width,
        /// on counters at the maximum and below: the same old values, the same counters.
        #[test]
        fn increment_is_get_then_saturating_add(
            width in 1..=16u32,
            len in 1..200u64,
            values in proptest::collection::vec(proptest::num::u32::ANY, 0..200),
            at in proptest::collection::vec(0..200u64, 0..100),
        ) {
            let mut fast = PackedCounters::zeros(len, width).unwrap();
            for (i, v) in values.iter().enumerate().take(len as usize) {
                // A third at the maximum, so that increments saturate.
                let v = if v % 3 == 0 { fast.max_value() } else { v & fast.max_value() };
                fast.set(i as u64, v);
            }
            let mut slow = fast.clone();
            for &i in &at {
                let i = i % len;
                let old = slow.get(i);
                slow.saturating_add(i, 1);
                proptest::prop_assert_eq!(fast.increment(i), old);
            }
            proptest::prop_assert_eq!(fast, slow);
        }

        /// `increment_each` against one `increment` per index, for every width, at k = 4,
        /// 7 and 10, with indexes drawn from a few counters (so that they repeat and share
        /// words) on counters at the maximum and below: the same smallest old value, the
        /// same counters.
        #[test]
        fn increment_each_is_increment_in_turn(
            width in 1..=16u32,
            len in 1..40u64,
            values in proptest::collection::vec(proptest::num::u32::ANY, 40),
            at in proptest::collection::vec(0..40u64, 10),
        ) {
            let mut fast = PackedCounters::zeros(len, width).unwrap();
            for (i, v) in values.iter().enumerate().take(len as usize) {
                let v = if v % 3 == 0 { fast.max_value() } else { v & fast.max_value() };
                fast.set(i as u64, v);
            }
            let at: Vec<u64> = at.iter().map(|i| i % len).collect();
            let expected = |fast: &PackedCounters, at: &[u64]| {
                let mut slow = fast.clone();
                let old = at.iter().map(|&i| slow.increment(i)).min().unwrap_or(u32::MAX);
                (old, slow)
            };
            let (old, slow) = expected(&fast, &at[..4]);
            proptest::prop_assert_eq!(fast.increment_each(&<[u64; 4]>::try_from(&at[..4]).unwrap()), old);
            proptest::prop_assert_eq!(&fast, &slow);
            let (old, slow) = expected(&fast, &at[..7]);
            proptest::prop_assert_eq!(fast.increment_each(&<[u64; 7]>::try_from(&at[..7]).unwrap()), old);
            proptest::prop_assert_eq!(&fast, &slow);
            let (old, slow) = expected(&fast, &at);
            proptest::prop_assert_eq!(fast.increment_each(&<[u64; 10]>::try_from(&at[..]).unwrap()), old);
            proptest::prop_assert_eq!(&fast, &slow);
        }

        /// The word-at-a-time run decrement against its counter-at-a-time twin, for every
        /// width, over runs that start and end inside words, span several or run past the
        /// end, on counters at 0, at the maximum and between.
        #[test]
        fn decrement_nonzero_run_is_one_counter_at_a_time(
            width in 1..=16u32,
            len in 1..300u64,
            seed: u64,
            start in 0..320u64,
            count in 0..200u64,
        ) {
            let mut fast = PackedCounters::zeros(len, width).unwrap();
            let mut rng = seed;
            for i in 0..len {
                rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let r = (rng ^ (rng >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                // A third each: zero, the maximum, anything.
                let value = match r % 3 {
                    0 => 0,
                    1 => fast.max_value(),
                    _ => (r >> 8) as u32 & fast.max_value(),
                };
                fast.set(i, value);
            }
            let mut slow = fast.clone();
            fast.decrement_nonzero_run(start, count);
            for i in start..start.saturating_add(count).min(len) {
                if slow.get(i) != 0 {
                    slow.saturating_sub(i, 1);
                }
            }
            proptest::prop_assert_eq!(fast, slow);
        }

    }

    #[test]
    fn packed_counters_locate_by_multiplication_is_the_division() {
        for width in 1..=16u32 {
            let per_word = (64 / width) as u64;
            let magic = PackedCounters::zeros(1, width).unwrap().magic;
            let (mut index, mut step) = (0u64, 1u64);
            while index < 1 << 50 {
                for i in [index, index + 1, index + per_word - 1, index * per_word] {
                    let expected = (i / per_word, i % per_word);
                    assert_eq!(div_rem(i, per_word, magic), expected, "width {width}, {i}");
                }
                index += step;
                step = step * 3 / 2 + 1;
            }
        }
    }

    #[test]
    fn set_reports_whether_the_bit_was_clear() {
        let mut v = BitVec::zeros(130).unwrap();
        assert!(v.set(129));
        assert!(!v.set(129));
        assert!(v.get(129));
        assert!(!v.get(128));
        assert_eq!(v.count_ones(), 1);
        assert!(v.unset(129));
        assert!(!v.unset(129));
        assert_eq!(v.count_ones(), 0);
    }

    #[test]
    fn bytes_round_trip_and_padding_bits_are_rejected() {
        let mut v = BitVec::zeros(70).unwrap();
        for i in [0, 5, 63, 64, 69] {
            v.set(i);
        }
        let mut bytes = Vec::new();
        v.write_le_bytes(&mut bytes);
        assert_eq!(bytes.len(), 16);
        assert_eq!(BitVec::from_le_bytes(70, &bytes).unwrap(), v);
        bytes[8] |= 0x80; // bit 71, past the end
        assert!(BitVec::from_le_bytes(70, &bytes).is_err());
        assert!(BitVec::from_le_bytes(70, &bytes[..8]).is_err());
    }

    #[test]
    fn byte_ranges_match_the_whole_image() {
        let mut v = BitVec::zeros(200).unwrap();
        for i in [0, 7, 8, 63, 64, 100, 199] {
            v.set(i);
        }
        let mut whole = Vec::new();
        v.write_le_bytes(&mut whole);
        for offset in 0..whole.len() {
            for len in 0..=(whole.len() - offset) {
                let mut out = vec![0u8; len];
                v.read_le_bytes_at(offset as u64, &mut out).unwrap();
                assert_eq!(out, whole[offset..offset + len]);
            }
        }
        let mut w = BitVec::zeros(200).unwrap();
        w.write_le_bytes_at(5, &whole[5..17]).unwrap();
        w.write_le_bytes_at(0, &whole[..5]).unwrap();
        w.write_le_bytes_at(17, &whole[17..]).unwrap();
        assert_eq!(w, v);
        let mut bad = whole[24..].to_vec();
        bad[1] |= 0x80; // bit 207: padding
        assert!(w.write_le_bytes_at(24, &bad).is_err());
        assert_eq!(w, v, "a refused write changes nothing");
    }

    /// Writing a large vector's whole image in one call advises huge pages (when they are
    /// on), writing part of it does not, and neither changes what is written.
    #[test]
    fn a_whole_image_written_at_once_advises_huge_pages_and_a_part_does_not() {
        use crate::arch::{advised_on_this_thread, huge_pages_enabled};
        let len = 8u64 << 23; // 8 MiB
        let image: Vec<u8> = (0..BitVec::encoded_len(len)).map(|i| i as u8).collect();
        let mut part = BitVec::zeros(len).unwrap();
        let before = advised_on_this_thread();
        part.write_le_bytes_at(0, &image[..image.len() - 8])
            .unwrap();
        part.write_le_bytes_at(8, &image[8..]).unwrap();
        assert_eq!(advised_on_this_thread(), before);
        let mut whole = BitVec::zeros(len).unwrap();
        whole.write_le_bytes_at(0, &image).unwrap();
        let advised = advised_on_this_thread() - before;
        if huge_pages_enabled() {
            assert!(advised >= 3 << 21, "{advised}");
        } else {
            assert_eq!(advised, 0);
        }
        assert_eq!(whole, part);
        assert_eq!(whole, BitVec::from_le_bytes(len, &image).unwrap());
    }

    #[test]
    fn union_and_intersection_are_bitwise() {
        let mut a = BitVec::zeros(100).unwrap();
        let mut b = BitVec::zeros(100).unwrap();
        a.set(1);
        a.set(2);
        b.set(2);
        b.set(3);
        let mut u = a.clone();
        u.union_with(&b);
        assert_eq!(u.count_ones(), 3);
        a.intersect_with(&b);
        assert_eq!(a.count_ones(), 1);
        assert!(a.get(2));
    }

    /// Resident memory of this process in bytes (Linux).
    #[cfg(target_os = "linux")]
    fn resident_bytes() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace()
            .nth(1)
            .unwrap()
            .parse::<u64>()
            .unwrap()
            * 1024
    }

    /// A 1 GiB empty bit vector is not written at creation: its pages come from the
    /// allocator's zeroed memory and cost nothing until set (the margin allows for what
    /// the other tests of this process allocate meanwhile).
    #[cfg(target_os = "linux")]
    #[test]
    fn an_empty_bit_vector_costs_memory_only_as_it_is_written() {
        let before = resident_bytes();
        let mut bits = BitVec::zeros(8 << 30).unwrap();
        let after = resident_bytes();
        assert!(
            after.saturating_sub(before) < 256 << 20,
            "creating 1 GiB of zero bits made {} MiB resident",
            (after - before) >> 20
        );
        bits.set(5 << 30);
        assert!(bits.get(5 << 30) && !bits.get(5 << 30 | 1));
    }

    #[test]
    fn impossible_allocations_are_errors() {
        assert!(matches!(
            BitVec::zeros(u64::MAX),
            Err(Error::OutOfMemory { .. })
        ));
        assert!(matches!(
            AtomicBitVec::zeros(u64::MAX),
            Err(Error::OutOfMemory { .. })
        ));
    }

    #[test]
    fn atomic_set_reports_whether_the_bit_was_clear() {
        let v = AtomicBitVec::zeros(130).unwrap();
        assert!(v.set(129));
        assert!(!v.set(129));
        assert!(v.get(129));
        assert!(!v.get(128));
        assert_eq!(v.count_ones(), 1);
        assert_eq!((v.len(), v.memory_bytes()), (130, 24));
    }

    #[test]
    fn conversions_keep_every_bit_and_reuse_the_allocation() {
        let mut plain = BitVec::zeros(200).unwrap();
        for i in [0, 63, 64, 127, 199] {
            plain.set(i);
        }
        let address = plain.words.as_ptr() as usize;
        let atomic = AtomicBitVec::from(plain.clone());
        assert!((0..200).all(|i| atomic.get(i) == plain.get(i)));
        assert_eq!(atomic.snapshot(), plain);
        atomic.set(5);
        let back = BitVec::from(atomic);
        assert_eq!(back.count_ones(), 6);
        assert!(back.get(5));
        // Moving the words does not copy them into a new allocation (where the layouts agree).
        #[cfg(target_pointer_width = "64")]
        let moved = BitVec::from(AtomicBitVec::from(plain));
        #[cfg(target_pointer_width = "64")]
        assert_eq!(moved.words.as_ptr() as usize, address);
        let _ = address;
    }

    #[test]
    fn threads_setting_the_same_word_lose_no_bit_and_one_claims_each() {
        let v = AtomicBitVec::zeros(256).unwrap();
        let claimed: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|t| {
                    let v = &v;
                    // Every thread sets every bit, starting at a different place.
                    s.spawn(move || (0..256).filter(|i| v.set((i + 64 * t) % 256)).count())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap() as u64).sum()
        });
        assert_eq!(claimed, 256);
        assert_eq!(v.count_ones(), 256);
    }
}
