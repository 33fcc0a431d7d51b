//! Test support: database files built by hand in a `MemEnv`, through the engine's own writers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::env::{read_file_to_vec, write_file, Env, MemEnv};
use crate::extension::Extensions;
use crate::log::LogWriter;
use crate::options::Options;
use crate::table::builder::TableBuilder;
use crate::table::format::CompressionType;
use crate::util::bloom::{BloomFilterPolicy, FilterPolicy};
use crate::util::internal_key::{internal_key, ValueType};
use crate::version::edit::VersionEdit;
use crate::vlog::{encode_record, ValuePointer};
use crate::write_batch::WriteBatch;

/// Writes a log file holding `records`.
pub(crate) fn write_log(env: &dyn Env, path: &Path, records: &[Vec<u8>]) {
    let mut writer = LogWriter::new(env.new_writable_file(path).unwrap());
    for record in records {
        writer.add_record(record).unwrap();
    }
    writer.close().unwrap();
}

/// Writes a table of `entries` (internal keys in order) with a bloom filter and small blocks,
/// Snappy on; returns its size.
pub(crate) fn write_table(env: &dyn Env, path: &Path, entries: &[(Vec<u8>, Vec<u8>)]) -> u64 {
    write_table_with(env, path, entries, Arc::new(BloomFilterPolicy::new(10)))
}

/// [`write_table`] with another filter policy.
pub(crate) fn write_table_with(
    env: &dyn Env,
    path: &Path,
    entries: &[(Vec<u8>, Vec<u8>)],
    policy: Arc<dyn FilterPolicy>,
) -> u64 {
    let options = Options {
        block_size: 256,
        compression: CompressionType::Snappy,
        filter_policy: Some(policy),
        ..Options::default()
    };
    let mut builder = TableBuilder::new(
        options.table_options(),
        env.new_writable_file(path).unwrap(),
    );
    for (key, value) in entries {
        builder.add(key, value).unwrap();
    }
    let size = builder.finish().unwrap();
    builder.into_file().close().unwrap();
    size
}

/// A put at `seq`.
pub(crate) fn put(user_key: &str, seq: u64, value: &str) -> (Vec<u8>, Vec<u8>) {
    (
        internal_key(user_key.as_bytes(), seq, ValueType::Value),
        value.as_bytes().to_vec(),
    )
}

/// A deletion at `seq`.
pub(crate) fn del(user_key: &str, seq: u64) -> (Vec<u8>, Vec<u8>) {
    (
        internal_key(user_key.as_bytes(), seq, ValueType::Deletion),
        Vec::new(),
    )
}

/// A small, consistent database in a `MemEnv` at `/db`:
/// `000004.ldb` at level 1 (keys `k000`..`k059`), `000005.ldb` at level 0 (`a`, `k010` deleted,
/// `z`), the live log `000003.log` with two batches, `MANIFEST-000002` with two edits and
/// `CURRENT`.
pub(crate) struct TestDb {
    pub(crate) env: Arc<MemEnv>,
    pub(crate) dir: PathBuf,
    /// The manifest's edits, to change and write back with [`TestDb::write_manifest`].
    pub(crate) edits: Vec<VersionEdit>,
}

impl TestDb {
    pub(crate) fn new() -> TestDb {
        let env = Arc::new(MemEnv::new());
        let dir = PathBuf::from("/db");
        env.create_dir(&dir).unwrap();
        let mut db = TestDb {
            env,
            dir,
            edits: Vec::new(),
        };

        let l1: Vec<_> = (0..60)
            .map(|i| {
                put(
                    &format!("k{i:03}"),
                    1 + i,
                    &format!("value {i} {}", "x".repeat(20)),
                )
            })
            .collect();
        let l1_size = write_table(&*db.env, &db.path("000004.ldb"), &l1);
        let l0 = vec![put("a", 70, "first"), del("k010", 71), put("z", 72, "last")];
        let l0_size = write_table(&*db.env, &db.path("000005.ldb"), &l0);

        let mut first = VersionEdit::new();
        first.set_comparator_name("leveldb.BytewiseComparator");
        first.log_number = Some(3);
        first.next_file_number = Some(4);
        first.last_sequence = Some(0);
        let mut second = VersionEdit::new();
        second.log_number = Some(3);
        second.prev_log_number = Some(0);
        second.next_file_number = Some(6);
        second.last_sequence = Some(72);
        let (first_l1, last_l1) = (l1[0].0.clone(), l1[59].0.clone());
        second.add_file(1, 4, l1_size, first_l1, last_l1);
        second.add_file(0, 5, l0_size, l0[0].0.clone(), l0[2].0.clone());
        db.edits = vec![first, second];
        db.write_manifest();
        write_file(&*db.env, &db.path("CURRENT"), b"MANIFEST-000002\n", false).unwrap();

        let mut b1 = WriteBatch::new();
        b1.put(b"w1", b"v1");
        b1.delete(b"a");
        b1.set_sequence(73);
        let mut b2 = WriteBatch::new();
        b2.put(b"w\x00\xff", b"bin\x01");
        b2.set_sequence(75);
        let log = vec![b1.contents().to_vec(), b2.contents().to_vec()];
        write_log(&*db.env, &db.path("000003.log"), &log);
        db
    }

    /// [`TestDb::new`] with value separation: the manifest records the extension, value file
    /// `000006.vlog` holds the records of `big1` (300 bytes of `1`, at offset 0, 311 bytes),
    /// `big2` (400 bytes of `2`, at 311, 411 bytes) and `gone` (100 bytes, at 722, 110 bytes,
    /// which nothing points to), table `000007.ldb` (level 0) holds a pointer to `big1` and
    /// the inline `small`, and the log a third batch putting a pointer to `big2`.
    pub(crate) fn with_value_files() -> TestDb {
        let mut db = TestDb::new();
        let mut records = Vec::new();
        let mut pointers = Vec::new();
        for (key, byte, len) in [
            ("big1", b'1', 300),
            ("big2", b'2', 400),
            ("gone", b'g', 100),
        ] {
            let offset = records.len() as u64;
            let crc = encode_record(&mut records, key.as_bytes(), &vec![byte; len]);
            let pointer = ValuePointer {
                file: 6,
                offset,
                length: len as u32,
                crc,
                stored: None,
            };
            pointers.push(pointer.encode());
        }
        db.write("000006.vlog", &records);
        let entries = vec![
            (
                internal_key(b"big1", 68, ValueType::ValuePointer),
                pointers[0].clone(),
            ),
            put("small", 69, "inline"),
        ];
        let size = write_table(&*db.env, &db.path("000007.ldb"), &entries);
        let marker = Extensions::from_flags(false, false, true, false)
            .recorded_name("leveldb.BytewiseComparator");
        db.edits[0].set_comparator_name(&marker);
        db.edits[1].next_file_number = Some(8);
        let (first, last) = (entries[0].0.clone(), entries[1].0.clone());
        db.edits[1].add_file(0, 7, size, first, last);
        db.write_manifest();
        let mut batch = WriteBatch::new();
        batch.put_separated(b"big2", &pointers[1]);
        batch.set_sequence(76);
        let log = db.path("000003.log");
        let mut writer = LogWriter::with_offset(
            db.env.new_appendable_file(&log).unwrap(),
            db.env.file_size(&log).unwrap(),
        );
        writer.add_record(batch.contents()).unwrap();
        writer.close().unwrap();
        db
    }

    /// Writes `edits` as `MANIFEST-000002`.
    pub(crate) fn write_manifest(&self) {
        let records: Vec<Vec<u8>> = self
            .edits
            .iter()
            .map(|e| {
                let mut buf = Vec::new();
                e.encode(&mut buf);
                buf
            })
            .collect();
        write_log(&*self.env, &self.path("MANIFEST-000002"), &records);
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub(crate) fn read(&self, name: &str) -> Vec<u8> {
        read_file_to_vec(&*self.env, &self.path(name)).unwrap()
    }

    pub(crate) fn write(&self, name: &str, bytes: &[u8]) {
        write_file(&*self.env, &self.path(name), bytes, false).unwrap();
    }

    /// Flips every bit of the byte at `offset` of file `name`.
    pub(crate) fn flip_byte(&self, name: &str, offset: usize) {
        let mut bytes = self.read(name);
        bytes[offset] ^= 0xff;
        self.write(name, &bytes);
    }
}
