//! Repair: rebuild a database that cannot be opened from whatever can still be read.
//!
//! 1. Every write-ahead log is replayed (damaged records are skipped, as are records with a
//!    value pointer whose value is missing or damaged) into a new table, and the log is moved
//!    to `lost/`. The value files replayed pointers name are synced first.
//! 2. Every table is scanned. One that cannot be opened (damaged footer or index block) is
//!    moved to `lost/`; one with damaged data blocks is rewritten with the entries of every
//!    readable block, one whose filter or metaindex block is damaged is rewritten whole
//!    (with a fresh filter), and one holding a value pointer whose value is missing or
//!    damaged (format extension `value-separation`: every value is read and its checksum
//!    verified) is rewritten without that entry, as a damaged block's entries are left out;
//!    the originals are moved to `lost/`. The scan learns each table's key range and largest
//!    sequence number.
//! 3. A new manifest lists every table at level 0 and `CURRENT` is pointed at it; old
//!    manifests are moved to `lost/`. Tables are renumbered in order of their newest entry, so
//!    that level 0's newest-file-first read order is also newest-data-first.
//! 4. That order is only right when tables sharing keys do not interleave in sequence
//!    numbers; tables from different levels often do (a compaction output can hold an old
//!    version of a key next to newer keys). Then the database is opened and compacted whole,
//!    which merges by sequence number, before repair returns: a lookup at level 0 stops at the
//!    first table holding the key and would otherwise find an old version.
//!
//! Repair salvages: it keeps every record it can read, so after a power loss it may keep
//! unsynced writes whose predecessors were lost, where an open keeps a prefix of the writes
//! and leaves out what follows damage it cannot tell from a power loss (docs/guarantees.md).
//!
//! Repair never deletes data: everything it does not use ends up in `lost/`. So do the value
//! files: what repair sets aside may name values in any of them, which the database's garbage
//! collection deletes once no live table names them; a value file no salvaged table names
//! is moved to `lost/`, and `lost/` gets a second name (a hard link, else a copy) for each of
//! the others. What it skipped is written to the `LOG`. A value file that cannot be read for
//! a reason other than damage (an I/O error) stops the repair before it archives the log or
//! table naming the value (and before it builds a table from that log): left out, the entry
//! would leave the value file named by nothing, and deleted at the next compaction. Run again
//! once the file reads, repair keeps those entries. Compactions at the next open move the
//! tables down the levels.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::checkpoint;
use super::table_build::build_table;
use super::value_files;
use super::write::{check_logged_batch, insert_into_memtable};
use super::InfoLog;
use crate::error::{Error, Result};
use crate::extension::{Extension, Extensions};
use crate::filename::{
    lock_file_name, parse_own_file_name, table_file_name, value_file_name, FileType,
};
use crate::iter::InternalIterator;
use crate::log::{LogReader, Reporter};
use crate::memtable::MemTable;
use crate::options::{Options, ValueSeparation};
use crate::range_del::{cover, Fragments};
use crate::table::builder::TableBuilder;
use crate::table::format::CompressionType;
use crate::table::{BlockReads, TableOptions};
use crate::util::internal_key::{parse_internal_key, user_key, InternalKeyComparator, ValueType};
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::manifest::write_first_manifest;
use crate::version::table_cache::TableCache;
use crate::vlog::reader::ValueFiles;
use crate::vlog::ValuePointer;
use crate::write_batch::WriteBatch;

struct Repairer<'a> {
    dir: &'a Path,
    options: &'a Options,
    icmp: InternalKeyComparator,
    table_options: TableOptions,
    table_cache: TableCache,
    /// Opens tables without reading their range deletions: for a table whose metaindex or
    /// range-deletion block is damaged, whose entries are still worth salvaging.
    salvage_cache: TableCache,
    log: InfoLog,
    next_file_number: u64,
    /// Format extensions the salvaged data uses: the new manifest records them with those the
    /// options enable, so LevelDB still refuses a database whose data it cannot read.
    found: Extensions,
    /// The value files, to check the values replayed and scanned pointers name.
    value_files: ValueFiles,
    /// The value files replayed pointers name, synced before their tables are written.
    synced_value_files: HashSet<u64>,
    /// A value file that could not be read for a reason other than damage (an I/O error):
    /// repair stops with it, before it archives the log or table naming the value. Going on
    /// would leave the value's entry out, and the value file, which nothing would then name,
    /// would be deleted at the next compaction.
    unreadable_value: Option<Error>,
    /// The value files the salvaged tables' pointers name: the others go to `lost/`.
    named_value_files: HashSet<u64>,
}

/// Entries dropped for a lost value that a table's scan logs one by one; the rest are counted.
const DROPPED_ENTRIES_LOGGED: usize = 10;

/// A table that survived the scan.
struct Salvaged {
    meta: FileMetaData,
    min_sequence: u64,
    max_sequence: u64,
}

pub(crate) fn repair(dir: &Path, options: &Options) -> Result<()> {
    let env = Arc::clone(&options.env);
    let lock = env.lock_file(&lock_file_name(dir))?;
    let result = run(dir, options);
    let _ = env.unlock_file(lock);
    if let Some(recorded) = result? {
        // The open enables every extension the new manifest records, or it would be refused.
        let options = Options {
            create_if_missing: false,
            error_if_exists: false,
            range_deletes: recorded.contains(Extension::RangeDeletes),
            expiring_keys: recorded.contains(Extension::ExpiringKeys),
            value_separation: options
                .value_separation
                .or_else(|| {
                    recorded
                        .contains(Extension::ValueSeparation)
                        .then(ValueSeparation::default)
                })
                .map(|separation| {
                    if recorded.contains(Extension::ValueCompression) {
                        separation.with_compression(CompressionType::Snappy)
                    } else {
                        separation
                    }
                }),
            ..options.clone()
        };
        let db = super::DB::open(dir, options)?;
        db.compact_range(None, None)?;
    }
    Ok(())
}

/// Rebuilds the manifest; returns the extensions it records when level 0 must be compacted
/// to read right (step 4).
fn run(dir: &Path, options: &Options) -> Result<Option<Extensions>> {
    let env = Arc::clone(&options.env);
    let icmp = InternalKeyComparator::new(Arc::clone(&options.comparator));
    let mut table_options = options.table_options();
    table_options.block_cache = None;
    // Tombstones are salvaged whatever the options say; the new manifest then records them.
    table_options.range_deletions = true;
    let table_cache = TableCache::new(dir, Arc::clone(&env), table_options.clone(), 16);
    let salvage_cache = TableCache::new(
        dir,
        Arc::clone(&env),
        TableOptions {
            range_deletions: false,
            ..table_options.clone()
        },
        4,
    );
    let mut repairer = Repairer {
        dir,
        options,
        icmp,
        table_options,
        table_cache,
        salvage_cache,
        log: InfoLog::open(&env, dir, options.info_log.as_ref()),
        next_file_number: 1,
        found: Extensions::NONE,
        value_files: ValueFiles::new(Arc::clone(&env), dir),
        synced_value_files: HashSet::new(),
        unreadable_value: None,
        named_value_files: HashSet::new(),
    };

    let mut manifests = Vec::new();
    let mut logs = Vec::new();
    let mut tables = Vec::new();
    let mut value_files = Vec::new();
    for name in env.children(dir)? {
        let parsed = parse_own_file_name(&name);
        if let Some((number, kind)) = parsed {
            repairer.next_file_number = repairer.next_file_number.max(number + 1);
            match kind {
                FileType::Descriptor => manifests.push(name),
                FileType::Log => logs.push(number),
                FileType::Table => tables.push(number),
                FileType::ValueFile => value_files.push(number),
                _ => {}
            }
        }
    }
    if manifests.is_empty() && logs.is_empty() && tables.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{}: repair found no database files",
            dir.display()
        )));
    }
    logs.sort_unstable();
    for number in logs {
        let converted = repairer.convert_log(number);
        repairer.stop_at_unreadable_value()?;
        match converted {
            Ok(Some(table)) => tables.push(table),
            Ok(None) => {}
            Err(e) => repairer
                .log
                .log(format_args!("log #{number}: ignored: {e}")),
        }
        repairer.archive(&crate::filename::log_file_name(dir, number));
    }
    tables.sort_unstable();
    let mut salvaged = Vec::new();
    for number in tables {
        let scanned = repairer.scan_table(number);
        repairer.stop_at_unreadable_value()?;
        salvaged.extend(scanned);
    }
    // What repair set aside (tables whole, the originals of rewritten tables, logs) may name
    // values in any value file, which the database's garbage collection would delete once no
    // salvaged table names them: a value file no salvaged table names goes to `lost/`, and
    // `lost/` gets a second name for each of the others.
    for number in value_files {
        let path = value_file_name(dir, number);
        if repairer.named_value_files.contains(&number) {
            repairer.keep_in_lost(&path);
        } else {
            repairer.archive(&path);
        }
    }
    let needs_compaction = repairer.write_manifest(salvaged)?;
    for name in manifests {
        repairer.archive(&dir.join(name));
    }
    Ok(needs_compaction.then(|| repairer.recorded()))
}

/// Logs damage found while replaying a log during repair.
struct RepairReporter {
    file: String,
    lines: Arc<parking_lot::Mutex<Vec<String>>>,
}

impl Reporter for RepairReporter {
    fn corruption(&mut self, bytes: u64, reason: &Error) {
        self.lines
            .lock()
            .push(format!("{}: dropping {bytes} bytes: {reason}", self.file));
    }
}

impl Repairer<'_> {
    fn new_file_number(&mut self) -> u64 {
        let number = self.next_file_number;
        self.next_file_number += 1;
        number
    }

    /// Replays log `number` into a memtable and writes it as a table. `None` when empty.
    fn convert_log(&mut self, number: u64) -> Result<Option<u64>> {
        let env = &self.options.env;
        let path = crate::filename::log_file_name(self.dir, number);
        let lines = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let reporter = RepairReporter {
            file: path.display().to_string(),
            lines: Arc::clone(&lines),
        };
        // Read as recovery reads it: a record a killed writer never published is no damage.
        // Unlike recovery, repair salvages what follows a gap whatever its sequence numbers.
        let mut reader = LogReader::new(
            env.new_sequential_file(&path)?,
            Some(Box::new(reporter)),
            true,
            0,
        )
        .write_ahead_log();
        let mem = Arc::new(MemTable::new(self.icmp.clone()));
        let mut scratch = Vec::new();
        let mut records = 0usize;
        while let Some(record) = reader.read_record(&mut scratch) {
            let record = record.to_vec();
            if let Some((offset, bytes)) = reader.take_gap() {
                self.log.log(format_args!(
                    "log #{number}: skipping a gap of {bytes} bytes at offset {offset}"
                ));
            }
            let applied = WriteBatch::from_contents(record).and_then(|batch| {
                let used = check_logged_batch(&batch, Extensions::all())?;
                // A pointer whose value is missing or damaged would outlive its value.
                value_files::check_replayed(
                    &**env,
                    self.dir,
                    &self.value_files,
                    &batch,
                    &mut self.synced_value_files,
                )
                .inspect_err(|e| {
                    if !e.is_corruption() {
                        self.unreadable_value.get_or_insert_with(|| e.clone());
                    }
                })?;
                insert_into_memtable(&batch, &mem)?;
                self.found = self.found.union(used);
                Ok(())
            });
            match applied {
                Ok(()) => records += 1,
                // Repair stops (`stop_at_unreadable_value`): no table of this log is built.
                Err(_) if self.unreadable_value.is_some() => return Ok(None),
                Err(e) => self
                    .log
                    .log(format_args!("log #{number}: skipping record: {e}")),
            }
        }
        for line in lines.lock().iter() {
            self.log.log(format_args!("{line}"));
        }
        if mem.is_empty() {
            return Ok(None);
        }
        let table = self.new_file_number();
        let meta = build_table(
            self.dir,
            &**env,
            &self.table_options,
            &self.table_cache,
            &mut mem.iter(),
            mem.range_tombstones().as_deref(),
            table,
        )?;
        self.log.log(format_args!(
            "log #{number}: {records} records salvaged into table #{table} ({} bytes)",
            meta.file_size
        ));
        Ok((meta.file_size > 0).then_some(table))
    }

    /// Scans table `number`; rewrites it if it is readable only in part.
    fn scan_table(&mut self, number: u64) -> Option<Salvaged> {
        let env = &self.options.env;
        let mut path = table_file_name(self.dir, number);
        if !env.file_exists(&path) {
            path = crate::filename::sst_table_file_name(self.dir, number);
        }
        let size = match env.file_size(&path) {
            Ok(size) => size,
            Err(e) => {
                self.log.log(format_args!("table #{number}: ignored: {e}"));
                self.archive(&path);
                return None;
            }
        };
        let reads = BlockReads::checked_uncached();
        // A table whose range deletions cannot be read keeps its entries; the deletions are
        // lost (keys they deleted may come back), and the log says so.
        let mut salvaging = false;
        let opened: Result<_> = self.table_cache.iter(reads, number, size).or_else(|e| {
            let iter = self.salvage_cache.iter(reads, number, size)?;
            self.log.log(format_args!(
                "table #{number}: its range deletions cannot be read ({e}); salvaging its \
                 entries without them: keys they deleted may read again"
            ));
            salvaging = true;
            Ok(iter)
        });
        let mut iter = match opened {
            Ok(iter) => iter,
            Err(e) => {
                self.log.log(format_args!("table #{number}: ignored: {e}"));
                self.archive(&path);
                return None;
            }
        };
        let mut meta = FileMetaData {
            number,
            file_size: size,
            smallest: Vec::new(),
            largest: Vec::new(),
        };
        let mut min_sequence = u64::MAX;
        let mut max_sequence = 0;
        let mut entries = 0usize;
        let mut good = !salvaging;
        // Entries (internal keys) whose separated value is lost: left out of the rewrite.
        let mut dropped = HashSet::new();
        // The value files the kept entries name.
        let mut named = HashSet::new();
        let cache = if salvaging {
            &self.salvage_cache
        } else {
            &self.table_cache
        };
        let table = cache.find_table(number, size);
        let tombstones = table
            .as_ref()
            .ok()
            .and_then(|t| t.range_tombstones().cloned());
        let meta_blocks = table.and_then(|table| table.verify_meta_blocks());
        if let Err(e) = meta_blocks {
            self.log.log(format_args!(
                "table #{number}: damaged meta block, rewriting: {e}"
            ));
            good = false;
        }
        iter.seek_to_first();
        while iter.valid() {
            let key = iter.key();
            match parse_internal_key(key) {
                Some(parsed) => {
                    min_sequence = min_sequence.min(parsed.sequence);
                    max_sequence = max_sequence.max(parsed.sequence);
                    match parsed.value_type {
                        ValueType::ExpiringValue => self.found.insert(Extension::ExpiringKeys),
                        ValueType::ValuePointer => {
                            for &extension in ValuePointer::extensions(iter.value()) {
                                self.found.insert(extension);
                            }
                        }
                        _ => {}
                    }
                    match self.check_value(parsed.value_type, parsed.user_key, iter.value()) {
                        Ok(file) => named.extend(file),
                        Err(e) if !e.is_corruption() => {
                            self.unreadable_value = Some(e);
                            return None;
                        }
                        Err(e) => {
                            if dropped.len() < DROPPED_ENTRIES_LOGGED {
                                self.log.log(format_args!(
                                    "table #{number}: entry of key '{}' dropped: {e}",
                                    parsed.user_key.escape_ascii()
                                ));
                            }
                            dropped.insert(key.to_vec());
                            good = false;
                            iter.next();
                            continue;
                        }
                    }
                }
                None => {
                    self.log.log(format_args!(
                        "table #{number}: unparseable key, entry skipped"
                    ));
                    good = false;
                    iter.next();
                    continue;
                }
            }
            if meta.smallest.is_empty() {
                meta.smallest = key.to_vec();
            }
            meta.largest = key.to_vec();
            entries += 1;
            iter.next();
        }
        if let Err(e) = iter.status() {
            self.log.log(format_args!(
                "table #{number}: damaged after {entries} entries: {e}"
            ));
            good = false;
        }
        drop(iter);
        if let Some(tombstones) = &tombstones {
            self.found.insert(Extension::RangeDeletes);
            for sequence in tombstones.fragments().iter().flat_map(|f| &f.sequences) {
                min_sequence = min_sequence.min(*sequence);
                max_sequence = max_sequence.max(*sequence);
            }
            cover(
                &self.icmp,
                &mut meta.smallest,
                &mut meta.largest,
                tombstones.fragments(),
            );
        }
        if entries == 0 && tombstones.is_none() {
            self.log.log(format_args!(
                "table #{number}: no readable entries; archived"
            ));
            self.archive(&path);
            return None;
        }
        if good {
            self.log
                .log(format_args!("table #{number}: {entries} entries"));
            self.named_value_files.extend(named);
            return Some(Salvaged {
                meta,
                min_sequence,
                max_sequence,
            });
        }
        if dropped.len() > DROPPED_ENTRIES_LOGGED {
            self.log.log(format_args!(
                "table #{number}: {} entries dropped in all for a lost value",
                dropped.len()
            ));
        }
        match self.rewrite_table(number, reads, salvaging, tombstones.as_deref(), &dropped) {
            Ok(meta) => {
                self.table_cache.evict(number);
                self.salvage_cache.evict(number);
                self.archive(&path);
                self.named_value_files.extend(named);
                Some(Salvaged {
                    meta,
                    min_sequence,
                    max_sequence,
                })
            }
            Err(e) => {
                self.log.log(format_args!(
                    "table #{number}: rewrite failed: {e}; archived"
                ));
                self.table_cache.evict(number);
                self.archive(&path);
                None
            }
        }
    }

    /// Copies the parseable entries of every readable block of table `number` but those of
    /// `dropped` (internal keys whose separated value is lost), and its range tombstones,
    /// into a new table.
    fn rewrite_table(
        &mut self,
        number: u64,
        reads: BlockReads,
        salvaging: bool,
        tombstones: Option<&Fragments>,
        dropped: &HashSet<Vec<u8>>,
    ) -> Result<FileMetaData> {
        let env = Arc::clone(&self.options.env);
        let size = {
            let path = table_file_name(self.dir, number);
            env.file_size(&path).or_else(|_| {
                env.file_size(&crate::filename::sst_table_file_name(self.dir, number))
            })?
        };
        let cache = if salvaging {
            &self.salvage_cache
        } else {
            &self.table_cache
        };
        let mut iter = cache.iter(reads, number, size)?;
        let new_number = self.new_file_number();
        let new_path = table_file_name(self.dir, new_number);
        let mut builder = TableBuilder::new(
            self.table_options.clone(),
            env.new_writable_file(&new_path)?,
        );
        let mut meta = FileMetaData {
            number: new_number,
            file_size: 0,
            smallest: Vec::new(),
            largest: Vec::new(),
        };
        iter.seek_to_first();
        while iter.valid() {
            let key = iter.key();
            if parse_internal_key(key).is_some() && !dropped.contains(key) {
                if meta.smallest.is_empty() {
                    meta.smallest = key.to_vec();
                }
                meta.largest = key.to_vec();
                builder.add(key, iter.value())?;
            }
            iter.next();
        }
        if let Some(tombstones) = tombstones {
            for tombstone in tombstones.tombstones() {
                builder.add_range_tombstone(&tombstone)?;
            }
            cover(
                &self.icmp,
                &mut meta.smallest,
                &mut meta.largest,
                tombstones.fragments(),
            );
        }
        meta.file_size = builder.finish()?;
        let mut file = builder.into_file();
        file.sync()?;
        file.close()?;
        self.log
            .log(format_args!("table #{number}: salvaged into #{new_number}"));
        Ok(meta)
    }

    /// Checks that the value of an entry of `value_type` holding `value` can be read, and
    /// returns the value file it is in: for a value pointer, reads the value it names and
    /// verifies its checksum. A missing or damaged value is a corruption error; any other
    /// error is not damage.
    fn check_value(
        &self,
        value_type: ValueType,
        user_key: &[u8],
        value: &[u8],
    ) -> Result<Option<u64>> {
        if value_type != ValueType::ValuePointer {
            return Ok(None);
        }
        self.value_files.read(user_key, value)?;
        Ok(ValuePointer::decode(value).map(|pointer| pointer.file))
    }

    /// Fails the repair with the error a value file met that is not damage, if one did.
    fn stop_at_unreadable_value(&mut self) -> Result<()> {
        match self.unreadable_value.take() {
            Some(e) => {
                self.log.log(format_args!(
                    "repair stopped: a value file cannot be read: {e}"
                ));
                Err(e)
            }
            None => Ok(()),
        }
    }

    /// The extensions the new manifest records: those the options enable and those the
    /// salvaged data uses.
    fn recorded(&self) -> Extensions {
        self.options.extensions().union(self.found)
    }

    /// Writes a manifest listing `tables` at level 0, renumbered newest-data-last. Returns
    /// whether two tables sharing keys interleave in sequence numbers (step 4).
    fn write_manifest(&mut self, mut tables: Vec<Salvaged>) -> Result<bool> {
        let env = Arc::clone(&self.options.env);
        tables.sort_by_key(|t| (t.max_sequence, t.meta.number));
        let needs_compaction = self.interleaved(&tables);
        let mut edit = VersionEdit {
            comparator: Some(
                self.recorded()
                    .recorded_name(self.icmp.user_comparator().name()),
            ),
            log_number: Some(0),
            ..VersionEdit::default()
        };
        let mut last_sequence = 0;
        for table in tables {
            let mut meta = table.meta;
            let new_number = self.new_file_number();
            let from = self.existing_table_path(meta.number);
            env.rename(&from, &table_file_name(self.dir, new_number))?;
            meta.number = new_number;
            last_sequence = last_sequence.max(table.max_sequence);
            edit.new_files.push((0, meta));
        }
        let manifest_number = self.new_file_number();
        edit.next_file_number = Some(self.next_file_number);
        edit.last_sequence = Some(last_sequence);
        let result = write_first_manifest(&*env, self.dir, manifest_number, &edit);
        self.log.log(format_args!(
            "repair: wrote manifest #{manifest_number} with {} tables, last sequence {last_sequence}",
            edit.new_files.len()
        ));
        result.map(|()| needs_compaction)
    }

    /// True when some table in `tables` (sorted oldest first) shares keys with an older one
    /// but holds entries no newer than the older one's newest.
    fn interleaved(&self, tables: &[Salvaged]) -> bool {
        let ucmp = self.icmp.user_comparator();
        tables.iter().enumerate().any(|(i, older)| {
            tables.iter().skip(i + 1).any(|newer| {
                let disjoint = ucmp.compare(
                    user_key(&older.meta.largest),
                    user_key(&newer.meta.smallest),
                ) == Ordering::Less
                    || ucmp.compare(
                        user_key(&newer.meta.largest),
                        user_key(&older.meta.smallest),
                    ) == Ordering::Less;
                !disjoint && newer.min_sequence <= older.max_sequence
            })
        })
    }

    fn existing_table_path(&self, number: u64) -> PathBuf {
        let ldb = table_file_name(self.dir, number);
        if self.options.env.file_exists(&ldb) {
            ldb
        } else {
            crate::filename::sst_table_file_name(self.dir, number)
        }
    }

    /// The name `path` gets in the `lost/` subdirectory, which is created if missing.
    fn lost_name(&self, path: &Path) -> Option<PathBuf> {
        let lost = self.dir.join("lost");
        let _ = self.options.env.create_dir(&lost);
        Some(lost.join(path.file_name()?))
    }

    /// Gives the file at `path` a second name in `lost/`: a hard link, or a copy where links
    /// are not supported. Says in the `LOG` when neither could be made.
    fn keep_in_lost(&self, path: &Path) {
        let env = &self.options.env;
        let Some(to) = self.lost_name(path) else {
            return;
        };
        let kept = env.link_file(path, &to).or_else(|_| {
            let size = env.file_size(path)?;
            checkpoint::copy(&*env.new_random_access_file(path)?, size, &**env, &to)
        });
        match kept {
            Ok(()) => self
                .log
                .log(format_args!("kept {} in lost/ too", path.display())),
            Err(e) => self
                .log
                .log(format_args!("keeping {} in lost/ too: {e}", path.display())),
        }
    }

    /// Moves `path` into the `lost/` subdirectory.
    fn archive(&self, path: &Path) {
        let Some(to) = self.lost_name(path) else {
            return;
        };
        match self.options.env.rename(path, &to) {
            Ok(()) => self
                .log
                .log(format_args!("archived {} to lost/", path.display())),
            Err(e) => self
                .log
                .log(format_args!("archiving {}: {e}", path.display())),
        }
    }
}
