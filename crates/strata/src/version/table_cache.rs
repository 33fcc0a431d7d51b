//! The table cache: open tables by file number, bounded by a count of open tables
//! (`max_open_files` minus what the database keeps for itself), least recently used closed first.
//!
//! Thread safety: shared by all readers and compactions; every method takes `&self`. Two threads
//! missing the same table at once may both open it; one of the two opens wins the slot and the
//! other is simply dropped when its user is done, which is harmless. A table evicted while an
//! iterator reads it stays open until the iterator is dropped (tables are `Arc`s).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::env::Env;
use crate::error::{Error, Result};
use crate::filename::{sst_table_file_name, table_file_name};
use crate::table::reader::{ReadBudget, Table, TableIter};
use crate::table::{BlockReads, TableOptions};

use crate::util::lru::LruCache;

/// Open tables of one database directory, by file number.
pub(crate) struct TableCache {
    dir: PathBuf,
    env: Arc<dyn Env>,
    options: TableOptions,
    lru: LruCache<u64, Table>,
}

impl TableCache {
    /// A cache of up to `entries` open tables of the database in `dir`.
    pub(crate) fn new(
        dir: &Path,
        env: Arc<dyn Env>,
        options: TableOptions,
        entries: usize,
    ) -> TableCache {
        TableCache {
            dir: dir.to_path_buf(),
            env,
            options,
            lru: LruCache::new(entries),
        }
    }

    /// The open table `file_number` (`file_size` bytes), opening it on a miss. Tables are named
    /// `NNNNNN.ldb`; `NNNNNN.sst` (LevelDB before 1.14) is tried when the `.ldb` cannot be opened.
    pub(crate) fn find_table(&self, file_number: u64, file_size: u64) -> Result<Arc<Table>> {
        self.find_or_open(file_number, file_size)
            .map(|(table, _)| table)
    }

    /// [`find_table`](Self::find_table), and whether this call opened the table.
    fn find_or_open(&self, file_number: u64, file_size: u64) -> Result<(Arc<Table>, bool)> {
        if let Some(table) = self.lru.get(&file_number) {
            return Ok((table, false));
        }
        let ldb = table_file_name(&self.dir, file_number);
        let (path, file) = match self.env.new_random_access_file(&ldb) {
            Ok(file) => (ldb, file),
            Err(ldb_err) => {
                let sst = sst_table_file_name(&self.dir, file_number);
                match self.env.new_random_access_file(&sst) {
                    Ok(file) => (sst, file),
                    // Report the name a current database would have.
                    Err(_) => return Err(ldb_err.in_file(ldb.display())),
                }
            }
        };
        let table = Table::open(
            self.options.clone(),
            file,
            file_size,
            path.display().to_string(),
        )?;
        self.lru.insert(file_number, Arc::clone(&table), 1);
        Ok((table, true))
    }

    /// [`find_table`](Self::find_table) for a read made with `reads`: one that must not wait
    /// for the disk (`memory_only`) gets `Error::WouldBlock` for a table not open yet.
    pub(crate) fn find_table_for(
        &self,
        reads: BlockReads,
        file_number: u64,
        file_size: u64,
    ) -> Result<Arc<Table>> {
        self.find_table_spending(reads, file_number, file_size, &mut ReadBudget::default())
    }

    /// [`find_table_for`](Self::find_table_for) for one step of a point read: opening the
    /// table spends `budget` (see [`ReadBudget`]).
    pub(crate) fn find_table_spending(
        &self,
        reads: BlockReads,
        file_number: u64,
        file_size: u64,
        budget: &mut ReadBudget,
    ) -> Result<Arc<Table>> {
        if reads.memory_only {
            return self
                .lru
                .get(&file_number)
                .ok_or_else(|| Error::WouldBlock(format!("table #{file_number} is not open")));
        }
        let (table, opened) = self.find_or_open(file_number, file_size)?;
        if opened {
            budget.spend();
        }
        Ok(table)
    }

    /// Point lookup in table `file_number`, with a key buffer the caller reuses; see
    /// [`Table::get_in`].
    #[cfg(test)]
    pub(crate) fn get<R>(
        &self,
        reads: BlockReads,
        file_number: u64,
        file_size: u64,
        internal_key: &[u8],
        scratch: &mut Vec<u8>,
        f: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Option<R>> {
        self.find_table(file_number, file_size)?.get_in(
            reads,
            internal_key,
            scratch,
            &mut Default::default(),
            &mut Default::default(),
            f,
        )
    }

    /// A cursor over table `file_number`; it keeps the table open while it lives.
    pub(crate) fn iter(
        &self,
        reads: BlockReads,
        file_number: u64,
        file_size: u64,
    ) -> Result<TableIter> {
        Ok(self
            .find_table_for(reads, file_number, file_size)?
            .iter(reads))
    }

    /// Forgets table `file_number` (its file is being deleted).
    pub(crate) fn evict(&self, file_number: u64) {
        self.lru.erase(&file_number);
    }

    #[cfg(test)]
    /// Number of tables held open by the cache.
    pub(crate) fn len(&self) -> usize {
        self.lru.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::vec_files::{VecFile, VecSink};
    use crate::env::{FileLock, RandomAccessFile, SequentialFile, WritableFile};
    use crate::error::Error;
    use crate::iter::InternalIterator;
    use crate::table::builder::TableBuilder;
    use crate::table::format::CompressionType;
    use crate::util::comparator::BytewiseComparator;
    use crate::util::internal_key::{internal_key, user_key, InternalKeyComparator, ValueType};
    use parking_lot::Mutex;
    use std::collections::HashMap;

    /// Just enough of an `Env` for the table cache: files in a map, opens counted.
    #[derive(Default)]
    struct MapEnv {
        files: Mutex<HashMap<PathBuf, Vec<u8>>>,
        opens: Mutex<usize>,
    }

    fn unsupported<T>() -> Result<T> {
        Err(Error::NotSupported("not in the test env".into()))
    }

    impl Env for MapEnv {
        fn new_sequential_file(&self, _: &Path) -> Result<Box<dyn SequentialFile>> {
            unsupported()
        }
        fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
            match self.files.lock().get(path) {
                Some(bytes) => {
                    *self.opens.lock() += 1;
                    Ok(Arc::new(VecFile::new(bytes.clone())))
                }
                None => Err(Error::io(
                    format!("open {}", path.display()),
                    std::io::Error::from(std::io::ErrorKind::NotFound),
                )),
            }
        }
        fn new_writable_file(&self, _: &Path) -> Result<Box<dyn WritableFile>> {
            unsupported()
        }
        fn new_appendable_file(&self, _: &Path) -> Result<Box<dyn WritableFile>> {
            unsupported()
        }
        fn file_exists(&self, path: &Path) -> bool {
            self.files.lock().contains_key(path)
        }
        fn children(&self, _: &Path) -> Result<Vec<String>> {
            unsupported()
        }
        fn remove_file(&self, _: &Path) -> Result<()> {
            unsupported()
        }
        fn create_dir(&self, _: &Path) -> Result<()> {
            unsupported()
        }
        fn remove_dir(&self, _: &Path) -> Result<()> {
            unsupported()
        }
        fn file_size(&self, _: &Path) -> Result<u64> {
            unsupported()
        }
        fn rename(&self, _: &Path, _: &Path) -> Result<()> {
            unsupported()
        }
        fn lock_file(&self, _: &Path) -> Result<Box<dyn FileLock>> {
            unsupported()
        }
        fn unlock_file(&self, _: Box<dyn FileLock>) -> Result<()> {
            unsupported()
        }
        fn sync_dir(&self, _: &Path) -> Result<()> {
            unsupported()
        }
        fn now_micros(&self) -> u64 {
            0
        }
    }

    fn options() -> TableOptions {
        TableOptions {
            icmp: InternalKeyComparator::new(BytewiseComparator::shared()),
            block_size: 256,
            block_restart_interval: 16,
            compression: CompressionType::Snappy,
            filter_policy: None,
            block_cache: None,
            paranoid_checks: false,
            range_deletions: false,
        }
    }

    fn table_bytes(tag: &str) -> Vec<u8> {
        let out = VecSink::new();
        let mut b = TableBuilder::new(options(), Box::new(out.clone()));
        for i in 0..100 {
            let key = internal_key(format!("key{i:03}").as_bytes(), 1, ValueType::Value);
            b.add(&key, format!("{tag}{i}").as_bytes()).unwrap();
        }
        b.finish().unwrap();
        out.contents()
    }

    fn setup() -> (Arc<MapEnv>, TableCache) {
        let env = Arc::new(MapEnv::default());
        let cache = TableCache::new(Path::new("db"), env.clone(), options(), 2);
        (env, cache)
    }

    #[test]
    fn opens_ldb_then_sst_and_caches() {
        let (env, cache) = setup();
        let ldb = table_bytes("ldb");
        let sst = table_bytes("sst");
        let (ldb_len, sst_len) = (ldb.len() as u64, sst.len() as u64);
        env.files.lock().insert(PathBuf::from("db/000005.ldb"), ldb);
        env.files.lock().insert(PathBuf::from("db/000007.sst"), sst);

        let lookup = internal_key(b"key042", 10, ValueType::Value);
        let got = cache
            .get(
                BlockReads::default(),
                5,
                ldb_len,
                &lookup,
                &mut Vec::new(),
                |k, v| (user_key(k).to_vec(), v.to_vec()),
            )
            .unwrap();
        assert_eq!(got, Some((b"key042".to_vec(), b"ldb42".to_vec())));
        let got = cache
            .get(
                BlockReads::default(),
                7,
                sst_len,
                &lookup,
                &mut Vec::new(),
                |_, v| v.to_vec(),
            )
            .unwrap();
        assert_eq!(got, Some(b"sst42".to_vec()));
        assert_eq!(*env.opens.lock(), 2);

        // Cached: no new opens.
        let mut it = cache.iter(BlockReads::default(), 5, ldb_len).unwrap();
        it.seek_to_first();
        assert_eq!(user_key(it.key()), b"key000");
        assert_eq!(*env.opens.lock(), 2);

        // Evicted: reopened.
        cache.evict(5);
        assert_eq!(cache.len(), 1);
        cache.find_table(5, ldb_len).unwrap();
        assert_eq!(*env.opens.lock(), 3);
        // The iterator still works on its (evicted) table.
        it.next();
        assert_eq!(user_key(it.key()), b"key001");
    }

    /// A point read's step spends its budget when it opens the table, not when the table is
    /// open already, as it is after a writer opened it (a flush opens its output to check it).
    #[test]
    fn opening_a_table_spends_the_reads_budget() {
        let (env, cache) = setup();
        let bytes = table_bytes("ldb");
        let len = bytes.len() as u64;
        env.files
            .lock()
            .insert(PathBuf::from("db/000005.ldb"), bytes.clone());
        env.files
            .lock()
            .insert(PathBuf::from("db/000006.ldb"), bytes);
        let reads = BlockReads::default();
        let mut read = ReadBudget::default();
        cache.find_table_spending(reads, 5, len, &mut read).unwrap();
        assert!(read.spent());
        let mut read = ReadBudget::default();
        cache.find_table_spending(reads, 5, len, &mut read).unwrap();
        assert!(!read.spent(), "open already");
        cache.iter(reads, 6, len).unwrap();
        let mut read = ReadBudget::default();
        cache.find_table_spending(reads, 6, len, &mut read).unwrap();
        assert!(!read.spent(), "opened by an iterator");
        assert_eq!(*env.opens.lock(), 2);
    }

    #[test]
    fn bounded_by_entries() {
        let (env, cache) = setup();
        let bytes = table_bytes("x");
        let len = bytes.len() as u64;
        for n in 1..=40u64 {
            env.files
                .lock()
                .insert(table_file_name(Path::new("db"), n), bytes.clone());
        }
        for n in 1..=40u64 {
            cache.find_table(n, len).unwrap();
        }
        // Capacity 2 spread over 16 shards of 1 entry each: never more than 16.
        assert!(cache.len() <= 16);
    }

    #[test]
    fn missing_and_corrupt_tables_name_the_file() {
        let (env, cache) = setup();
        let err = cache.find_table(9, 100).unwrap_err();
        assert!(err.is_io_error());
        assert!(err.to_string().contains("000009.ldb"), "{err}");

        env.files
            .lock()
            .insert(PathBuf::from("db/000011.ldb"), vec![0u8; 100]);
        let err = cache.find_table(11, 100).unwrap_err();
        let c = err.corruption_details().unwrap();
        assert_eq!(c.file.as_deref(), Some("db/000011.ldb"));
        assert_eq!(cache.len(), 0);
    }
}
