//! Dumping a manifest: each record's version edit.
//!
//! The text form is the layout of `VersionEdit`'s `Display` (one field a line), with keys shown
//! the chosen way; with escaped keys it is exactly that `Display` (a test keeps them equal).

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::{dump_records, KeyJson, KeyText, Printer};
use crate::env::Env;
use crate::error::Result;
use crate::tools::records::describe_in_record;
use crate::tools::text::Show;
use crate::version::edit::VersionEdit;

#[derive(Serialize)]
struct EditJson<'a> {
    r#type: &'static str,
    offset: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    comparator: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_number: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prev_log_number: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_file_number: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_sequence: Option<u64>,
    compact_pointers: Vec<PointerJson<'a>>,
    deleted_files: Vec<DeletedJson>,
    new_files: Vec<NewFileJson<'a>>,
}

#[derive(Serialize)]
struct PointerJson<'a> {
    level: usize,
    key: KeyJson<'a>,
}

#[derive(Serialize)]
struct DeletedJson {
    level: usize,
    number: u64,
}

#[derive(Serialize)]
struct NewFileJson<'a> {
    level: usize,
    number: u64,
    file_size: u64,
    smallest: KeyJson<'a>,
    largest: KeyJson<'a>,
}

pub(super) fn dump(env: &dyn Env, path: &Path, verify: bool, p: &mut Printer<'_>) -> Result<()> {
    dump_records(
        env,
        path,
        verify,
        false,
        p,
        &mut |p, offset, data| match VersionEdit::decode(data) {
            Ok(edit) if p.json => p.json(&edit_json(&edit, offset, p.show)),
            Ok(edit) => {
                let text = edit_text(&edit, p.show);
                p.line(format_args!("offset {offset}: {text}"))
            }
            Err(e) => {
                let reason = describe_in_record(&e);
                p.problem(Some(offset), &format!("bad version edit: {reason}"))
            }
        },
    )
}

fn edit_json(edit: &VersionEdit, offset: u64, show: Show) -> EditJson<'_> {
    EditJson {
        r#type: "edit",
        offset,
        comparator: edit.comparator.as_deref(),
        log_number: edit.log_number,
        prev_log_number: edit.prev_log_number,
        next_file_number: edit.next_file_number,
        last_sequence: edit.last_sequence,
        compact_pointers: edit
            .compact_pointers
            .iter()
            .map(|(level, key)| PointerJson {
                level: *level,
                key: KeyJson::new(key, show),
            })
            .collect(),
        deleted_files: edit
            .deleted_files
            .iter()
            .map(|&(level, number)| DeletedJson { level, number })
            .collect(),
        new_files: edit
            .new_files
            .iter()
            .map(|(level, f)| NewFileJson {
                level: *level,
                number: f.number,
                file_size: f.file_size,
                smallest: KeyJson::new(&f.smallest, show),
                largest: KeyJson::new(&f.largest, show),
            })
            .collect(),
    }
}

/// The edit in `VersionEdit`'s `Display` layout, keys shown as `show` says.
pub(super) fn edit_text(edit: &VersionEdit, show: Show) -> String {
    let mut s = String::from("VersionEdit {\n");
    // Writing to a String cannot fail.
    if let Some(name) = &edit.comparator {
        let _ = writeln!(s, "  Comparator: {name}");
    }
    let scalars = [
        ("LogNumber", edit.log_number),
        ("PrevLogNumber", edit.prev_log_number),
        ("NextFile", edit.next_file_number),
        ("LastSeq", edit.last_sequence),
    ];
    for (label, value) in scalars {
        if let Some(value) = value {
            let _ = writeln!(s, "  {label}: {value}");
        }
    }
    for (level, key) in &edit.compact_pointers {
        let _ = writeln!(s, "  CompactPointer: {level} {}", KeyText(key, show));
    }
    for (level, number) in &edit.deleted_files {
        let _ = writeln!(s, "  DeleteFile: {level} {number}");
    }
    for (level, f) in &edit.new_files {
        let _ = writeln!(
            s,
            "  AddFile: {level} {} {} {} .. {}",
            f.number,
            f.file_size,
            KeyText(&f.smallest, show),
            KeyText(&f.largest, show)
        );
    }
    s.push('}');
    s
}
