//! Writing one table from a sorted iterator and a memtable's range tombstones: memtable flushes
//! and repair use it.

use std::path::Path;

use crate::env::Env;
use crate::error::Result;
use crate::filename::table_file_name;
use crate::iter::InternalIterator;
use crate::range_del::{cover, Fragments};
use crate::table::builder::TableBuilder;
use crate::table::{BlockReads, TableOptions};
use crate::version::edit::FileMetaData;
use crate::version::table_cache::TableCache;

/// Writes every entry of `iter`, and the range tombstones of `tombstones`, to table `number` in
/// `dir`, syncs it, and checks that it opens. The table's key range covers both (see
/// `range_del`).
///
/// Returns the new file's metadata; `file_size` is 0 (and no file is left behind) when there
/// is nothing to write. On any error the partial file is removed.
pub(crate) fn build_table(
    dir: &Path,
    env: &dyn Env,
    options: &TableOptions,
    table_cache: &TableCache,
    iter: &mut dyn InternalIterator,
    tombstones: Option<&Fragments>,
    number: u64,
) -> Result<FileMetaData> {
    let fragments = tombstones.map_or(&[][..], Fragments::fragments);
    let path = table_file_name(dir, number);
    let mut meta = FileMetaData {
        number,
        file_size: 0,
        smallest: Vec::new(),
        largest: Vec::new(),
    };
    iter.seek_to_first();
    if !iter.valid() && fragments.is_empty() {
        return iter.status().map(|()| meta);
    }
    let result = (|| -> Result<()> {
        let file = env.new_writable_file(&path)?;
        let mut builder = TableBuilder::new(options.clone(), file);
        if iter.valid() {
            meta.smallest = iter.key().to_vec();
        }
        while iter.valid() {
            let key = iter.key();
            meta.largest.clear();
            meta.largest.extend_from_slice(key);
            builder.add(key, iter.value())?;
            iter.next();
        }
        iter.status()?;
        if let Some(tombstones) = tombstones {
            for tombstone in tombstones.tombstones() {
                builder.add_range_tombstone(&tombstone)?;
            }
            cover(
                &options.icmp,
                &mut meta.smallest,
                &mut meta.largest,
                fragments,
            );
        }
        meta.file_size = builder.finish()?;
        let mut file = builder.into_file();
        file.sync()?;
        file.close()?;
        // Prove the table is readable before it is recorded anywhere (its first block checked,
        // and not cached: the block cache is for what readers read).
        let mut check = table_cache.iter(BlockReads::checked_uncached(), number, meta.file_size)?;
        check.seek_to_first();
        check.status()
    })();
    if let Err(e) = result {
        let _ = env.remove_file(&path);
        return Err(e);
    }
    Ok(meta)
}
