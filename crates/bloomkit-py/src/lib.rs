//! bloomkit for Python: the extension module `bloomkit._bloomkit`.
//!
//! One class, [`Filter`], wraps the library's run-time [`AnyFilter`]; `bloomkit/__init__.py`
//! makes one subclass of it per kind of [`Kind::ALL`] (named by [`Kind::type_name`]), from
//! the list [`kinds`] returns, so a kind added to the registry appears in Python with no
//! Python code. Items become the bytes the Rust library hashes for the same values
//! ([`items`]); errors become Python's exceptions ([`errors`]).
//!
//! Every filter sits in a [`GilCell`]: a single call, which holds the GIL for one item,
//! reaches the filter directly when no batch call is at work on it; a batch call gives up
//! the GIL and holds the cell's lock for each chunk of items, so other Python threads run
//! meanwhile and concurrent adds lose nothing. A single call that finds a batch call at
//! work waits for the lock without the GIL, so that no two threads can wait for each other.

// Unsafe code only where Python's C API is called directly (the buffer protocol and
// `__index__` checks of `items`) and in `gil_cell`, the filters' shared cell (each block
// with its `// SAFETY:` comment).
#![deny(unsafe_code)]

mod errors;
mod gil_cell;
#[allow(unsafe_code)]
mod items;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use bloomkit::registry::BuildSpec;
use bloomkit::{AnyFilter, Error, Filter as _, Kind, Persist};
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyDict, PyInt, PyList, PyString, PyTuple, PyType};

pub use errors::{FormatError, FullError, InterruptedWriteError};
use gil_cell::GilCell;
use items::{Bytes, HeldChunk, IntColumn};

/// Items per chunk of a batch call: converted with the GIL, then inserted or looked up
/// without it.
const CHUNK: usize = 2048;

/// Chunks shorter than this run with the GIL held. Giving the GIL up and taking it back,
/// with the counting in and out of the filter's cell, costs about 480 instructions per
/// chunk, an item's work (callgrind: `add_many` of one `str` took 2851 instructions per
/// call detached, 2368 with the GIL; BENCHMARKS.md); a chunk this short holds the GIL
/// for a few microseconds, as a few single calls do.
const DETACH_MIN: usize = 64;

/// One chunk of a batch call's items, as [`Filter::chunks`] hands it on.
#[derive(Clone, Copy)]
enum Chunk<'a, 'b> {
    /// Every item an exact `str`: their UTF-8.
    Strs(&'a [&'b [u8]]),
    /// Every item an exact `int`: their 8 bytes as `u64` keys (a negative one's are its
    /// `i64`'s), for the filters' `u64` batch paths.
    Words(&'a [u64]),
    /// Any other mix of items.
    Items(&'a [Bytes<'b>]),
}

impl Chunk<'_, '_> {
    /// How many items.
    fn len(self) -> usize {
        match self {
            Chunk::Strs(items) => items.len(),
            Chunk::Words(keys) => keys.len(),
            Chunk::Items(items) => items.len(),
        }
    }

    /// `filter.insert_batch` of the chunk: one dispatch on the item type per chunk.
    fn insert(self, filter: &mut AnyFilter) -> Result<u64, Error> {
        match self {
            Chunk::Strs(items) => filter.insert_batch(items),
            Chunk::Words(keys) => filter.insert_batch_u64(keys),
            Chunk::Items(items) => filter.insert_batch(items),
        }
    }

    /// `filter.contains_batch_into` of the chunk.
    fn contains(self, filter: &AnyFilter, out: &mut Vec<bool>) {
        match self {
            Chunk::Strs(items) => filter.contains_batch_into(items, out),
            Chunk::Words(keys) => filter.contains_batch_u64(keys, out),
            Chunk::Items(items) => filter.contains_batch_into(items, out),
        }
    }
}

/// `item` in the filter, with the classic, blocked and split-block kinds (the ones Python
/// code calls most often, one item at a time) matched here: their query inlines into the
/// call, where through [`AnyFilter`] it is a call through the kind's vtable. The answer is
/// the same either way.
#[inline(always)]
fn contains_one<I: bloomkit::Item + ?Sized>(filter: &AnyFilter, item: &I) -> bool {
    match filter {
        AnyFilter::Bloom(f) => f.contains(item),
        AnyFilter::Blocked(f) => f.contains(item),
        AnyFilter::SplitBlock(f) => f.contains(item),
        other => other.contains(item),
    }
}

/// `item` added to the filter, the kinds matched as in [`contains_one`].
#[inline(always)]
fn insert_one<I: bloomkit::Item + ?Sized>(filter: &mut AnyFilter, item: &I) -> Result<bool, Error> {
    match filter {
        AnyFilter::Bloom(f) => f.try_insert(item),
        AnyFilter::Blocked(f) => f.try_insert(item),
        AnyFilter::SplitBlock(f) => f.try_insert(item),
        other => other.try_insert(item),
    }
}

/// A filter of any kind, with its key function. Python sees the subclasses, one per kind.
#[pyclass(frozen, subclass, weakref, module = "bloomkit", name = "Filter")]
pub struct Filter {
    inner: GilCell<AnyFilter>,
    key: Option<Py<PyAny>>,
}

/// A built filter on its way into a Python object of its kind's class (what `load`,
/// `from_bytes`, `copy` and `|` hand to the class's constructor).
#[pyclass(frozen, module = "bloomkit._bloomkit", name = "_Built")]
pub struct Built {
    filter: Mutex<Option<AnyFilter>>,
    kind: Kind,
}

#[pymethods]
impl Built {
    /// The kind's name.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind.name()
    }
}

impl Built {
    fn new(filter: AnyFilter) -> Built {
        Built {
            kind: filter.kind(),
            filter: Mutex::new(Some(filter)),
        }
    }
}

/// The kind a class stands for: its `kind` class attribute.
fn class_kind(cls: &Bound<'_, PyType>) -> PyResult<Option<Kind>> {
    let attr = cls.getattr("kind")?;
    match attr.extract::<String>() {
        Ok(name) => Kind::from_name(&name)
            .map(Some)
            .ok_or_else(|| PyValueError::new_err(format!("no filter kind is named {name:?}"))),
        // The base class: its `kind` is the instances' property.
        Err(_) => Ok(None),
    }
}

/// An instance of `cls` holding `filter`.
fn instance<'py>(
    cls: &Bound<'py, PyType>,
    filter: AnyFilter,
    key: Option<&Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    let kwargs = PyDict::new(py);
    if let Some(key) = key {
        kwargs.set_item("key", key)?;
    }
    cls.call((Built::new(filter),), Some(&kwargs))
}

/// The class of `kind`: `bloomkit.KINDS[name]`.
fn class_of<'py>(py: Python<'py>, kind: Kind) -> PyResult<Bound<'py, PyType>> {
    let classes = py.import("bloomkit")?.getattr("KINDS")?;
    Ok(classes.get_item(kind.name())?.cast_into::<PyType>()?)
}

/// A filter read from bytes, as an instance of `cls` — or, called on the base class, of the
/// class of the kind the bytes hold.
fn from_parsed<'py>(
    cls: &Bound<'py, PyType>,
    filter: AnyFilter,
    key: Option<Py<PyAny>>,
    origin: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let kind = filter.kind();
    match class_kind(cls)? {
        None => instance(&class_of(cls.py(), kind)?, filter, key.as_ref()),
        Some(wanted) if wanted == kind => instance(cls, filter, key.as_ref()),
        Some(wanted) => Err(FormatError::new_err(format!(
            "{origin} holds a {kind} filter, not a {wanted} filter \
             (bloomkit.load and bloomkit.from_bytes read any kind)"
        ))),
    }
}

impl Filter {
    /// Runs `f` on the filter for writing, with the GIL held ([`GilCell::write`]): directly
    /// when no batch call works on it, else waiting for them without the GIL.
    #[inline(always)]
    fn write<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut AnyFilter) -> R + Send) -> R {
        self.inner.write(py, f)
    }

    /// Runs `f` on the filter for reading (as [`write`](Self::write)).
    #[inline(always)]
    fn read<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&AnyFilter) -> R + Send) -> R {
        self.inner.read(py, f)
    }

    /// Runs `f` on the filter for writing a batch chunk of `len` items: without the GIL,
    /// with the lock, unless the chunk is shorter than [`DETACH_MIN`].
    fn write_detached<R: Send>(
        &self,
        py: Python<'_>,
        len: usize,
        f: impl FnOnce(&mut AnyFilter) -> R + Send,
    ) -> R {
        if len < DETACH_MIN {
            return self.inner.write(py, f);
        }
        self.inner.write_detached(py, f)
    }

    /// Runs `f` on the filter for reading a batch chunk of `len` items (as
    /// [`write_detached`](Self::write_detached)).
    fn read_detached<R: Send>(
        &self,
        py: Python<'_>,
        len: usize,
        f: impl FnOnce(&AnyFilter) -> R + Send,
    ) -> R {
        if len < DETACH_MIN {
            return self.inner.read(py, f);
        }
        self.inner.read_detached(py, f)
    }

    /// A copy of the filter itself.
    fn snapshot(&self, py: Python<'_>) -> AnyFilter {
        self.read(py, |f| f.clone())
    }

    /// `obj` through the key function, if the filter has one.
    fn keyed<'a, 'py>(&self, obj: &'a Bound<'py, PyAny>) -> PyResult<Cow<'a, Bound<'py, PyAny>>> {
        match &self.key {
            Some(key) => key.bind(obj.py()).call1((obj,)).map(Cow::Owned),
            None => Ok(Cow::Borrowed(obj)),
        }
    }

    /// Calls `per_chunk` with the items of `iterable`, converted a chunk at a time. A
    /// `list` (exactly: a subclass may change iteration) is read a chunk at a time through a
    /// [`HeldChunk`], a copy of that part of the list which holds its objects (one C call)
    /// and is read without a reference per item; other iterables are iterated. A chunk of
    /// exact `str` objects (the common case) goes on as their UTF-8 slices, borrowed from
    /// the strings ([`items::exact_str`]), so that the filter's batch path sees plain bytes;
    /// a chunk of exact `int` objects as `u64` keys ([`items::exact_int`]), for the filters'
    /// `u64` batch paths; any other chunk as [`Bytes`]. Each chunk's objects are held (by
    /// the held chunk, or a reference each) while `per_chunk` runs without the GIL, so the
    /// borrowed bytes stay valid even if another thread changes the list meanwhile.
    fn chunks<'py>(
        &self,
        iterable: &Bound<'py, PyAny>,
        mut per_chunk: impl FnMut(Chunk<'_, '_>) -> PyResult<()>,
    ) -> PyResult<()> {
        // Allocated on the first chunk of ints only (a short batch of str allocates none).
        let mut words: Vec<u64> = Vec::new();
        if self.key.is_none() {
            if let Ok(list) = iterable.cast_exact::<PyList>() {
                let mut at = 0;
                loop {
                    let end = list.len().min(at + CHUNK);
                    if at >= end {
                        return Ok(());
                    }
                    let held = HeldChunk::of(list, at, end);
                    at = end;
                    Self::held_chunk(&held, &mut words, &mut per_chunk)?;
                }
            }
        }
        let mut objects: Vec<Bound<'py, PyAny>> = Vec::with_capacity(CHUNK);
        // `next_chunk` appends the next objects (at most CHUNK) to `objects`.
        // An iterable or a key function that raises part-way: the objects before the one
        // that raised are still taken (as `set.update` takes them), then the error raised.
        let mut run = |next_chunk: &mut dyn FnMut(&mut Vec<Bound<'py, PyAny>>) -> PyResult<()>| loop {
            objects.clear();
            let mut raised = next_chunk(&mut objects).err();
            if let Some(key) = &self.key {
                for at in 0..objects.len() {
                    match key.bind(objects[at].py()).call1((&objects[at],)) {
                        Ok(item) => objects[at] = item,
                        Err(e) => {
                            objects.truncate(at);
                            raised = Some(e);
                            break;
                        }
                    }
                }
            }
            if !objects.is_empty() {
                Self::object_chunk(&objects, &mut words, &mut per_chunk)?;
            }
            match raised {
                Some(error) => return Err(error),
                None if objects.is_empty() => return Ok(()),
                None => {}
            }
        };
        if let Ok(list) = iterable.cast_exact::<PyList>() {
            let mut at = 0;
            return run(&mut |objects| {
                // The length is read again for every chunk: a key function may change it.
                let end = list.len().min(at + CHUNK);
                while at < end {
                    objects.push(list.get_item(at)?);
                    at += 1;
                }
                Ok(())
            });
        }
        let mut iterator = iterable.try_iter()?;
        run(&mut |objects| {
            for obj in iterator.by_ref().take(CHUNK) {
                objects.push(obj?);
            }
            Ok(())
        })
    }

    /// One [`HeldChunk`] of a list (not empty) to `per_chunk`: as UTF-8 slices when every
    /// object is an exact `str`, as `u64` keys when every one is an exact `int`, else as
    /// [`Bytes`] ([`object_chunk`](Self::object_chunk)). Each object is looked at once on
    /// those two paths, borrowed from the held chunk.
    fn held_chunk(
        held: &HeldChunk<'_>,
        words: &mut Vec<u64>,
        per_chunk: &mut impl FnMut(Chunk<'_, '_>) -> PyResult<()>,
    ) -> PyResult<()> {
        let len = held.len();
        if held.get(0).is_exact_instance_of::<PyString>() {
            let mut strs: Vec<&[u8]> = Vec::with_capacity(len);
            for i in 0..len {
                match items::exact_str_of(held.get(i)) {
                    Some(utf8) => strs.push(utf8?),
                    None => break,
                }
            }
            if strs.len() == len {
                return per_chunk(Chunk::Strs(&strs));
            }
        } else {
            words.clear();
            words.reserve(len);
            for i in 0..len {
                match items::exact_int(&held.get(i)) {
                    Some(word) => words.push(word?),
                    None => break,
                }
            }
            if words.len() == len {
                return per_chunk(Chunk::Words(words));
            }
        }
        let objects: Vec<Bound<'_, PyAny>> = (0..len).map(|i| held.get(i).to_owned()).collect();
        Self::object_chunk(&objects, words, per_chunk)
    }

    /// One chunk of objects (not empty) to `per_chunk`, as [`held_chunk`](Self::held_chunk)
    /// sorts them.
    fn object_chunk(
        objects: &[Bound<'_, PyAny>],
        words: &mut Vec<u64>,
        per_chunk: &mut impl FnMut(Chunk<'_, '_>) -> PyResult<()>,
    ) -> PyResult<()> {
        let mut strs: Vec<&[u8]> = Vec::with_capacity(objects.len());
        for obj in objects {
            match items::exact_str(obj) {
                Some(utf8) => strs.push(utf8?),
                None => break,
            }
        }
        if strs.len() == objects.len() {
            return per_chunk(Chunk::Strs(&strs));
        }
        // Not all `str`: a chunk of exact `int`s (the other common case) as `u64` keys,
        // the bytes of the item rule (`items::exact_int`).
        words.clear();
        if strs.is_empty() {
            words.reserve(objects.len());
            for obj in objects {
                match items::exact_int(obj) {
                    Some(word) => words.push(word?),
                    None => break,
                }
            }
        }
        if words.len() == objects.len() {
            return per_chunk(Chunk::Words(words));
        }
        let converted = objects
            .iter()
            .map(items::convert)
            .collect::<PyResult<Vec<_>>>()?;
        per_chunk(Chunk::Items(&converted))
    }

    /// The integer column `obj` is, when the fast path applies (no key function).
    fn int_column(&self, obj: &Bound<'_, PyAny>) -> Option<IntColumn> {
        if self.key.is_some() {
            return None;
        }
        IntColumn::of(obj)
    }

    /// A copy of `other`'s filter, or NotImplemented's cue (`None`) when it is no filter.
    fn other_filter(py: Python<'_>, other: &Bound<'_, PyAny>) -> Option<AnyFilter> {
        let other = other.cast::<Filter>().ok()?;
        Some(other.get().snapshot(py))
    }
}

/// The error of an insert that stopped part-way through a batch: the items of the call
/// before the refused one are in the filter, it and those after it are not.
fn batch_error(py: Python<'_>, error: Error) -> PyErr {
    let err = errors::to_py(error);
    let message = format!(
        "{}; the items of this call before it were added, it and the items after it were not",
        err.value(py)
    );
    match err.get_type(py).call1((message,)) {
        Ok(value) => PyErr::from_value(value),
        Err(e) => e,
    }
}

#[pymethods]
impl Filter {
    /// Filter(capacity, fpp=0.01, *, bits=None, hashes=None, key=None)
    ///
    /// A filter for `capacity` items at false-positive probability `fpp` (ε), sized by the
    /// kind's formulas. Build one of the kinds' classes (`bloomkit.BloomFilter`,
    /// `bloomkit.CuckooFilter`, …, every one in `bloomkit.KINDS`); `Filter` is their base.
    ///
    /// `bits` (m, the number of cells) and `hashes` (k) set the dimensions instead of the
    /// formulas, as `bloomkit create -m M -k K` does: `BloomFilter(1000, bits=5000,
    /// hashes=4)`. With `bits` and no `fpp`, ε is the rate those dimensions give at
    /// `capacity`. The kinds without such a dimension raise ValueError.
    ///
    /// `key`, when given, turns every object added or asked for into an item (str, bytes,
    /// int, bool or tuple of these), for objects that are none of those.
    #[new]
    #[classmethod]
    #[pyo3(signature = (capacity, fpp = None, *, bits = None, hashes = None, key = None))]
    fn py_new(
        cls: &Bound<'_, PyType>,
        capacity: &Bound<'_, PyAny>,
        fpp: Option<f64>,
        bits: Option<u64>,
        hashes: Option<u32>,
        key: Option<Py<PyAny>>,
    ) -> PyResult<Filter> {
        let py = cls.py();
        let key = key.filter(|k| !k.is_none(py));
        if let Some(key) = &key {
            if !key.bind(cls.py()).is_callable() {
                return Err(PyTypeError::new_err("key must be a function (or None)"));
            }
        }
        let kind = class_kind(cls)?;
        if let Ok(built) = capacity.cast::<Built>() {
            let built = built.get();
            if kind.is_some_and(|k| k != built.kind) {
                return Err(PyTypeError::new_err("a filter of another kind"));
            }
            let filter = built
                .filter
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .ok_or_else(|| PyValueError::new_err("this filter was already taken"))?;
            return Ok(Filter {
                inner: GilCell::new(filter),
                key,
            });
        }
        let Some(kind) = kind else {
            return Err(PyTypeError::new_err(
                "Filter is the base of the kinds' classes: build bloomkit.BloomFilter(capacity, fpp) \
                 or another kind of bloomkit.KINDS",
            ));
        };
        // An int, or what stands for one (`__index__`: NumPy's integers); not a bool.
        let index = py.import("operator")?.getattr("index")?;
        let capacity = match index.call1((capacity,)) {
            Ok(int) if capacity.cast::<PyBool>().is_err() => int.cast_into::<PyInt>()?,
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "capacity must be an int, got {}",
                    capacity.get_type().name()?
                )))
            }
        };
        let capacity: u64 = match capacity.extract::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "capacity (the number of items expected) must be from 1 to 2**64 - 1, got {capacity}"
                )))
            }
        };
        let filter = if bits.is_none() && hashes.is_none() {
            AnyFilter::with_capacity(kind, capacity, fpp.unwrap_or(0.01))
        } else {
            let spec = BuildSpec {
                capacity: Some(capacity),
                fpp: fpp.or(if bits.is_some() { None } else { Some(0.01) }),
                num_cells: bits,
                num_hashes: hashes,
                ..BuildSpec::default()
            };
            AnyFilter::build(kind, &spec)
        }
        .map_err(errors::to_py)?;
        Ok(Filter {
            inner: GilCell::new(filter),
            key,
        })
    }

    /// add(item) -> bool
    ///
    /// Adds an item. True when it was certainly not in the filter before (the filter would
    /// have answered no), False when the filter already reported it present.
    fn add(&self, py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<bool> {
        // Exact `str` and `int` first (the items of most calls): their bytes without the
        // general conversion (the same bytes, see `items`).
        if self.key.is_none() {
            if let Some(utf8) = items::exact_str(item) {
                let utf8 = utf8?;
                return self
                    .write(py, |f| insert_one(f, utf8))
                    .map_err(errors::to_py);
            }
            if let Some(word) = items::exact_int(item) {
                let word = word?;
                return self
                    .write(py, |f| insert_one(f, &word))
                    .map_err(errors::to_py);
            }
        }
        let item = self.keyed(item)?;
        let bytes = items::convert(&item)?;
        self.write(py, |f| insert_one(f, &bytes))
            .map_err(errors::to_py)
    }

    fn __contains__(&self, py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<bool> {
        // As in `add`.
        if self.key.is_none() {
            if let Some(utf8) = items::exact_str(item) {
                let utf8 = utf8?;
                return Ok(self.read(py, |f| contains_one(f, utf8)));
            }
            if let Some(word) = items::exact_int(item) {
                let word = word?;
                return Ok(self.read(py, |f| contains_one(f, &word)));
            }
        }
        let item = self.keyed(item)?;
        let bytes = items::convert(&item)?;
        Ok(self.read(py, |f| contains_one(f, &bytes)))
    }

    /// remove(item) -> bool
    ///
    /// Removes one copy of an item (the kinds with `can_remove`; the others raise
    /// TypeError). KeyError when the item is certainly not in the filter. True when the
    /// item is gone, False when a deletable filter had to keep it (its bits all lie in
    /// collided regions). Remove only what was added: removing a false positive can take
    /// other items out.
    fn remove(&self, py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<bool> {
        let keyed = self.keyed(item)?;
        let bytes = items::convert(&keyed)?;
        match self.write(py, |f| f.remove(&bytes)) {
            Err(Error::NotPresent) => Err(PyKeyError::new_err(item.clone().unbind())),
            other => other.map_err(errors::to_py),
        }
    }

    /// discard(item) -> bool
    ///
    /// remove(item), except that an item certainly not in the filter is no error: False.
    fn discard(&self, py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<bool> {
        let keyed = self.keyed(item)?;
        let bytes = items::convert(&keyed)?;
        match self.write(py, |f| f.remove(&bytes)) {
            Err(Error::NotPresent) => Ok(false),
            other => other.map_err(errors::to_py),
        }
    }

    /// add_many(items) -> int
    ///
    /// Adds every item of an iterable; returns how many were certainly new. A NumPy
    /// integer array (or any one-dimensional buffer of integers) is read in place, each
    /// element the int it equals; lists of str and bytes are hashed from the objects'
    /// own bytes, lists of int as the arrays are. The work runs without the GIL, a chunk
    /// of items at a time (a batch of fewer than 64 items, with it). If the iterable (or
    /// the key function) raises part-way, the items before that point are added, as
    /// `set.update` adds them, and the exception is raised.
    fn add_many(&self, py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<u64> {
        let mut added = 0;
        if let Some(column) = self.int_column(items) {
            let mut keys = Vec::with_capacity(CHUNK.min(column.len()));
            for start in (0..column.len()).step_by(CHUNK) {
                column.read(py, start, start + CHUNK, &mut keys);
                let keys = &keys;
                added += self
                    .write_detached(py, keys.len(), |f| f.insert_batch_u64(keys))
                    .map_err(|e| batch_error(py, e))?;
            }
            return Ok(added);
        }
        self.chunks(items, |chunk| {
            added += self
                .write_detached(py, chunk.len(), |f| chunk.insert(f))
                .map_err(|e| batch_error(py, e))?;
            Ok(())
        })?;
        Ok(added)
    }

    /// update(*iterables) -> None
    ///
    /// Adds every item of every iterable (as set.update does), through add_many.
    #[pyo3(signature = (*iterables))]
    fn update(&self, py: Python<'_>, iterables: &Bound<'_, PyTuple>) -> PyResult<()> {
        for iterable in iterables.iter() {
            self.add_many(py, &iterable)?;
        }
        Ok(())
    }

    /// contains_many(items) -> list[bool] | numpy.ndarray
    ///
    /// Whether each item may be in the filter, in order: a list of bools, or for a NumPy
    /// array a NumPy bool array. Reads NumPy integer arrays in place, lists of str and
    /// bytes from the objects' own bytes and lists of int as the arrays, without the GIL.
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        items: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut answers: Vec<bool> = Vec::new();
        let mut part = Vec::new();
        if let Some(column) = self.int_column(items) {
            answers.reserve(column.len());
            let mut keys = Vec::with_capacity(CHUNK.min(column.len()));
            for start in (0..column.len()).step_by(CHUNK) {
                column.read(py, start, start + CHUNK, &mut keys);
                let (keys, part_ref) = (&keys, &mut part);
                self.read_detached(py, keys.len(), |f| f.contains_batch_u64(keys, part_ref));
                answers.extend_from_slice(&part);
            }
        } else {
            if let Ok(list) = items.cast_exact::<PyList>() {
                answers.reserve(list.len());
            }
            self.chunks(items, |chunk| {
                let part_ref = &mut part;
                self.read_detached(py, chunk.len(), |f| chunk.contains(f, part_ref));
                answers.extend_from_slice(&part);
                Ok(())
            })?;
        }
        if let Some(numpy) = numpy_if_array(items)? {
            let bytes: Vec<u8> = answers.iter().map(|&b| u8::from(b)).collect();
            let buffer = PyByteArray::new(py, &bytes);
            return numpy.call_method1("frombuffer", (buffer, numpy.getattr("bool_")?));
        }
        Ok(bool_list(py, &answers)?.into_any())
    }

    /// The number of items added (for the kinds that remove, minus those removed). An
    /// item the filter already reported present is not counted again by the set-like
    /// kinds; the multiset kinds (counting, cuckoo, …) count every add.
    fn __len__(&self, py: Python<'_>) -> usize {
        self.read(py, |f| f.len()) as usize
    }

    /// clear() -> None
    ///
    /// Empties the filter; its parameters stay.
    fn clear(&self, py: Python<'_>) {
        self.write(py, |f| f.clear())
    }

    /// copy() -> Filter
    ///
    /// An independent copy (same class, parameters, items and key function).
    fn copy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let this = slf.get();
        instance(&slf.get_type(), this.snapshot(slf.py()), this.key.as_ref())
    }

    fn __copy__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::copy(slf)
    }

    fn __deepcopy__<'py>(
        slf: &Bound<'py, Self>,
        _memo: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Self::copy(slf)
    }

    /// f | g: a new filter holding the items of both (same kind and parameters; the kinds
    /// with `can_merge`).
    fn __or__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let Some(theirs) = Filter::other_filter(py, other) else {
            return Ok(py.NotImplemented().into_bound(py));
        };
        let this = slf.get();
        let mut ours = this.snapshot(py);
        ours.union(&theirs).map_err(errors::to_py)?;
        instance(&slf.get_type(), ours, this.key.as_ref())
    }

    /// f |= g: adds the items of g to f (same kind and parameters).
    fn __ior__(&self, py: Python<'_>, other: &Bound<'_, Filter>) -> PyResult<()> {
        let theirs = other.get().snapshot(py);
        self.write(py, |f| f.union(&theirs)).map_err(errors::to_py)
    }

    /// Equal when both are filters of the same kind, parameters and content (the same
    /// bytes). The key function is not compared.
    fn __eq__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let Ok(other) = other.cast::<Filter>() else {
            return Ok(py.NotImplemented().into_bound(py));
        };
        if slf.is(other) {
            return Ok(PyBool::new(py, true).to_owned().into_any());
        }
        let ours = slf.get().read(py, |f| f.to_bytes());
        let theirs = other.get().read(py, |f| f.to_bytes());
        Ok(PyBool::new(py, ours == theirs).to_owned().into_any())
    }

    /// The number of items the filter was sized for (n).
    #[getter]
    fn capacity(&self, py: Python<'_>) -> u64 {
        self.read(py, |f| f.capacity())
    }

    /// The false-positive probability ε the filter was built for.
    #[getter]
    fn fpp(&self, py: Python<'_>) -> f64 {
        self.read(py, |f| f.target_fpp())
    }

    /// The kind's name (`"bloom"`, `"cuckoo"`, …), as the command line names it.
    #[getter]
    fn kind(&self, py: Python<'_>) -> &'static str {
        self.read(py, |f| f.kind().name())
    }

    /// The bytes the filter's storage takes in memory.
    #[getter]
    fn memory_bytes(&self, py: Python<'_>) -> usize {
        self.read(py, |f| f.memory_bytes())
    }

    /// The key function given at construction, or None.
    #[getter]
    fn key(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.key.as_ref().map(|k| k.clone_ref(py))
    }

    /// estimated_len() -> float
    ///
    /// The number of distinct items estimated from the filter's fill (Swamidass & Baldi for
    /// the bit-array kinds).
    fn estimated_len(&self, py: Python<'_>) -> f64 {
        self.read(py, |f| f.estimated_len())
    }

    /// expected_fpp() -> float
    ///
    /// The false-positive probability now, from the filter's fill.
    fn expected_fpp(&self, py: Python<'_>) -> f64 {
        self.read(py, |f| f.expected_fpp())
    }

    /// properties() -> dict[str, str]
    ///
    /// The kind's own facts, as `bloomkit info` prints them (bits, hashes, hashing, …).
    fn properties<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let facts = self.read(py, |f| f.properties());
        let dict = PyDict::new(py);
        for (name, value) in facts {
            dict.set_item(name, value)?;
        }
        Ok(dict)
    }

    /// to_bytes() -> bytes
    ///
    /// The filter in the bloomkit file format (what save writes; `bytes(f)` is the same).
    fn to_bytes(&self, py: Python<'_>) -> Vec<u8> {
        self.read(py, |f| f.to_bytes())
    }

    fn __bytes__(&self, py: Python<'_>) -> Vec<u8> {
        self.to_bytes(py)
    }

    /// save(path) -> None
    ///
    /// Writes the filter to a file in the bloomkit file format, atomically (a temporary
    /// file beside it, synced, then renamed over it: a failed save keeps the old file).
    /// `bloomkit check`, `bloomkit info` and the Rust library read the file.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let bytes = self.to_bytes(py);
        py.detach(|| write_atomically(&path, &bytes))
            .map_err(|e| errors::os_error(e, &path))
    }

    /// from_bytes(data, *, key=None) -> Filter
    ///
    /// The filter in `data` (bloomkit's file format). On a kind's class the data must hold
    /// that kind (else FormatError); on Filter (and as bloomkit.from_bytes) any kind.
    #[classmethod]
    #[pyo3(signature = (data, *, key = None))]
    fn from_bytes<'py>(
        cls: &Bound<'py, PyType>,
        data: &Bound<'py, PyAny>,
        key: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bytes = items::bytes_like(data)?;
        let bytes = bytes.as_slice();
        let filter = cls
            .py()
            .detach(|| AnyFilter::from_bytes(bytes))
            .map_err(errors::to_py)?;
        from_parsed(cls, filter, key, "the data")
    }

    /// load(path, *, key=None) -> Filter
    ///
    /// The filter saved in a file (by save, the command line or the Rust library). On a
    /// kind's class the file must hold that kind (else FormatError); on Filter (and as
    /// bloomkit.load) any kind, as an instance of that kind's class.
    #[classmethod]
    #[pyo3(signature = (path, *, key = None))]
    fn load<'py>(
        cls: &Bound<'py, PyType>,
        path: PathBuf,
        key: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        let bytes = py
            .detach(|| std::fs::read(&path))
            .map_err(|e| errors::os_error(e, &path))?;
        let filter = py
            .detach(|| AnyFilter::from_bytes(&bytes))
            .map_err(|e| match e {
                Error::Decode(e) => FormatError::new_err(format!(
                    "{} is not a valid filter file: {e}",
                    path.display()
                )),
                other => errors::to_py(other),
            })?;
        from_parsed(cls, filter, key, &path.display().to_string())
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let restore = py.import("bloomkit")?.getattr("_restore")?;
        let this = slf.get();
        let data = pyo3::types::PyBytes::new(py, &this.to_bytes(py));
        let key = this.key(py);
        PyTuple::new(
            py,
            [
                restore,
                PyTuple::new(
                    py,
                    [
                        slf.get_type().into_any(),
                        data.into_any(),
                        key.into_pyobject(py)?.into_any(),
                    ],
                )?
                .into_any(),
            ],
        )
    }

    fn __sizeof__(&self, py: Python<'_>) -> usize {
        std::mem::size_of::<Self>() + self.memory_bytes(py)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        let name = slf.get_type().name()?;
        let (capacity, fpp, len) = slf
            .get()
            .read(py, |f| (f.capacity(), f.target_fpp(), f.len()));
        Ok(format!("<{name} capacity={capacity} fpp={fpp} len={len}>"))
    }
}

/// The answers as a list of `bool`s, made the cheap way round: `[majority] * n` (CPython
/// fills it in a loop of its own, a reference count per element), then the elements of the
/// other value set one by one (a call each). A batch of present items, or of absent ones
/// at ε = 1%, sets almost none; setting every element costs a call and a reference each.
fn bool_list<'py>(py: Python<'py>, answers: &[bool]) -> PyResult<Bound<'py, PyList>> {
    let trues = answers.iter().filter(|&&b| b).count();
    let majority = 2 * trues >= answers.len();
    let list = PyList::new(py, [majority])?
        .as_sequence()
        .repeat(answers.len())?
        .cast_into::<PyList>()?;
    let minority = PyBool::new(py, !majority);
    for (i, _) in answers.iter().enumerate().filter(|&(_, &b)| b != majority) {
        list.set_item(i, minority)?;
    }
    Ok(list)
}

/// Whether `obj` is a NumPy array: NumPy's module when it is (NumPy is never imported here
/// for anything else, so it stays optional).
fn numpy_if_array<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyModule>>> {
    let py = obj.py();
    let modules = py.import("sys")?.getattr("modules")?;
    let Ok(numpy) = modules.get_item("numpy") else {
        return Ok(None);
    };
    let ndarray = numpy.getattr("ndarray")?;
    if obj.is_instance(&ndarray)? {
        Ok(Some(numpy.cast_into::<PyModule>()?))
    } else {
        Ok(None)
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory (written,
/// synced, renamed over the target; a symbolic link followed, the old file's permissions
/// kept: the library's `replace_file_with`), so that readers see the old file or the new one; the `io::Error`
/// keeps its kind, for Python's OSError subclasses.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    bloomkit::codec::replace_file_with(path, |file| file.write_all(bytes))
}

/// kinds() -> list[dict]
///
/// Every kind of the registry, in its order: `name` (as the command line names it),
/// `type_name` (the class name), `summary`, `can_remove`, `can_merge`, `can_grow`,
/// `forgets`.
#[pyfunction]
fn kinds(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    Kind::ALL
        .iter()
        .map(|&kind| {
            let info = PyDict::new(py);
            info.set_item("name", kind.name())?;
            info.set_item("type_name", kind.type_name())?;
            info.set_item("summary", kind.summary())?;
            info.set_item("can_remove", kind.can_remove())?;
            info.set_item("can_merge", kind.can_merge())?;
            info.set_item("can_grow", kind.can_grow())?;
            info.set_item("forgets", kind.forgets())?;
            Ok(info)
        })
        .collect()
}

/// item_bytes(item) -> bytes
///
/// The bytes a filter hashes for `item`: what the Rust library's `Item` gives for the same
/// value (str as UTF-8, int as i64/u64 little-endian, tuples length-prefixed, …).
#[pyfunction]
fn item_bytes(item: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    Ok(items::convert(item)?.as_slice().to_vec())
}

/// The extension module; `bloomkit/__init__.py` re-exports it.
#[pymodule]
fn _bloomkit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Filter>()?;
    m.add_class::<Built>()?;
    m.add_function(wrap_pyfunction!(kinds, m)?)?;
    m.add_function(wrap_pyfunction!(item_bytes, m)?)?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("FullError", py.get_type::<FullError>())?;
    m.add(
        "InterruptedWriteError",
        py.get_type::<InterruptedWriteError>(),
    )?;
    m.add_function(wrap_pyfunction!(errors::_library_error, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
