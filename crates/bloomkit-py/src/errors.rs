//! The library's errors as Python's exceptions.

use bloomkit::{Error, Kind};
use pyo3::create_exception;
use pyo3::exceptions::{
    PyKeyError, PyMemoryError, PyOSError, PyRuntimeError, PyTypeError, PyValueError,
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
        // Every other error is a parameter that no filter can have (ε, capacity, sizes,
        // mismatched filters in a union).
        _ => PyValueError::new_err(message),
    }
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
