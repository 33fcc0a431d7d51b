//! `check`, manifest side: `CURRENT`, every manifest record, and the invariants of the version
//! the edits add up to.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::Path;

use super::{unreadable, CheckReport, DirFiles, FileProblems};
use crate::env::read_file_to_vec;
use crate::extension::{parse_recorded_name, Extensions};
use crate::filename::{parse_file_name, FileType};
use crate::options::Options;
use crate::tools::records::{describe_in_record, for_each_record, LogItem};
use crate::util::internal_key::{parse_internal_key, InternalKeyComparator};
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::NUM_LEVELS;

/// The version the manifest describes, as far as `check` needs it.
pub(super) struct LiveState {
    /// The manifest's last sequence number, when recorded.
    pub(super) last_sequence: Option<u64>,
    log_number: Option<u64>,
    prev_log_number: Option<u64>,
    next_file_number: Option<u64>,
    comparator: Option<String>,
    /// Per level, the live tables by number.
    levels: Vec<BTreeMap<u64, FileMetaData>>,
}

impl LiveState {
    /// The level and metadata of live table `number`.
    pub(super) fn table(&self, number: u64) -> Option<(usize, &FileMetaData)> {
        self.levels
            .iter()
            .enumerate()
            .find_map(|(level, files)| files.get(&number).map(|meta| (level, meta)))
    }

    /// The format extensions the manifest's marker records (none for a plain comparator
    /// name, or for a marker that does not parse).
    pub(super) fn extensions(&self) -> Extensions {
        self.comparator
            .as_deref()
            .and_then(|name| parse_recorded_name(name).ok())
            .map_or(Extensions::NONE, |recorded| recorded.extensions)
    }

    /// True when the engine would replay log `number` at open.
    pub(super) fn log_is_live(&self, number: u64) -> bool {
        self.log_number.is_none_or(|n| number >= n) || self.prev_log_number == Some(number)
    }

    fn apply(&mut self, edit: VersionEdit, offset: u64, problems: &mut FileProblems) {
        if edit.comparator.is_some() {
            self.comparator = edit.comparator;
        }
        self.log_number = edit.log_number.or(self.log_number);
        self.prev_log_number = edit.prev_log_number.or(self.prev_log_number);
        self.next_file_number = edit.next_file_number.or(self.next_file_number);
        self.last_sequence = edit.last_sequence.or(self.last_sequence);
        for (level, number) in edit.deleted_files {
            let removed = self.levels.get_mut(level).and_then(|l| l.remove(&number));
            if removed.is_none() {
                problems.add(
                    Some(offset),
                    format!("edit deletes table {number} from level {level}, where it is not"),
                );
            }
        }
        for (level, meta) in edit.new_files {
            if let Some((at, _)) = self.table(meta.number) {
                problems.add(
                    Some(offset),
                    format!(
                        "edit adds table {} to level {level}, but it is already at level {at}",
                        meta.number
                    ),
                );
                continue;
            }
            if let Some(files) = self.levels.get_mut(level) {
                files.insert(meta.number, meta);
            }
        }
    }
}

/// Checks `CURRENT` and the manifest it names, adding problems to `report`. Returns the live
/// version when the manifest could be read.
pub(super) fn check(
    dir: &Path,
    options: &Options,
    files: &DirFiles,
    report: &mut CheckReport,
) -> Option<LiveState> {
    let mut current = FileProblems::new("CURRENT");
    let name = manifest_name(dir, options, files, &mut current);
    current.into_report(report);
    let name = name?;
    report.manifest = Some(name.clone());

    let mut problems = FileProblems::new(name.clone());
    let mut state = LiveState {
        last_sequence: None,
        log_number: None,
        prev_log_number: None,
        next_file_number: None,
        comparator: None,
        levels: vec![BTreeMap::new(); NUM_LEVELS],
    };
    let mut records = 0;
    let result = for_each_record(&*options.env, &dir.join(&name), true, false, &mut |item| {
        match item {
            // Only a write-ahead log's reader hands gaps over.
            LogItem::Gap { .. } => {}
            LogItem::Damage {
                offset,
                bytes,
                reason,
            } => problems.add(offset, format!("{reason} ({bytes} bytes dropped)")),
            LogItem::Tail { offset, bytes } => problems.add(
                Some(offset),
                format!(
                    "the last {bytes} bytes are not a complete record: a manifest write cut \
                     short, or damage hiding the edits after it"
                ),
            ),
            LogItem::Record { offset, data } => {
                records += 1;
                match VersionEdit::decode(data) {
                    Ok(edit) => state.apply(edit, offset, &mut problems),
                    Err(e) => problems.add(
                        Some(offset),
                        format!("bad version edit: {}", describe_in_record(&e)),
                    ),
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        problems.add(None, unreadable(&e));
    }
    report.manifest_records = records;
    if records == 0 {
        problems.add(None, "holds no version edit");
        problems.into_report(report);
        return None;
    }
    check_version(&state, options, files, &mut problems);
    problems.into_report(report);
    Some(state)
}

/// The manifest `CURRENT` names, when that manifest exists.
fn manifest_name(
    dir: &Path,
    options: &Options,
    files: &DirFiles,
    problems: &mut FileProblems,
) -> Option<String> {
    if !files.current {
        problems.add(None, "missing (no database here, or it was lost)");
        return None;
    }
    let contents = match read_file_to_vec(&*options.env, &dir.join("CURRENT")) {
        Ok(contents) => contents,
        Err(e) => {
            problems.add(None, unreadable(&e));
            return None;
        }
    };
    let Some(line) = contents.strip_suffix(b"\n") else {
        problems.add(None, "does not end with a newline");
        return None;
    };
    let name = std::str::from_utf8(line)
        .ok()
        .filter(|name| matches!(parse_file_name(name), Some((_, FileType::Descriptor))));
    let Some(name) = name else {
        problems.add(
            Some(0),
            format!("'{}' is not a manifest name", line.escape_ascii()),
        );
        return None;
    };
    if !files.manifests.contains(name) {
        problems.add(None, format!("names {name}, which does not exist"));
        return None;
    }
    Some(name.to_owned())
}

/// The invariants of the final version.
fn check_version(
    state: &LiveState,
    options: &Options,
    files: &DirFiles,
    problems: &mut FileProblems,
) {
    let wanted = options.comparator.name();
    // A format-extension marker records the comparator's name after the extensions.
    let recorded = state
        .comparator
        .as_deref()
        .map(|name| parse_recorded_name(name).map_or(name, |parsed| parsed.comparator));
    match recorded {
        Some(name) if name != wanted => problems.add(
            None,
            format!("written with comparator {name}, checked with {wanted}"),
        ),
        _ => {}
    }
    for (value, what) in [
        (state.log_number, "log number"),
        (state.next_file_number, "next file number"),
        (state.last_sequence, "last sequence number"),
    ] {
        if value.is_none() {
            problems.add(None, format!("no {what} recorded"));
        }
    }
    // The log the manifest's log number names is created before the edit naming it, and only
    // deleted once a later edit moves past it: without it, the writes it held are gone.
    // (Number 0 is a database that never had a log, or one `repair` rebuilt.)
    if let Some(log) = state.log_number.filter(|&n| n > 0) {
        if !files.logs.contains_key(&log) {
            problems.add(
                None,
                format!(
                    "log {log:06}.log, named by the manifest's log number, is missing: the writes \
                     it held since the last flush are lost"
                ),
            );
        }
    }
    let icmp = InternalKeyComparator::new(options.comparator.clone());
    let show = |key: &[u8]| match parse_internal_key(key) {
        Some(k) => format!("'{}' @ {}", k.user_key.escape_ascii(), k.sequence),
        None => format!("'{}'", key.escape_ascii()),
    };
    for (level, tables) in state.levels.iter().enumerate() {
        for (number, meta) in tables {
            if state.next_file_number.is_some_and(|next| *number >= next) {
                problems.add(
                    None,
                    format!("table {number} is not below the next file number"),
                );
            }
            if !files.tables.contains_key(number) {
                problems.add(
                    None,
                    format!(
                        "table {number:06}.ldb (level {level}, {} bytes) is missing",
                        meta.file_size
                    ),
                );
            }
            if icmp.compare(&meta.smallest, &meta.largest) == Ordering::Greater {
                problems.add(
                    None,
                    format!("table {number}: smallest key is above its largest key"),
                );
            }
        }
        if level == 0 {
            continue;
        }
        let mut sorted: Vec<(&u64, &FileMetaData)> = tables.iter().collect();
        sorted.sort_by(|a, b| icmp.compare(&a.1.smallest, &b.1.smallest));
        for pair in sorted.windows(2) {
            let [(n1, f1), (n2, f2)] = pair else { continue };
            if icmp.compare(&f1.largest, &f2.smallest) != Ordering::Less {
                problems.add(
                    None,
                    format!(
                        "level {level}: table {n1} (up to {}) overlaps table {n2} (from {})",
                        show(&f1.largest),
                        show(&f2.smallest)
                    ),
                );
            }
        }
    }
}
