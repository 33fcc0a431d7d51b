//! The behaviour every [`Env`] must show, as one suite run against each implementation (and,
//! later, against wrappers such as fault injection in its pass-through mode).
//!
//! [`run_all`] takes a root directory that may not exist yet and works only below it.

use std::io;
use std::path::{Path, PathBuf};

use super::{read_file_to_vec, write_file, Env};
use crate::error::Error;

/// One check of the suite: the env and a fresh, existing directory to work in.
type Check = fn(&dyn Env, &Path);

/// Runs every check of the suite on `env` below `root`.
pub(crate) fn run_all(env: &dyn Env, root: &Path) {
    env.create_dir(root).unwrap();
    let checks: [(&str, Check); 18] = [
        ("write_append_read_back", write_append_read_back),
        ("sequential_skip", sequential_skip),
        ("random_reads", random_reads),
        ("truncate_versus_append", truncate_versus_append),
        ("rename_replaces_target", rename_replaces_target),
        ("rename_moves_a_directory", rename_moves_a_directory),
        (
            "link_shares_a_file_or_is_refused",
            link_shares_a_file_or_is_refused,
        ),
        ("children_lists_names", children_lists_names),
        ("remove_file", remove_file),
        ("file_size", file_size),
        ("create_and_remove_dir", create_and_remove_dir),
        ("missing_files_are_not_found", missing_files_are_not_found),
        ("lock_excludes_second_holder", lock_excludes_second_holder),
        ("reader_sees_flushed_appends", reader_sees_flushed_appends),
        (
            "growing_reader_follows_appends",
            growing_reader_follows_appends,
        ),
        ("writer_fails_after_close", writer_fails_after_close),
        ("sync_and_sync_dir", sync_and_sync_dir),
        (
            "writeback_flushes_and_keeps_the_file",
            writeback_flushes_and_keeps_the_file,
        ),
    ];
    for (name, check) in checks {
        let dir = root.join(name);
        env.create_dir(&dir).unwrap();
        check(env, &dir);
    }
}

fn assert_not_found(result: Result<impl Sized, Error>, path: &Path) {
    match result {
        Err(Error::Io { context, source }) => {
            assert_eq!(
                source.kind(),
                io::ErrorKind::NotFound,
                "{context}: {source}"
            );
            let name = path.file_name().unwrap().to_string_lossy();
            assert!(
                context.contains(&*name),
                "context {context:?} names no {name}"
            );
        }
        Err(other) => panic!("expected Io/NotFound for {}, got {other}", path.display()),
        Ok(_) => panic!("expected Io/NotFound for {}, got Ok", path.display()),
    }
}

fn write_append_read_back(env: &dyn Env, dir: &Path) {
    let path = dir.join("f");
    let mut file = env.new_writable_file(&path).unwrap();
    file.append(b"hello").unwrap();
    file.append(b"").unwrap();
    file.append(b", world").unwrap();
    file.close().unwrap();
    assert_eq!(read_file_to_vec(env, &path).unwrap(), b"hello, world");

    // Sequential reads in small pieces, then 0 at end of file.
    let mut reader = env.new_sequential_file(&path).unwrap();
    let mut buf = [0u8; 5];
    let mut got = Vec::new();
    loop {
        let n = reader.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        assert!(
            n == buf.len() || got.len() + n == 12,
            "short read before end of file"
        );
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got, b"hello, world");
    assert_eq!(reader.read(&mut buf).unwrap(), 0);

    // A large file crossing any write buffer survives intact.
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    write_file(env, &dir.join("big"), &big, true).unwrap();
    assert_eq!(read_file_to_vec(env, &dir.join("big")).unwrap(), big);
}

fn sequential_skip(env: &dyn Env, dir: &Path) {
    let path = dir.join("f");
    write_file(env, &path, b"0123456789", false).unwrap();
    let mut reader = env.new_sequential_file(&path).unwrap();
    reader.skip(3).unwrap();
    let mut buf = [0u8; 2];
    assert_eq!(reader.read(&mut buf).unwrap(), 2);
    assert_eq!(&buf, b"34");
    reader.skip(0).unwrap();
    assert_eq!(reader.read(&mut buf).unwrap(), 2);
    assert_eq!(&buf, b"56");
    reader.skip(1000).unwrap();
    assert_eq!(reader.read(&mut buf).unwrap(), 0);
    reader.skip(u64::MAX).unwrap();
    assert_eq!(reader.read(&mut buf).unwrap(), 0);
}

fn random_reads(env: &dyn Env, dir: &Path) {
    let path = dir.join("f");
    write_file(env, &path, b"0123456789", false).unwrap();
    let file = env.new_random_access_file(&path).unwrap();
    let mut buf = [0u8; 4];
    assert_eq!(file.read_at(3, &mut buf).unwrap(), 4);
    assert_eq!(&buf, b"3456");
    assert_eq!(file.read_at(0, &mut buf).unwrap(), 4);
    assert_eq!(&buf, b"0123");
    // Short read at the end of the file.
    let mut buf = [0u8; 4];
    assert_eq!(file.read_at(8, &mut buf).unwrap(), 2);
    assert_eq!(&buf[..2], b"89");
    assert_eq!(file.read_at(10, &mut buf).unwrap(), 0);
    assert_eq!(file.read_at(1 << 40, &mut buf).unwrap(), 0);
    assert_eq!(file.read_at(0, &mut []).unwrap(), 0);

    // Many threads read one file at once.
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let file = &file;
            s.spawn(move || {
                for i in 0..200u64 {
                    let at = (t + i) % 10;
                    let mut one = [0u8; 1];
                    assert_eq!(file.read_at(at, &mut one).unwrap(), 1);
                    assert_eq!(one[0], b'0' + at as u8);
                }
            });
        }
    });
}

fn truncate_versus_append(env: &dyn Env, dir: &Path) {
    let path = dir.join("f");
    write_file(env, &path, b"first", false).unwrap();
    let mut file = env.new_appendable_file(&path).unwrap();
    file.append(b"+more").unwrap();
    file.close().unwrap();
    assert_eq!(read_file_to_vec(env, &path).unwrap(), b"first+more");

    let mut file = env.new_writable_file(&path).unwrap();
    file.append(b"new").unwrap();
    file.close().unwrap();
    assert_eq!(read_file_to_vec(env, &path).unwrap(), b"new");

    // Appendable creates a missing file.
    let fresh = dir.join("fresh");
    let mut file = env.new_appendable_file(&fresh).unwrap();
    file.append(b"x").unwrap();
    file.close().unwrap();
    assert_eq!(read_file_to_vec(env, &fresh).unwrap(), b"x");
}

fn rename_replaces_target(env: &dyn Env, dir: &Path) {
    let (from, to) = (dir.join("from"), dir.join("to"));
    write_file(env, &from, b"new contents", false).unwrap();
    write_file(env, &to, b"old", false).unwrap();
    env.rename(&from, &to).unwrap();
    assert!(!env.file_exists(&from));
    assert_eq!(read_file_to_vec(env, &to).unwrap(), b"new contents");
    // Rename to a fresh name.
    let third = dir.join("third");
    env.rename(&to, &third).unwrap();
    assert_eq!(read_file_to_vec(env, &third).unwrap(), b"new contents");
    assert_not_found(env.rename(&dir.join("missing"), &to), &dir.join("missing"));
}

fn rename_moves_a_directory(env: &dyn Env, dir: &Path) {
    let (from, to) = (dir.join("from"), dir.join("to"));
    env.create_dir(&from.join("sub")).unwrap();
    write_file(env, &from.join("f"), b"top", false).unwrap();
    write_file(env, &from.join("sub").join("g"), b"below", false).unwrap();
    env.rename(&from, &to).unwrap();
    assert!(!env.file_exists(&from));
    assert!(!env.file_exists(&from.join("f")));
    assert_eq!(read_file_to_vec(env, &to.join("f")).unwrap(), b"top");
    assert_eq!(
        read_file_to_vec(env, &to.join("sub").join("g")).unwrap(),
        b"below"
    );
    let mut names = env.children(&to).unwrap();
    names.sort();
    assert_eq!(names, ["f", "sub"]);
    // The new name is a directory like any other.
    write_file(env, &to.join("h"), b"", false).unwrap();
    assert!(env.file_exists(&to.join("h")));
}

fn link_shares_a_file_or_is_refused(env: &dyn Env, dir: &Path) {
    let (from, to) = (dir.join("from"), dir.join("to"));
    write_file(env, &from, b"shared", false).unwrap();
    match env.link_file(&from, &to) {
        Ok(()) => {
            env.remove_file(&from).unwrap();
            assert_eq!(read_file_to_vec(env, &to).unwrap(), b"shared");
            // A link never replaces an existing name.
            write_file(env, &from, b"other", false).unwrap();
            assert!(env.link_file(&from, &to).is_err());
            assert_eq!(read_file_to_vec(env, &to).unwrap(), b"shared");
            assert_not_found(
                env.link_file(&dir.join("missing"), &dir.join("x")),
                &dir.join("missing"),
            );
        }
        Err(Error::NotSupported(_)) => assert!(!env.file_exists(&to)),
        Err(other) => panic!("link failed: {other}"),
    }
}

fn children_lists_names(env: &dyn Env, dir: &Path) {
    assert!(env.children(dir).unwrap().is_empty());
    for name in ["CURRENT", "000001.log", "MANIFEST-000002"] {
        write_file(env, &dir.join(name), b"", false).unwrap();
    }
    env.create_dir(&dir.join("sub")).unwrap();
    write_file(env, &dir.join("sub").join("nested"), b"", false).unwrap();
    let mut names = env.children(dir).unwrap();
    names.sort();
    assert_eq!(names, ["000001.log", "CURRENT", "MANIFEST-000002", "sub"]);
    assert_eq!(env.children(&dir.join("sub")).unwrap(), ["nested"]);
}

fn remove_file(env: &dyn Env, dir: &Path) {
    let path = dir.join("f");
    write_file(env, &path, b"x", false).unwrap();
    assert!(env.file_exists(&path));
    env.remove_file(&path).unwrap();
    assert!(!env.file_exists(&path));
    assert_not_found(env.remove_file(&path), &path);
    assert!(env.children(dir).unwrap().is_empty());
}

fn file_size(env: &dyn Env, dir: &Path) {
    let path = dir.join("f");
    write_file(env, &path, b"", false).unwrap();
    assert_eq!(env.file_size(&path).unwrap(), 0);
    write_file(env, &path, &[7u8; 12345], false).unwrap();
    assert_eq!(env.file_size(&path).unwrap(), 12345);
    let mut file = env.new_appendable_file(&path).unwrap();
    file.append(b"abc").unwrap();
    file.flush().unwrap();
    assert_eq!(env.file_size(&path).unwrap(), 12348);
}

fn create_and_remove_dir(env: &dyn Env, dir: &Path) {
    let sub = dir.join("sub");
    assert!(!env.file_exists(&sub));
    env.create_dir(&sub).unwrap();
    env.create_dir(&sub).unwrap();
    assert!(env.file_exists(&sub));
    // Missing parents are created too.
    let deep = dir.join("a").join("b").join("c");
    env.create_dir(&deep).unwrap();
    assert!(env.file_exists(&deep));
    // A file is no directory.
    write_file(env, &dir.join("file"), b"", false).unwrap();
    assert!(env.create_dir(&dir.join("file")).is_err());

    env.remove_dir(&sub).unwrap();
    assert!(!env.file_exists(&sub));
    assert_not_found(env.remove_dir(&sub), &sub);
    // Not empty.
    assert!(env.remove_dir(&dir.join("a")).is_err());
    assert!(env.file_exists(&deep));
}

fn missing_files_are_not_found(env: &dyn Env, dir: &Path) {
    let missing = dir.join("000042.ldb");
    assert!(!env.file_exists(&missing));
    assert_not_found(env.new_sequential_file(&missing), &missing);
    assert_not_found(env.new_random_access_file(&missing), &missing);
    assert_not_found(env.file_size(&missing), &missing);
    assert_not_found(env.remove_file(&missing), &missing);
    let missing_dir = dir.join("nodir");
    assert_not_found(env.children(&missing_dir), &missing_dir);
    assert_not_found(env.new_writable_file(&missing_dir.join("f")), &missing_dir);
}

fn lock_excludes_second_holder(env: &dyn Env, dir: &Path) {
    let path = dir.join("LOCK");
    let lock = env.lock_file(&path).unwrap();
    assert_eq!(lock.path(), path);
    assert!(env.file_exists(&path));
    match env.lock_file(&path) {
        Err(err @ Error::Io { .. }) => {
            let message = err.to_string();
            assert!(message.contains(&path.display().to_string()), "{message}");
        }
        Err(other) => panic!("expected an Io error, got {other}"),
        Ok(_) => panic!("second lock of {} succeeded", path.display()),
    }
    // Another file is independent.
    let other = env.lock_file(&dir.join("LOCK2")).unwrap();
    env.unlock_file(lock).unwrap();
    let again = env.lock_file(&path).unwrap();
    env.unlock_file(again).unwrap();
    env.unlock_file(other).unwrap();
}

fn reader_sees_flushed_appends(env: &dyn Env, dir: &Path) {
    let path = dir.join("log");
    let mut writer = env.new_writable_file(&path).unwrap();
    let (to_reader, from_writer) = std::sync::mpsc::channel::<usize>();
    let (to_writer, from_reader) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut written = 0;
            for i in 0..50usize {
                let record = vec![i as u8; i + 1];
                writer.append(&record).unwrap();
                writer.flush().unwrap();
                written += record.len();
                to_reader.send(written).unwrap();
                from_reader.recv().unwrap();
            }
            writer.close().unwrap();
        });
        // One reader opened before any byte was written follows the file as it grows.
        let mut seq = env.new_sequential_file(&path).unwrap();
        let random = env.new_random_access_file(&path).unwrap();
        let mut seen = Vec::new();
        for i in 0..50usize {
            let written = from_writer.recv().unwrap();
            let mut buf = vec![0u8; i + 1];
            assert_eq!(seq.read(&mut buf).unwrap(), i + 1);
            assert!(buf.iter().all(|&b| b == i as u8));
            seen.extend_from_slice(&buf);
            assert_eq!(seen.len(), written);
            let mut all = vec![0u8; written + 10];
            assert_eq!(random.read_at(0, &mut all).unwrap(), written);
            assert_eq!(&all[..written], &seen[..]);
            assert_eq!(env.file_size(&path).unwrap(), written as u64);
            to_writer.send(()).unwrap();
        }
    });
}

/// A reader opened to grow (`Env::new_growing_random_access_file`) reads every byte flushed
/// after it was opened, within its capacity and past it, and a read past the file's end is
/// short (a mapping past the end of the file must never be touched there: `SIGBUS`).
fn growing_reader_follows_appends(env: &dyn Env, dir: &Path) {
    let path = dir.join("values");
    let mut writer = env.new_writable_file(&path).unwrap();
    writer.append(&[0xee; 10]).unwrap();
    writer.flush().unwrap();
    // Room for four pages and a bit: the records below cross pages and run past it.
    let capacity = 4 * 4096 + 100;
    let reader = env.new_growing_random_access_file(&path, capacity).unwrap();
    let mut written = vec![0xee; 10];
    for i in 0..12u8 {
        let record = vec![i; 3000];
        writer.append(&record).unwrap();
        writer.flush().unwrap();
        let offset = written.len();
        written.extend_from_slice(&record);
        let mut buf = vec![0u8; 3000];
        assert_eq!(
            reader.read_at(offset as u64, &mut buf).unwrap(),
            3000,
            "{i}"
        );
        assert_eq!(buf, record, "{i}");
        // Past the end, in the next page and beyond the capacity: short, never a fault.
        let mut over = vec![0u8; 5000];
        let got = reader.read_at(offset as u64, &mut over).unwrap();
        assert_eq!(got, 3000, "{i}");
        assert_eq!(&over[..got], &record[..], "{i}");
        let past_end = [written.len(), written.len() + 4096, capacity as usize];
        for at in past_end.into_iter().filter(|&at| at >= written.len()) {
            assert_eq!(
                reader.read_at(at as u64, &mut [0u8; 8]).unwrap(),
                0,
                "{i} at {at}"
            );
        }
    }
    let mut all = vec![0u8; written.len()];
    assert_eq!(reader.read_at(0, &mut all).unwrap(), written.len());
    assert_eq!(all, written);
    // An offset whose end overflows is an error or an empty read, never a panic.
    let _ = reader.read_at(u64::MAX - 2, &mut [0u8; 8]);
    writer.close().unwrap();
}

fn writer_fails_after_close(env: &dyn Env, dir: &Path) {
    let path = dir.join("f");
    let mut file = env.new_writable_file(&path).unwrap();
    file.append(b"x").unwrap();
    file.close().unwrap();
    assert!(file.append(b"y").is_err());
    assert!(file.flush().is_err());
    assert!(file.sync().is_err());
    assert!(file.start_writeback().is_err());
    assert!(file.close().is_err());
    assert_eq!(read_file_to_vec(env, &path).unwrap(), b"x");

    // Dropped without close: what was appended is kept.
    let dropped = dir.join("dropped");
    let mut file = env.new_writable_file(&dropped).unwrap();
    file.append(b"kept").unwrap();
    drop(file);
    assert_eq!(read_file_to_vec(env, &dropped).unwrap(), b"kept");
}

fn sync_and_sync_dir(env: &dyn Env, dir: &Path) {
    let path = dir.join("f");
    let mut file = env.new_writable_file(&path).unwrap();
    file.append(b"durable").unwrap();
    file.sync().unwrap();
    file.append(b"!").unwrap();
    file.sync().unwrap();
    file.close().unwrap();
    env.sync_dir(dir).unwrap();
    assert_eq!(read_file_to_vec(env, &path).unwrap(), b"durable!");
    let missing: PathBuf = dir.join("nodir");
    assert_not_found(env.sync_dir(&missing), &missing);
    assert!(env.now_micros() > 0);
}

/// Starting writeback hands what was appended to the operating system (a reader sees it) and
/// leaves the file as it was: appending, syncing and reading go on as before. Whether the
/// kernel was asked to write anything out cannot be seen from here: the request is a hint
/// (`PosixWritableFile::start_writeback`), and this check would pass without it.
fn writeback_flushes_and_keeps_the_file(env: &dyn Env, dir: &Path) {
    let path = dir.join("f");
    let mut file = env.new_writable_file(&path).unwrap();
    let first = vec![1u8; 300 << 10];
    file.append(&first).unwrap();
    file.start_writeback().unwrap();
    assert_eq!(env.file_size(&path).unwrap(), first.len() as u64);
    file.append(b"tail").unwrap();
    file.start_writeback().unwrap();
    file.sync().unwrap();
    file.close().unwrap();
    let mut expected = first;
    expected.extend_from_slice(b"tail");
    assert_eq!(read_file_to_vec(env, &path).unwrap(), expected);
}
