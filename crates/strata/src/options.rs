//! Options for opening a database, reading and writing. Defaults match LevelDB 1.23's, so
//! comparisons with it are like for like.

use std::sync::Arc;

use crate::compaction::filter::CompactionFilter;
use crate::env::{Env, Logger, PosixEnv};
use crate::extension::Extensions;
use crate::snapshot::Snapshot;
use crate::table::block_cache::BlockCache;
use crate::table::format::CompressionType;
use crate::table::{BlockReads, TableOptions};
use crate::util::bloom::FilterPolicy;
use crate::util::comparator::{BytewiseComparator, Comparator};
use crate::util::internal_key::InternalKeyComparator;
use crate::version::version_set::VersionSetOptions;

/// How a database is opened and how it lays out its files.
#[derive(Clone)]
pub struct Options {
    /// Order of user keys; its name is recorded in the manifest and checked at open.
    pub comparator: Arc<dyn Comparator>,
    /// Create the database if it is missing.
    pub create_if_missing: bool,
    /// Fail if the database already exists.
    pub error_if_exists: bool,
    /// Check aggressively: any corruption met fails the operation (including at recovery,
    /// where a damaged log tail is otherwise skipped).
    pub paranoid_checks: bool,
    /// The file system.
    pub env: Arc<dyn Env>,
    /// Bytes of writes gathered in memory before they are written to a table (default 4 MiB).
    pub write_buffer_size: usize,
    /// Number of table files kept open (default 1000).
    pub max_open_files: usize,
    /// Cache of uncompressed blocks; `None` gives each database its own 8 MiB cache.
    pub block_cache: Option<Arc<BlockCache>>,
    /// Uncompressed size of a table's data block (default 4 KiB).
    pub block_size: usize,
    /// Keys between restart points in a data block (default 16).
    pub block_restart_interval: usize,
    /// Bytes written to a table before a new one is started (default 2 MiB).
    pub max_file_size: usize,
    /// Block compression (default Snappy).
    pub compression: CompressionType,
    /// Append to the existing log and manifest at open instead of starting new ones.
    pub reuse_logs: bool,
    /// Filter kept per table to skip reads of absent keys (default none).
    pub filter_policy: Option<Arc<dyn FilterPolicy>>,
    /// Most threads one compaction runs on (default 2): a compaction of enough data is cut
    /// into key ranges merged in parallel, each writing its own tables. 1 merges on the
    /// background thread alone, as LevelDB does. The output is the same either way, but for
    /// where tables are cut.
    pub max_subcompactions: usize,
    /// Most compactions running at once (default 2), each on a background thread of its own:
    /// compactions whose input files and key ranges do not meet run side by side (level 0
    /// into level 1 beside a compaction of deeper levels, or of other key ranges), and
    /// memtable flushes then run on a thread of their own besides, so a flush never waits for
    /// a compaction. 1 runs flushes and compactions on one thread, one at a time, as LevelDB
    /// does (a compaction flushes a full memtable in the middle of its merge). At most 16.
    pub max_background_jobs: usize,
    /// Where informational messages go (default: the `LOG` file in the database directory,
    /// the previous one kept as `LOG.old`). With a logger, no `LOG` file is written.
    pub info_log: Option<Arc<dyn Logger>>,
    /// Enables range deletes ([`DB::delete_range`](crate::DB::delete_range),
    /// [`WriteBatch::delete_range`](crate::WriteBatch::delete_range)), an extension of
    /// LevelDB's format (default off). Opening a database with it records the extension in the
    /// manifest, and from then on LevelDB refuses to open the database (with its comparator
    /// error) and Strata opens it only with this option on.
    pub range_deletes: bool,
    /// Enables expiring keys ([`DB::put_with_ttl`](crate::DB::put_with_ttl),
    /// [`WriteBatch::put_with_ttl`](crate::WriteBatch::put_with_ttl)), an extension of
    /// LevelDB's format recorded like [`range_deletes`](Self::range_deletes) (default off).
    pub expiring_keys: bool,
    /// Asked about entries as compactions rewrite them, to keep, drop or change each (default
    /// none); see [`CompactionFilter`] for when it is called. It never changes what a live
    /// snapshot sees: a snapshot taken while a compaction with a filter runs keeps the
    /// tables and memtables it was taken on until it is dropped.
    pub compaction_filter: Option<Arc<dyn CompactionFilter>>,
    /// Keeps values of at least [`ValueSeparation::min_value_size`] bytes in value files
    /// beside the tree, with pointers to them in the tree (default `None`: every value in
    /// the tree). An extension of LevelDB's format recorded like
    /// [`range_deletes`](Self::range_deletes); docs/design.md, section 4.4.
    pub value_separation: Option<ValueSeparation>,
}

/// How [`Options::value_separation`] separates values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValueSeparation {
    /// Values of at least this many bytes go to value files; smaller ones stay in the tree
    /// (default 4096).
    pub min_value_size: usize,
    /// A value file is closed, and the next one started, once it holds this many bytes
    /// (default 64 MiB; at least 64 KiB).
    pub file_size: u64,
    /// How values are stored in value files (default [`CompressionType::None`]): with
    /// [`CompressionType::Snappy`], each value is stored Snappy-compressed when that saves at
    /// least 1/8 of it, as table blocks are. Compressed values are format extension
    /// `value-compression`, recorded at open (docs/design.md, 4.4): such a database must be
    /// opened with compression on again, and Strata builds without the extension refuse it.
    pub compression: CompressionType,
}

impl ValueSeparation {
    /// Separates values of at least `min_value_size` bytes, in files of the default size.
    pub fn new(min_value_size: usize) -> ValueSeparation {
        ValueSeparation {
            min_value_size,
            file_size: 64 << 20,
            compression: CompressionType::None,
        }
    }

    /// These settings with value files of `file_size` bytes.
    pub fn with_file_size(self, file_size: u64) -> ValueSeparation {
        ValueSeparation { file_size, ..self }
    }

    /// These settings with values stored with `compression` (see
    /// [`ValueSeparation::compression`]).
    pub fn with_compression(self, compression: CompressionType) -> ValueSeparation {
        ValueSeparation {
            compression,
            ..self
        }
    }
}

impl Default for ValueSeparation {
    fn default() -> ValueSeparation {
        ValueSeparation::new(4096)
    }
}

impl Options {
    /// The table-related part of these options. The block cache is taken as is (`None` stays
    /// `None`; the database layer creates its default 8 MiB cache).
    pub(crate) fn table_options(&self) -> TableOptions {
        TableOptions {
            icmp: InternalKeyComparator::new(Arc::clone(&self.comparator)),
            block_size: self.block_size,
            block_restart_interval: self.block_restart_interval,
            compression: self.compression,
            filter_policy: self.filter_policy.clone(),
            block_cache: self.block_cache.clone(),
            paranoid_checks: self.paranoid_checks,
            range_deletions: self.range_deletes,
        }
    }

    /// What the version set needs of these options.
    pub(crate) fn version_set_options(&self) -> VersionSetOptions {
        VersionSetOptions {
            env: Arc::clone(&self.env),
            paranoid_checks: self.paranoid_checks,
            reuse_logs: self.reuse_logs,
            max_file_size: self.max_file_size as u64,
            extensions: self.extensions(),
        }
    }

    /// The format extensions these options enable.
    pub(crate) fn extensions(&self) -> Extensions {
        Extensions::from_flags(
            self.range_deletes,
            self.expiring_keys,
            self.value_separation.is_some(),
            self.value_separation
                .is_some_and(|s| s.compression != CompressionType::None),
        )
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            comparator: BytewiseComparator::shared(),
            create_if_missing: false,
            error_if_exists: false,
            paranoid_checks: false,
            env: Arc::new(PosixEnv::new()),
            write_buffer_size: 4 << 20,
            max_open_files: 1000,
            block_cache: None,
            block_size: 4 << 10,
            block_restart_interval: 16,
            max_file_size: 2 << 20,
            compression: CompressionType::Snappy,
            reuse_logs: false,
            filter_policy: None,
            max_subcompactions: 2,
            max_background_jobs: 2,
            info_log: None,
            range_deletes: false,
            expiring_keys: false,
            compaction_filter: None,
            value_separation: None,
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("comparator", &self.comparator.name())
            .field("create_if_missing", &self.create_if_missing)
            .field("error_if_exists", &self.error_if_exists)
            .field("paranoid_checks", &self.paranoid_checks)
            .field("write_buffer_size", &self.write_buffer_size)
            .field("max_open_files", &self.max_open_files)
            .field("block_size", &self.block_size)
            .field("block_restart_interval", &self.block_restart_interval)
            .field("max_file_size", &self.max_file_size)
            .field("compression", &self.compression)
            .field("reuse_logs", &self.reuse_logs)
            .field("max_subcompactions", &self.max_subcompactions)
            .field("max_background_jobs", &self.max_background_jobs)
            .field("info_log", &self.info_log.is_some())
            .field("range_deletes", &self.range_deletes)
            .field("expiring_keys", &self.expiring_keys)
            .field("compaction_filter", &self.compaction_filter.is_some())
            .field("value_separation", &self.value_separation)
            .field(
                "filter_policy",
                &self.filter_policy.as_ref().map(|p| p.name().to_owned()),
            )
            .finish_non_exhaustive()
    }
}

/// Options for one write.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// Sync the log before the write is acknowledged, so it survives power loss.
    pub sync: bool,
}

/// Options for reads and iterators.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Verify the checksum of every block read from a table.
    pub verify_checksums: bool,
    /// Keep blocks read by this operation in the block cache (turn off for bulk scans). Blocks
    /// stored uncompressed in a memory-mapped table are read in place and never cached, as
    /// LevelDB reads them, but by a `memory_only` read.
    pub fill_cache: bool,
    /// Read as of this snapshot; `None` reads the latest state.
    pub snapshot: Option<Snapshot>,
    /// Iterators see only keys `>= lower_bound`.
    pub lower_bound: Option<Vec<u8>>,
    /// Iterators see only keys `< upper_bound`.
    pub upper_bound: Option<Vec<u8>>,
    /// Let one `get_many` look its keys up in the tables on more than the caller's thread:
    /// the sorted keys are cut into runs of at least
    /// [`GET_MANY_KEYS_PER_THREAD`](crate::GET_MANY_KEYS_PER_THREAD), which the caller and
    /// the engine's helper threads (one per core but the caller's, shared by every database of
    /// the process) claim in turn; the caller waits only for runs a helper has started and
    /// looks up itself those no helper has, so busy helpers cost the batch only the handing
    /// over. A helper stays awake (yielding) up to 200 µs after its last batch. Random keys
    /// of a large database mostly land in different blocks, so a batch's cost is block
    /// loads, which the runs overlap. Default on.
    pub get_many_parallel: bool,
    /// Answer from memory only, never waiting for the disk: the memtables, the block cache,
    /// and table blocks whose pages the operating system holds in memory (a memory-mapped
    /// table's pages are asked with `mincore`). A read that would have to read from the disk,
    /// open a table file or read a value file fails with [`Error::WouldBlock`](crate::Error)
    /// having done nothing else; the same read without the option then does it. For callers
    /// that must not block, such as an event loop, which answer from memory at once and hand
    /// only the rest to a thread. Default off.
    pub memory_only: bool,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions {
            verify_checksums: false,
            fill_cache: true,
            snapshot: None,
            lower_bound: None,
            upper_bound: None,
            get_many_parallel: true,
            memory_only: false,
        }
    }
}

impl ReadOptions {
    /// How this read reads table blocks.
    pub(crate) fn block_reads(&self) -> BlockReads {
        BlockReads {
            verify_checksums: self.verify_checksums,
            fill_cache: self.fill_cache,
            memory_only: self.memory_only,
            release_behind: false,
        }
    }

    /// The sequence number reads are made at, when a snapshot is set.
    pub(crate) fn snapshot_sequence(&self) -> Option<u64> {
        self.snapshot.as_ref().map(Snapshot::sequence)
    }
}
