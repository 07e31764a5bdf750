//! The decoder against corrupted and hostile input.
//!
//! * Every single-byte corruption and every truncation of a real encoded filter is an
//!   error (the checksum guarantees it), never a filter and never a panic.
//! * Headers crafted to pass the checksum but to lie about sizes, counts and identifiers
//!   give the specific [`DecodeError`] that names the problem, and allocate nothing like
//!   the sizes they claim.
//!
//! The layout (see the docs of `bloomkit::codec` and `impl Persist for BloomFilter`):
//!
//! ```text
//!  0  magic "BLOOMKIT"        28  num_bits u64         64  payload length u64
//!  8  version u16             36  num_hashes u32       72  payload (u64 LE words)
//! 10  kind, 11 hash fn,       40  capacity u64         ..  checksum XXH3-64 of all before
//! 12  index scheme            48  target_fpp f64
//! 13  reserved [0; 3]         56  inserted u64
//! 16  seed u64
//! 24  params length u32 (36)
//! ```

use bloomkit::codec::{CHUNKED_FORMAT_VERSION, FORMAT_VERSION, MAGIC};
use bloomkit::{AnyFilter, BloomFilter, DecodeError, Error, HashFunction, IndexScheme, Persist};

/// m for the small filter: not a multiple of 64, so the last word has padding bits.
const NUM_BITS: u64 = 1_900;
const WORDS: usize = NUM_BITS.div_ceil(64) as usize;
const PAYLOAD_AT: usize = 72;

/// A small filter (320 bytes encoded) with some items in it.
fn small_filter() -> BloomFilter {
    let mut filter = BloomFilter::builder()
        .num_bits(NUM_BITS)
        .num_hashes(4)
        .capacity(300)
        .hash_function(HashFunction::Xxh3)
        .seed(0x5eed)
        .build()
        .unwrap();
    for i in 0..150u32 {
        filter.insert(&i);
    }
    filter
}

/// Every field of an encoded Bloom filter, written by this test's own encoder so that
/// each can be set to a value the library's encoder would never write.
#[derive(Clone, Debug)]
struct Layout {
    magic: [u8; 8],
    version: u16,
    kind: u8,
    function: u8,
    scheme: u8,
    reserved: [u8; 3],
    seed: u64,
    /// `None`: the real length of `params`.
    params_len: Option<u32>,
    num_bits: u64,
    num_hashes: u32,
    capacity: u64,
    target_fpp: f64,
    inserted: u64,
    /// Bytes appended to the parameters.
    params_extra: Vec<u8>,
    /// `None`: the real length of `payload`.
    payload_len: Option<u64>,
    payload: Vec<u8>,
    /// Bytes after the checksum.
    trailing: Vec<u8>,
}

impl Layout {
    /// The fields of the small filter.
    fn of_small_filter() -> Self {
        let filter = small_filter();
        let bytes = filter.to_bytes();
        Layout {
            magic: *MAGIC,
            version: FORMAT_VERSION,
            kind: 1,
            function: HashFunction::Xxh3.id(),
            scheme: IndexScheme::EnhancedDoubleHashing.id(),
            reserved: [0; 3],
            seed: 0x5eed,
            params_len: None,
            num_bits: NUM_BITS,
            num_hashes: 4,
            capacity: 300,
            target_fpp: filter.target_fpp(),
            inserted: bloomkit::Filter::len(&filter),
            params_extra: Vec::new(),
            payload_len: None,
            payload: bytes[PAYLOAD_AT..bytes.len() - 8].to_vec(),
            trailing: Vec::new(),
        }
    }

    /// The bytes, sealed with a correct checksum over everything before it.
    fn encode(&self) -> Vec<u8> {
        let mut params = Vec::new();
        params.extend_from_slice(&self.num_bits.to_le_bytes());
        params.extend_from_slice(&self.num_hashes.to_le_bytes());
        params.extend_from_slice(&self.capacity.to_le_bytes());
        params.extend_from_slice(&self.target_fpp.to_le_bytes());
        params.extend_from_slice(&self.inserted.to_le_bytes());
        params.extend_from_slice(&self.params_extra);

        let mut out = Vec::new();
        out.extend_from_slice(&self.magic);
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&[self.kind, self.function, self.scheme]);
        out.extend_from_slice(&self.reserved);
        out.extend_from_slice(&self.seed.to_le_bytes());
        let params_len = self.params_len.unwrap_or(params.len() as u32);
        out.extend_from_slice(&params_len.to_le_bytes());
        out.extend_from_slice(&params);
        let payload_len = self.payload_len.unwrap_or(self.payload.len() as u64);
        out.extend_from_slice(&payload_len.to_le_bytes());
        out.extend_from_slice(&self.payload);
        let checksum = xxhash_rust::xxh3::xxh3_64(&out);
        out.extend_from_slice(&checksum.to_le_bytes());
        out.extend_from_slice(&self.trailing);
        out
    }

    /// Decodes the encoding with both decoders; they must agree.
    fn decode(&self) -> Result<BloomFilter, Error> {
        decode_both(&self.encode())
    }

    /// The decoding error, which must be a [`DecodeError`].
    fn decode_error(&self) -> DecodeError {
        match self.decode() {
            Err(Error::Decode(d)) => d,
            Err(other) => panic!("not a decode error: {other:?} for {self:?}"),
            Ok(f) => panic!("hostile input accepted as {f:?}: {self:?}"),
        }
    }

    fn with(&self, change: impl FnOnce(&mut Layout)) -> Layout {
        let mut copy = self.clone();
        change(&mut copy);
        copy
    }
}

/// Decodes with `BloomFilter::from_bytes` and `AnyFilter::from_bytes`, checking that they
/// give the same answer.
fn decode_both(bytes: &[u8]) -> Result<BloomFilter, Error> {
    let bloom = BloomFilter::from_bytes(bytes);
    let any = AnyFilter::from_bytes(bytes);
    match (&bloom, any) {
        (Ok(f), Ok(AnyFilter::Bloom(g))) => assert_eq!(f, &g, "the decoders disagree"),
        (Err(e), Err(g)) => assert_eq!(e, &g, "the decoders disagree"),
        (b, a) => panic!("the decoders disagree: {b:?} vs {a:?}"),
    }
    bloom
}

fn is_field(error: &DecodeError, name: &str) -> bool {
    matches!(error, DecodeError::InvalidField { field, .. } if *field == name)
}

#[test]
fn the_test_encoder_writes_exactly_what_the_library_writes() {
    let filter = small_filter();
    let bytes = filter.to_bytes();
    assert_eq!(bytes.len(), PAYLOAD_AT + WORDS * 8 + 8);
    assert_eq!(bytes.len(), 320);
    assert_eq!(Layout::of_small_filter().encode(), bytes);
    assert_eq!(Layout::of_small_filter().decode().unwrap(), filter);
}

#[test]
fn every_single_byte_corruption_is_an_error() {
    let bytes = small_filter().to_bytes();
    let len = bytes.len();
    for i in 0..len {
        for mask in [0x01u8, 0xff] {
            let mut corrupt = bytes.clone();
            corrupt[i] ^= mask;
            let error = match decode_both(&corrupt) {
                Err(Error::Decode(d)) => d,
                other => panic!("byte {i} ^ {mask:#04x}: expected a decode error, got {other:?}"),
            };
            // Where the reader stops first tells which error it must be.
            let expected_ok = match i {
                0..=7 => error == DecodeError::BadMagic,
                8..=9 => matches!(
                    error,
                    DecodeError::UnsupportedVersion(v, CHUNKED_FORMAT_VERSION) if v != 1 && v != 2
                ),
                13..=15 => is_field(&error, "reserved"),
                // The two length fields: the reader then finds the wrong structure.
                24..=27 | 64..=71 => !matches!(error, DecodeError::ChecksumMismatch { .. }),
                // Identifiers, seed, parameters, payload and the checksum itself are
                // covered by the checksum, which is checked before they are interpreted.
                _ => matches!(error, DecodeError::ChecksumMismatch { .. }),
            };
            assert!(expected_ok, "byte {i} ^ {mask:#04x}: unexpected {error:?}");
        }
    }
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = small_filter().to_bytes();
    for cut in 0..bytes.len() {
        match decode_both(&bytes[..cut]) {
            Err(Error::Decode(DecodeError::Truncated {
                offset,
                needed,
                available,
            })) => {
                assert!(offset <= cut, "cut {cut}: offset {offset}");
                assert_eq!(available, cut - offset, "cut {cut}");
                assert!(needed > available as u64, "cut {cut}");
            }
            other => panic!("cut at {cut}: expected Truncated, got {other:?}"),
        }
    }
    assert!(decode_both(&bytes).is_ok());
}

#[test]
fn a_wrong_checksum_is_reported_with_both_values() {
    let mut bytes = small_filter().to_bytes();
    let n = bytes.len();
    let computed = xxhash_rust::xxh3::xxh3_64(&bytes[..n - 8]);
    let stored = computed ^ 0x8000_0000_0000_0001;
    bytes[n - 8..].copy_from_slice(&stored.to_le_bytes());
    assert_eq!(
        decode_both(&bytes).unwrap_err(),
        Error::Decode(DecodeError::ChecksumMismatch { stored, computed })
    );
}

#[test]
fn bad_magic_is_not_a_filter() {
    let base = Layout::of_small_filter();
    for magic in [*b"BLOOMKIX", *b"bloomkit", [0; 8], *b"\x89PNG\r\n\x1a\n"] {
        assert_eq!(
            base.with(|l| l.magic = magic).decode_error(),
            DecodeError::BadMagic
        );
    }
}

#[test]
fn a_payload_length_of_u64_max_is_truncated_not_allocated() {
    let base = Layout::of_small_filter();
    let hostile = base.with(|l| l.payload_len = Some(u64::MAX));
    let len = hostile.encode().len();
    assert_eq!(
        hostile.decode_error(),
        DecodeError::Truncated {
            offset: PAYLOAD_AT,
            needed: u64::MAX,
            available: len - PAYLOAD_AT,
        }
    );
    // One byte more than present is just as wrong.
    let one_more = base.with(|l| l.payload_len = Some(WORDS as u64 * 8 + 9));
    assert!(matches!(
        one_more.decode_error(),
        DecodeError::Truncated {
            offset: PAYLOAD_AT,
            ..
        }
    ));
}

#[test]
fn a_params_length_of_u32_max_is_truncated_not_allocated() {
    let hostile = Layout::of_small_filter().with(|l| l.params_len = Some(u32::MAX));
    let len = hostile.encode().len();
    assert_eq!(
        hostile.decode_error(),
        DecodeError::Truncated {
            offset: 28,
            needed: u32::MAX as u64,
            available: len - 28,
        }
    );
}

#[test]
fn parameters_of_the_wrong_length_are_errors() {
    let base = Layout::of_small_filter();
    // A length of 35 over 36 bytes of parameters: the payload length is then read one
    // byte early, so the rest of the structure no longer fits.
    let short = base.with(|l| l.params_len = Some(35));
    assert!(matches!(
        short.decode_error(),
        DecodeError::Truncated { .. } | DecodeError::TrailingBytes(_)
    ));
    // A well-formed file whose parameters are one byte too long.
    let long = base.with(|l| l.params_extra = vec![0]);
    assert!(is_field(&long.decode_error(), "parameters"));
    // A well-formed file whose parameters are one byte too short.
    let mut bytes = base.encode();
    bytes.remove(28 + 35);
    bytes[24..28].copy_from_slice(&35u32.to_le_bytes());
    let n = bytes.len();
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..n - 8]);
    bytes[n - 8..].copy_from_slice(&sum.to_le_bytes());
    assert!(matches!(
        decode_both(&bytes),
        Err(Error::Decode(DecodeError::Truncated { .. }))
    ));
}

#[test]
fn num_bits_out_of_range_is_an_invalid_field() {
    let base = Layout::of_small_filter();
    for num_bits in [0, (1 << 40) + 1, u64::MAX] {
        let error = base.with(|l| l.num_bits = num_bits).decode_error();
        assert!(is_field(&error, "num_bits"), "m = {num_bits}: {error:?}");
    }
}

#[test]
fn num_bits_that_disagree_with_the_payload_are_refused_before_allocating() {
    let base = Layout::of_small_filter();
    // 2^40 bits is allowed, but 240 bytes cannot hold them: refused without allocating
    // the 128 GiB it claims.
    for num_bits in [1 << 40, NUM_BITS + 64, NUM_BITS - 64, 1] {
        let error = base.with(|l| l.num_bits = num_bits).decode_error();
        assert!(is_field(&error, "payload"), "m = {num_bits}: {error:?}");
    }
    // A larger m that still needs exactly 30 words fits (its padding bits are clear).
    for num_bits in [NUM_BITS + 1, 30 * 64] {
        assert!(base.with(|l| l.num_bits = num_bits).decode().is_ok());
    }
    // The payload length field agreeing with a shorter payload is no better.
    let short = base.with(|l| {
        l.payload.truncate(l.payload.len() - 8);
    });
    assert!(is_field(&short.decode_error(), "payload"));
    let long = base.with(|l| l.payload.extend_from_slice(&[0; 8]));
    assert!(is_field(&long.decode_error(), "payload"));
}

#[test]
fn num_hashes_out_of_range_is_an_invalid_field() {
    let base = Layout::of_small_filter();
    for num_hashes in [0, 65, 1000, u32::MAX] {
        let error = base.with(|l| l.num_hashes = num_hashes).decode_error();
        assert!(
            is_field(&error, "num_hashes"),
            "k = {num_hashes}: {error:?}"
        );
    }
    for num_hashes in [1, 64] {
        let filter = base.with(|l| l.num_hashes = num_hashes).decode().unwrap();
        assert_eq!(filter.num_hashes(), num_hashes);
    }
}

#[test]
fn target_fpp_outside_zero_one_is_an_invalid_field() {
    let base = Layout::of_small_filter();
    for fpp in [
        f64::NAN,
        -f64::NAN,
        1.0 + f64::EPSILON,
        -f64::MIN_POSITIVE,
        1.5,
        -0.01,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        let error = base.with(|l| l.target_fpp = fpp).decode_error();
        assert!(is_field(&error, "target_fpp"), "ε = {fpp}: {error:?}");
    }
    // The closed interval: fixed dimensions can give exactly 1 or underflow to 0.
    for fpp in [0.0, f64::MIN_POSITIVE, 0.5, 1.0 - f64::EPSILON, 1.0] {
        let filter = base.with(|l| l.target_fpp = fpp).decode().unwrap();
        assert_eq!(filter.target_fpp(), fpp);
    }
}

#[test]
fn zero_capacity_is_an_invalid_field() {
    let error = Layout::of_small_filter()
        .with(|l| l.capacity = 0)
        .decode_error();
    assert!(is_field(&error, "capacity"), "{error:?}");
}

#[test]
fn unknown_kind_tags_are_unknown_kinds() {
    let base = Layout::of_small_filter();
    for tag in [0u8, 200, 255] {
        assert_eq!(
            base.with(|l| l.kind = tag).decode_error(),
            DecodeError::UnknownKind(tag)
        );
    }
}

#[test]
fn unknown_hash_function_and_index_scheme_ids_are_invalid_fields() {
    let base = Layout::of_small_filter();
    for id in [0u8, 7, 255] {
        let error = base.with(|l| l.function = id).decode_error();
        assert!(is_field(&error, "hash function"), "id {id}: {error:?}");
    }
    for id in [0u8, 7, 255] {
        let error = base.with(|l| l.scheme = id).decode_error();
        assert!(is_field(&error, "index scheme"), "id {id}: {error:?}");
    }
    // Every known pair decodes, and the filter keeps it.
    for function in [
        HashFunction::Murmur3,
        HashFunction::Xxh3,
        HashFunction::Murmur64APair,
        HashFunction::Xxh64,
        HashFunction::SparkMurmur3Pair,
        HashFunction::Fold2,
    ] {
        for scheme in [
            IndexScheme::EnhancedDoubleHashing,
            IndexScheme::SeededHashes,
            IndexScheme::DoubleHashing,
            IndexScheme::GuavaMitz64,
            IndexScheme::SparkV1,
            IndexScheme::SparkV2,
        ] {
            let filter = base
                .with(|l| {
                    l.function = function.id();
                    l.scheme = scheme.id();
                })
                .decode()
                .unwrap();
            let hashing = bloomkit::Filter::hashing(&filter);
            assert_eq!((hashing.function, hashing.scheme), (function, scheme));
        }
    }
}

#[test]
fn non_zero_reserved_bytes_are_an_invalid_field() {
    let base = Layout::of_small_filter();
    for i in 0..3 {
        for value in [1u8, 0x80, 0xff] {
            let error = base.with(|l| l.reserved[i] = value).decode_error();
            assert!(
                is_field(&error, "reserved"),
                "byte {i} = {value}: {error:?}"
            );
        }
    }
}

#[test]
fn other_format_versions_are_unsupported() {
    let base = Layout::of_small_filter();
    for version in [0u16, 3, 0x0100, 0x0201, u16::MAX] {
        assert_eq!(
            base.with(|l| l.version = version).decode_error(),
            DecodeError::UnsupportedVersion(version, CHUNKED_FORMAT_VERSION)
        );
    }
    // A version-1 body labelled version 2 lacks the chunk table and header checksum: an
    // error, not a filter.
    let relabelled = base
        .with(|l| l.version = CHUNKED_FORMAT_VERSION)
        .decode_error();
    assert!(
        !matches!(relabelled, DecodeError::UnsupportedVersion(..)),
        "{relabelled:?}"
    );
    assert_ne!(FORMAT_VERSION, CHUNKED_FORMAT_VERSION);
}

#[test]
fn padding_bits_set_in_the_last_word_are_an_invalid_payload() {
    let base = Layout::of_small_filter();
    let tail_bits = NUM_BITS % 64; // 44 bits of the last word are real
    let last_word = (WORDS - 1) * 8;
    let with_bit = |bit: u64| {
        base.with(|l| {
            let mut word = u64::from_le_bytes(l.payload[last_word..].try_into().unwrap());
            word |= 1 << bit;
            l.payload[last_word..].copy_from_slice(&word.to_le_bytes());
        })
    };
    for bit in tail_bits..64 {
        let error = with_bit(bit).decode_error();
        assert!(is_field(&error, "payload"), "padding bit {bit}: {error:?}");
    }
    // The last real bit is an ordinary bit.
    let filter = with_bit(tail_bits - 1).decode().unwrap();
    assert_eq!(filter.num_bits(), NUM_BITS);
}

#[test]
fn bytes_after_the_checksum_are_trailing_bytes() {
    let base = Layout::of_small_filter();
    for extra in [1usize, 7, 8, 100] {
        assert_eq!(
            base.with(|l| l.trailing = vec![0; extra]).decode_error(),
            DecodeError::TrailingBytes(extra)
        );
    }
    // Appending to the library's own output is caught the same way.
    let mut bytes = small_filter().to_bytes();
    bytes.extend_from_slice(b"junk");
    assert_eq!(
        decode_both(&bytes).unwrap_err(),
        Error::Decode(DecodeError::TrailingBytes(4))
    );
}

#[test]
fn a_corrupt_file_fails_to_load_with_its_path_in_the_error() {
    let dir = std::env::temp_dir().join(format!("bloomkit-decoder-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("corrupt.bloom");
    let mut bytes = small_filter().to_bytes();
    bytes[100] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let error = BloomFilter::load(&path).unwrap_err();
    let any_error = AnyFilter::load(&path).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    for e in [error, any_error] {
        match &e {
            Error::InvalidFile {
                path: reported,
                error: DecodeError::ChecksumMismatch { .. },
            } => assert_eq!(reported, &path),
            other => panic!("expected InvalidFile with a checksum mismatch, got {other:?}"),
        }
        let message = e.to_string();
        assert!(message.contains("corrupt.bloom"), "{message}");
        assert!(message.contains("checksum"), "{message}");
    }
}

/// The peak virtual memory of this process, in bytes (Linux only).
fn peak_virtual_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmPeak:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Set in the child process that [`hostile_headers_allocate_nothing_like_what_they_claim`]
/// starts.
const CHILD_ENV: &str = "BLOOMKIT_DECODER_MEMORY_CHILD";

/// A decoder that sized a buffer from a hostile length before checking it would reserve
/// gigabytes (4 GiB for the parameters, 128 GiB for the bits) even if it never touched
/// them. The peak virtual size of the process shows such a reservation. The peak is a
/// high-water mark of the whole process, which the other tests of this file move too, so
/// the measurement runs in a child process that runs only
/// [`decode_hostile_headers_measuring_peak_memory`].
#[test]
fn hostile_headers_allocate_nothing_like_what_they_claim() {
    if peak_virtual_memory().is_none() {
        return; // not Linux: nothing to measure with; the other tests check the errors
    }
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "decoder::decode_hostile_headers_measuring_peak_memory",
            "--exact",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .expect("run this test binary again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "child failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("peak virtual memory grew by"),
        "the child did not measure:\n{stdout}\n{stderr}"
    );
}

/// The measuring half of [`hostile_headers_allocate_nothing_like_what_they_claim`]; does
/// nothing unless started by it.
#[test]
fn decode_hostile_headers_measuring_peak_memory() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let base = Layout::of_small_filter();
    let hostile = [
        base.with(|l| l.payload_len = Some(u64::MAX)),
        base.with(|l| l.payload_len = Some(1 << 37)),
        base.with(|l| l.payload_len = Some(u32::MAX as u64 + 1)),
        base.with(|l| l.params_len = Some(u32::MAX)),
        base.with(|l| l.num_bits = 1 << 40),
        base.with(|l| l.num_bits = (1 << 40) + 1),
        base.with(|l| l.num_bits = u64::MAX),
        base.with(|l| l.num_bits = 1 << 35),
        base.with(|l| l.num_hashes = u32::MAX),
    ];
    let encoded: Vec<Vec<u8>> = hostile.iter().map(Layout::encode).collect();
    let before = peak_virtual_memory().unwrap();
    for (layout, bytes) in hostile.iter().zip(&encoded) {
        assert!(decode_both(bytes).is_err(), "{layout:?} accepted");
    }
    let grown = peak_virtual_memory().unwrap().saturating_sub(before);
    eprintln!("peak virtual memory grew by {grown} bytes");
    assert!(
        grown < 1 << 30,
        "decoding hostile headers raised peak virtual memory by {grown} bytes"
    );
}
