//! Test support: database files built by hand in a `MemEnv`, through the engine's own writers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::env::{read_file_to_vec, write_file, Env, MemEnv};
use crate::log::LogWriter;
use crate::options::Options;
use crate::table::builder::TableBuilder;
use crate::table::format::CompressionType;
use crate::util::bloom::{BloomFilterPolicy, FilterPolicy};
use crate::util::internal_key::{internal_key, ValueType};
use crate::version::edit::VersionEdit;
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
