//! The caches of the machine in use, as Linux describes them, read once.
//!
//! Some choices of the classic filter depend on whether the filter fits in a cache (see
//! [`BloomFilter`](crate::BloomFilter)'s query limits): a query of a filter in the caches
//! is cheaper without a branch, one from main memory is cheaper stopping at its first 0
//! bit. Where the line falls is a property of the machine, so it is read from the machine:
//! `/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}` (the kernel's
//! `cacheinfo`, from CPUID on x86 and from the device tree on Arm). Elsewhere, or when
//! sysfs says nothing usable, the callers fall back to the sizes measured on the machine
//! their constants name.

use std::path::Path;
use std::sync::OnceLock;

/// Data-cache sizes of the first CPU, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Caches {
    /// The level-2 data or unified cache (one core's, on most machines).
    pub l2: Option<u64>,
    /// The largest level of data or unified cache (L3 where there is one; shared between
    /// cores).
    pub last_level: Option<u64>,
}

/// The caches of this machine, read at the first call.
///
/// ```
/// let caches = bloomkit::caches::caches();
/// if let (Some(l2), Some(last)) = (caches.l2, caches.last_level) {
///     assert!(l2 <= last);
/// }
/// ```
pub fn caches() -> Caches {
    static CACHES: OnceLock<Caches> = OnceLock::new();
    *CACHES.get_or_init(|| read(Path::new("/sys/devices/system/cpu/cpu0/cache")))
}

/// Reads the `index*` directories under `dir`; entries that are missing or unreadable, and
/// instruction caches, are skipped.
pub fn read(dir: &Path) -> Caches {
    let mut caches = Caches::default();
    let mut last_level = 0;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return caches;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !entry.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let field = |name: &str| std::fs::read_to_string(path.join(name)).ok();
        let (Some(level), Some(kind), Some(size)) = (field("level"), field("type"), field("size"))
        else {
            continue;
        };
        let (Ok(level), Some(size)) = (level.trim().parse::<u32>(), parse_size(size.trim())) else {
            continue;
        };
        if kind.trim() == "Instruction" || size == 0 {
            continue;
        }
        if level == 2 {
            caches.l2 = Some(size);
        }
        if level >= last_level {
            last_level = level;
            caches.last_level = Some(size);
        }
    }
    caches
}

/// A sysfs cache size: `32768K`, `1M`, or plain bytes.
fn parse_size(text: &str) -> Option<u64> {
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let shift = match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, index: u32, level: &str, kind: &str, size: &str) {
        let d = dir.join(format!("index{index}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("level"), format!("{level}\n")).unwrap();
        std::fs::write(d.join("type"), format!("{kind}\n")).unwrap();
        std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
    }

    #[test]
    fn the_l2_and_the_largest_data_level_are_read_and_instruction_caches_skipped() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 0, "1", "Data", "32K");
        write(dir.path(), 1, "1", "Instruction", "64K");
        write(dir.path(), 2, "2", "Unified", "1024K");
        write(dir.path(), 3, "3", "Unified", "32768K");
        write(dir.path(), 4, "4", "Instruction", "1G");
        let c = read(dir.path());
        assert_eq!(c.l2, Some(1 << 20));
        assert_eq!(c.last_level, Some(32 << 20));
    }

    #[test]
    fn a_machine_without_sysfs_or_with_unreadable_sizes_has_no_sizes() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(&dir.path().join("missing")), Caches::default());
        write(dir.path(), 0, "2", "Unified", "lots");
        write(dir.path(), 1, "x", "Unified", "1M");
        write(dir.path(), 2, "3", "Unified", "0");
        assert_eq!(read(dir.path()), Caches::default());
    }

    #[test]
    fn sizes_are_read_with_their_units() {
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("1T"), None);
        assert_eq!(parse_size("99999999999999999999K"), None);
        assert_eq!(parse_size("18446744073709551615K"), None);
    }
}
