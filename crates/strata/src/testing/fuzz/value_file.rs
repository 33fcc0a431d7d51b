//! Fuzz body for value files (format extensions `value-separation` and `value-compression`):
//! records decoded alone, and read by pointer as every read of a separated value is
//! (`vlog/reader.rs`), raw and Snappy-compressed.

use std::path::Path;
use std::sync::Arc;

use arbitrary::{Result, Unstructured};

use super::{damage, pattern_value, small_key};
use crate::env::{write_file, Env, MemEnv};
use crate::error::Error;
use crate::filename::value_file_name;
use crate::vlog::reader::ValueFiles;
use crate::vlog::{decode_header, decode_record, encode_record, parse_record, ValuePointer};

const DIR: &str = "/fuzz";
const FILE: u64 = 7;

/// Fuzz target `value_file`: `data` as raw record bytes (decoded with and without the crc
/// check, and as a pointer), then as a value file read through pointers at its first offsets;
/// then as a recipe for records whose every pointer must read its value back exactly, and,
/// once the file is damaged, either exactly or with a corruption naming the file and the
/// record's offset.
pub fn value_file(data: &[u8]) {
    let _ = decode_header(data);
    let _ = parse_record(data);
    if let Ok((record, size)) = decode_record(data) {
        assert!(size <= data.len() && record.key.len() + record.value.len() <= size);
    }
    let _ = ValuePointer::decode(data);
    let files = file_of(data);
    // The first offsets, and one whose record would end past the largest offset.
    for offset in (0..data.len().min(16) as u64).chain([u64::MAX - 10]) {
        for (length, crc) in [(0, 0), (data.len() as u32, 0), (u32::MAX, u32::MAX)] {
            for stored in [None, Some(length / 2), Some(u32::MAX)] {
                let pointer = ValuePointer {
                    file: FILE,
                    offset,
                    length,
                    crc,
                    stored,
                };
                let _ = files.read(data.get(..4).unwrap_or_default(), &pointer.encode());
            }
        }
    }
    let _ = round_trip(&mut Unstructured::new(data));
}

/// The value files of a directory holding `bytes` as value file [`FILE`].
fn file_of(bytes: &[u8]) -> ValueFiles {
    let env: Arc<dyn Env> = Arc::new(MemEnv::new());
    let dir = Path::new(DIR);
    if let Err(e) = env
        .create_dir(dir)
        .and_then(|()| write_file(&*env, &value_file_name(dir, FILE), bytes, false))
    {
        panic!("writing to memory failed: {e}");
    }
    ValueFiles::new(env, dir)
}

fn round_trip(u: &mut Unstructured<'_>) -> Result<()> {
    let mut bytes = Vec::new();
    let mut written = Vec::new();
    for _ in 0..u.int_in_range(0..=12)? {
        let key = small_key(u, 12)?;
        let value = pattern_value(u, 70_000)?;
        // Stored compressed as the writer stores it: only when that saves 1/8 of the value.
        let compressed = if u.arbitrary()? {
            snap::raw::Encoder::new()
                .compress_vec(&value)
                .ok()
                .filter(|c| c.len() < value.len() - value.len() / 8)
        } else {
            None
        };
        let offset = bytes.len() as u64;
        let crc = encode_record(&mut bytes, &key, compressed.as_deref().unwrap_or(&value));
        let pointer = ValuePointer {
            file: FILE,
            offset,
            length: value.len() as u32,
            crc,
            stored: compressed.as_ref().map(|c| c.len() as u32),
        };
        written.push((key, value, pointer));
    }
    let files = file_of(&bytes);
    for (key, value, pointer) in &written {
        match files.read(key, &pointer.encode()) {
            Ok(read) => assert!(&read == value, "an intact record reads back another value"),
            Err(e) => panic!("an intact record does not read: {e}"),
        }
    }
    let mut damaged = bytes;
    damage(u, &mut damaged)?;
    let files = file_of(&damaged);
    for (key, value, pointer) in &written {
        match files.read(key, &pointer.encode()) {
            Ok(read) => assert!(&read == value, "a damaged file reads back a wrong value"),
            Err(Error::Corruption(c)) => {
                assert_eq!(c.offset, Some(pointer.offset), "{c}");
                let file = c.file.unwrap_or_default();
                assert!(file.ends_with("000007.vlog"), "{file}");
            }
            Err(e) => panic!("reading a damaged value file: {e}"),
        }
    }
    Ok(())
}
