//! Version edits (the records of a manifest) in plain public fields, encoded and decoded by the
//! engine's `VersionEdit`, for tests that build or inspect manifests.

use crate::error::{Error, Result};
use crate::version::edit::VersionEdit;
use crate::version::NUM_LEVELS;

/// A table a version edit adds, in plain public fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditNewFile {
    /// Level the table joins.
    pub level: usize,
    /// File number (`NNNNNN.ldb`).
    pub number: u64,
    /// File size in bytes.
    pub file_size: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
}

/// Every field of a version edit, in plain public fields. Converts losslessly to and from the
/// engine's `VersionEdit`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditFields {
    /// Comparator name.
    pub comparator: Option<String>,
    /// Log number.
    pub log_number: Option<u64>,
    /// Previous log number.
    pub prev_log_number: Option<u64>,
    /// Next file number.
    pub next_file_number: Option<u64>,
    /// Last sequence number.
    pub last_sequence: Option<u64>,
    /// Compaction pointers: (level, internal key).
    pub compact_pointers: Vec<(usize, Vec<u8>)>,
    /// Deleted tables: (level, file number), ascending.
    pub deleted_files: Vec<(usize, u64)>,
    /// Added tables, in edit order.
    pub new_files: Vec<EditNewFile>,
}

/// Decodes a version edit (a manifest record's payload) into its fields.
pub fn version_edit_fields(bytes: &[u8]) -> Result<EditFields> {
    let edit = VersionEdit::decode(bytes)?;
    Ok(EditFields {
        comparator: edit.comparator,
        log_number: edit.log_number,
        prev_log_number: edit.prev_log_number,
        next_file_number: edit.next_file_number,
        last_sequence: edit.last_sequence,
        compact_pointers: edit.compact_pointers,
        deleted_files: edit.deleted_files.into_iter().collect(),
        new_files: edit
            .new_files
            .into_iter()
            .map(|(level, f)| EditNewFile {
                level,
                number: f.number,
                file_size: f.file_size,
                smallest: f.smallest,
                largest: f.largest,
            })
            .collect(),
    })
}

/// Encodes `fields` as the engine's `VersionEdit` encodes an edit (a manifest record's payload).
/// Fails with `InvalidArgument` for a level outside the tree.
pub fn encode_version_edit(fields: &EditFields) -> Result<Vec<u8>> {
    let levels = fields
        .compact_pointers
        .iter()
        .map(|(level, _)| *level)
        .chain(fields.deleted_files.iter().map(|(level, _)| *level))
        .chain(fields.new_files.iter().map(|f| f.level));
    for level in levels {
        if level >= NUM_LEVELS {
            return Err(Error::InvalidArgument(format!(
                "level {level} is not below {NUM_LEVELS}"
            )));
        }
    }
    let mut edit = VersionEdit::new();
    if let Some(name) = &fields.comparator {
        edit.set_comparator_name(name);
    }
    edit.log_number = fields.log_number;
    edit.prev_log_number = fields.prev_log_number;
    edit.next_file_number = fields.next_file_number;
    edit.last_sequence = fields.last_sequence;
    for (level, key) in &fields.compact_pointers {
        edit.set_compact_pointer(*level, key.clone());
    }
    for &(level, number) in &fields.deleted_files {
        edit.delete_file(level, number);
    }
    for f in &fields.new_files {
        edit.add_file(
            f.level,
            f.number,
            f.file_size,
            f.smallest.clone(),
            f.largest.clone(),
        );
    }
    let mut out = Vec::new();
    edit.encode(&mut out);
    Ok(out)
}

/// Decodes a version edit (a manifest record's payload) into its readable form.
pub fn decode_version_edit(bytes: &[u8]) -> Result<String> {
    VersionEdit::decode(bytes).map(|edit| edit.to_string())
}
