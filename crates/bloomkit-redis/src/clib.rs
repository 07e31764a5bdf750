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
///
/// With glibc, `rand()` is `random()` behind one more call (`return (int) __random ();`:
/// the same locked generator, which `srand` and `srandom` both seed), so `random()` is
/// called directly: the same values, ~4 instructions fewer a draw, and a `TOPK.ADD` draws
/// about seven times. Elsewhere (musl keeps two generators) `rand()` itself.
pub fn rand() -> u32 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: random() (declared below as the C library declares it) takes no arguments
    // and only touches the C library's generator state, which glibc guards with a lock.
    let r = unsafe { random() };
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    // SAFETY: rand() takes no arguments and only touches the C library's generator state.
    let r = unsafe { libc::rand() };
    r as u32
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
unsafe extern "C" {
    /// `long random(void)` (POSIX; the `libc` crate does not declare it).
    fn random() -> libc::c_long;
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

#[cfg(test)]
mod tests {
    /// [`rand`](super::rand) draws what the C library's `rand()` would, from the same
    /// generator: after the same `srand`, the same values, and a draw of one moves the
    /// other.
    #[test]
    fn rand_draws_the_c_librarys_rand_sequence() {
        let draws = |seed: u32, ours: bool| -> Vec<u32> {
            // SAFETY: srand and rand only touch the C library's generator state (no other
            // test draws from it).
            unsafe { libc::srand(seed) };
            (0..1000)
                .map(|_| {
                    if ours {
                        super::rand()
                    } else {
                        // SAFETY: as above.
                        unsafe { libc::rand() as u32 }
                    }
                })
                .collect()
        };
        for seed in [1, 7, 0xdead_beef] {
            let (ours, theirs) = (draws(seed, true), draws(seed, false));
            let first_difference = ours.iter().zip(&theirs).position(|(a, b)| a != b);
            assert_eq!(first_difference, None, "seed {seed}");
        }
        // One shared generator: our draw and rand()'s interleave into rand()'s sequence.
        let expected = draws(3, false);
        // SAFETY: as above.
        unsafe { libc::srand(3) };
        let mixed: Vec<u32> = (0..1000)
            .map(|i| {
                if i % 2 == 0 {
                    super::rand()
                } else {
                    // SAFETY: as above.
                    unsafe { libc::rand() as u32 }
                }
            })
            .collect();
        assert!(
            mixed == expected,
            "interleaved draws left rand()'s sequence"
        );
        assert!(expected.iter().all(|&v| v <= libc::RAND_MAX as u32));
    }
}
