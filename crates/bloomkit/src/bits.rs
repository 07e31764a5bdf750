//! Bit storage shared by the filters.

use crate::error::Error;

/// A fixed-size array of bits, stored in 64-bit words.
///
/// Bit `i` is bit `i % 64` of word `i / 64`; on disk the words are little-endian, so the
/// byte layout is the same on every platform. Bits past `len` in the last word are always
/// zero (every operation keeps them so), which makes `count_ones` and equality exact.
#[derive(Clone, PartialEq, Eq)]
pub struct BitVec {
    words: Vec<u64>,
    len: u64,
}

impl BitVec {
    /// A vector of `len` zero bits. Allocation failure is an error, not an abort.
    pub fn zeros(len: u64) -> Result<Self, Error> {
        let words = len.div_ceil(64);
        let bytes = words.saturating_mul(8);
        let count = usize::try_from(words).map_err(|_| Error::OutOfMemory { bytes })?;
        let mut storage = Vec::new();
        storage
            .try_reserve_exact(count)
            .map_err(|_| Error::OutOfMemory { bytes })?;
        storage.resize(count, 0);
        Ok(Self {
            words: storage,
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

    /// Whether bit `index` is 1.
    #[inline]
    pub fn get(&self, index: u64) -> bool {
        debug_assert!(index < self.len);
        self.words[(index >> 6) as usize] & (1u64 << (index & 63)) != 0
    }

    /// The number of bits that are 1.
    pub fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// Sets every bit to 0.
    pub fn clear(&mut self) {
        self.words.fill(0);
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
        out.reserve(self.words.len() * 8);
        for w in &self.words {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }

    /// Reads `len` bits from exactly [`BitVec::encoded_len`]`(len)` little-endian bytes.
    /// Fails if the length is wrong or if a padding bit past `len` is set.
    pub fn from_le_bytes(len: u64, bytes: &[u8]) -> Result<Self, crate::error::DecodeError> {
        use crate::error::DecodeError;
        if bytes.len() as u64 != Self::encoded_len(len) {
            return Err(DecodeError::InvalidField {
                field: "payload",
                reason: format!("{} bytes cannot hold exactly {len} bits", bytes.len()),
            });
        }
        let words: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
            .collect();
        let tail_bits = len % 64;
        if tail_bits != 0 && words.last().is_some_and(|w| w >> tail_bits != 0) {
            return Err(DecodeError::InvalidField {
                field: "payload",
                reason: "bits set past the end of the filter".into(),
            });
        }
        Ok(Self { words, len })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_reports_whether_the_bit_was_clear() {
        let mut v = BitVec::zeros(130).unwrap();
        assert!(v.set(129));
        assert!(!v.set(129));
        assert!(v.get(129));
        assert!(!v.get(128));
        assert_eq!(v.count_ones(), 1);
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

    #[test]
    fn impossible_allocations_are_errors() {
        assert!(matches!(
            BitVec::zeros(u64::MAX),
            Err(Error::OutOfMemory { .. })
        ));
    }
}
