//! Python objects as filter items: the bytes the Rust library hashes for the same value.
//!
//! | Python | Rust item | bytes |
//! | --- | --- | --- |
//! | `str` | `&str` | UTF-8 |
//! | `bytes`, `bytearray`, `memoryview` and other buffers of ≥ 1 dimension | `&[u8]` | as is (C order) |
//! | `int`, −2⁶³ ≤ x < 0 | `i64` | 8 bytes, little-endian two's complement |
//! | `int`, 0 ≤ x < 2⁶⁴ | `u64` | 8 bytes, little-endian |
//! | objects with `__index__` (NumPy integers) | as their `int` | |
//! | `bool` | `bool` | one byte, 0 or 1 |
//! | `tuple` of items | tuple | each element's length as a little-endian `u64`, then its bytes |
//!
//! An `int` outside [−2⁶³, 2⁶⁴) is an `OverflowError`; anything else a `TypeError` that
//! says to pass `key=`. Python's `hash()` is never used: it changes from run to run.

use bloomkit::Item;
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyInt, PyList, PyString, PyTuple};

/// The bytes of one item: borrowed from an immutable Python object (`str`, `bytes`) where
/// possible, an integer's 8 bytes inline, or encoded (tuples, copies of mutable buffers).
#[derive(Debug)]
pub enum Bytes<'a> {
    /// A `str`'s UTF-8 or a `bytes` object's content, borrowed.
    Borrowed(&'a [u8]),
    /// An integer's 8 little-endian bytes.
    Word([u8; 8]),
    /// A `bool`: one byte.
    Byte([u8; 1]),
    /// Bytes made for the item: a tuple's encoding, a copy of a mutable buffer.
    Owned(Vec<u8>),
}

impl Item for Bytes<'_> {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_slice())
    }
}

impl Bytes<'_> {
    /// The item's bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Borrowed(b) => b,
            Bytes::Word(w) => w,
            Bytes::Byte(b) => b,
            Bytes::Owned(v) => v,
        }
    }
}

/// The message of the `TypeError` for an object that is not an item.
pub fn not_an_item(obj: &Bound<'_, PyAny>) -> PyErr {
    let type_name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!(
        "a {type_name} is not a filter item: items are str, bytes-like objects, int \
         (-2**63 <= x < 2**64), bool and tuples of these. To add other objects, build the \
         filter with key=, a function that turns each object into an item \
         (for example key=lambda p: (p.name, p.birth_year))"
    ))
}

/// The 8 bytes of an `int`: as Rust's `i64` when negative, `u64` otherwise.
pub fn int_word(int: &Bound<'_, PyInt>) -> PyResult<[u8; 8]> {
    match int.extract::<i64>() {
        Ok(v) => Ok(v.to_le_bytes()),
        Err(_) => match int.extract::<u64>() {
            Ok(v) => Ok(v.to_le_bytes()),
            Err(_) => Err(PyOverflowError::new_err(format!(
                "int items must fit in 64 bits (-2**63 <= x < 2**64, Rust's i64 and u64), got {}",
                int.repr().map(|r| r.to_string()).unwrap_or_default()
            ))),
        },
    }
}

/// The UTF-8 of `obj` when it is exactly a `str` (no subclass), borrowed from the copy the
/// string keeps (CPython makes it once, on the first request, and caches it; an ASCII
/// string's UTF-8 is its own storage). `None` for every other object. The type test is one
/// pointer comparison, which is what makes lists of `str` cheap in the batch calls.
#[inline]
pub fn exact_str<'a>(obj: &'a Bound<'_, PyAny>) -> Option<PyResult<&'a [u8]>> {
    exact_str_of(obj.as_borrowed())
}

/// [`exact_str`] of an object borrowed for `'a` (an element of a [`HeldChunk`]).
#[inline]
pub fn exact_str_of<'a>(obj: Borrowed<'a, '_, PyAny>) -> Option<PyResult<&'a [u8]>> {
    if !obj.is_exact_instance_of::<PyString>() {
        return None;
    }
    let mut len: pyo3::ffi::Py_ssize_t = 0;
    // SAFETY: `obj` is a valid `str` and the GIL is held (we have a `Borrowed`). The
    // function returns null with an exception set (a lone surrogate has no UTF-8), or a
    // pointer to `len` bytes owned by the string, valid while it lives: at least as long as
    // `'a`, for which `obj` is borrowed from a reference that keeps it alive. A `str` is
    // immutable.
    let data = unsafe { pyo3::ffi::PyUnicode_AsUTF8AndSize(obj.as_ptr(), &mut len) };
    if data.is_null() {
        return Some(Err(PyErr::fetch(obj.py())));
    }
    // SAFETY: as above; `len` ≥ 0 bytes at `data`.
    Some(Ok(unsafe {
        std::slice::from_raw_parts(data.cast::<u8>(), len as usize)
    }))
}

/// The item of `obj` when it is exactly an `int` (no subclass, so no `bool`): its 8 bytes as
/// a `u64` (a negative value's two's complement, which are its `i64`'s bytes). One type
/// pointer comparison and, for a value that fits in an `i64`, one call; `None` for every
/// other object, an `OverflowError` past 64 bits.
#[inline]
pub fn exact_int(obj: &Bound<'_, PyAny>) -> Option<PyResult<u64>> {
    if !obj.is_exact_instance_of::<PyInt>() {
        return None;
    }
    let mut overflow: std::os::raw::c_int = 0;
    // SAFETY: `obj` is a valid `int` and the GIL is held (we have a `Bound`). The function
    // sets no exception when the value does not fit (it reports it in `overflow`); on
    // another error it returns -1 with one set, which the general path below reports.
    let value = unsafe { pyo3::ffi::PyLong_AsLongLongAndOverflow(obj.as_ptr(), &mut overflow) };
    if overflow == 0 && value != -1 {
        return Some(Ok(value as u64));
    }
    // -1 itself, a value past i64 (a u64, or out of range), or an error: the general rule.
    let int = obj.cast::<PyInt>().expect("an exact int");
    if let Some(err) = PyErr::take(obj.py()) {
        return Some(Err(err));
    }
    Some(int_word(int).map(u64::from_le_bytes))
}

/// The item `obj` stands for.
#[inline]
pub fn convert<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Bytes<'a>> {
    if let Some(utf8) = exact_str(obj) {
        return utf8.map(Bytes::Borrowed);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Bytes::Borrowed(s.to_str()?.as_bytes()));
    }
    if let Ok(int) = obj.cast::<PyInt>() {
        if let Ok(b) = obj.cast::<PyBool>() {
            return Ok(Bytes::Byte([u8::from(b.is_true())]));
        }
        return int_word(int).map(Bytes::Word);
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Bytes::Borrowed(b.as_bytes()));
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return tuple_bytes(t).map(Bytes::Owned);
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Bytes::Owned(b.to_vec()));
    }
    other_item(obj)
}

/// The content of a bytes-like object (`bytes` borrowed; other buffers copied), for
/// `from_bytes`.
pub fn bytes_like<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Bytes<'a>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Bytes::Borrowed(b.as_bytes()));
    }
    // SAFETY: `obj` is a valid object and the GIL is held.
    if unsafe { pyo3::ffi::PyObject_CheckBuffer(obj.as_ptr()) } != 0 {
        let copy = obj.py().get_type::<PyBytes>().call1((obj,))?;
        return Ok(Bytes::Owned(copy.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Err(PyTypeError::new_err(format!(
        "expected a bytes-like object (bytes, bytearray, memoryview), got {}",
        obj.get_type().name()?
    )))
}

/// A tuple's encoding: each element's length (little-endian `u64`), then its bytes.
fn tuple_bytes(tuple: &Bound<'_, PyTuple>) -> PyResult<Vec<u8>> {
    if tuple.is_empty() {
        return Err(PyTypeError::new_err(
            "an empty tuple is not a filter item (tuple items have at least one element)",
        ));
    }
    let mut out = Vec::new();
    for element in tuple.iter() {
        let bytes = convert(&element)?;
        let bytes = bytes.as_slice();
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    Ok(out)
}

/// The items that are neither `str`, `int`, `bytes`, tuples nor `bytearray`: integers of
/// other types (`__index__`, as NumPy's are), then buffers of at least one dimension (a
/// NumPy scalar is a buffer of none, and is no bytes-like object).
fn other_item<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Bytes<'a>> {
    let py = obj.py();
    if is_numpy_bool(obj) {
        // The bool it equals, one byte, as NumPy's integers are the ints they equal.
        return Ok(Bytes::Byte([u8::from(obj.is_truthy()?)]));
    }
    // SAFETY: `obj` is a valid object and the GIL is held (we have a `Bound`).
    if unsafe { pyo3::ffi::PyIndex_Check(obj.as_ptr()) } != 0 {
        // `operator.index(obj)`; objects whose `__index__` refuses (NumPy's bool) go on.
        // SAFETY: as above; `PyNumber_Index` returns a new reference or null with an
        // exception set, which `from_owned_ptr_or_err` takes over.
        let index =
            unsafe { Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyNumber_Index(obj.as_ptr())) };
        if let Ok(int) = index {
            if let Ok(int) = int.cast::<PyInt>() {
                return int_word(int).map(Bytes::Word);
            }
        }
    }
    // SAFETY: as above.
    if unsafe { pyo3::ffi::PyObject_CheckBuffer(obj.as_ptr()) } != 0 {
        // A buffer of no dimension (a NumPy scalar) has no shape, and is refused here.
        let dimensions = PyUntypedBuffer::get(obj).map_or(0, |b| b.dimensions());
        if dimensions >= 1 {
            let copy = py.get_type::<PyBytes>().call1((obj,))?;
            return Ok(Bytes::Owned(copy.cast::<PyBytes>()?.as_bytes().to_vec()));
        }
    }
    Err(not_an_item(obj))
}

/// Whether `obj` is NumPy's bool scalar (`numpy.bool`; `numpy.bool_` before NumPy 2, the
/// elements of a bool array): no `int`, and its `__index__` refuses, so it is told by its
/// type's module and name (NumPy need not be imported).
fn is_numpy_bool(obj: &Bound<'_, PyAny>) -> bool {
    let ty = obj.get_type();
    let is = |attr: &str, names: &[&str]| {
        ty.getattr(attr)
            .ok()
            .and_then(|v| v.extract::<String>().ok())
            .is_some_and(|v| names.contains(&v.as_str()))
    };
    is("__module__", &["numpy"]) && is("__name__", &["bool", "bool_"])
}

/// A part of a list, held for a batch call's chunk: `list[start:end]` as a new list (one C
/// call, which takes a reference to each object). No other code sees that list, so its
/// objects, and the bytes borrowed from them, stay alive and unchanged while the chunk is
/// worked on without the GIL, whatever other threads do to the original list meanwhile.
/// Its elements are read borrowed: no reference is taken or dropped per item.
pub struct HeldChunk<'py> {
    list: Bound<'py, PyList>,
    len: usize,
}

impl<'py> HeldChunk<'py> {
    /// `list[start:end]` (clipped to the list's length, as Python's slices are).
    pub fn of(list: &Bound<'py, PyList>, start: usize, end: usize) -> HeldChunk<'py> {
        let list = list.get_slice(start, end);
        let len = list.len();
        HeldChunk { list, len }
    }

    /// How many objects.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Object `i` (< [`len`](Self::len)), borrowed from the held list.
    #[inline]
    pub fn get(&self, i: usize) -> Borrowed<'_, 'py, PyAny> {
        assert!(
            i < self.len,
            "index {i} past the chunk's {} objects",
            self.len
        );
        // SAFETY: the GIL is held (we have a `Bound`); `i` is within the list, which no one
        // else can shrink (no other code has it), so `PyList_GetItem` returns a borrowed,
        // non-null reference to an object the list holds for as long as `self` lives.
        unsafe {
            Borrowed::from_ptr(
                self.list.py(),
                pyo3::ffi::PyList_GetItem(self.list.as_ptr(), i as pyo3::ffi::Py_ssize_t),
            )
        }
    }
}

/// A one-dimensional buffer of integers (a NumPy integer array, `array.array`, `bytes` as a
/// sequence of ints), read in place: its elements are the `int` items they equal, as Rust
/// `u64` keys (a negative one is its `i64`'s bytes, which are the same).
pub struct IntColumn {
    buffer: PyUntypedBuffer,
    signed: bool,
    width: usize,
    stride: isize,
    len: usize,
}

impl IntColumn {
    /// The buffer of `obj` when it is a one-dimensional buffer of integers in this
    /// machine's byte order; `None` otherwise (the caller iterates the object instead).
    pub fn of(obj: &Bound<'_, PyAny>) -> Option<IntColumn> {
        // SAFETY: `obj` is a valid object and the GIL is held.
        if unsafe { pyo3::ffi::PyObject_CheckBuffer(obj.as_ptr()) } == 0 {
            return None;
        }
        let buffer = PyUntypedBuffer::get(obj).ok()?;
        if buffer.dimensions() != 1 || buffer.suboffsets().is_some() {
            return None;
        }
        let format = buffer.format().to_bytes();
        let code = match format {
            [c] => *c,
            [b'@' | b'=' | b'<', c] if cfg!(target_endian = "little") => *c,
            [b'@' | b'=' | b'>' | b'!', c] if cfg!(target_endian = "big") => *c,
            _ => return None,
        };
        let signed = match code {
            b'b' | b'h' | b'i' | b'l' | b'q' | b'n' => true,
            b'B' | b'H' | b'I' | b'L' | b'Q' | b'N' => false,
            _ => return None,
        };
        let width = buffer.item_size();
        if !matches!(width, 1 | 2 | 4 | 8) {
            return None;
        }
        let (stride, len) = (buffer.strides()[0], buffer.shape()[0]);
        Some(IntColumn {
            buffer,
            signed,
            width,
            stride,
            len,
        })
    }

    /// How many elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Elements `start..end` as `u64` keys, into `out` (cleared first). Called with the GIL
    /// held, so that no Python code changes the buffer while it is read.
    pub fn read(&self, _py: Python<'_>, start: usize, end: usize, out: &mut Vec<u64>) {
        out.clear();
        let end = end.min(self.len);
        let base = self.buffer.buf_ptr().cast::<u8>().cast_const();
        for i in start..end {
            // SAFETY: the buffer stays exported (and its memory valid) while `self.buffer`
            // lives; `i < shape[0]`, so `base + i·stride` is the address of element `i`,
            // which holds `width` bytes, read unaligned.
            let value = unsafe {
                let at = base.offset(i as isize * self.stride);
                match (self.signed, self.width) {
                    (true, 1) => at.cast::<i8>().read_unaligned() as i64 as u64,
                    (true, 2) => at.cast::<i16>().read_unaligned() as i64 as u64,
                    (true, 4) => at.cast::<i32>().read_unaligned() as i64 as u64,
                    (true, _) => at.cast::<i64>().read_unaligned() as u64,
                    (false, 1) => u64::from(at.read()),
                    (false, 2) => u64::from(at.cast::<u16>().read_unaligned()),
                    (false, 4) => u64::from(at.cast::<u32>().read_unaligned()),
                    (false, _) => at.cast::<u64>().read_unaligned(),
                }
            };
            out.push(value);
        }
    }
}
