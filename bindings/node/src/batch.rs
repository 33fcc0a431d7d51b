//! Write batches: the operations of `db.batch([...])`, and the chained batch
//! (`db.batch().put(..).del(..).write()`), whose operations are copied into an engine
//! `WriteBatch` as they are added, so JavaScript keeps no references to them.
//!
//! `db.batch([...])` whose keys and values are all strings (the `utf8` encoding, the default)
//! crosses the boundary packed ([`packed_batch`]): one string joining every key and value, and
//! the length of each in UTF-16 code units. That is a handful of Node-API calls for the whole
//! batch instead of a dozen per operation (three property reads, type checks, two calls and an
//! allocation per string), which made the copy of the operations cost more than the engine's
//! write of them. Other batches come as the array of operations ([`BatchOp`]).

use napi_derive::napi;
use strata::WriteBatch;

use crate::bytes::{push_utf16_as_utf8, to_vec, Data};
use crate::errors::{Code, Failure, Outcome};

/// One operation of `db.batch([...])`, as abstract-level passes it (encoded).
#[napi(object, object_to_js = false)]
pub struct BatchOp<'a> {
    /// `'put'` or `'del'`.
    #[napi(js_name = "type")]
    pub kind: String,
    #[napi(ts_type = "Uint8Array | string")]
    pub key: Data<'a>,
    #[napi(ts_type = "Uint8Array | string")]
    pub value: Option<Data<'a>>,
}

impl BatchOp<'_> {
    /// Adds the operation to `batch`.
    pub(crate) fn add_to(self, batch: &mut WriteBatch) -> Outcome<()> {
        match (self.kind.as_str(), self.value) {
            ("put", Some(value)) => batch.put(&to_vec(self.key), &to_vec(value)),
            ("put", None) => {
                return Err(Failure::new(
                    Code::InvalidValue,
                    "A put operation needs a value",
                ))
            }
            ("del", _) => batch.delete(&to_vec(self.key)),
            (other, _) => {
                return Err(Failure::new(
                    Code::InvalidArgument,
                    format!("A batch operation's type must be 'put' or 'del', got '{other}'"),
                ))
            }
        }
        Ok(())
    }
}

/// The batch that a packed `db.batch([...])` describes: `text` is every key and value in order
/// (UTF-16 code units), `lengths` two numbers per operation, the length of its key and of its
/// value, or -1 for a `del`'s value.
pub(crate) fn packed_batch(text: &[u16], lengths: &[i32]) -> Outcome<WriteBatch> {
    let malformed = || Failure::new(Code::InvalidArgument, "Malformed packed batch");
    if !lengths.len().is_multiple_of(2) {
        return Err(malformed());
    }
    let mut rest = text;
    // The next `length` code units of `rest`, encoded into `out`.
    let mut take = |length: i32, out: &mut Vec<u8>| -> Outcome<()> {
        let length = usize::try_from(length).map_err(|_| malformed())?;
        if length > rest.len() {
            return Err(malformed());
        }
        let (units, after) = rest.split_at(length);
        out.clear();
        push_utf16_as_utf8(units, out);
        rest = after;
        Ok(())
    };
    let mut batch = WriteBatch::new();
    let (mut key, mut value) = (Vec::new(), Vec::new());
    for pair in lengths.chunks_exact(2) {
        take(pair[0], &mut key)?;
        if pair[1] == -1 {
            batch.delete(&key);
        } else {
            take(pair[1], &mut value)?;
            batch.put(&key, &value);
        }
    }
    if !rest.is_empty() {
        return Err(malformed());
    }
    Ok(batch)
}

/// A chained batch's operations, until it is written or closed.
#[napi]
pub struct Batch {
    batch: Option<WriteBatch>,
}

impl Batch {
    /// The operations, leaving the batch closed.
    pub(crate) fn take(&mut self) -> Outcome<WriteBatch> {
        self.batch
            .take()
            .ok_or_else(|| Failure::new(Code::BatchNotOpen, "Batch is not open"))
    }

    fn open(&mut self) -> Outcome<&mut WriteBatch> {
        self.batch
            .as_mut()
            .ok_or_else(|| Failure::new(Code::BatchNotOpen, "Batch is not open"))
    }
}

#[napi]
impl Batch {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)] // a JavaScript constructor, not a Rust one
    pub fn new() -> Batch {
        Batch {
            batch: Some(WriteBatch::new()),
        }
    }

    #[napi]
    pub fn put(
        &mut self,
        #[napi(ts_arg_type = "Uint8Array | string")] key: Data<'_>,
        #[napi(ts_arg_type = "Uint8Array | string")] value: Data<'_>,
    ) -> napi::Result<(), Code> {
        self.open()?.put(&to_vec(key), &to_vec(value));
        Ok(())
    }

    #[napi]
    pub fn del(
        &mut self,
        #[napi(ts_arg_type = "Uint8Array | string")] key: Data<'_>,
    ) -> napi::Result<(), Code> {
        self.open()?.delete(&to_vec(key));
        Ok(())
    }

    /// Removes every operation.
    #[napi]
    pub fn clear(&mut self) -> napi::Result<(), Code> {
        self.open()?.clear();
        Ok(())
    }

    /// Drops the operations; the batch cannot be used again.
    #[napi]
    pub fn close(&mut self) {
        self.batch = None;
    }
}
