//! Dumping a table: footer, metaindex, filters and index, then every data block's entries.

use std::path::Path;

use serde_json::json;

use super::{bad_pointer, KeyJson, KeyText, PointerShown, Printer};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::table::format::{BlockHandle, Footer};
use crate::tools::table_walk::{FilterSummary, TableFile, TableVisitor};
use crate::util::internal_key::{parse_internal_key, ValueType};
use crate::vlog::ValuePointer;

pub(super) fn dump(env: &dyn Env, path: &Path, verify: bool, p: &mut Printer<'_>) -> Result<()> {
    let table = match TableFile::open(env, path) {
        Ok(table) => table,
        Err(Error::Corruption(c)) => return p.problem(c.offset, &c.reason),
        Err(e) => return Err(e),
    };
    let mut visitor = Dumper {
        p,
        error: None,
        blocks: 0,
        block_offset: None,
    };
    table.walk(verify, &mut visitor)?;
    let Dumper {
        p, error, blocks, ..
    } = visitor;
    if let Some(e) = error {
        return Err(e);
    }
    let entries = p.summary.records;
    if p.json {
        p.json(&json!({
            "type": "summary",
            "file_size": table.size(),
            "data_blocks": blocks,
            "entries": entries,
        }))
    } else {
        p.line(format_args!(
            "{blocks} data blocks, {entries} entries, {} bytes",
            table.size()
        ))
    }
}

/// Prints what the walk meets; keeps the first output error (the walk cannot stop for it).
struct Dumper<'p, 'o> {
    p: &'p mut Printer<'o>,
    error: Option<Error>,
    blocks: u64,
    /// Offset of the data block being walked.
    block_offset: Option<u64>,
}

impl Dumper<'_, '_> {
    fn emit(&mut self, f: impl FnOnce(&mut Printer<'_>) -> Result<()>) {
        if self.error.is_none() {
            if let Err(e) = f(self.p) {
                self.error = Some(e);
            }
        }
    }
}

fn compression_name(type_byte: u8) -> String {
    match type_byte {
        0 => "none".to_owned(),
        1 => "snappy".to_owned(),
        other => format!("type {other}"),
    }
}

impl TableVisitor for Dumper<'_, '_> {
    fn footer(&mut self, footer: &Footer) {
        let (m, i) = (footer.metaindex, footer.index);
        self.emit(|p| {
            if p.json {
                p.json(&json!({
                    "type": "footer",
                    "metaindex": {"offset": m.offset, "size": m.size},
                    "index": {"offset": i.offset, "size": i.size},
                }))
            } else {
                p.line(format_args!(
                    "footer: metaindex at {} ({} bytes), index at {} ({} bytes)",
                    m.offset, m.size, i.offset, i.size
                ))
            }
        });
    }

    fn meta_entry(&mut self, name: &[u8], handle: Option<BlockHandle>) {
        self.emit(|p| {
            let shown = p.bytes(name);
            match (p.json, handle) {
                (true, Some(h)) => p.json(&json!({
                    "type": "meta", "name": shown, "offset": h.offset, "size": h.size,
                })),
                (true, None) => p.json(&json!({"type": "meta", "name": shown})),
                (false, Some(h)) => p.line(format_args!(
                    "meta '{shown}' => block at {} ({} bytes)",
                    h.offset, h.size
                )),
                (false, None) => p.line(format_args!("meta '{shown}' => (bad handle)")),
            }
        });
    }

    fn filter_block(&mut self, name: &[u8], handle: BlockHandle, filter: &FilterSummary) {
        self.emit(|p| {
            let shown = p.bytes(name);
            if p.json {
                p.json(&json!({
                    "type": "filter",
                    "name": shown,
                    "offset": handle.offset,
                    "size": handle.size,
                    "filters": filter.num_filters,
                    "base_lg": filter.base_lg,
                }))
            } else {
                p.line(format_args!(
                    "filter '{shown}': {} bytes, {} filters, base_lg {}",
                    handle.size, filter.num_filters, filter.base_lg
                ))
            }
        });
    }

    fn index_entry(&mut self, key: &[u8], handle: BlockHandle) {
        self.emit(|p| {
            if p.json {
                p.json(&json!({
                    "type": "index",
                    "key": KeyJson::new(key, p.show),
                    "offset": handle.offset,
                    "size": handle.size,
                }))
            } else {
                p.line(format_args!(
                    "index {} => block at {} ({} bytes)",
                    KeyText(key, p.show),
                    handle.offset,
                    handle.size
                ))
            }
        });
    }

    fn data_block(&mut self, index: usize, handle: BlockHandle, compression: u8, len: usize) {
        self.blocks += 1;
        self.block_offset = Some(handle.offset);
        self.emit(|p| {
            let compression = compression_name(compression);
            if p.json {
                p.json(&json!({
                    "type": "block",
                    "index": index,
                    "offset": handle.offset,
                    "size": handle.size,
                    "compression": compression,
                    "uncompressed_size": len,
                }))
            } else {
                p.line(format_args!(
                    "data block {index} at {} ({} bytes stored, {compression}, {len} bytes)",
                    handle.offset, handle.size
                ))
            }
        });
    }

    fn entry(&mut self, key: &[u8], value: &[u8]) {
        let block = self.block_offset;
        self.emit(|p| {
            p.summary.records += 1;
            // A separated value's pointer is shown decoded; one that does not parse is shown
            // raw and reported at its block.
            let pointer = match parse_internal_key(key) {
                Some(k) if k.value_type == ValueType::ValuePointer => {
                    let pointer = ValuePointer::decode(value).map(PointerShown);
                    if pointer.is_none() {
                        p.problem(block, &bad_pointer(k.user_key, value))?;
                    }
                    pointer
                }
                _ => None,
            };
            let shown = KeyJson::new(key, p.show);
            match (p.json, pointer) {
                (true, Some(pointer)) => {
                    p.json(&json!({"type": "entry", "key": shown, "pointer": pointer}))
                }
                (true, None) => {
                    p.json(&json!({"type": "entry", "key": shown, "value": p.bytes(value)}))
                }
                (false, Some(pointer)) => {
                    p.line(format_args!("  {} => {pointer}", KeyText(key, p.show)))
                }
                (false, None) => p.line(format_args!(
                    "  {} => '{}'",
                    KeyText(key, p.show),
                    p.bytes(value)
                )),
            }
        });
    }

    fn problem(&mut self, offset: Option<u64>, reason: String) {
        self.emit(|p| p.problem(offset, &reason));
    }
}
