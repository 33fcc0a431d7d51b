//! Write batches: the operations of `db.batch([...])`, and the chained batch
//! (`db.batch().put(..).del(..).write()`), whose operations are copied into an engine
//! `WriteBatch` as they are added, so JavaScript keeps no references to them.

use napi_derive::napi;
use strata::WriteBatch;

use crate::bytes::{to_vec, Data};
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
