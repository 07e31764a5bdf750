//! The library's errors as Python's exceptions.

use bloomkit::{Error, Kind};
use pyo3::create_exception;
use pyo3::exceptions::{
    PyBlockingIOError, PyKeyError, PyMemoryError, PyOSError, PyRuntimeError, PyTypeError,
    PyValueError,
};
use pyo3::prelude::*;

create_exception!(
    bloomkit,
    FormatError,
    PyValueError,
    "The bytes or file are not a valid bloomkit filter: damaged, cut short, not a filter \
     at all, or a filter of another kind than the class asked for."
);

create_exception!(
    bloomkit,
    FullError,
    PyRuntimeError,
    "The filter cannot take another item (a cuckoo filter at its load limit, a scalable \
     filter at its last layer); every item already in is kept."
);

create_exception!(
    bloomkit,
    InterruptedWriteError,
    PyOSError,
    "A write to the file was interrupted (its writer died mid-flush) and its journal must be \
     replayed before the file can be read, which takes someone who can write the file to \
     open it for writing. The file is not damaged: once that is done it reads as before."
);

/// The Python exception for a library error.
pub fn to_py(error: Error) -> PyErr {
    let message = error.to_string();
    match error {
        Error::Unsupported { operation, .. } => {
            let able: Vec<&str> = Kind::ALL
                .iter()
                .filter(|k| match operation {
                    "remove" => k.can_remove(),
                    "merge" => k.can_merge(),
                    _ => false,
                })
                .map(|k| k.type_name())
                .collect();
            if able.is_empty() {
                PyTypeError::new_err(message)
            } else {
                PyTypeError::new_err(format!(
                    "{message}; the kinds that can: {}",
                    able.join(", ")
                ))
            }
        }
        Error::NotPresent => PyKeyError::new_err(message),
        Error::Full { .. } => FullError::new_err(message),
        Error::OutOfMemory { .. } => PyMemoryError::new_err(message),
        Error::Decode(_)
        | Error::InvalidFile { .. }
        | Error::UnknownHashFunction(_)
        | Error::UnknownIndexScheme(_) => FormatError::new_err(message),
        Error::Io { .. } | Error::RandomSeed(_) => PyOSError::new_err(message),
        // A lock that is busy: Python's BlockingIOError, with its errno (as a
        // non-blocking `fcntl.flock` gives).
        Error::Locked { .. } => PyBlockingIOError::new_err((ewouldblock(), message)),
        // Not a damaged file (FormatError) nor a bad parameter: the file's state, which
        // someone who can write the file resolves; an OSError, as the files' other
        // troubles are.
        Error::InterruptedWrite { .. } => InterruptedWriteError::new_err(message),
        // Every other error is a parameter that no filter can have (ε, capacity, sizes,
        // mismatched filters in a union).
        _ => PyValueError::new_err(message),
    }
}

/// Python's `errno.EWOULDBLOCK` (the platform's number for it).
fn ewouldblock() -> i32 {
    Python::attach(|py| {
        py.import("errno")
            .and_then(|errno| errno.getattr("EWOULDBLOCK"))
            .and_then(|n| n.extract::<i32>())
    })
    .unwrap_or(11)
}

/// `_library_error(name, path)`: the exception the module raises for the library error
/// `name` ("locked", "interrupted-write") about the file `path` — the mapping of errors
/// that no call of the package can yet meet (the on-disk filter is not in the package),
/// for its tests. Not part of the API.
#[pyfunction]
pub fn _library_error(py: Python<'_>, name: &str, path: std::path::PathBuf) -> PyResult<Py<PyAny>> {
    let error = match name {
        "locked" => Error::Locked { path },
        "interrupted-write" => Error::InterruptedWrite {
            journal: bloomkit::buffered::journal_of(&path),
            path,
            not_completed: None,
        },
        other => return Err(PyValueError::new_err(format!("no library error {other:?}"))),
    };
    Ok(to_py(error).into_value(py).into_any())
}

/// An operating-system error with its errno and file name, so that Python picks the
/// subclass (`FileNotFoundError`, `PermissionError`, `IsADirectoryError`, …).
pub fn os_error(error: std::io::Error, path: &std::path::Path) -> PyErr {
    let Some(errno) = error.raw_os_error() else {
        return PyOSError::new_err(format!("{}: {error}", path.display()));
    };
    // Python's own text for the errno (as open() gives), not Rust's "(os error N)".
    let text = Python::attach(|py| {
        py.import("os")
            .and_then(|os| os.call_method1("strerror", (errno,)))
            .and_then(|text| text.extract::<String>())
    })
    .unwrap_or_else(|_| error.to_string());
    PyOSError::new_err((errno, text, path.as_os_str().to_os_string()))
}
