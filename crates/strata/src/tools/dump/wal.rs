//! Dumping a write-ahead log: each record's write batch, with the sequence number of each op.

use std::path::Path;

use serde::Serialize;

use super::{bad_pointer, dump_records, PointerShown, Printer};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::tools::records::describe_in_record;
use crate::tools::text::Shown;
use crate::vlog::ValuePointer;
use crate::write_batch::{BatchOp, WriteBatch};

#[derive(Serialize)]
struct BatchJson<'a> {
    r#type: &'static str,
    offset: u64,
    sequence: u64,
    count: u32,
    ops: Vec<OpJson<'a>>,
}

#[derive(Serialize)]
struct OpJson<'a> {
    op: &'static str,
    sequence: u64,
    key: Shown<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<Shown<'a>>,
    /// A separated value's pointer, in place of the value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pointer: Option<PointerShown>,
    /// A range deletion's end (exclusive).
    #[serde(skip_serializing_if = "Option::is_none")]
    end: Option<Shown<'a>>,
    /// An expiring value's expiry time, microseconds since the Unix epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_at_micros: Option<u64>,
    /// A put's time to live in microseconds (never logged: a damaged log).
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl_micros: Option<u64>,
}

impl<'a> OpJson<'a> {
    fn new(op: &'static str, sequence: u64, key: Shown<'a>) -> OpJson<'a> {
        OpJson {
            op,
            sequence,
            key,
            value: None,
            pointer: None,
            end: None,
            expires_at_micros: None,
            ttl_micros: None,
        }
    }
}

pub(super) fn dump(env: &dyn Env, path: &Path, verify: bool, p: &mut Printer<'_>) -> Result<()> {
    dump_records(
        env,
        path,
        verify,
        true,
        p,
        &mut |p, offset, data| match WriteBatch::from_contents(data.to_vec()) {
            Ok(batch) => batch_out(p, offset, &batch),
            Err(e) => {
                let reason = describe_in_record(&e);
                p.problem(
                    Some(offset),
                    &format!("record is not a write batch: {reason}"),
                )
            }
        },
    )
}

fn batch_out(p: &mut Printer<'_>, offset: u64, batch: &WriteBatch) -> Result<()> {
    let show = p.show;
    let first = batch.sequence();
    let mut ops = Vec::new();
    let mut error: Option<Error> = None;
    let mut bad_pointers = Vec::new();
    for (i, op) in batch.iter().enumerate() {
        let sequence = first.wrapping_add(i as u64);
        match op {
            Ok(BatchOp::Put { key, value }) => ops.push(OpJson {
                value: Some(show.bytes(value)),
                ..OpJson::new("put", sequence, show.bytes(key))
            }),
            Ok(BatchOp::Delete { key }) => ops.push(OpJson::new("del", sequence, show.bytes(key))),
            Ok(BatchOp::DeleteRange { start, end }) => ops.push(OpJson {
                end: Some(show.bytes(end)),
                ..OpJson::new("del-range", sequence, show.bytes(start))
            }),
            Ok(BatchOp::PutExpiring {
                key,
                value,
                expires_at_micros,
            }) => ops.push(OpJson {
                value: Some(show.bytes(value)),
                expires_at_micros: Some(expires_at_micros),
                ..OpJson::new("put-expiring", sequence, show.bytes(key))
            }),
            Ok(BatchOp::PutWithTtl { key, value, ttl }) => ops.push(OpJson {
                value: Some(show.bytes(value)),
                ttl_micros: Some(u64::try_from(ttl.as_micros()).unwrap_or(u64::MAX)),
                ..OpJson::new("put-ttl", sequence, show.bytes(key))
            }),
            // The value is the pointer's encoding (see `vlog`): shown decoded, or raw when it
            // does not parse (reported after the batch).
            Ok(BatchOp::PutSeparated { key, pointer: raw }) => {
                let op = OpJson::new("put-pointer", sequence, show.bytes(key));
                ops.push(match ValuePointer::decode(raw) {
                    Some(pointer) => OpJson {
                        pointer: Some(PointerShown(pointer)),
                        ..op
                    },
                    None => {
                        bad_pointers.push(bad_pointer(key, raw));
                        OpJson {
                            value: Some(show.bytes(raw)),
                            ..op
                        }
                    }
                });
            }
            Err(e) => error = Some(e),
        }
    }
    if p.json {
        p.json(&BatchJson {
            r#type: "batch",
            offset,
            sequence: first,
            count: batch.count(),
            ops,
        })?;
    } else {
        p.line(format_args!(
            "offset {offset}: batch sequence {first}, {} ops",
            batch.count()
        ))?;
        for op in &ops {
            let (kind, key, sequence) = (op.op, &op.key, op.sequence);
            if let Some(pointer) = op.pointer {
                p.line(format_args!("  {kind} '{key}' @ {sequence} => {pointer}"))?;
                continue;
            }
            match (&op.value, &op.end) {
                (Some(value), _) => p.line(format_args!(
                    "  {kind} '{key}' @ {sequence} => '{value}'{}",
                    {
                        match (op.expires_at_micros, op.ttl_micros) {
                            (Some(at), _) => format!(" expires at {at} us"),
                            (_, Some(ttl)) => format!(" ttl {ttl} us"),
                            _ => String::new(),
                        }
                    }
                ))?,
                (None, Some(end)) => {
                    p.line(format_args!("  {kind} ['{key}', '{end}') @ {sequence}"))?
                }
                (None, None) => p.line(format_args!("  {kind} '{key}' @ {sequence}"))?,
            }
        }
    }
    for reason in &bad_pointers {
        p.problem(Some(offset), reason)?;
    }
    match error {
        Some(e) => {
            let reason = describe_in_record(&e);
            p.problem(Some(offset), &format!("bad write batch: {reason}"))
        }
        None => Ok(()),
    }
}
