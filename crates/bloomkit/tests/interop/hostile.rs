//! Damaged and hostile foreign bytes are errors (never a panic, never a large allocation), and
//! sizing follows the foreign library's `create`.

#[cfg(feature = "guava")]
mod guava {
    use bloomkit::interop::guava::GuavaBloomFilter;

    #[test]
    fn damaged_inputs_are_errors() {
        let good = {
            let mut f = GuavaBloomFilter::with_capacity(100, 0.01).unwrap();
            f.put_str("x");
            f.to_bytes()
        };
        assert_eq!(GuavaBloomFilter::read_from(&good).unwrap().to_bytes(), good);
        for cut in 0..good.len() {
            assert!(
                GuavaBloomFilter::read_from(&good[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        let mut long = good.clone();
        long.push(0);
        assert!(GuavaBloomFilter::read_from(&long).is_err());
        for (at, value) in [(0, 0u8), (0, 2), (0, 0xff), (1, 0), (2, 0x80), (2, 0x7f)] {
            let mut bad = good.clone();
            bad[at] = value;
            assert!(
                GuavaBloomFilter::read_from(&bad).is_err(),
                "byte {at} = {value}"
            );
        }
        // A header claiming 2³¹−1 words over no data: an error, nothing allocated.
        assert!(GuavaBloomFilter::read_from(&[1, 3, 0x7f, 0xff, 0xff, 0xff]).is_err());
        assert!(GuavaBloomFilter::read_from(&[1, 3, 0, 0, 0, 0]).is_err());
    }

    #[test]
    fn sizing_follows_guava() {
        // Guava 31.1: create(funnel, 1000, 0.01) has 9,585 bits → 150 words, k = 7.
        let f = GuavaBloomFilter::with_capacity(1000, 0.01).unwrap();
        assert_eq!((f.words().len(), f.num_hash_functions()), (150, 7));
        assert!(GuavaBloomFilter::with_capacity(1, 0.99).is_err());
        assert!(GuavaBloomFilter::with_capacity(10, 0.0).is_err());
        assert!(GuavaBloomFilter::with_capacity(10, 1e-300).is_err()); // k > 255
        assert!(GuavaBloomFilter::with_capacity(u64::MAX, 0.01).is_err());
    }
}

#[cfg(feature = "spark")]
mod spark {
    use bloomkit::interop::spark::{SparkBloomFilter, SparkVersion};

    #[test]
    fn damaged_inputs_are_errors() {
        for version in [SparkVersion::V1, SparkVersion::V2] {
            let mut f = SparkBloomFilter::create(version, 100, 1000, 0).unwrap();
            f.put_long(7);
            let good = f.to_bytes();
            assert_eq!(SparkBloomFilter::read_from(&good).unwrap(), f);
            for cut in 0..good.len() {
                assert!(
                    SparkBloomFilter::read_from(&good[..cut]).is_err(),
                    "cut at {cut}"
                );
            }
            let mut long = good.clone();
            long.push(0);
            assert!(SparkBloomFilter::read_from(&long).is_err());
            let words_at = if version == SparkVersion::V1 { 8 } else { 12 };
            for (at, value) in [(3, 0u8), (3, 3), (0, 0x80), (7, 0), (4, 0x80), (4, 0x7f)] {
                let mut bad = good.clone();
                bad[at] = value;
                assert!(
                    SparkBloomFilter::read_from(&bad).is_err(),
                    "byte {at} = {value}"
                );
            }
            for value in [0x80u8, 0x7f, 0] {
                let mut bad = good.clone();
                bad[words_at..words_at + 4].copy_from_slice(&[value, 0xff, 0xff, 0xff]);
                if value == 0 {
                    bad[words_at + 3] = 0;
                    bad[words_at + 2] = 0;
                    bad[words_at + 1] = 0;
                }
                assert!(SparkBloomFilter::read_from(&bad).is_err(), "words {value}");
            }
        }
    }

    #[test]
    fn sizing_follows_spark() {
        // Spark's create(100000, 0.01): k = 7, 14,977 words (interop-facts.md).
        let f = SparkBloomFilter::with_capacity(100_000, 0.01).unwrap();
        assert_eq!((f.num_hash_functions(), f.words().len()), (7, 14_977));
        assert!(SparkBloomFilter::with_capacity(0, 0.01).is_err());
        assert!(SparkBloomFilter::with_capacity(1, 0.99).is_err());
        assert!(SparkBloomFilter::create(SparkVersion::V1, 10, 100, 5).is_err());
    }
}
