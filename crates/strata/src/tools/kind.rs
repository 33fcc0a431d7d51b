//! Telling what a database file is, by its name or else by its contents.

use std::fmt;
use std::path::Path;

use crate::env::Env;
use crate::error::{Error, Result};
use crate::filename::{parse_file_name, FileType};
use crate::log::LogReader;
use crate::table::format::{FOOTER_LEN, TABLE_MAGIC};
use crate::tools::value_walk::starts_with_a_value_record;
use crate::util::coding::decode_fixed64;
use crate::version::edit::VersionEdit;
use crate::write_batch::WriteBatch;

/// The kinds of file `dump` understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A write-ahead log (`NNNNNN.log`): records holding write batches.
    Log,
    /// A table (`NNNNNN.ldb` or `.sst`).
    Table,
    /// A manifest (`MANIFEST-NNNNNN`): records holding version edits.
    Manifest,
    /// `CURRENT`: the name of the live manifest.
    Current,
    /// A value file (`NNNNNN.vlog`, format extension `value-separation`): records holding
    /// separated values.
    ValueFile,
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Log => "log",
            FileKind::Table => "table",
            FileKind::Manifest => "manifest",
            FileKind::Current => "current",
            FileKind::ValueFile => "vlog",
        })
    }
}

impl std::str::FromStr for FileKind {
    type Err = Error;

    fn from_str(name: &str) -> Result<FileKind> {
        match name {
            "log" => Ok(FileKind::Log),
            "table" | "ldb" | "sst" => Ok(FileKind::Table),
            "manifest" => Ok(FileKind::Manifest),
            "current" => Ok(FileKind::Current),
            "vlog" | "value" => Ok(FileKind::ValueFile),
            _ => Err(Error::InvalidArgument(format!(
                "unknown file kind {name:?} (log, table, manifest, current or vlog)"
            ))),
        }
    }
}

/// The kind of the file at `path`: from its name when it is a database file name, else from
/// its contents (a table's magic number, `CURRENT`'s one line, a first log record that
/// decodes as a version edit or a write batch, or a first value record whose crc holds).
pub fn detect_file_kind(env: &dyn Env, path: &Path) -> Result<FileKind> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match parse_file_name(name) {
        Some((_, FileType::Log)) => return Ok(FileKind::Log),
        Some((_, FileType::Table)) => return Ok(FileKind::Table),
        Some((_, FileType::Descriptor)) => return Ok(FileKind::Manifest),
        Some((_, FileType::Current)) => return Ok(FileKind::Current),
        Some((_, FileType::ValueFile)) => return Ok(FileKind::ValueFile),
        _ => {}
    }
    sniff(env, path)?.ok_or_else(|| {
        Error::InvalidArgument(format!(
            "{}: not a log, table, manifest, CURRENT or value file (name it, or give the kind)",
            path.display()
        ))
    })
}

fn sniff(env: &dyn Env, path: &Path) -> Result<Option<FileKind>> {
    let size = env.file_size(path)?;
    if size >= FOOTER_LEN as u64 {
        let file = env.new_random_access_file(path)?;
        let mut magic = [0u8; 8];
        let n = file.read_at(size - 8, &mut magic)?;
        if n == 8 && decode_fixed64(&magic) == Some(TABLE_MAGIC) {
            return Ok(Some(FileKind::Table));
        }
    }
    if size <= 64 {
        let file = env.new_random_access_file(path)?;
        let mut buf = [0u8; 64];
        let n = file.read_at(0, &mut buf)?;
        if let Some(line) = buf.get(..n).and_then(|b| b.strip_suffix(b"\n")) {
            if line.starts_with(b"MANIFEST-") && !line.contains(&b'\n') {
                return Ok(Some(FileKind::Current));
            }
        }
    }
    let mut reader = LogReader::new(env.new_sequential_file(path)?, None, true, 0);
    let mut scratch = Vec::new();
    if let Some(record) = reader.read_record(&mut scratch) {
        if !record.is_empty() && VersionEdit::decode(record).is_ok() {
            return Ok(Some(FileKind::Manifest));
        }
        let batch_ok = WriteBatch::from_contents(record.to_vec())
            .is_ok_and(|batch| batch.iter().all(|op| op.is_ok()));
        if batch_ok {
            return Ok(Some(FileKind::Log));
        }
    }
    Ok(starts_with_a_value_record(env, path)?.then_some(FileKind::ValueFile))
}
