//! Dumping a value file (format extension `value-separation`): each record's offset, key,
//! value length and crc, and the damage met (`tools/value_walk.rs`). Values are not printed:
//! they are the large ones; `strata get` reads one.

use std::path::Path;

use serde::Serialize;

use super::{tail_reason, Printer};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::tools::text::Shown;
use crate::tools::value_walk::{for_each_value_record, ValueItem};

#[derive(Serialize)]
struct RecordJson<'a> {
    r#type: &'static str,
    offset: u64,
    size: u64,
    key: Shown<'a>,
    value_length: usize,
    crc: u32,
    checksum: &'static str,
}

pub(super) fn dump(env: &dyn Env, path: &Path, verify: bool, p: &mut Printer<'_>) -> Result<()> {
    let checksum = if verify { "ok" } else { "not verified" };
    for_each_value_record(env, path, verify, &[], &mut |item| match item {
        ValueItem::Record {
            offset,
            size,
            record,
        } => {
            p.summary.records += 1;
            let key = p.bytes(record.key);
            let value_length = record.value.len();
            if p.json {
                p.json(&RecordJson {
                    r#type: "record",
                    offset,
                    size,
                    key,
                    value_length,
                    crc: record.crc,
                    checksum,
                })
            } else {
                p.line(format_args!(
                    "offset {offset}: '{key}' => {value_length} value bytes ({size} bytes, crc \
                     {:#010x} {checksum})",
                    record.crc
                ))
            }
        }
        ValueItem::Damage { error, bytes } => match error {
            Error::Corruption(c) => p.problem(c.offset, &format!("{} ({bytes} bytes)", c.reason)),
            other => Err(other),
        },
        ValueItem::Tail { offset, bytes } => p.problem(Some(offset), &tail_reason(bytes)),
    })
}
