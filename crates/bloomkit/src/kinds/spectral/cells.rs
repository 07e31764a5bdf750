//! How a spectral filter keeps its counters: fixed-width ([`PackedCounters`] of w bits), or
//! compact (a 4-bit base nibble per counter, and a table of the counters at 15 or more).
//! See the [module docs](super), "Counters".

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

use crate::bits::{ByShifts, Locate, PackedCounters};
use crate::codec::{invalid, EntryStream};
use crate::error::{DecodeError, Error};
use crate::hash::mix64;

/// How a [`SpectralBloomFilter`](super::SpectralBloomFilter) keeps its counters in memory
/// and on disk ([module docs](super), "Counters"). Both give exactly the same answers.
///
/// ```
/// use bloomkit::spectral::{SpectralBloomFilter, SpectralLayout};
///
/// let compact = SpectralBloomFilter::with_capacity(10_000, 0.01)?;
/// let fixed = SpectralBloomFilter::builder()
///     .capacity(10_000)
///     .fpp(0.01)
///     .counter_layout(SpectralLayout::Fixed)
///     .build()?;
/// assert_eq!(compact.counter_layout(), SpectralLayout::Compact);
/// // A quarter of the bytes, up to the rounding of each array to whole 64-bit words (four
/// // 4-bit words round up by at most three more words than one 16-bit word does).
/// let (compact, fixed) = (bloomkit::Filter::memory_bytes(&compact), bloomkit::Filter::memory_bytes(&fixed));
/// assert!(4 * compact <= fixed + 3 * 8);
/// assert!(4 * compact >= fixed);
/// # Ok::<(), bloomkit::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SpectralLayout {
    /// A 4-bit base nibble per counter: its count below 15; at 15 an escape, the count
    /// (up to `2^w − 1`) kept in a table keyed by the counter's index. The default for
    /// counters wider than 4 bits; a quarter of the fixed layout's memory at 16 bits.
    #[default]
    Compact,
    /// Every counter w bits wide, as the filter kept them before the compact layout (and
    /// what counters of 4 bits or fewer always are: they have nothing to escape).
    Fixed,
}

impl SpectralLayout {
    /// Both layouts.
    pub const ALL: [SpectralLayout; 2] = [SpectralLayout::Compact, SpectralLayout::Fixed];

    /// The short name: `compact`, `fixed`.
    pub fn name(self) -> &'static str {
        match self {
            SpectralLayout::Compact => "compact",
            SpectralLayout::Fixed => "fixed",
        }
    }

    /// The layout of a short name.
    pub fn from_name(name: &str) -> Option<SpectralLayout> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The layout that counters of `width` bits get when this one is asked for: compact
    /// only above 4 bits.
    pub(crate) fn for_width(self, width: u32) -> SpectralLayout {
        if width <= NIBBLE_BITS {
            SpectralLayout::Fixed
        } else {
            self
        }
    }
}

impl fmt::Display for SpectralLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The width of a base nibble.
pub(crate) const NIBBLE_BITS: u32 = 4;
/// The nibble that means "15 or more: see the table".
pub(crate) const ESCAPE: u32 = 15;
/// The bytes of one stored table entry: the counter's index (u64) and its count (u32).
pub(crate) const ENTRY_BYTES: u64 = 12;
/// The stored id of the compact layout (the fixed layout's files have no id: they are the
/// files of the builds before it).
pub(crate) const COMPACT_ID: u32 = 1;

/// The table's hasher: one [`mix64`] of the counter index (a `HashMap`'s default SipHash
/// costs several times more, and the keys are not chosen by an adversary who could see the
/// seed-less mix: the positions are already hashes).
#[derive(Clone, Copy, Default)]
pub(crate) struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ u64::from(b));
        }
    }
    fn write_u64(&mut self, index: u64) {
        self.0 = mix64(index);
    }
}

type Table = HashMap<u64, u32, BuildHasherDefault<IndexHasher>>;

/// Counters in the compact layout: `len` base nibbles, and the table of the escaped ones
/// (nibble 15), each holding its count in `15..=max`. Every escaped nibble has an entry and
/// every entry an escaped nibble.
#[derive(Clone, PartialEq)]
pub(crate) struct Compact {
    nibbles: PackedCounters,
    table: Table,
    width: u32,
    max: u32,
    at: ByShifts<4>,
}

impl Compact {
    fn zeros(len: u64, width: u32) -> Result<Self, Error> {
        let nibbles = PackedCounters::zeros(len, NIBBLE_BITS)?;
        Ok(Self::with_nibbles(nibbles, width, Table::default()))
    }

    fn with_nibbles(nibbles: PackedCounters, width: u32, table: Table) -> Self {
        let at = nibbles.by_shifts::<4>().expect("nibbles are 4 bits wide");
        Compact {
            nibbles,
            table,
            width,
            max: (1u32 << width) - 1,
            at,
        }
    }

    /// The base nibble of counter `index`: its count below 15, else [`ESCAPE`].
    #[inline(always)]
    fn nibble(&self, index: u64) -> u32 {
        self.nibbles.get_by(self.at, index)
    }

    #[inline(always)]
    fn get(&self, index: u64) -> u32 {
        match self.nibble(index) {
            ESCAPE => self.escaped(index),
            n => n,
        }
    }

    /// The count of an escaped counter, from the table.
    #[inline(never)]
    fn escaped(&self, index: u64) -> u32 {
        *self
            .table
            .get(&index)
            .expect("an escaped counter has its entry")
    }

    /// Sets counter `index` to `value` (at most the maximum): the nibble, and the entry
    /// added, changed or removed.
    fn set(&mut self, index: u64, value: u32) {
        debug_assert!(value <= self.max);
        if value < ESCAPE {
            if self.nibble(index) == ESCAPE {
                self.table.remove(&index);
            }
            self.nibbles.set(index, value);
        } else {
            self.nibbles.set(index, ESCAPE);
            self.table.insert(index, value);
        }
    }

    /// Adds 1 to counter `index` unless it is at the maximum; the value it had. A nibble
    /// below 14 is raised in its word, with one compare; 14 and 15, which touch the table,
    /// out of line.
    #[inline(always)]
    fn increment(&mut self, index: u64) -> u32 {
        let place = self.at.locate(index);
        let n = self.nibbles.value_at(self.at, place);
        if n < ESCAPE - 1 {
            self.nibbles.add_at(self.at, place, 1);
            return n;
        }
        self.increment_high(index, n)
    }

    /// [`increment`](Self::increment) of a counter whose nibble `n` is 14 (it escapes: the
    /// nibble becomes 15 and the table gets its entry) or 15 (its entry rises).
    #[inline(never)]
    fn increment_high(&mut self, index: u64, n: u32) -> u32 {
        if n == ESCAPE - 1 {
            self.nibbles.set(index, ESCAPE);
            self.table.insert(index, ESCAPE);
            return n;
        }
        self.increment_escaped(index)
    }

    fn increment_escaped(&mut self, index: u64) -> u32 {
        let max = self.max;
        let count = self
            .table
            .get_mut(&index)
            .expect("an escaped counter has its entry");
        let old = *count;
        *count += u32::from(old != max);
        old
    }

    /// The table's memory ([`bytes_of_room`]).
    fn table_bytes(&self) -> usize {
        bytes_of_room(self.table.capacity())
    }

    /// The entries, sorted by index.
    fn sorted_entries(&self) -> Vec<(u64, u32)> {
        let mut entries: Vec<(u64, u32)> = self.table.iter().map(|(&i, &c)| (i, c)).collect();
        entries.sort_unstable();
        entries
    }
}

/// One layout's counters, read and written with no match on the layout: the filter's
/// insert, query and count run generic over this, their [`Cells`] matched once per call
/// (`with_layout!` in the filter's module, the way [`LocateChoice::run`] holds the
/// counting and stable filters' choice of [`Locate`]), so that the loop over an item's
/// counters is compiled once for each layout.
///
/// [`LocateChoice::run`]: crate::bits::LocateChoice::run
pub(crate) trait Layout {
    /// The number of counters.
    fn len(&self) -> u64;
    /// The value of counter `index`.
    fn get(&self, index: u64) -> u32;
    /// A value that is 0 exactly when counter `index` is: the counter, or the compact
    /// layout's nibble (membership reads only the nibbles).
    fn base(&self, index: u64) -> u32;
    /// Adds 1 to counter `index` unless it is at the maximum; the value it had.
    fn increment(&mut self, index: u64) -> u32;
    /// [`increment`](Self::increment) of the counters at `indexes` in turn; the smallest
    /// value they had.
    fn increment_each<const K: usize>(&mut self, indexes: &[u64; K]) -> u32;
    /// Adds `delta` to counter `index`, stopping at the maximum; the new value.
    fn saturating_add(&mut self, index: u64, delta: u32) -> u32;
    /// Prefetches the words of the counters at `indexes` (below [`len`](Self::len)).
    fn prefetch_all(&self, indexes: &[u64]);
}

impl Layout for PackedCounters {
    #[inline(always)]
    fn len(&self) -> u64 {
        PackedCounters::len(self)
    }
    #[inline(always)]
    fn get(&self, index: u64) -> u32 {
        PackedCounters::get(self, index)
    }
    #[inline(always)]
    fn base(&self, index: u64) -> u32 {
        PackedCounters::get(self, index)
    }
    #[inline(always)]
    fn increment(&mut self, index: u64) -> u32 {
        PackedCounters::increment(self, index)
    }
    #[inline(always)]
    fn increment_each<const K: usize>(&mut self, indexes: &[u64; K]) -> u32 {
        PackedCounters::increment_each(self, indexes)
    }
    #[inline(always)]
    fn saturating_add(&mut self, index: u64, delta: u32) -> u32 {
        PackedCounters::saturating_add(self, index, delta)
    }
    #[inline(always)]
    fn prefetch_all(&self, indexes: &[u64]) {
        PackedCounters::prefetch_all(self, indexes)
    }
}

impl Layout for Compact {
    #[inline(always)]
    fn len(&self) -> u64 {
        self.nibbles.len()
    }
    #[inline(always)]
    fn get(&self, index: u64) -> u32 {
        Compact::get(self, index)
    }
    #[inline(always)]
    fn base(&self, index: u64) -> u32 {
        self.nibble(index)
    }
    #[inline(always)]
    fn increment(&mut self, index: u64) -> u32 {
        Compact::increment(self, index)
    }
    #[inline(always)]
    fn increment_each<const K: usize>(&mut self, indexes: &[u64; K]) -> u32 {
        indexes.iter().fold(u32::MAX, |min, &index| {
            min.min(Compact::increment(self, index))
        })
    }
    #[inline(always)]
    fn saturating_add(&mut self, index: u64, delta: u32) -> u32 {
        let old = Compact::get(self, index);
        let value = old.saturating_add(delta).min(self.max);
        if value != old {
            self.set(index, value);
        }
        value
    }
    #[inline(always)]
    fn prefetch_all(&self, indexes: &[u64]) {
        self.nibbles.prefetch_in_range(self.at, indexes);
    }
}

/// A spectral filter's counters (its primary array, or RM's secondary): fixed-width or
/// compact ([`SpectralLayout`]). The filter's code reads and writes them through these
/// methods, which give the same values under both.
#[derive(Clone, PartialEq)]
pub(crate) enum Cells {
    Fixed(PackedCounters),
    Compact(Compact),
}

impl Cells {
    /// `len` counters of `width` bits, all zero, in `layout` (compact only above 4 bits).
    pub(crate) fn zeros(len: u64, width: u32, layout: SpectralLayout) -> Result<Self, Error> {
        Ok(match layout.for_width(width) {
            SpectralLayout::Fixed => Cells::Fixed(PackedCounters::zeros(len, width)?),
            SpectralLayout::Compact => Cells::Compact(Compact::zeros(len, width)?),
        })
    }

    pub(crate) fn layout(&self) -> SpectralLayout {
        match self {
            Cells::Fixed(_) => SpectralLayout::Fixed,
            Cells::Compact(_) => SpectralLayout::Compact,
        }
    }

    pub(crate) fn len(&self) -> u64 {
        match self {
            Cells::Fixed(c) => c.len(),
            Cells::Compact(c) => c.nibbles.len(),
        }
    }

    /// The logical width w (a compact counter counts to `2^w − 1` as a fixed one does).
    pub(crate) fn width(&self) -> u32 {
        match self {
            Cells::Fixed(c) => c.width(),
            Cells::Compact(c) => c.width,
        }
    }

    pub(crate) fn max_value(&self) -> u32 {
        (1u32 << self.width()) - 1
    }

    /// The bits per counter in memory: w, or 4 for the compact layout's nibbles (the size
    /// the batch calls go by).
    pub(crate) fn cell_bits(&self) -> u64 {
        match self {
            Cells::Fixed(c) => u64::from(c.width()),
            Cells::Compact(_) => u64::from(NIBBLE_BITS),
        }
    }

    /// The counters held in the compact layout's table (at 15 or more); 0 for the fixed one.
    pub(crate) fn escaped(&self) -> u64 {
        match self {
            Cells::Fixed(_) => 0,
            Cells::Compact(c) => c.table.len() as u64,
        }
    }

    #[inline(always)]
    pub(crate) fn get(&self, index: u64) -> u32 {
        match self {
            Cells::Fixed(c) => c.get(index),
            Cells::Compact(c) => c.get(index),
        }
    }

    /// Whether every counter at `indexes` is non-zero.
    #[inline(always)]
    pub(crate) fn all_nonzero(&self, indexes: &[u64]) -> bool {
        match self {
            Cells::Fixed(c) => indexes.iter().all(|&p| Layout::base(c, p) > 0),
            Cells::Compact(c) => indexes.iter().all(|&p| Layout::base(c, p) > 0),
        }
    }

    pub(crate) fn set(&mut self, index: u64, value: u32) {
        match self {
            Cells::Fixed(c) => c.set(index, value),
            Cells::Compact(c) => c.set(index, value),
        }
    }

    /// Adds `delta` to counter `index`, stopping at the maximum; the new value.
    pub(crate) fn saturating_add(&mut self, index: u64, delta: u32) -> u32 {
        match self {
            Cells::Fixed(c) => c.saturating_add(index, delta),
            Cells::Compact(c) => {
                let old = c.get(index);
                let value = old.saturating_add(delta).min(c.max);
                if value != old {
                    c.set(index, value);
                }
                value
            }
        }
    }

    /// Subtracts `delta` from counter `index`, stopping at zero; the new value.
    pub(crate) fn saturating_sub(&mut self, index: u64, delta: u32) -> u32 {
        match self {
            Cells::Fixed(c) => c.saturating_sub(index, delta),
            Cells::Compact(c) => {
                let value = c.get(index).saturating_sub(delta);
                c.set(index, value);
                value
            }
        }
    }

    /// Prefetches the word of counter `index` (below [`len`](Self::len)).
    #[inline]
    pub(crate) fn prefetch(&self, index: u64) {
        self.prefetch_all(&[index]);
    }

    /// [`Layout::prefetch_all`] of the counters at `indexes` (below [`len`](Self::len)).
    #[inline(always)]
    pub(crate) fn prefetch_all(&self, indexes: &[u64]) {
        match self {
            Cells::Fixed(c) => Layout::prefetch_all(c, indexes),
            Cells::Compact(c) => Layout::prefetch_all(c, indexes),
        }
    }

    pub(crate) fn advise_bulk_write(&mut self, writes: u64) -> usize {
        match self {
            Cells::Fixed(c) => c.advise_bulk_write(writes),
            Cells::Compact(c) => c.nibbles.advise_bulk_write(writes),
        }
    }

    pub(crate) fn count_nonzero(&self) -> u64 {
        match self {
            Cells::Fixed(c) => c.count_nonzero(),
            Cells::Compact(c) => c.nibbles.count_nonzero(),
        }
    }

    pub(crate) fn count_saturated(&self) -> u64 {
        match self {
            Cells::Fixed(c) => c.count_saturated(),
            Cells::Compact(c) => c.table.values().filter(|&&v| v == c.max).count() as u64,
        }
    }

    pub(crate) fn clear(&mut self) {
        match self {
            Cells::Fixed(c) => c.clear(),
            Cells::Compact(c) => {
                c.nibbles.clear();
                c.table.clear();
            }
        }
    }

    /// Adds each counter of `other` (same length and width, either layout), stopping at
    /// the maximum.
    pub(crate) fn saturating_add_all(&mut self, other: &Cells) {
        if let (Cells::Fixed(ours), Cells::Fixed(theirs)) = (&mut *self, other) {
            return ours.saturating_add_all(theirs);
        }
        for i in 0..self.len().min(other.len()) {
            let theirs = other.get(i);
            if theirs != 0 {
                self.saturating_add(i, theirs);
            }
        }
    }

    /// Lowers each counter to `other`'s at the same index where that one is smaller.
    pub(crate) fn min_with(&mut self, other: &Cells) {
        if let (Cells::Fixed(ours), Cells::Fixed(theirs)) = (&mut *self, other) {
            return ours.min_with(theirs);
        }
        for i in 0..self.len().min(other.len()) {
            let theirs = other.get(i);
            if theirs < self.get(i) {
                self.set(i, theirs);
            }
        }
    }

    /// The memory of the counters: the array, and the compact layout's table.
    pub(crate) fn memory_bytes(&self) -> usize {
        match self {
            Cells::Fixed(c) => c.memory_bytes(),
            Cells::Compact(c) => c.nibbles.memory_bytes() + c.table_bytes(),
        }
    }

    /// Appends the array's words (the counters, or the nibbles).
    pub(crate) fn write_array(&self, out: &mut Vec<u8>) {
        match self {
            Cells::Fixed(c) => c.write_le_bytes(out),
            Cells::Compact(c) => c.nibbles.write_le_bytes(out),
        }
    }

    /// Appends the compact layout's table, sorted by index: `(index: u64, count: u32)`
    /// little-endian per entry (nothing for the fixed layout).
    pub(crate) fn write_table(&self, out: &mut Vec<u8>) {
        if let Cells::Compact(c) = self {
            for (index, count) in c.sorted_entries() {
                out.extend_from_slice(&index.to_le_bytes());
                out.extend_from_slice(&count.to_le_bytes());
            }
        }
    }

    /// Counters in the fixed layout from `array` ([`PackedCounters::from_le_bytes`]).
    pub(crate) fn fixed_from(len: u64, width: u32, array: &[u8]) -> Result<Self, DecodeError> {
        Ok(Cells::Fixed(PackedCounters::from_le_bytes(
            len, width, array,
        )?))
    }

    /// Counters in the compact layout: `len` nibbles from `array`, and the `table`'s
    /// entries (its length already checked against their number), each checked as
    /// [`TableReader`] checks them and against its nibble (15); then every nibble 15 must
    /// have had its entry. The table is allocated for the entries the bytes hold.
    pub(crate) fn compact_from(
        len: u64,
        width: u32,
        array: &[u8],
        table: &[u8],
    ) -> Result<Self, DecodeError> {
        let nibbles = PackedCounters::from_le_bytes(len, NIBBLE_BITS, array)?;
        let at = nibbles.by_shifts::<4>().expect("nibbles are 4 bits wide");
        let entries = table.len() / ENTRY_BYTES as usize;
        let mut map = Table::default();
        map.try_reserve(entries).map_err(|_| {
            invalid(
                "payload",
                format!("no memory for a table of {entries} escaped counters"),
            )
        })?;
        let mut reader = TableReader::new(len, width);
        let mut error = None;
        reader.feed(table, |index, count| {
            if error.is_none() && nibbles.get_by(at, index) != ESCAPE {
                error = Some(entry_without_escape(index));
            }
            map.insert(index, count);
        })?;
        reader.finish()?;
        if let Some(e) = error {
            return Err(e);
        }
        let escapes = count_escapes(array);
        if escapes != entries as u64 {
            return Err(escapes_without_entry(escapes, entries as u64));
        }
        Ok(Cells::Compact(Compact::with_nibbles(nibbles, width, map)))
    }
}

/// The memory of a table with room for `room` entries: a `HashMap` keeps about 8/7
/// buckets per entry it has room for, rounded up to a power of two, each an entry (16
/// bytes with its padding) and a control byte, and 16 control bytes more.
fn bytes_of_room(room: usize) -> usize {
    match room {
        0 => 0,
        room => {
            let buckets = (room * 8 / 7).next_power_of_two();
            buckets * (std::mem::size_of::<(u64, u32)>() + 1) + 16
        }
    }
}

/// The memory of the table a loaded filter has for `entries` entries (a view's summary
/// reports the loaded filter's memory).
pub(crate) fn table_bytes_for(entries: u64) -> usize {
    let mut table = Table::default();
    match table.try_reserve(entries as usize) {
        Ok(()) => bytes_of_room(table.capacity()),
        Err(_) => 0,
    }
}

/// The error for a table entry whose nibble is not 15.
pub(crate) fn entry_without_escape(index: u64) -> DecodeError {
    invalid(
        "overflow table",
        format!("an entry for counter {index}, whose nibble is not 15"),
    )
}

/// The error for nibbles 15 that the table does not hold.
pub(crate) fn escapes_without_entry(escapes: u64, entries: u64) -> DecodeError {
    invalid(
        "overflow table",
        format!(
            "{escapes} nibbles are 15 and {entries} entries hold counts: a nibble 15 without \
             its entry"
        ),
    )
}

/// The nibbles equal to 15 in these little-endian words (whole words; the bits past the
/// last counter are zero): per word, a nibble's four bits and-ed together, counted.
pub(crate) fn count_escapes(words: &[u8]) -> u64 {
    const LOW: u64 = 0x1111_1111_1111_1111;
    words
        .chunks_exact(8)
        .map(|w| {
            let x = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            u64::from((x & (x >> 1) & (x >> 2) & (x >> 3) & LOW).count_ones())
        })
        .sum()
}

/// A reader of a stored table's entries, fed its bytes in pieces (an entry may be split
/// between two), checking each as loading does: indexes strictly increasing and below m,
/// counts in `15..=2^w − 1`. Loading feeds it the whole table; a view feeds it the table's
/// chunks when it opens.
pub(crate) struct TableReader {
    stream: EntryStream<{ ENTRY_BYTES as usize }>,
    len: u64,
    max: u32,
    previous: Option<u64>,
}

impl TableReader {
    pub(crate) fn new(len: u64, width: u32) -> Self {
        TableReader {
            stream: EntryStream::new(),
            len,
            max: (1u32 << width) - 1,
            previous: None,
        }
    }

    /// Reads the entries `bytes` complete, calling `each(index, count)` for every one.
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        mut each: impl FnMut(u64, u32),
    ) -> Result<(), DecodeError> {
        let TableReader {
            stream,
            len,
            max,
            previous,
        } = self;
        stream.feed(bytes, |entry| {
            let (index, count) = decode_entry(entry);
            if let Some(previous) = *previous
                && previous >= index
            {
                return Err(invalid(
                    "overflow table",
                    format!(
                        "entries not sorted or repeated: counter {index} after counter {previous}"
                    ),
                ));
            }
            if index >= *len {
                return Err(invalid(
                    "overflow table",
                    format!("an entry for counter {index} of {len}"),
                ));
            }
            if !(ESCAPE..=*max).contains(&count) {
                return Err(invalid(
                    "overflow table",
                    format!("counter {index} holds {count}, not in {ESCAPE}..={max}"),
                ));
            }
            *previous = Some(index);
            each(index, count);
            Ok(())
        })
    }

    /// Fails if the bytes fed ended inside an entry.
    pub(crate) fn finish(&self) -> Result<(), DecodeError> {
        if self.stream.inside_an_entry() {
            return Err(invalid(
                "overflow table",
                "the table ends inside an entry".into(),
            ));
        }
        Ok(())
    }
}

/// The index and the count of a stored entry (12 bytes).
pub(crate) fn decode_entry(entry: &[u8]) -> (u64, u32) {
    let index = u64::from_le_bytes(entry[..8].try_into().expect("8 bytes"));
    let count = u32::from_le_bytes(entry[8..12].try_into().expect("4 bytes"));
    (index, count)
}
