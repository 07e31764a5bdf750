//! The typed fields of a value in an RDB file, as the module API reads and writes them
//! (unsigned integers, doubles, byte strings), behind two small traits so that the
//! encoders and decoders of [`crate::bf`] and [`crate::cf`] are plain Rust, unit-tested
//! without a server on [`Fields`]; `types` implements them over Redis's `RedisModuleIO`.

/// Where a value is read from. Every read is `None` once the input is short or corrupt
/// (Redis's `RedisModule_IsIOError`), and a decoder returns `None` at the first of them.
pub trait Source {
    /// An unsigned integer.
    fn unsigned(&mut self) -> Option<u64>;
    /// A double.
    fn double(&mut self) -> Option<f64>;
    /// A byte string.
    fn buffer(&mut self) -> Option<Vec<u8>>;
}

/// Where a value is written to.
pub trait Sink {
    /// An unsigned integer.
    fn unsigned(&mut self, value: u64);
    /// A double.
    fn double(&mut self, value: f64);
    /// A byte string.
    fn buffer(&mut self, bytes: &[u8]);
}

/// One typed field.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    /// `RedisModule_SaveUnsigned`.
    Unsigned(u64),
    /// `RedisModule_SaveDouble`.
    Double(f64),
    /// `RedisModule_SaveStringBuffer`.
    Buffer(Vec<u8>),
}

/// A value's fields in memory: a [`Sink`] that collects them and a [`Source`] that reads
/// them back in order (a field of the wrong type, or none left, reads as `None`, as a
/// short or corrupt RDB does).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields {
    /// The fields, in order.
    pub fields: Vec<Field>,
    next: usize,
}

impl Fields {
    /// Fields to read.
    pub fn new(fields: Vec<Field>) -> Self {
        Self { fields, next: 0 }
    }

    fn take(&mut self) -> Option<&Field> {
        let field = self.fields.get(self.next)?;
        self.next += 1;
        Some(field)
    }
}

impl Source for Fields {
    fn unsigned(&mut self) -> Option<u64> {
        match self.take()? {
            Field::Unsigned(v) => Some(*v),
            _ => None,
        }
    }
    fn double(&mut self) -> Option<f64> {
        match self.take()? {
            Field::Double(v) => Some(*v),
            _ => None,
        }
    }
    fn buffer(&mut self) -> Option<Vec<u8>> {
        match self.take()? {
            Field::Buffer(v) => Some(v.clone()),
            _ => None,
        }
    }
}

impl Sink for Fields {
    fn unsigned(&mut self, value: u64) {
        self.fields.push(Field::Unsigned(value));
    }
    fn double(&mut self, value: f64) {
        self.fields.push(Field::Double(value));
    }
    fn buffer(&mut self, bytes: &[u8]) {
        self.fields.push(Field::Buffer(bytes.to_vec()));
    }
}

/// A `DUMP` payload of one module value, as Redis 7.0 writes it: the object (type byte 7,
/// `RDB_TYPE_MODULE_2`; the 64-bit module type id as an RDB length; each field behind its
/// opcode — 2 unsigned integer as an RDB length, 4 double as 8 little-endian bytes, 5
/// string as an RDB length and the bytes; opcode 0 to end), then RDB version 10 (2 bytes,
/// little-endian) and the CRC-64 of everything before (8 bytes, little-endian). `RESTORE`
/// takes it back on Redis 7.0 and later.
///
/// The module type id is the 9-character type name, 6 bits a character (`A–Z a–z 0–9 - _`),
/// then the 10-bit encoding version.
pub fn dump_payload(type_name: &[u8; 9], encver: i32, fields: &[Field]) -> Vec<u8> {
    const CHARSET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let id = type_name.iter().fold(0u64, |id, c| {
        let pos = CHARSET.iter().position(|x| x == c).unwrap_or(0);
        (id << 6) | pos as u64
    });
    let mut out = vec![7u8];
    rdb_length(&mut out, (id << 10) | (encver as u64 & 1023));
    for field in fields {
        match field {
            Field::Unsigned(v) => {
                out.push(2);
                rdb_length(&mut out, *v);
            }
            Field::Double(v) => {
                out.push(4);
                out.extend_from_slice(&v.to_le_bytes());
            }
            Field::Buffer(b) => {
                out.push(5);
                rdb_length(&mut out, b.len() as u64);
                out.extend_from_slice(b);
            }
        }
    }
    out.push(0);
    out.extend_from_slice(&10u16.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// An RDB length: 6 bits in one byte, 14 bits in two, else a marker byte and 4 or 8
/// big-endian bytes.
fn rdb_length(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else if n <= u32::MAX as u64 {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// Redis's CRC-64 (Jones polynomial, reflected in and out, initial value 0, no final
/// xor), one table lookup a byte.
pub fn crc64(data: &[u8]) -> u64 {
    const TABLE: [u64; 256] = {
        const REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5;
        let mut table = [0u64; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u64;
            let mut bit = 0;
            while bit < 8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ REFLECTED
                } else {
                    c >> 1
                };
                bit += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    data.iter().fold(0u64, |crc, &b| {
        TABLE[((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_is_redis_s() {
        // The check value of Redis's crc64.c self-test.
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn a_payload_is_what_redisbloom_2_4_dumps_for_a_one_point_t_digest() {
        // DUMP of `TDIGEST.CREATE t` + `TDIGEST.ADD t 5` under RedisBloom 2.4.20, Redis 7.0.
        let fields = [
            Field::Double(100.0),
            Field::Double(5.0),
            Field::Double(5.0),
            Field::Unsigned(610),
            Field::Unsigned(0),
            Field::Unsigned(1),
            Field::Unsigned(0),
            Field::Double(0.0),
            Field::Double(1.0),
        ];
        let expected = "07814c3212f9360f100004000000000000594004000000000000144004000000\
                        000000144002426202000201020004000000000000000004000000000000f03f\
                        000a009b86891305b25975";
        let hex: String = dump_payload(b"TDIS-TYPE", 0, &fields)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex, expected);
    }
}
