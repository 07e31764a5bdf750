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
