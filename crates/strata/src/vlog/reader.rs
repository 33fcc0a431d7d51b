//! Reading separated values by pointer (layouts in `vlog/mod.rs`).
//!
//! Thread safety: [`ValueFiles`] is shared by every reader of a database; its map of open files
//! is behind a mutex held only to look a file up or add one, never during a read.
//!
//! A read returns a value only after checking the record against the pointer and the entry:
//! the file exists, the record lies within it, its stored crc equals the pointer's and the
//! crc of its bytes, and its key and value length are the entry's; a compressed value must
//! decompress to exactly the length its pointer gives. Anything else is `Error::Corruption`
//! naming the value file and the record's offset.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{decode_record, Lane, RecordError, ValuePointer};
use crate::env::{read_fully, Env, RandomAccessFile};
use crate::error::{Error, Result};
use crate::filename::value_file_name;

/// Open value files kept at most; past it the map starts over (files reopen on demand).
const MAX_OPEN_FILES: usize = 256;

/// The most address space the file being appended to is mapped with (reads past it use
/// `pread`): twice the size files are cut at, up to this.
const MAX_GROWING_CAPACITY: u64 = 1 << 30;

/// Records larger than this are checked against their file's length before a buffer is
/// allocated for them (a stat per read of a value that size costs nothing to speak of).
const CHECKED_RECORD_SIZE: usize = 1 << 20;

/// The value files of one database directory, opened on demand for reading.
pub(crate) struct ValueFiles {
    env: Arc<dyn Env>,
    dir: PathBuf,
    open: Mutex<HashMap<u64, Arc<dyn RandomAccessFile>>>,
    /// Per lane, the file the database appends to, and the size its files are cut at
    /// ([`ValueFiles::appending`]).
    appending: Mutex<[Option<(u64, u64)>; 2]>,
}

impl ValueFiles {
    pub(crate) fn new(env: Arc<dyn Env>, dir: &Path) -> ValueFiles {
        ValueFiles {
            env,
            dir: dir.to_path_buf(),
            open: Mutex::new(HashMap::new()),
            appending: Mutex::new([None; 2]),
        }
    }

    /// Notes that the database appends `lane`'s values to value file `number` from now on, cut
    /// once it holds `cut_at` bytes. Its values are often read soon after they are written:
    /// the file is opened to grow (`Env::new_growing_random_access_file`, with room for twice
    /// `cut_at`, at most [`MAX_GROWING_CAPACITY`]), so such reads need neither a new mapping
    /// nor an open of their own. The file the lane appended to before is let go, and its next
    /// read maps it whole.
    pub(crate) fn appending(&self, lane: Lane, number: u64, cut_at: u64) {
        let before = self.appending.lock()[lane as usize].replace((number, cut_at));
        if let Some((before, _)) = before.filter(|(before, _)| *before != number) {
            self.forget(before);
        }
    }

    /// The value the entry of `user_key` whose stored value is `pointer` (type 4) points to.
    pub(crate) fn read(&self, user_key: &[u8], pointer: &[u8]) -> Result<Vec<u8>> {
        let (pointer, stored) = self.read_stored(user_key, pointer)?;
        pointer.value_of(stored).map_err(|reason| {
            Error::corruption_at(pointer.offset, reason)
                .in_file(value_file_name(&self.dir, pointer.file).display())
        })
    }

    /// The pointer the entry of `user_key` holds (`pointer`, type 4) and the value bytes its
    /// record stores (compressed when the pointer says so), checked as [`ValueFiles::read`]
    /// checks them: what relocation copies, as it is.
    pub(crate) fn read_stored(
        &self,
        user_key: &[u8],
        pointer: &[u8],
    ) -> Result<(ValuePointer, Vec<u8>)> {
        let Some(pointer) = ValuePointer::decode(pointer) else {
            return Err(ValuePointer::malformed(user_key, pointer));
        };
        let path = value_file_name(&self.dir, pointer.file);
        let at =
            |reason: String| Error::corruption_at(pointer.offset, reason).in_file(path.display());
        let size = usize::try_from(pointer.record_size(user_key.len()))
            .map_err(|_| at("value record larger than memory".into()))?;
        // A damaged pointer may claim any length: a large record is checked against the file
        // before its buffer is allocated.
        if size > CHECKED_RECORD_SIZE {
            let file_len = self.file_len(&path)?;
            if pointer.offset.saturating_add(size as u64) > file_len {
                return Err(at(format!(
                    "value record of {size} bytes runs past the end of the value file \
                     ({file_len} bytes)"
                )));
            }
        }
        let mut bytes = vec![0u8; size];
        let mut read = self.read_at(&path, pointer.file, pointer.offset, &mut bytes, false)?;
        if read < size {
            // The file may have grown since it was opened (a mapping keeps its length).
            read = self.read_at(&path, pointer.file, pointer.offset, &mut bytes, true)?;
        }
        let (record, end) = decode_record(&bytes[..read]).map_err(|e| match e {
            RecordError::Truncated => at(format!(
                "value record of {size} bytes runs past the end of the value file"
            )),
            RecordError::Checksum => at("value record checksum mismatch".into()),
        })?;
        if let Some(reason) = pointer.mismatch(user_key, &record) {
            return Err(at(reason));
        }
        // The value ends the record: it is handed out in the buffer it was read into, not
        // copied into a second one.
        let start = end - record.value.len();
        bytes.truncate(end);
        bytes.drain(..start);
        Ok((pointer, bytes))
    }

    /// The length of the value file at `path`; a missing file is corruption.
    fn file_len(&self, path: &Path) -> Result<u64> {
        self.env.file_size(path).map_err(|e| {
            if self.env.file_exists(path) {
                e
            } else {
                Error::corruption("value file is missing").in_file(path.display())
            }
        })
    }

    /// Reads into `buf` at `offset` of value file `number`, reopening it first when `reopen`;
    /// returns the bytes read (short at the end of the file). A missing file is corruption.
    fn read_at(
        &self,
        path: &Path,
        number: u64,
        offset: u64,
        buf: &mut [u8],
        reopen: bool,
    ) -> Result<usize> {
        let cached = if reopen {
            None
        } else {
            self.open.lock().get(&number).cloned()
        };
        let file = match cached {
            Some(file) => file,
            None => {
                let appending = *self.appending.lock();
                let growing = appending
                    .into_iter()
                    .flatten()
                    .find(|&(growing, _)| growing == number);
                let file = match growing {
                    Some((_, cut_at)) => self.env.new_growing_random_access_file(
                        path,
                        cut_at.saturating_mul(2).min(MAX_GROWING_CAPACITY),
                    ),
                    None => self.env.new_random_access_file(path),
                };
                let file = file.map_err(|e| {
                    if self.env.file_exists(path) {
                        e
                    } else {
                        Error::corruption_at(offset, "value file is missing")
                            .in_file(path.display())
                    }
                })?;
                self.keep(number, growing, &file);
                file
            }
        };
        read_fully(&*file, offset, buf)
    }

    /// Caches `file`, value file `number` just opened (to grow when `growing` is what
    /// [`ValueFiles::appending`] named then). A file opened to grow is kept only while it is
    /// still one appended to: `appending` names the lane's next file before it lets this one go,
    /// so checking it under the cache's lock leaves nothing to miss (`appending` is taken
    /// inside `open`, never the other way round).
    fn keep(&self, number: u64, growing: Option<(u64, u64)>, file: &Arc<dyn RandomAccessFile>) {
        let mut open = self.open.lock();
        if growing.is_none() || self.appending.lock().contains(&growing) {
            if open.len() >= MAX_OPEN_FILES {
                open.clear();
            }
            open.insert(number, Arc::clone(file));
        }
    }

    /// Closes value file `number` if it is open (it is being deleted).
    pub(crate) fn forget(&self, number: u64) {
        self.open.lock().remove(&number);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::MemEnv;
    use crate::vlog::encode_record;

    #[test]
    fn a_pointer_claiming_more_than_its_file_holds_is_refused_before_its_buffer_is_allocated() {
        let env: Arc<dyn Env> = Arc::new(MemEnv::new());
        env.create_dir(Path::new("/db")).unwrap();
        let mut record = Vec::new();
        let crc = encode_record(&mut record, b"k", b"value");
        let path = value_file_name(Path::new("/db"), 7);
        crate::env::write_file(&*env, &path, &record, false).unwrap();
        let files = ValueFiles::new(env, Path::new("/db"));
        let honest = ValuePointer {
            file: 7,
            offset: 0,
            length: 5,
            crc,
            stored: None,
        };
        assert_eq!(files.read(b"k", &honest.encode()).unwrap(), b"value");
        // A damaged length: 4 GiB claimed of a 12-byte file, refused by the check against the
        // file's length (which alone knows that length), not after reading.
        let damaged = ValuePointer {
            length: u32::MAX,
            ..honest
        };
        let err = files.read(b"k", &damaged.encode()).unwrap_err().to_string();
        assert!(
            err.contains("runs past the end of the value file (12 bytes)"),
            "{err}"
        );
        assert!(err.contains("000007.vlog"), "{err}");
    }

    /// A value file holding `records` (key, stored value) as file 3, and its reader.
    fn files_with(records: &[(&[u8], &[u8])]) -> (ValueFiles, Vec<(u64, u32)>) {
        let env: Arc<dyn Env> = Arc::new(MemEnv::new());
        env.create_dir(Path::new("/db")).unwrap();
        let mut bytes = Vec::new();
        let mut at = Vec::new();
        for (key, value) in records {
            let offset = bytes.len() as u64;
            at.push((offset, encode_record(&mut bytes, key, value)));
        }
        let path = value_file_name(Path::new("/db"), 3);
        crate::env::write_file(&*env, &path, &bytes, false).unwrap();
        (ValueFiles::new(env, Path::new("/db")), at)
    }

    #[test]
    fn a_compressed_value_is_decompressed_and_checked_against_its_length() {
        let value = b"abcabcabcabcabcabcabcabcabcabcabcabc".repeat(10);
        let compressed = snap::raw::Encoder::new().compress_vec(&value).unwrap();
        let not_snappy = [0xffu8; 8];
        let (files, at) = files_with(&[(b"k", &compressed), (b"k", &not_snappy)]);
        let pointer = ValuePointer {
            file: 3,
            offset: at[0].0,
            length: value.len() as u32,
            crc: at[0].1,
            stored: Some(compressed.len() as u32),
        };
        assert_eq!(files.read(b"k", &pointer.encode()).unwrap(), value);
        // Relocation copies the stored bytes as they are.
        let (read, stored) = files.read_stored(b"k", &pointer.encode()).unwrap();
        assert_eq!((read, stored), (pointer, compressed.clone()));
        // The pointer's length is what the value must decompress to.
        let shorter = ValuePointer {
            length: value.len() as u32 - 1,
            ..pointer
        };
        let err = files.read(b"k", &shorter.encode()).unwrap_err();
        assert!(err.is_corruption(), "{err}");
        assert!(
            err.to_string()
                .contains("decompresses to 360 bytes, its pointer says 359"),
            "{err}"
        );
        // Intact record bytes that are not Snappy: corruption naming the file and offset.
        let garbage = ValuePointer {
            offset: at[1].0,
            length: 9,
            crc: at[1].1,
            stored: Some(8),
            ..pointer
        };
        let err = files.read(b"k", &garbage.encode()).unwrap_err();
        assert!(err.is_corruption(), "{err}");
        assert!(err.to_string().contains("000003.vlog"), "{err}");
        assert!(err.to_string().contains("Snappy"), "{err}");
    }

    #[test]
    fn a_compressed_value_claiming_more_than_its_bytes_can_hold_is_refused_before_allocating() {
        // An intact 7-byte record whose Snappy header, like its pointer, claims 4 GiB: refused
        // by the bound on Snappy's expansion, before a buffer of that size is allocated (which
        // aborted the process under a memory limit).
        let mut stream = Vec::new();
        crate::util::coding::put_varint32(&mut stream, u32::MAX);
        stream.extend_from_slice(&[0x00, b'x']); // a one-byte literal
        let (files, at) = files_with(&[(b"k", &stream)]);
        let pointer = ValuePointer {
            file: 3,
            offset: at[0].0,
            length: u32::MAX,
            crc: at[0].1,
            stored: Some(stream.len() as u32),
        };
        let err = files.read(b"k", &pointer.encode()).unwrap_err();
        assert!(err.is_corruption(), "{err}");
        assert!(err.to_string().contains("more than"), "{err}");
        // A "compressed" value no shorter than its length is not one the writer stores.
        let (files, at) = files_with(&[(b"k", b"value")]);
        let not_smaller = ValuePointer {
            offset: at[0].0,
            length: 5,
            crc: at[0].1,
            stored: Some(5),
            ..pointer
        };
        let err = files.read(b"k", &not_smaller.encode()).unwrap_err();
        assert!(err.is_corruption(), "{err}");
    }

    #[cfg(target_os = "linux")] // elsewhere `PosixEnv` maps the file at its length
    #[test]
    fn the_file_being_appended_to_is_read_through_one_growing_map_until_the_next_starts() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let env: Arc<dyn Env> = Arc::new(crate::env::PosixEnv::new());
        let files = ValueFiles::new(env, dir.path());
        let path = value_file_name(dir.path(), 5);
        let mut file = std::fs::File::create(&path).unwrap();
        let mut append = |value: &[u8], len: &mut u64| {
            let mut record = Vec::new();
            let crc = encode_record(&mut record, b"k", value);
            file.write_all(&record).unwrap();
            let pointer = ValuePointer {
                file: 5,
                offset: *len,
                length: value.len() as u32,
                crc,
                stored: None,
            };
            *len += record.len() as u64;
            pointer.encode()
        };
        let cached = |files: &ValueFiles| files.open.lock().get(&5).cloned().unwrap();
        let mut len = 0;
        files.appending(Lane::Writes, 5, 1 << 20);
        let first = append(&[1; 5000], &mut len);
        assert_eq!(files.read(b"k", &first).unwrap(), [1; 5000]);
        let growing = cached(&files);
        assert!(
            growing.mapped().is_none(),
            "opened to grow, not mapped at its length"
        );
        // Records appended later are read through the same reader.
        for i in 2..20u8 {
            let pointer = append(&[i; 5000], &mut len);
            assert_eq!(files.read(b"k", &pointer).unwrap(), [i; 5000]);
            assert!(Arc::ptr_eq(&cached(&files), &growing), "{i}");
        }
        // Once the database appends to another file, this one is mapped whole at its next read.
        files.appending(Lane::Writes, 6, 1 << 20);
        assert!(files.open.lock().get(&5).is_none());
        assert_eq!(files.read(b"k", &first).unwrap(), [1; 5000]);
        assert_eq!(cached(&files).mapped().map(<[u8]>::len), Some(len as usize));
    }

    /// The writes' file and the relocations' file are appended to at the same time: each is
    /// read through a growing map of its own, and a lane moving on lets go of its own file only.
    #[cfg(target_os = "linux")] // elsewhere `PosixEnv` maps the file at its length
    #[test]
    fn each_lane_reads_its_own_file_through_a_growing_map() {
        let dir = tempfile::tempdir().unwrap();
        let env: Arc<dyn Env> = Arc::new(crate::env::PosixEnv::new());
        let files = ValueFiles::new(env, dir.path());
        let write = |number: u64| {
            let mut record = Vec::new();
            let crc = encode_record(&mut record, b"k", &[number as u8; 5000]);
            std::fs::write(value_file_name(dir.path(), number), &record).unwrap();
            let pointer = ValuePointer {
                file: number,
                offset: 0,
                length: 5000,
                crc,
                stored: None,
            };
            pointer.encode()
        };
        let cached = |number: u64| files.open.lock().get(&number).cloned();
        let (five, six) = (write(5), write(6));
        files.appending(Lane::Writes, 5, 1 << 20);
        files.appending(Lane::Relocations, 6, 1 << 20);
        assert_eq!(files.read(b"k", &five).unwrap(), [5; 5000]);
        assert_eq!(files.read(b"k", &six).unwrap(), [6; 5000]);
        let growing = cached(5).unwrap();
        for number in [5, 6] {
            assert!(cached(number).unwrap().mapped().is_none(), "{number}");
        }
        // The relocations move on to file 7: file 6 is let go, the writes' file 5 stays.
        files.appending(Lane::Relocations, 7, 1 << 20);
        assert!(cached(6).is_none());
        assert!(Arc::ptr_eq(&cached(5).unwrap(), &growing));
        assert_eq!(files.read(b"k", &six).unwrap(), [6; 5000]);
        assert!(cached(6).unwrap().mapped().is_some(), "mapped whole now");
    }

    /// A read that saw file 3 as the one appended to and opened it to grow, while the
    /// database moved on to file 4 (which let file 3 go), must not cache what it opened: it
    /// would hold a mapping of twice the cut size, two permits and a descriptor for as long as
    /// file 3 lives (found by review). The read's last step, replayed after the switch.
    #[test]
    fn a_read_racing_the_switch_to_the_next_file_leaves_nothing_cached() {
        let (files, at) = files_with(&[(b"k", b"value")]);
        let path = value_file_name(Path::new("/db"), 3);
        let opened = files
            .env
            .new_growing_random_access_file(&path, 2 << 20)
            .unwrap();
        let kept = |files: &ValueFiles| files.open.lock().get(&3).cloned();
        // While file 3 is the one appended to, what a read opened to grow is kept.
        files.appending(Lane::Writes, 3, 1 << 20);
        files.keep(3, Some((3, 1 << 20)), &opened);
        assert!(kept(&files).is_some_and(|kept| Arc::ptr_eq(&kept, &opened)));
        // The database moves on to file 4: file 3 is let go, and so is what a read opened
        // to grow before the switch and caches after it.
        files.appending(Lane::Writes, 4, 1 << 20);
        assert!(kept(&files).is_none());
        files.keep(3, Some((3, 1 << 20)), &opened);
        assert!(kept(&files).is_none(), "file 3 kept though let go");
        // A read now opens it as any other file, and keeps that.
        let pointer = ValuePointer {
            file: 3,
            offset: at[0].0,
            length: 5,
            crc: at[0].1,
            stored: None,
        };
        assert_eq!(files.read(b"k", &pointer.encode()).unwrap(), b"value");
        assert!(kept(&files).is_some_and(|kept| !Arc::ptr_eq(&kept, &opened)));
    }

    #[test]
    fn a_pointer_offset_near_the_largest_is_corruption_not_an_overflow() {
        for length in [5, 2 << 20] {
            let (files, at) = files_with(&[(b"k", b"value")]);
            let pointer = ValuePointer {
                file: 3,
                offset: u64::MAX - 10,
                length,
                crc: at[0].1,
                stored: None,
            };
            let err = files.read(b"k", &pointer.encode()).unwrap_err();
            assert!(err.is_corruption(), "{length}: {err}");
        }
    }
}
