//! `org.iq80.leveldb.Options` (and `StrataOptions`) as engine options.
//!
//! Every field is honoured: `createIfMissing`, `errorIfExists`, `paranoidChecks`,
//! `writeBufferSize`, `maxOpenFiles`, `blockRestartInterval`, `blockSize` (the engine clamps
//! them to workable ranges, as LevelDB does), `compressionType`, `cacheSize` (0: the engine's
//! own 8 MiB cache), `comparator`, `logger`, and `verifyChecksums`, which makes every read and
//! iterator of the database verify block checksums as iq80's implementation does (the per-read
//! `ReadOptions.verifyChecksums` can only add checks). `StrataOptions` adds a bloom filter,
//! read-only opens and value separation.

use std::sync::Arc;

use jni::objects::JObject;
use jni::refs::Reference;
use jni::Env;
use strata::{BlockCache, BloomFilterPolicy, CompressionType, ValueSeparation};

use crate::comparator::{Failure, JavaComparator};
use crate::errors::Error;
use crate::java::{OptionsRef, StrataOptionsRef};
use crate::logger::JavaLogger;

/// Engine options and what the binding keeps beside them.
pub(crate) struct OpenOptions {
    pub(crate) engine: strata::Options,
    /// `Options.verifyChecksums`: every read verifies block checksums.
    pub(crate) verify_checksums: bool,
    /// Set when a Java comparator is in use: where its failure is recorded.
    pub(crate) comparator_failure: Option<Arc<Failure>>,
    /// `StrataOptions.readOnly`: open to read beside the writer.
    pub(crate) read_only: bool,
}

/// A size field as `usize`; negative sizes are refused.
fn size(name: &str, value: i64) -> Result<usize, Error> {
    usize::try_from(value).map_err(|_| {
        Error::Engine(strata::Error::InvalidArgument(format!(
            "Options.{name} must not be negative, got {value}"
        )))
    })
}

/// Reads `options` (null: the defaults of `new Options()`).
pub(crate) fn read(env: &mut Env<'_>, options: &JObject<'_>) -> Result<OpenOptions, Error> {
    if options.is_null() {
        return Err(Error::Misuse("options must not be null".to_owned()));
    }
    let local = env.new_local_ref(options)?;
    let java = OptionsRef::cast_local(env, local)?;
    let mut engine = strata::Options {
        create_if_missing: java.create_if_missing(env)?,
        error_if_exists: java.error_if_exists(env)?,
        paranoid_checks: java.paranoid_checks(env)?,
        write_buffer_size: size("writeBufferSize", java.write_buffer_size(env)?.into())?,
        max_open_files: size("maxOpenFiles", java.max_open_files(env)?.into())?,
        block_restart_interval: size(
            "blockRestartInterval",
            java.block_restart_interval(env)?.into(),
        )?,
        block_size: size("blockSize", java.block_size(env)?.into())?,
        ..strata::Options::default()
    };
    let compression = java.compression_type(env)?;
    engine.compression = if compression.is_null() || compression.persistent_id(env)? == 0 {
        CompressionType::None
    } else {
        CompressionType::Snappy
    };
    let cache_size = size("cacheSize", java.cache_size(env)?)?;
    if cache_size > 0 {
        engine.block_cache = Some(BlockCache::new(cache_size));
    }
    let comparator = java.comparator(env)?;
    let mut comparator_failure = None;
    if !comparator.is_null() {
        let comparator = JavaComparator::new(env, &comparator)?;
        comparator_failure = Some(comparator.failure());
        engine.comparator = Arc::new(comparator);
    }
    let logger = java.logger(env)?;
    if !logger.is_null() {
        engine.info_log = Some(Arc::new(JavaLogger::new(env, &logger)?));
    }
    let strata_options = StrataOptionsRef::lookup_class(env, &Default::default())?;
    let mut read_only = false;
    if env.is_instance_of(options, &*strata_options)? {
        let local = env.new_local_ref(options)?;
        let strata = StrataOptionsRef::cast_local(env, local)?;
        read_only = strata.read_only(env)?;
        let bits = strata.bloom_filter_bits_per_key(env)?;
        if bits > 0 {
            engine.filter_policy = Some(Arc::new(BloomFilterPolicy::new(size(
                "bloomFilterBitsPerKey",
                bits.into(),
            )?)));
        }
        let separation = strata.value_separation(env)?;
        if separation > 0 {
            // Compressed as table blocks are (`compressionType`).
            let min_value_size = size("valueSeparation", separation.into())?;
            engine.value_separation =
                Some(ValueSeparation::new(min_value_size).with_compression(engine.compression));
        }
    }
    Ok(OpenOptions {
        engine,
        verify_checksums: java.verify_checksums(env)?,
        comparator_failure,
        read_only,
    })
}
