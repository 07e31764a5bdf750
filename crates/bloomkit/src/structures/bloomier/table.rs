//! The Bloomier filter's table of m cells of w bits, stored as the query reads it.
//!
//! Cells of 8 and 16 bits — the fingerprints of Graf & Lemire's BinaryFuse8 and 16, and the
//! membership tables of ε = 2⁻⁸ and 2⁻¹⁶ — are kept as an array of `u8` or `u16`: a query's
//! read is one indexed load, as in xorf, instead of a word load, a shift and a mask. Every
//! other width is a [`PackedCells`] (cells packed densely across 64-bit words). All three
//! forms have the same bytes on disk: the cells packed as little-endian 64-bit words,
//! `⌈m·w/64⌉` of them, the bits past the last cell zero — an array of `u8` or `u16` cells
//! padded with zero cells to whole words is exactly that byte string.

use crate::bits::PackedCells;
use crate::codec::invalid;
use crate::error::{DecodeError, Error};

/// m cells of w bits (see the module docs).
#[derive(Clone, PartialEq, Eq)]
pub(super) enum Table {
    /// 8-bit cells, padded with zero cells to a multiple of 8.
    Bytes(Vec<u8>, u64),
    /// 16-bit cells, padded with zero cells to a multiple of 4.
    Halves(Vec<u16>, u64),
    /// Any other width.
    Packed(PackedCells),
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (form, width) = match self {
            Table::Bytes(..) => ("bytes", 8),
            Table::Halves(..) => ("halves", 16),
            Table::Packed(p) => ("packed", p.width()),
        };
        f.debug_struct("Table")
            .field("form", &form)
            .field("len", &self.len())
            .field("width", &width)
            .finish()
    }
}

/// A cell type of an unpacked table: `u8` or `u16`.
pub(super) trait Cell: Copy {
    fn widen(self) -> u64;
    /// The low bits of `value` (a cell keeps its low w bits, as [`PackedCells::set`]).
    fn narrow(value: u64) -> Self;
}

impl Cell for u8 {
    #[inline(always)]
    fn widen(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn narrow(value: u64) -> Self {
        value as u8
    }
}

impl Cell for u16 {
    #[inline(always)]
    fn widen(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn narrow(value: u64) -> Self {
        value as u16
    }
}

/// `count` zero cells of type `T` (on huge pages when large, as the packed form's words), or
/// [`Error::OutOfMemory`].
fn zero_vec<T: crate::arch::ZeroBits>(count: u64) -> Result<Vec<T>, Error> {
    let bytes = count.saturating_mul(std::mem::size_of::<T>() as u64);
    let count = usize::try_from(count).map_err(|_| Error::OutOfMemory { bytes })?;
    crate::arch::calloc_vec(count, true).ok_or(Error::OutOfMemory { bytes })
}

impl Table {
    /// `len` zero cells of `width` bits (1 to 64).
    pub(super) fn zeros(len: u64, width: u32) -> Result<Self, Error> {
        Ok(match width {
            8 => Table::Bytes(zero_vec(len.div_ceil(8) * 8)?, len),
            16 => Table::Halves(zero_vec(len.div_ceil(4) * 4)?, len),
            _ => Table::Packed(PackedCells::zeros(len, width)?),
        })
    }

    /// The table of `len` cells of 8 bits in `bytes`, if `width` is 8 and `bytes` are
    /// exactly that table's zero cells (padded to a multiple of 8): an array of zero bytes
    /// the caller has no more use for becomes the table, without allocating and zeroing
    /// another. `None` for any other width, length or content.
    pub(super) fn from_zero_bytes(bytes: Vec<u8>, len: u64, width: u32) -> Option<Self> {
        let zero = bytes.iter().fold(0, |any, &b| any | b) == 0;
        (width == 8 && bytes.len() as u64 == len.div_ceil(8) * 8 && zero)
            .then_some(Table::Bytes(bytes, len))
    }

    /// Reads `len` cells of `width` bits from their bytes on disk (see the module docs),
    /// checking the length before allocating and that the padding is zero.
    pub(super) fn from_le_bytes(len: u64, width: u32, bytes: &[u8]) -> Result<Self, DecodeError> {
        let (per_word, cell_bytes) = match width {
            8 => (8, 1),
            16 => (4, 2),
            _ => return PackedCells::from_le_bytes(len, width, bytes).map(Table::Packed),
        };
        let padded = len.div_ceil(per_word) * per_word;
        if padded.checked_mul(cell_bytes) != Some(bytes.len() as u64) {
            return Err(invalid(
                "payload",
                format!(
                    "{} bytes cannot hold exactly {len} cells of {width} bits",
                    bytes.len()
                ),
            ));
        }
        // `len ≤ padded` cells, so the cut is inside the bytes.
        if bytes[(len * cell_bytes) as usize..].iter().any(|&b| b != 0) {
            return Err(invalid("payload", "bits set past the last cell".into()));
        }
        Ok(if width == 8 {
            Table::Bytes(bytes.to_vec(), len)
        } else {
            let halves = bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            Table::Halves(halves, len)
        })
    }

    /// m, the number of cells.
    pub(super) fn len(&self) -> u64 {
        match self {
            Table::Bytes(_, len) | Table::Halves(_, len) => *len,
            Table::Packed(p) => p.len(),
        }
    }

    /// The heap memory of the cells, in bytes (padding included: the same as a
    /// [`PackedCells`] of the same cells).
    pub(super) fn memory_bytes(&self) -> usize {
        match self {
            Table::Bytes(b, _) => b.len(),
            Table::Halves(h, _) => h.len() * 2,
            Table::Packed(p) => p.memory_bytes(),
        }
    }

    /// Appends the cells' bytes on disk.
    pub(super) fn write_le_bytes(&self, out: &mut Vec<u8>) {
        match self {
            Table::Bytes(b, _) => out.extend_from_slice(b),
            Table::Halves(h, _) => {
                out.reserve(h.len() * 2);
                for x in h {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
            Table::Packed(p) => p.write_le_bytes(out),
        }
    }

    /// The value of cell `index` (below [`len`](Self::len)).
    #[inline]
    pub(super) fn get(&self, index: u64) -> u64 {
        match self {
            Table::Bytes(b, _) => u64::from(b[index as usize]),
            Table::Halves(h, _) => u64::from(h[index as usize]),
            Table::Packed(p) => p.get(index),
        }
    }

    /// Sets cell `index` to the low w bits of `value`.
    #[inline]
    pub(super) fn set(&mut self, index: u64, value: u64) {
        match self {
            Table::Bytes(b, _) => b[index as usize] = value as u8,
            Table::Halves(h, _) => h[index as usize] = value as u16,
            Table::Packed(p) => p.set(index, value),
        }
    }

    /// The xor of three cells: one load each for 8- and 16-bit cells.
    #[inline(always)]
    pub(super) fn xor3(&self, at: [u64; 3]) -> u64 {
        match self {
            Table::Bytes(b, _) => xor3_of(b, at),
            Table::Halves(h, _) => xor3_of(h, at),
            Table::Packed(p) => xor3_packed(p, at),
        }
    }

    /// Sets each key's own cell, keys in the order given as `(cells, which of them is the
    /// key's own, target word)`: the own cell, still 0, takes `target ⊕` the xor of the
    /// three cells, which makes the key's xor of cells the target.
    pub(super) fn assign(&mut self, keys: impl Iterator<Item = ([u64; 3], usize, u64)>) {
        match self {
            Table::Bytes(t, _) => assign_unpacked(t, keys),
            Table::Halves(t, _) => assign_unpacked(t, keys),
            Table::Packed(p) => {
                for (at, own, target) in keys {
                    debug_assert_eq!(p.get(at[own]), 0);
                    let word = xor3_packed(p, at);
                    p.set(at[own], target ^ word);
                }
            }
        }
    }
}

/// [`Table::assign`] of an 8- or 16-bit table.
fn assign_unpacked<T: Cell>(t: &mut [T], keys: impl Iterator<Item = ([u64; 3], usize, u64)>) {
    for (at, own, target) in keys {
        debug_assert_eq!(t[at[own] as usize].widen(), 0);
        let word = xor3_of(t, at);
        t[at[own] as usize] = T::narrow(target ^ word);
    }
}

/// The xor of cells `at` of an unpacked table.
#[inline(always)]
fn xor3_of<T: Cell>(cells: &[T], at: [u64; 3]) -> u64 {
    cells[at[0] as usize].widen() ^ cells[at[1] as usize].widen() ^ cells[at[2] as usize].widen()
}

/// The xor of cells `at` of a packed table.
#[inline(always)]
fn xor3_packed(cells: &PackedCells, at: [u64; 3]) -> u64 {
    cells.get(at[0]) ^ cells.get(at[1]) ^ cells.get(at[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every width's table holds what a [`PackedCells`] of the same cells holds, writes its
    /// bytes, reads them back, and refuses a wrong length or a set padding bit.
    #[test]
    fn tables_of_every_width_match_packed_cells_on_disk() {
        for width in [1u32, 7, 8, 12, 16, 33, 64] {
            for len in [0u64, 1, 5, 150] {
                let mut table = Table::zeros(len, width).unwrap();
                let mut packed = PackedCells::zeros(len, width).unwrap();
                for i in 0..len {
                    let v = crate::hash::mix64(i + u64::from(width));
                    table.set(i, v);
                    packed.set(i, v);
                }
                assert_eq!(table.len(), len);
                assert_eq!(table.memory_bytes(), packed.memory_bytes(), "w {width}");
                for i in 0..len {
                    assert_eq!(table.get(i), packed.get(i), "w {width}, cell {i}");
                }
                if len >= 3 {
                    let at = [0, len / 2, len - 1];
                    let want = packed.get(at[0]) ^ packed.get(at[1]) ^ packed.get(at[2]);
                    assert_eq!(table.xor3(at), want);
                }
                let (mut mine, mut theirs) = (Vec::new(), Vec::new());
                table.write_le_bytes(&mut mine);
                packed.write_le_bytes(&mut theirs);
                assert_eq!(mine, theirs, "w {width}, len {len}");
                assert!(Table::from_le_bytes(len, width, &mine).unwrap() == table);
                if !mine.is_empty() {
                    assert!(Table::from_le_bytes(len, width, &mine[1..]).is_err());
                    if len * u64::from(width) % 64 != 0 {
                        let last = mine.len() - 1;
                        mine[last] |= 0x80;
                        assert!(Table::from_le_bytes(len, width, &mine).is_err());
                    }
                }
            }
        }
    }

    /// An array of zero bytes of the padded length becomes the 8-bit table of those cells
    /// (the same table as `zeros`); a byte not zero — in a cell or in the padding — a length
    /// not padded to whole words, or another width, is refused.
    #[test]
    fn zero_bytes_become_a_table_only_when_they_are_one() {
        for len in [0u64, 1, 7, 8, 9, 1_000] {
            let padded = (len.div_ceil(8) * 8) as usize;
            let table = Table::from_zero_bytes(vec![0; padded], len, 8).unwrap();
            assert!(table == Table::zeros(len, 8).unwrap(), "len {len}");
            assert_eq!(table.len(), len);
            for at in 0..padded {
                let mut bytes = vec![0; padded];
                bytes[at] = 1 << (at % 8);
                assert!(
                    Table::from_zero_bytes(bytes, len, 8).is_none(),
                    "{len} {at}"
                );
            }
            assert!(Table::from_zero_bytes(vec![0; padded + 8], len, 8).is_none());
            assert!(Table::from_zero_bytes(vec![0; padded], len, 16).is_none());
            assert!(Table::from_zero_bytes(vec![0; padded], len, 7).is_none());
        }
        assert!(Table::from_zero_bytes(vec![0; 8], 1, 8).is_some());
        assert!(Table::from_zero_bytes(vec![0; 1], 1, 8).is_none());
    }
}
