//! The C library's functions the module calls, as safe functions: `rand()`, which the
//! top-k's decay draws from as RedisBloom's does, and, for the unit tests only, `snprintf`
//! (`%.17g`) and `strtod`, the reference that [`numbers`](crate::numbers) is held to.
//!
//! A module of its own beside the glue (`glue`, `types`: the Redis module API), because
//! these need no server: `numbers`'s unit tests run without one, where the glue is compiled
//! out (it is built on the module API, whose functions Redis provides at load), and they
//! still call the C library itself as their reference.

/// One draw of the C library's `rand()` (0 to `RAND_MAX`), as RedisBloom's top-k draws its
/// decay decisions: the process-wide generator that Redis seeds at start-up.
#[cfg(not(test))]
pub fn rand() -> u32 {
    // SAFETY: rand() takes no arguments and only touches the C library's generator state,
    // which glibc guards with a lock.
    let r = unsafe { libc::rand() };
    r as u32
}

/// The C library's `%.17g` of `value` (`snprintf`), as Redis before 7.2 formats a double.
#[cfg(test)]
pub fn snprintf_g17(value: f64) -> Vec<u8> {
    let mut buf = [0 as libc::c_char; 64];
    // SAFETY: the buffer is 64 bytes and snprintf writes at most that many, NUL included;
    // the format takes exactly one double.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr(), buf.len(), c"%.17g".as_ptr(), value) };
    assert!(n > 0 && (n as usize) < buf.len(), "%.17g of {value:e}: {n}");
    // SAFETY: snprintf NUL-terminated the buffer (n < its length).
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_bytes()
        .to_vec()
}

/// The C library's `strtod` of `text`: the value and how many bytes it read (0 if none
/// make a number); `None` if `text` holds a NUL, which C would take for its end.
#[cfg(test)]
pub fn strtod(text: &[u8]) -> Option<(f64, usize)> {
    let c = std::ffi::CString::new(text).ok()?;
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `c` is NUL-terminated and `end` is a valid out pointer.
    let value = unsafe { libc::strtod(c.as_ptr(), &mut end) };
    // SAFETY: strtod sets `end` inside `c`'s buffer (at most at its NUL), so both pointers
    // are in the same allocation and `end` is not before the start.
    let read = unsafe { end.offset_from(c.as_ptr()) } as usize;
    Some((value, read))
}
