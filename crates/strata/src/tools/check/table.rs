//! `check`, table side: every block of one table, and the table against its manifest entry.

use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;

use super::value_files::Pointers;
use super::{unreadable, CheckReport, FileProblems};
use crate::error::Result;
use crate::extension::{Extension, Extensions};
use crate::options::Options;
use crate::range_del::{cover, Fragments};
use crate::table::filter_block::FilterBlockReader;
use crate::table::format::BlockHandle;
use crate::table::reader::Table;
use crate::table::TableOptions;
use crate::tools::table_walk::{FilterSummary, TableFile, TableVisitor};
use crate::util::bloom::{BloomFilterPolicy, FilterPolicy};
use crate::util::internal_key::{parse_internal_key, user_key, InternalKeyComparator, ValueType};
use crate::version::edit::FileMetaData;
use crate::vlog::ValuePointer;

/// What the manifest says about a live table.
pub(super) struct Expected<'a> {
    pub(super) level: usize,
    pub(super) meta: &'a FileMetaData,
    pub(super) last_sequence: Option<u64>,
    /// The format extensions the manifest records: the table may use no other.
    pub(super) extensions: Extensions,
}

/// Verifies table `name` in `dir`, and against `expected` when it is live.
pub(super) fn check(
    dir: &Path,
    name: &str,
    options: &Options,
    icmp: &InternalKeyComparator,
    expected: Option<Expected<'_>>,
    pointers: &mut Pointers,
    report: &mut CheckReport,
) {
    let mut problems = FileProblems::new(name);
    report.tables += 1;
    let env = &*options.env;
    let table = match TableFile::open(env, &dir.join(name)) {
        Ok(table) => table,
        Err(e) => {
            let offset = e.corruption_details().and_then(|c| c.offset);
            problems.add(offset, unreadable(&e));
            problems.into_report(report);
            return;
        }
    };
    if let Some(expected) = &expected {
        if table.size() != expected.meta.file_size {
            problems.add(
                None,
                format!(
                    "is {} bytes, the manifest says {} (level {})",
                    table.size(),
                    expected.meta.file_size,
                    expected.level
                ),
            );
        }
    }
    let mut checker = Checker {
        icmp,
        options,
        last_sequence: expected.as_ref().and_then(|e| e.last_sequence),
        problems,
        source: Arc::from(name),
        pointers,
        index: Vec::new(),
        filter: None,
        block: None,
        first_key: None,
        last_key: Vec::new(),
        blocks: 0,
        entries: 0,
        used: Extensions::NONE,
    };
    if let Err(e) = table.walk(true, &mut checker) {
        checker.problems.add(None, unreadable(&e));
    }
    checker.end_block();
    let mut problems = checker.problems;
    // The table's key range covers its range tombstones too (format extension
    // `range-deletes`, docs/design.md section 4.2).
    let tombstones = match range_tombstones(dir, name, options, icmp) {
        Ok(tombstones) => tombstones,
        Err(e) => {
            problems.add(None, format!("range-deletion block: {}", unreadable(&e)));
            None
        }
    };
    let mut used = checker.used;
    if tombstones.is_some() {
        used.insert(Extension::RangeDeletes);
    }
    if let Some(expected) = &expected {
        // What recovery and reads would refuse or misread: data of an extension the marker
        // does not name (LevelDB and Strata builds without it do not know it is there).
        for extension in used.iter().filter(|e| !expected.extensions.contains(*e)) {
            problems.add(
                None,
                format!(
                    "holds {} (format extension `{}`), which the manifest does not record",
                    extension.what(),
                    extension.token()
                ),
            );
        }
    }
    let mut first_key = checker.first_key.clone();
    if let Some(tombstones) = &tombstones {
        let (mut smallest, mut largest) = (first_key.unwrap_or_default(), checker.last_key);
        cover(icmp, &mut smallest, &mut largest, tombstones.fragments());
        first_key = Some(smallest);
        checker.last_key = largest;
    }
    if let (Some(expected), Some(first)) = (&expected, &first_key) {
        // Only meaningful when the whole table was read.
        if problems.is_empty() {
            let show = |k: &[u8]| format!("'{}'", k.escape_ascii());
            if first != &expected.meta.smallest {
                problems.add(
                    None,
                    format!(
                        "first key {} is not the manifest's smallest key {}",
                        show(first),
                        show(&expected.meta.smallest)
                    ),
                );
            }
            if checker.last_key != expected.meta.largest {
                problems.add(
                    None,
                    format!(
                        "last key {} is not the manifest's largest key {}",
                        show(&checker.last_key),
                        show(&expected.meta.largest)
                    ),
                );
            }
        }
    }
    if first_key.is_none() && problems.is_empty() {
        problems.add(None, "holds no entries");
    }
    report.blocks += checker.blocks;
    report.entries += checker.entries;
    problems.into_report(report);
}

/// The range tombstones of table `name`, when it has a range-deletion block.
fn range_tombstones(
    dir: &Path,
    name: &str,
    options: &Options,
    icmp: &InternalKeyComparator,
) -> Result<Option<Arc<Fragments>>> {
    let env = &*options.env;
    let path = dir.join(name);
    let size = env.file_size(&path)?;
    let file = env.new_random_access_file(&path)?;
    let table_options = TableOptions {
        icmp: icmp.clone(),
        block_cache: None,
        range_deletions: true,
        ..options.table_options()
    };
    let table = Table::open(table_options, file, size, name.to_owned())?;
    Ok(table.range_tombstones().cloned())
}

/// The data block being walked.
struct BlockState {
    /// Position among the index entries.
    index: usize,
    handle: BlockHandle,
    /// The block had an entry (its last one is then the checker's `last_key`).
    has_keys: bool,
    /// A key the filter rejected, reported once per block.
    filter_miss: Option<Vec<u8>>,
}

/// Verifies what the walk meets.
struct Checker<'a> {
    icmp: &'a InternalKeyComparator,
    options: &'a Options,
    last_sequence: Option<u64>,
    problems: FileProblems,
    /// The table's name, for the value pointers it holds.
    source: Arc<str>,
    /// Where its value pointers go.
    pointers: &'a mut Pointers,
    index: Vec<(Vec<u8>, BlockHandle)>,
    filter: Option<FilterBlockReader>,
    block: Option<BlockState>,
    first_key: Option<Vec<u8>>,
    /// Last key of the table so far.
    last_key: Vec<u8>,
    blocks: u64,
    entries: u64,
    /// The format extensions its entries use.
    used: Extensions,
}

impl Checker<'_> {
    /// The policy to check a filter named `name` with, when it is one we know.
    fn policy_for(&self, name: &[u8]) -> Option<Arc<dyn FilterPolicy>> {
        if let Some(policy) = &self.options.filter_policy {
            if policy.name().as_bytes() == name {
                return Some(Arc::clone(policy));
            }
        }
        // The bloom filter stores its probe count, so any bits-per-key reads it.
        let bloom = BloomFilterPolicy::new(10);
        (bloom.name().as_bytes() == name).then(|| Arc::new(bloom) as Arc<dyn FilterPolicy>)
    }

    /// Checks the block just walked against its index separator.
    fn end_block(&mut self) {
        let Some(block) = self.block.take() else {
            return;
        };
        let offset = Some(block.handle.offset);
        if let (true, Some((separator, _))) = (block.has_keys, self.index.get(block.index)) {
            if self.icmp.compare(&self.last_key, separator) == Ordering::Greater {
                self.problems.add(
                    offset,
                    format!(
                        "data block {}: last key is above its index separator",
                        block.index
                    ),
                );
            }
        }
        if let Some(key) = block.filter_miss {
            self.problems.add(
                offset,
                format!(
                    "data block {}: the filter rejects key '{}', which the block holds",
                    block.index,
                    user_key(&key).escape_ascii()
                ),
            );
        }
    }
}

impl TableVisitor for Checker<'_> {
    fn filter_block(&mut self, name: &[u8], _handle: BlockHandle, filter: &FilterSummary) {
        if let Some(policy) = self.policy_for(name) {
            self.filter = Some(FilterBlockReader::new(policy, filter.data.clone()));
        }
    }

    fn index_entry(&mut self, key: &[u8], handle: BlockHandle) {
        if let Some((previous, _)) = self.index.last() {
            if self.icmp.compare(previous, key) != Ordering::Less {
                self.problems.add(
                    Some(handle.offset),
                    format!(
                        "index entry {} is not above the one before",
                        self.index.len()
                    ),
                );
            }
        }
        self.index.push((key.to_vec(), handle));
    }

    fn data_block(&mut self, index: usize, handle: BlockHandle, _compression: u8, _len: usize) {
        self.end_block();
        self.blocks += 1;
        self.block = Some(BlockState {
            index,
            handle,
            has_keys: false,
            filter_miss: None,
        });
    }

    fn entry(&mut self, key: &[u8], value: &[u8]) {
        self.entries += 1;
        let Some(block) = self.block.as_mut() else {
            return;
        };
        let offset = Some(block.handle.offset);
        match parse_internal_key(key) {
            None => self.problems.add(
                offset,
                format!(
                    "data block {}: bad internal key '{}'",
                    block.index,
                    key.escape_ascii()
                ),
            ),
            Some(parsed) => {
                if let Some(last) = self.last_sequence.filter(|&last| parsed.sequence > last) {
                    self.problems.add(
                        offset,
                        format!(
                            "key '{}' has sequence {}, above the manifest's last sequence {last}",
                            parsed.user_key.escape_ascii(),
                            parsed.sequence
                        ),
                    );
                }
                match parsed.value_type {
                    ValueType::ExpiringValue => self.used.insert(Extension::ExpiringKeys),
                    ValueType::ValuePointer => {
                        for &extension in ValuePointer::extensions(value) {
                            self.used.insert(extension);
                        }
                    }
                    _ => {}
                }
                if parsed.value_type == ValueType::ValuePointer {
                    let added = self
                        .pointers
                        .add(&self.source, offset, parsed.user_key, value);
                    if let Err(reason) = added {
                        self.problems
                            .add(offset, format!("data block {}: {reason}", block.index));
                    }
                }
                if let Some(filter) = &self.filter {
                    if block.filter_miss.is_none()
                        && !filter.key_may_match(block.handle.offset, parsed.user_key)
                    {
                        block.filter_miss = Some(key.to_vec());
                    }
                }
            }
        }
        if !block.has_keys && block.index > 0 {
            // The first key of a block must be above the previous block's separator.
            if let Some((separator, _)) = self.index.get(block.index - 1) {
                if self.icmp.compare(separator, key) != Ordering::Less {
                    self.problems.add(
                        offset,
                        format!(
                            "data block {}: first key is not above the previous separator",
                            block.index
                        ),
                    );
                }
            }
        }
        match &self.first_key {
            None => self.first_key = Some(key.to_vec()),
            Some(_) => {
                if self.icmp.compare(&self.last_key, key) != Ordering::Less {
                    self.problems.add(
                        offset,
                        format!(
                            "data block {}: key '{}' is out of order",
                            block.index,
                            key.escape_ascii()
                        ),
                    );
                }
            }
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        block.has_keys = true;
    }

    fn problem(&mut self, offset: Option<u64>, reason: String) {
        self.problems.add(offset, reason);
    }
}
