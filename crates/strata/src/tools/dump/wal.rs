//! Dumping a write-ahead log: each record's write batch, with the sequence number of each op.

use std::path::Path;

use serde::Serialize;

use super::{dump_records, Printer};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::tools::records::describe_in_record;
use crate::tools::text::Shown;
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
}

pub(super) fn dump(env: &dyn Env, path: &Path, verify: bool, p: &mut Printer<'_>) -> Result<()> {
    dump_records(
        env,
        path,
        verify,
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
    for (i, op) in batch.iter().enumerate() {
        let sequence = first.wrapping_add(i as u64);
        match op {
            Ok(BatchOp::Put { key, value }) => ops.push(OpJson {
                op: "put",
                sequence,
                key: show.bytes(key),
                value: Some(show.bytes(value)),
            }),
            Ok(BatchOp::Delete { key }) => ops.push(OpJson {
                op: "del",
                sequence,
                key: show.bytes(key),
                value: None,
            }),
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
            match &op.value {
                Some(value) => p.line(format_args!(
                    "  put '{}' @ {} => '{value}'",
                    op.key, op.sequence
                ))?,
                None => p.line(format_args!("  del '{}' @ {}", op.key, op.sequence))?,
            }
        }
    }
    match error {
        Some(e) => {
            let reason = describe_in_record(&e);
            p.problem(Some(offset), &format!("bad write batch: {reason}"))
        }
        None => Ok(()),
    }
}
