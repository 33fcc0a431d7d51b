//! The options of `open`, under classic-level's names, turned into the engine's `Options`.
//! Defaults are classic-level's, which are LevelDB's plus a 10-bit bloom filter, so a database
//! switched from classic-level behaves (and is benchmarked) like for like.

use std::sync::Arc;

use strata::{BlockCache, BloomFilterPolicy, CompressionType, ValueSeparation};

use crate::errors::{Code, Failure, Outcome};

/// Bloom filter bits per key when `bloomFilterBits` is not given (classic-level's filter).
const DEFAULT_BLOOM_BITS: usize = 10;
/// Block cache bytes when `cacheSize` is not given.
const DEFAULT_CACHE_SIZE: usize = 8 << 20;

/// `open`'s options. Sizes are in bytes.
#[napi_derive::napi(object, object_to_js = false)]
pub struct OpenOptions {
    pub create_if_missing: Option<bool>,
    pub error_if_exists: Option<bool>,
    /// Snappy-compress table blocks (default true).
    pub compression: Option<bool>,
    /// Block cache size (default 8 MiB).
    pub cache_size: Option<f64>,
    /// Memtable size before it is written to a table (default 4 MiB).
    pub write_buffer_size: Option<f64>,
    /// Table block size (default 4 KiB).
    pub block_size: Option<f64>,
    /// Table files kept open (default 1000).
    pub max_open_files: Option<f64>,
    /// Keys between restart points in a block (default 16).
    pub block_restart_interval: Option<f64>,
    /// Table file size before a new one is started (default 2 MiB).
    pub max_file_size: Option<f64>,
    /// Bloom filter bits per key; 0 for no filter (default 10).
    pub bloom_filter_bits: Option<f64>,
    /// Fail on any corruption met, including at recovery (default false).
    pub paranoid_checks: Option<bool>,
    /// Threads one compaction may run on (default 2).
    pub max_subcompactions: Option<f64>,
    /// Open to read only, beside a process that may be writing (default false): no `LOCK`
    /// taken, nothing written; writes fail with `LEVEL_NOT_SUPPORTED`.
    pub read_only: Option<bool>,
    /// Keep values of at least this many bytes in value files beside the tree (Leveled's
    /// design; `db.head()` then answers without reading them); 0 for off (the default:
    /// LevelDB's format). A database that ever had it on is refused without it.
    pub value_separation: Option<f64>,
}

/// Most bloom filter bits per key: past ~30 a filter only grows (the probe count is capped at
/// 30), and a huge value would make every filter a huge allocation.
const MAX_BLOOM_BITS: usize = 64;

/// `value` as a count of at least `min`, or an error naming the option. Values the engine
/// cannot use are clamped by it, as LevelDB clamps them.
fn count(name: &str, value: Option<f64>, default: usize, min: usize) -> Outcome<usize> {
    count_up_to(name, value, default, min, usize::MAX)
}

/// [`count`] with an upper limit too.
fn count_up_to(
    name: &str,
    value: Option<f64>,
    default: usize,
    min: usize,
    max: usize,
) -> Outcome<usize> {
    let Some(value) = value else {
        return Ok(default);
    };
    // `usize::MAX as f64` rounds up to 2^64, so the upper comparison is strict for it.
    let below_max = if max == usize::MAX {
        value < max as f64
    } else {
        value <= max as f64
    };
    if value.fract() == 0.0 && value >= min as f64 && below_max {
        // Exact: an integer in range.
        Ok(value as usize)
    } else {
        Err(Failure::new(
            Code::InvalidArgument,
            format!("The option '{name}' must be an integer from {min} to {max}, got {value}"),
        ))
    }
}

impl OpenOptions {
    /// Whether `readOnly` asks for a read-only handle.
    pub(crate) fn read_only(&self) -> bool {
        self.read_only.unwrap_or(false)
    }

    /// The engine options these select.
    pub(crate) fn to_engine(&self) -> Outcome<strata::Options> {
        let defaults = strata::Options::default();
        let bloom_bits = count_up_to(
            "bloomFilterBits",
            self.bloom_filter_bits,
            DEFAULT_BLOOM_BITS,
            0,
            MAX_BLOOM_BITS,
        )?;
        let compression = if self.compression.unwrap_or(true) {
            CompressionType::Snappy
        } else {
            CompressionType::None
        };
        Ok(strata::Options {
            create_if_missing: self.create_if_missing.unwrap_or(true),
            error_if_exists: self.error_if_exists.unwrap_or(false),
            paranoid_checks: self.paranoid_checks.unwrap_or(false),
            compression,
            block_cache: Some(BlockCache::new(count(
                "cacheSize",
                self.cache_size,
                DEFAULT_CACHE_SIZE,
                0,
            )?)),
            write_buffer_size: count(
                "writeBufferSize",
                self.write_buffer_size,
                defaults.write_buffer_size,
                1,
            )?,
            block_size: count("blockSize", self.block_size, defaults.block_size, 1)?,
            max_open_files: count(
                "maxOpenFiles",
                self.max_open_files,
                defaults.max_open_files,
                1,
            )?,
            block_restart_interval: count(
                "blockRestartInterval",
                self.block_restart_interval,
                defaults.block_restart_interval,
                1,
            )?,
            max_file_size: count("maxFileSize", self.max_file_size, defaults.max_file_size, 1)?,
            filter_policy: (bloom_bits > 0).then(|| {
                Arc::new(BloomFilterPolicy::new(bloom_bits)) as Arc<dyn strata::FilterPolicy>
            }),
            max_subcompactions: count(
                "maxSubcompactions",
                self.max_subcompactions,
                defaults.max_subcompactions,
                1,
            )?,
            value_separation: match count("valueSeparation", self.value_separation, 0, 0)? {
                0 => None,
                // Compressed as table blocks are.
                min_value_size => {
                    Some(ValueSeparation::new(min_value_size).with_compression(compression))
                }
            },
            ..defaults
        })
    }
}
