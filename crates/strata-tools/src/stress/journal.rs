//! The stress journal: what the database acknowledged, kept beside it in `DB.stress-journal`.
//!
//! A text file of checksummed lines, appended to by the workload threads (one `write` a line,
//! under a mutex; `fdatasync` after a line that records a sync-acknowledged op):
//!
//! ```text
//! strata-stress-journal v1 seed=<u64> keys=<u32> value-size=<u32>[ range-deletes]
//!     [ value-separation=<u32>] crc=<8 hex>                                     first line
//! T <thread> acked=<n> synced=<m> crc=<8 hex>                                    progress
//! ```
//!
//! `crc` is the CRC32C of the line's text before ` crc=`. A progress line says that ops
//! `0..n` of the thread have been acknowledged by the database and ops `0..m` by a `sync` write;
//! the last line of a thread is its current progress. A line is appended only after the
//! database acknowledged what it records, so the journal may lag behind the database (by the
//! one op each thread has in flight) but never lead it.
//!
//! Crash safety: a crash can leave the last line torn (no newline, or bytes that fail their
//! checksum); it is ignored. A bad line followed by a good one is corruption of the journal
//! itself, reported as such. The file is rewritten whole, never in place (temporary file,
//! fsync, rename, fsync of the directory), at every start and whenever it outgrows
//! [`ROTATE_BYTES`].

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::workload::Workload;
use crc_fast::crc32_iscsi as crc32c;
use strata::{Error, Result};

/// First word of the journal; names the format version. Never change: older journals must
/// keep reading (a new format gets a new version word).
const MAGIC: &str = "strata-stress-journal v1";
/// The header's word for a workload with range deletes.
const RANGE_DELETES: &str = "range-deletes";
/// The header's last field for a database with value separation: its minimum value size.
const VALUE_SEPARATION: &str = "value-separation";
/// Size at which the journal is rewritten to one line per thread.
pub(crate) const ROTATE_BYTES: u64 = 16 << 20;

/// How far a thread has been acknowledged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    /// Ops `0..acked` were acknowledged.
    pub(crate) acked: u64,
    /// Ops `0..synced` were acknowledged by (or before) a `sync` write.
    pub(crate) synced: u64,
}

/// A journal as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JournalContents {
    pub(crate) workload: Workload,
    pub(crate) threads: BTreeMap<u32, Progress>,
    /// Bytes of a torn tail that were ignored.
    pub(crate) torn_bytes: u64,
}

/// The journal path of a database directory: beside it, its name with `.stress-journal`
/// appended (`/data/db/` -> `/data/db.stress-journal`).
pub fn journal_path(db: &Path) -> PathBuf {
    // `.` and `..` have no name of their own: name the journal after the real directory.
    let resolved;
    let db = if db.file_name().is_none() {
        resolved = std::fs::canonicalize(db).unwrap_or_else(|_| db.to_owned());
        resolved.as_path()
    } else {
        db
    };
    let mut name = db.file_name().unwrap_or(db.as_os_str()).to_owned();
    name.push(".stress-journal");
    match db.parent() {
        Some(parent) => parent.join(name),
        None => PathBuf::from(name),
    }
}

/// Reads the journal at `path`; `None` if there is none.
pub(crate) fn read_journal(path: &Path) -> Result<Option<JournalContents>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("open {}", path.display()), e)),
    };
    parse_journal(BufReader::new(file))
        .map(Some)
        .map_err(|e| match e {
            Error::Io { source, .. } => Error::Io {
                context: format!("read {}", path.display()),
                source,
            },
            other => other.in_file(path.display()),
        })
}

/// Parses a journal (see the module documentation).
pub(crate) fn parse_journal(mut input: impl BufRead) -> Result<JournalContents> {
    let mut line = Vec::new();
    let mut offset = 0u64;
    let mut workload = None;
    let mut threads = BTreeMap::new();
    // The first bad line, forgiven only if nothing good follows it.
    let mut bad: Option<(u64, String)> = None;
    loop {
        line.clear();
        let read = input
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io("read journal", e))?;
        if read == 0 {
            break;
        }
        let at = offset;
        offset += read as u64;
        let Some(text) = line.strip_suffix(b"\n") else {
            // A last line without its newline: torn by a crash.
            bad.get_or_insert((at, "line without newline".to_owned()));
            break;
        };
        let parsed = std::str::from_utf8(text)
            .map_err(|_| "not UTF-8".to_owned())
            .and_then(checked_body);
        let body = match parsed {
            Ok(body) => body,
            Err(reason) => {
                bad.get_or_insert((at, reason));
                continue;
            }
        };
        if let Some((bad_at, reason)) = &bad {
            return Err(Error::corruption_at(
                *bad_at,
                format!("stress journal line damaged ({reason}) but later lines are intact"),
            ));
        }
        if workload.is_none() {
            workload = Some(parse_header(body).map_err(|r| Error::corruption_at(at, r))?);
            continue;
        }
        let (thread, progress) = parse_progress(body).map_err(|r| Error::corruption_at(at, r))?;
        threads.insert(thread, progress);
    }
    let Some(workload) = workload else {
        let reason = bad.map_or("empty".to_owned(), |(_, r)| r);
        return Err(Error::corruption_at(
            0,
            format!("stress journal has no valid header line: {reason}"),
        ));
    };
    let torn_bytes = bad.map_or(0, |(at, _)| offset - at);
    Ok(JournalContents {
        workload,
        threads,
        torn_bytes,
    })
}

/// The text of a line whose checksum holds.
fn checked_body(text: &str) -> std::result::Result<&str, String> {
    let (body, crc) = text.rsplit_once(" crc=").ok_or("no checksum")?;
    let stored = u32::from_str_radix(crc, 16).map_err(|_| format!("bad checksum {crc:?}"))?;
    if crc.len() != 8 || stored != crc32c(body.as_bytes()) {
        return Err(format!("checksum mismatch on {body:?}"));
    }
    Ok(body)
}

fn parse_header(body: &str) -> std::result::Result<Workload, String> {
    let fields = body
        .strip_prefix(MAGIC)
        .and_then(|rest| rest.strip_prefix(' '))
        .ok_or_else(|| format!("not a stress journal header: {body:?}"))?;
    let mut words = fields.split(' ');
    let mut workload = Workload {
        seed: field(words.next(), "seed")?,
        keys: field(words.next(), "keys")?,
        value_size: field(words.next(), "value-size")?,
        range_deletes: false,
        value_separation: None,
    };
    // Written only by workloads with range deletes and value separation, so older journals
    // read as before.
    let mut next = words.next();
    if next == Some(RANGE_DELETES) {
        workload.range_deletes = true;
        next = words.next();
    }
    if next.is_some_and(|word| word.starts_with(VALUE_SEPARATION)) {
        workload.value_separation = Some(field(next, VALUE_SEPARATION)?);
        next = words.next();
    }
    if next.is_some() {
        return Err(format!("extra fields in header {body:?}"));
    }
    Ok(workload)
}

fn parse_progress(body: &str) -> std::result::Result<(u32, Progress), String> {
    let mut words = body.split(' ');
    if words.next() != Some("T") {
        return Err(format!("not a progress line: {body:?}"));
    }
    let thread = words
        .next()
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| format!("bad thread in {body:?}"))?;
    let progress = Progress {
        acked: field(words.next(), "acked")?,
        synced: field(words.next(), "synced")?,
    };
    if words.next().is_some() {
        return Err(format!("extra fields in {body:?}"));
    }
    Ok((thread, progress))
}

fn field<T: std::str::FromStr>(word: Option<&str>, name: &str) -> std::result::Result<T, String> {
    word.and_then(|w| w.strip_prefix(name))
        .and_then(|w| w.strip_prefix('='))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("bad or missing {name}= field"))
}

fn checked_line(body: &str) -> String {
    format!("{body} crc={:08x}\n", crc32c(body.as_bytes()))
}

fn progress_line(thread: u32, progress: Progress) -> String {
    checked_line(&format!(
        "T {thread} acked={} synced={}",
        progress.acked, progress.synced
    ))
}

/// An open journal taking progress lines from many threads.
///
/// Thread safety: `Sync`; appends are serialized by the mutex, so lines never interleave.
pub(crate) struct Journal {
    path: PathBuf,
    workload: Workload,
    /// Size at which the file is rewritten ([`ROTATE_BYTES`]).
    rotate_bytes: u64,
    inner: Mutex<Inner>,
}

struct Inner {
    /// Shared so a durable append can sync outside the mutex.
    file: Arc<File>,
    bytes: u64,
    /// The latest progress of every thread: what a rewrite keeps.
    threads: BTreeMap<u32, Progress>,
}

impl Journal {
    /// Replaces whatever journal is at `path` with one holding `workload` and `threads`, and
    /// opens it for appending.
    pub(crate) fn create(
        path: &Path,
        workload: Workload,
        threads: BTreeMap<u32, Progress>,
    ) -> Result<Journal> {
        let (file, bytes) = rewrite(path, workload, &threads)?;
        Ok(Journal {
            path: path.to_owned(),
            workload,
            rotate_bytes: ROTATE_BYTES,
            inner: Mutex::new(Inner {
                file: Arc::new(file),
                bytes,
                threads,
            }),
        })
    }

    /// Rewrites at `bytes` instead of [`ROTATE_BYTES`].
    #[cfg(test)]
    pub(crate) fn rotating_at(mut self, bytes: u64) -> Journal {
        self.rotate_bytes = bytes;
        self
    }

    /// Appends `thread`'s new progress; with `durable`, syncs the journal before returning.
    pub(crate) fn record(&self, thread: u32, progress: Progress, durable: bool) -> Result<()> {
        let line = progress_line(thread, progress);
        let file = {
            let mut inner = self.inner.lock();
            (&*inner.file)
                .write_all(line.as_bytes())
                .map_err(|e| Error::io(format!("append to {}", self.path.display()), e))?;
            inner.bytes += line.len() as u64;
            inner.threads.insert(thread, progress);
            if inner.bytes >= self.rotate_bytes {
                // The rewrite syncs the new file; nothing is left to sync afterwards.
                let (file, bytes) = rewrite(&self.path, self.workload, &inner.threads)?;
                inner.file = Arc::new(file);
                inner.bytes = bytes;
                return Ok(());
            }
            durable.then(|| Arc::clone(&inner.file))
        };
        if let Some(file) = file {
            file.sync_data()
                .map_err(|e| Error::io(format!("sync {}", self.path.display()), e))?;
        }
        Ok(())
    }
}

/// Writes a fresh journal to a temporary file, syncs it, renames it over `path` and syncs the
/// directory; returns it open for appending, with its size.
fn rewrite(
    path: &Path,
    workload: Workload,
    threads: &BTreeMap<u32, Progress>,
) -> Result<(File, u64)> {
    let mut text = checked_line(&format!(
        "{MAGIC} seed={} keys={} value-size={}{}{}",
        workload.seed,
        workload.keys,
        workload.value_size,
        if workload.range_deletes {
            format!(" {RANGE_DELETES}")
        } else {
            String::new()
        },
        match workload.value_separation {
            Some(min) => format!(" {VALUE_SEPARATION}={min}"),
            None => String::new(),
        }
    ));
    for (&thread, &progress) in threads {
        text.push_str(&progress_line(thread, progress));
    }
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = PathBuf::from(tmp_name);
    let io = |what: &str, p: &Path| {
        let context = format!("{what} {}", p.display());
        move |e| Error::io(context, e)
    };
    let mut file = File::create(&tmp).map_err(io("create", &tmp))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io("write", &tmp))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(io("rename to", path))?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io("sync directory", dir))?;
    let file = OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(io("open", path))?;
    Ok((file, text.len() as u64))
}
