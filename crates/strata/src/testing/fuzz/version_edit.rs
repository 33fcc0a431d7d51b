//! Fuzz body for version edits, decoded alone and replayed from a manifest at open.

use std::path::Path;
use std::sync::Arc;

use arbitrary::{Result, Unstructured};

use super::{bytes, damage, small_key};
use crate::env::{Env, MemEnv};
use crate::log::LogWriter;
use crate::options::Options;
use crate::util::internal_key::MAX_SEQUENCE;
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::NUM_LEVELS;
use crate::DB;

/// Fuzz target `version_edit`: `data` as a raw edit, which must decode to a value that encodes
/// and decodes back to itself, and as a manifest record replayed by `DB::open`; then as a
/// recipe for edits that must round-trip, survive damage, and, written as a manifest, open (or
/// fail to open) a database that then takes writes without panicking.
pub fn version_edit(data: &[u8]) {
    check_decoded(data);
    replay_manifest(&[data.to_vec()]);
    let _ = edit_round_trip(&mut Unstructured::new(data));
}

/// Decodes `bytes`; a decoded edit must print, and encode to bytes that decode to it again.
fn check_decoded(bytes: &[u8]) {
    let Ok(edit) = VersionEdit::decode(bytes) else {
        return;
    };
    let _ = edit.to_string();
    let mut encoded = Vec::new();
    edit.encode(&mut encoded);
    match VersionEdit::decode(&encoded) {
        Ok(again) => assert_eq!(again, edit, "a decoded edit does not survive re-encoding"),
        Err(e) => panic!("the encoding of a decoded edit does not decode: {e}"),
    }
}

/// A number that is small, or close to a limit the engine must not cross.
fn number(u: &mut Unstructured<'_>) -> Result<u64> {
    Ok(match u.int_in_range(0..=5)? {
        0 => u64::MAX - u.int_in_range(0..=3)?,
        1 => MAX_SEQUENCE - u.int_in_range(0..=3)? + u.int_in_range(0..=3)?,
        2 => u.arbitrary()?,
        _ => u.int_in_range(0..=20)?,
    })
}

fn option<T>(
    u: &mut Unstructured<'_>,
    f: impl FnOnce(&mut Unstructured<'_>) -> Result<T>,
) -> Result<Option<T>> {
    Ok(if u.arbitrary()? { Some(f(u)?) } else { None })
}

/// An internal key (at least the 8-byte trailer long).
fn internal_key(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    let mut key = small_key(u, 8)?;
    let trailer: u64 = u.arbitrary()?;
    key.extend_from_slice(&trailer.to_le_bytes());
    Ok(key)
}

fn arbitrary_edit(u: &mut Unstructured<'_>) -> Result<VersionEdit> {
    let mut edit = VersionEdit::new();
    if u.ratio(1, 3)? {
        let name = if u.arbitrary()? {
            "leveldb.BytewiseComparator".to_owned()
        } else {
            String::from_utf8_lossy(&bytes(u, 30)?).into_owned()
        };
        edit.set_comparator_name(&name);
    }
    edit.log_number = option(u, number)?;
    edit.prev_log_number = option(u, number)?;
    edit.next_file_number = option(u, number)?;
    edit.last_sequence = option(u, number)?;
    for _ in 0..u.int_in_range(0..=3)? {
        let level = u.int_in_range(0..=NUM_LEVELS - 1)?;
        edit.compact_pointers.push((level, internal_key(u)?));
    }
    for _ in 0..u.int_in_range(0..=3)? {
        let level = u.int_in_range(0..=NUM_LEVELS - 1)?;
        edit.deleted_files.insert((level, number(u)?));
    }
    for _ in 0..u.int_in_range(0..=3)? {
        let level = u.int_in_range(0..=NUM_LEVELS - 1)?;
        let file = FileMetaData {
            number: number(u)?,
            file_size: number(u)?,
            smallest: internal_key(u)?,
            largest: internal_key(u)?,
        };
        edit.new_files.push((level, file));
    }
    Ok(edit)
}

fn edit_round_trip(u: &mut Unstructured<'_>) -> Result<()> {
    let mut records = Vec::new();
    for _ in 0..u.int_in_range(1..=4)? {
        let edit = arbitrary_edit(u)?;
        let mut encoded = Vec::new();
        edit.encode(&mut encoded);
        match VersionEdit::decode(&encoded) {
            Ok(decoded) => assert_eq!(decoded, edit, "an edit does not round-trip"),
            Err(e) => panic!("an encoded edit does not decode: {e}"),
        }
        records.push(encoded);
    }
    replay_manifest(&records);
    if let Some(last) = records.last_mut() {
        damage(u, last)?;
        check_decoded(last);
    }
    replay_manifest(&records);
    Ok(())
}

/// Writes `records` as the manifest of a database over a fresh in-memory Env, opens it, and if
/// that works, writes, reads, flushes and reopens it. Nothing may panic; what was written and
/// acknowledged must read back.
fn replay_manifest(records: &[Vec<u8>]) {
    let env = Arc::new(MemEnv::new());
    let dir = Path::new("/manifest-db");
    let manifest = dir.join("MANIFEST-000002");
    let written = env.create_dir(dir).and_then(|()| {
        let mut writer = LogWriter::new(env.new_writable_file(&manifest)?);
        for record in records {
            writer.add_record(record)?;
        }
        writer.close()?;
        let mut current = env.new_writable_file(&dir.join("CURRENT"))?;
        current.append(b"MANIFEST-000002\n")?;
        current.close()
    });
    if let Err(e) = written {
        panic!("writing a manifest to memory failed: {e}");
    }
    let options = || Options {
        env: env.clone(),
        ..Options::default()
    };
    let Ok(db) = DB::open(dir, options()) else {
        return;
    };
    let _ = db.property("leveldb.stats");
    let _ = db.property("leveldb.sstables");
    let put = db.put(b"key", b"value").is_ok();
    if put {
        assert_eq!(
            db.get(b"key").ok().flatten().as_deref(),
            Some(&b"value"[..]),
            "an acknowledged put is not read back"
        );
    }
    let _ = db.compact_range(None, None);
    drop(db);
    if let Ok(db) = DB::open(dir, options()) {
        if put {
            assert_eq!(
                db.get(b"key").ok().flatten().as_deref(),
                Some(&b"value"[..]),
                "an acknowledged put is lost at reopen"
            );
        }
    }
}
