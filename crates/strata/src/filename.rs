//! Names of the files in a database directory. On-disk: never change.
//!
//! ```text
//! CURRENT             name of the live manifest, then "\n"
//! LOCK                held (fcntl) by the process that has the database open
//! LOG, LOG.old        human-readable info log, and the previous one
//! MANIFEST-NNNNNN     version edits
//! NNNNNN.log          write-ahead log
//! NNNNNN.ldb          table (NNNNNN.sst is read too: LevelDB before 1.14 wrote that)
//! NNNNNN.dbtmp        temporary file, e.g. the next CURRENT before its rename
//! NNNNNN.vlog         value file (format extension value-separation, see `vlog`)
//! ```
//! `NNNNNN` is a decimal file number, zero-padded to at least six digits.

use std::path::{Path, PathBuf};

/// Largest file number a database uses: half the `u64` range, so counting up from any accepted
/// number never overflows. A larger number in a manifest or a file name is damage, not ours.
pub(crate) const MAX_FILE_NUMBER: u64 = u64::MAX / 2;

/// The kind of a file found in a database directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FileType {
    Log,
    DbLock,
    Table,
    Descriptor,
    Current,
    Temp,
    InfoLog,
    ValueFile,
}

fn numbered(dir: &Path, number: u64, suffix: &str) -> PathBuf {
    dir.join(format!("{number:06}.{suffix}"))
}

pub(crate) fn log_file_name(dir: &Path, number: u64) -> PathBuf {
    numbered(dir, number, "log")
}

pub(crate) fn table_file_name(dir: &Path, number: u64) -> PathBuf {
    numbered(dir, number, "ldb")
}

pub(crate) fn sst_table_file_name(dir: &Path, number: u64) -> PathBuf {
    numbered(dir, number, "sst")
}

pub(crate) fn value_file_name(dir: &Path, number: u64) -> PathBuf {
    numbered(dir, number, "vlog")
}

pub(crate) fn temp_file_name(dir: &Path, number: u64) -> PathBuf {
    numbered(dir, number, "dbtmp")
}

pub(crate) fn descriptor_file_name(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("MANIFEST-{number:06}"))
}

pub(crate) fn current_file_name(dir: &Path) -> PathBuf {
    dir.join("CURRENT")
}

pub(crate) fn lock_file_name(dir: &Path) -> PathBuf {
    dir.join("LOCK")
}

pub(crate) fn info_log_file_name(dir: &Path) -> PathBuf {
    dir.join("LOG")
}

pub(crate) fn old_info_log_file_name(dir: &Path) -> PathBuf {
    dir.join("LOG.old")
}

/// Classifies a directory entry's name; `None` for names that are not a database file.
pub(crate) fn parse_file_name(name: &str) -> Option<(u64, FileType)> {
    match name {
        "CURRENT" => return Some((0, FileType::Current)),
        "LOCK" => return Some((0, FileType::DbLock)),
        "LOG" | "LOG.old" => return Some((0, FileType::InfoLog)),
        _ => {}
    }
    if let Some(rest) = name.strip_prefix("MANIFEST-") {
        return Some((parse_number(rest)?, FileType::Descriptor));
    }
    let (number, suffix) = name.split_once('.')?;
    let number = parse_number(number)?;
    let kind = match suffix {
        "log" => FileType::Log,
        "ldb" | "sst" => FileType::Table,
        "dbtmp" => FileType::Temp,
        "vlog" => FileType::ValueFile,
        _ => return None,
    };
    Some((number, kind))
}

/// [`parse_file_name`] for the files a database writes: a number past [`MAX_FILE_NUMBER`] was
/// not written by one, so open, repair and deletion leave the file alone (`None`).
pub(crate) fn parse_own_file_name(name: &str) -> Option<(u64, FileType)> {
    parse_file_name(name).filter(|&(number, _)| number <= MAX_FILE_NUMBER)
}

fn parse_number(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let dir = Path::new("db");
        assert_eq!(log_file_name(dir, 7), Path::new("db/000007.log"));
        assert_eq!(table_file_name(dir, 1234567), Path::new("db/1234567.ldb"));
        assert_eq!(
            descriptor_file_name(dir, 2),
            Path::new("db/MANIFEST-000002")
        );
        for (name, expected) in [
            ("000100.log", (100, FileType::Log)),
            ("000005.ldb", (5, FileType::Table)),
            ("000005.sst", (5, FileType::Table)),
            ("MANIFEST-000009", (9, FileType::Descriptor)),
            ("CURRENT", (0, FileType::Current)),
            ("LOCK", (0, FileType::DbLock)),
            ("LOG.old", (0, FileType::InfoLog)),
            ("000003.dbtmp", (3, FileType::Temp)),
            ("000004.vlog", (4, FileType::ValueFile)),
            ("18446744073709551615.log", (u64::MAX, FileType::Log)),
        ] {
            assert_eq!(parse_file_name(name), Some(expected), "{name}");
        }
        for bad in [
            "",
            "foo",
            "100.",
            ".log",
            "MANIFEST-",
            "MANIFEST-x",
            "12a.log",
            "1.txt",
            "18446744073709551616.log",
            "-1.log",
            "+1.log",
        ] {
            assert_eq!(parse_file_name(bad), None, "{bad}");
        }
    }
}
