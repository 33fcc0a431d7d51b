use std::io;
use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::env::{read_file_to_vec, write_file, MemEnv};

/// A `FaultEnv` over a fresh `MemEnv` with directory `/db` made.
fn setup() -> (FaultEnv, MemEnv) {
    let mem = MemEnv::new();
    let env = FaultEnv::new(Arc::new(mem.clone()));
    env.create_dir(Path::new("/db")).unwrap();
    (env, mem)
}

fn read(env: &dyn Env, path: &str) -> Vec<u8> {
    read_file_to_vec(env, Path::new(path)).unwrap()
}

fn sorted_children(env: &dyn Env, dir: &str) -> Vec<String> {
    let mut names = env.children(Path::new(dir)).unwrap();
    names.sort();
    names
}

/// Writes `synced`, syncs, appends `unsynced`, closes (no sync); then syncs the directory.
fn half_synced_file(env: &FaultEnv, path: &str, synced: &[u8], unsynced: &[u8]) {
    let mut file = env.new_writable_file(Path::new(path)).unwrap();
    file.append(synced).unwrap();
    file.sync().unwrap();
    file.append(unsynced).unwrap();
    file.close().unwrap();
    env.sync_dir(Path::new("/db")).unwrap();
}

fn assert_injected(result: Result<impl Sized>, errno: i32) {
    match result {
        Err(Error::Io { context, source }) => {
            assert_eq!(source.raw_os_error(), Some(errno), "{context}: {source}");
            assert!(context.contains("injected"), "{context}");
        }
        Err(other) => panic!("expected an injected Io error, got {other}"),
        Ok(_) => panic!("expected an injected Io error, got Ok"),
    }
}

#[test]
fn conformance_without_faults() {
    let env = FaultEnv::new(Arc::new(MemEnv::new()));
    crate::env::conformance::run_all(&env, Path::new("/fault"));
    let env = FaultEnv::new(Arc::new(MemEnv::new()));
    crate::env::conformance::run_all(&env, Path::new("rel/db"));
}

#[test]
fn drop_unsynced_keeps_exactly_the_synced_bytes() {
    let (env, _) = setup();
    half_synced_file(&env, "/db/a", b"durable", b" and volatile");
    half_synced_file(&env, "/db/all", b"all synced", b"");
    let mut never = env.new_writable_file(Path::new("/db/never")).unwrap();
    never.append(b"never synced").unwrap();
    drop(never);
    env.sync_dir(Path::new("/db")).unwrap();

    env.simulate_power_loss(PowerLossMode::DropUnsynced, 1)
        .unwrap();
    assert_eq!(read(&env, "/db/a"), b"durable");
    assert_eq!(read(&env, "/db/all"), b"all synced");
    assert_eq!(read(&env, "/db/never"), b"");
    assert_eq!(sorted_children(&env, "/db"), ["a", "all", "never"]);
}

#[test]
fn torn_tail_keeps_a_prefix_of_the_unsynced_bytes() {
    let full = b"durable|0123456789abcdefghijklmnopqrstuvwxyz";
    let mut lengths = std::collections::HashSet::new();
    for seed in 0..40 {
        let (env, _) = setup();
        half_synced_file(&env, "/db/a", &full[..8], &full[8..]);
        env.simulate_power_loss(PowerLossMode::TornTail, seed)
            .unwrap();
        let got = read(&env, "/db/a");
        assert!(got.len() >= 8, "synced bytes lost: {got:?}");
        assert_eq!(&full[..got.len()], &got[..]);
        lengths.insert(got.len());
    }
    assert!(lengths.len() > 5, "cut points barely vary: {lengths:?}");
}

#[test]
fn garbage_tail_replaces_the_unsynced_bytes() {
    let unsynced = [0xAAu8; 100];
    let mut saw_garbage = false;
    for seed in 0..20 {
        let (env, _) = setup();
        half_synced_file(&env, "/db/a", b"durable", &unsynced);
        env.simulate_power_loss(PowerLossMode::GarbageTail, seed)
            .unwrap();
        let got = read(&env, "/db/a");
        assert_eq!(&got[..7], b"durable");
        let tail = &got[7..];
        assert!(!tail.is_empty() && tail.len() <= unsynced.len(), "{got:?}");
        saw_garbage |= tail.iter().any(|&b| b != 0xAA);
    }
    assert!(saw_garbage);
}

#[test]
fn one_seed_gives_one_outcome() {
    let outcome = |seed| {
        let (env, _) = setup();
        for name in ["/db/a", "/db/b", "/db/c"] {
            half_synced_file(&env, name, b"s", &[7u8; 500]);
        }
        env.simulate_power_loss(PowerLossMode::GarbageTail, seed)
            .unwrap();
        ["/db/a", "/db/b", "/db/c"].map(|name| read(&env, name))
    };
    assert_eq!(outcome(9), outcome(9));
    assert_ne!(outcome(9), outcome(10));
}

#[test]
fn file_created_without_dir_sync_vanishes() {
    let (env, _) = setup();
    // Data synced, entry not.
    write_file(&env, Path::new("/db/new"), b"synced data", true).unwrap();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert!(!env.file_exists(Path::new("/db/new")));
    assert!(env.children(Path::new("/db")).unwrap().is_empty());

    // After sync_dir it survives.
    write_file(&env, Path::new("/db/new"), b"synced data", true).unwrap();
    env.sync_dir(Path::new("/db")).unwrap();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert_eq!(read(&env, "/db/new"), b"synced data");
}

#[test]
fn files_present_before_wrapping_are_durable() {
    let mem = MemEnv::new();
    mem.create_dir(Path::new("/db")).unwrap();
    write_file(&mem, Path::new("/db/old"), b"from before", false).unwrap();
    let env = FaultEnv::new(Arc::new(mem));
    write_file(&env, Path::new("/db/new"), b"x", true).unwrap();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert_eq!(sorted_children(&env, "/db"), ["old"]);
    assert_eq!(read(&env, "/db/old"), b"from before");
}

#[test]
fn rename_without_dir_sync_is_reverted() {
    let (env, _) = setup();
    // The CURRENT pattern: a synced temp file renamed over the old CURRENT.
    write_file(&env, Path::new("/db/CURRENT"), b"MANIFEST-1\n", true).unwrap();
    env.sync_dir(Path::new("/db")).unwrap();
    write_file(&env, Path::new("/db/CURRENT.tmp"), b"MANIFEST-2\n", true).unwrap();
    env.rename(Path::new("/db/CURRENT.tmp"), Path::new("/db/CURRENT"))
        .unwrap();
    assert_eq!(read(&env, "/db/CURRENT"), b"MANIFEST-2\n");
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert_eq!(sorted_children(&env, "/db"), ["CURRENT"]);
    assert_eq!(read(&env, "/db/CURRENT"), b"MANIFEST-1\n");

    // With the directory synced after the rename, the new CURRENT stays.
    write_file(&env, Path::new("/db/CURRENT.tmp"), b"MANIFEST-2\n", true).unwrap();
    env.rename(Path::new("/db/CURRENT.tmp"), Path::new("/db/CURRENT"))
        .unwrap();
    env.sync_dir(Path::new("/db")).unwrap();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert_eq!(sorted_children(&env, "/db"), ["CURRENT"]);
    assert_eq!(read(&env, "/db/CURRENT"), b"MANIFEST-2\n");
}

#[test]
fn rename_of_durable_files_brings_both_back() {
    let (env, _) = setup();
    write_file(&env, Path::new("/db/a"), b"aaa", true).unwrap();
    write_file(&env, Path::new("/db/b"), b"bbb", true).unwrap();
    env.sync_dir(Path::new("/db")).unwrap();
    env.rename(Path::new("/db/a"), Path::new("/db/b")).unwrap();
    env.rename(Path::new("/db/b"), Path::new("/db/c")).unwrap();
    assert_eq!(sorted_children(&env, "/db"), ["c"]);
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert_eq!(sorted_children(&env, "/db"), ["a", "b"]);
    assert_eq!(read(&env, "/db/a"), b"aaa");
    assert_eq!(read(&env, "/db/b"), b"bbb");
}

#[test]
fn renamed_file_keeps_its_synced_length_under_its_old_name() {
    let (env, _) = setup();
    let mut log = env.new_writable_file(Path::new("/db/log")).unwrap();
    log.append(b"synced").unwrap();
    log.sync().unwrap();
    env.sync_dir(Path::new("/db")).unwrap();
    env.rename(Path::new("/db/log"), Path::new("/db/moved"))
        .unwrap();
    // The writer follows the inode.
    log.append(b"+late").unwrap();
    assert_eq!(read(&env, "/db/moved"), b"synced+late");
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert_eq!(sorted_children(&env, "/db"), ["log"]);
    assert_eq!(read(&env, "/db/log"), b"synced");
}

#[test]
fn removal_without_dir_sync_is_undone() {
    let (env, _) = setup();
    half_synced_file(&env, "/db/old", b"kept", b"+lost");
    env.remove_file(Path::new("/db/old")).unwrap();
    // A file created and removed between syncs stays gone.
    write_file(&env, Path::new("/db/temp"), b"t", true).unwrap();
    env.remove_file(Path::new("/db/temp")).unwrap();
    // A new file under the removed name is not durable; the old one comes back.
    write_file(&env, Path::new("/db/old"), b"replacement", true).unwrap();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert_eq!(sorted_children(&env, "/db"), ["old"]);
    assert_eq!(read(&env, "/db/old"), b"kept");

    // Removed and dir-synced: gone for good.
    env.remove_file(Path::new("/db/old")).unwrap();
    env.sync_dir(Path::new("/db")).unwrap();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert!(env.children(Path::new("/db")).unwrap().is_empty());
}

#[test]
fn directories_are_independent() {
    let (env, _) = setup();
    env.create_dir(Path::new("/other")).unwrap();
    write_file(&env, Path::new("/db/a"), b"a", true).unwrap();
    write_file(&env, Path::new("/other/b"), b"b", true).unwrap();
    env.sync_dir(Path::new("/other")).unwrap();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert!(env.children(Path::new("/db")).unwrap().is_empty());
    assert_eq!(read(&env, "/other/b"), b"b");
}

#[test]
fn truncating_an_existing_file_is_durable_at_once() {
    let (env, _) = setup();
    write_file(&env, Path::new("/db/f"), b"old contents", true).unwrap();
    env.sync_dir(Path::new("/db")).unwrap();
    write_file(&env, Path::new("/db/f"), b"new", false).unwrap();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert_eq!(read(&env, "/db/f"), b"");
}

#[test]
fn failed_sync_makes_nothing_durable() {
    let (env, _) = setup();
    let mut file = env.new_writable_file(Path::new("/db/f")).unwrap();
    env.sync_dir(Path::new("/db")).unwrap();
    file.append(b"data").unwrap();
    env.fail_after(OpKind::Sync, 1, InjectedError::Io);
    assert_injected(file.sync(), libc::EIO);
    drop(file);
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert_eq!(read(&env, "/db/f"), b"");
}

#[test]
fn fail_after_fires_once_at_the_nth_operation() {
    let (env, _) = setup();
    let mut file = env.new_writable_file(Path::new("/db/f")).unwrap();
    file.append(b"x").unwrap();
    let before = env.op_count(OpKind::Sync);
    env.fail_after(OpKind::Sync, 3, InjectedError::Io);
    let results: Vec<bool> = (0..6).map(|_| file.sync().is_ok()).collect();
    assert_eq!(results, [true, true, false, true, true, true]);
    assert_eq!(env.op_count(OpKind::Sync), before + 6);
    // Other kinds were not affected.
    assert_eq!(env.op_count(OpKind::Append), 1);
    file.append(b"y").unwrap();

    env.fail_after(OpKind::Append, 2, InjectedError::NoSpace);
    file.append(b"1").unwrap();
    match file.append(b"2") {
        Err(Error::Io { source, .. }) => {
            assert_eq!(source.kind(), io::ErrorKind::StorageFull);
            assert_eq!(source.raw_os_error(), Some(28));
        }
        other => panic!("expected ENOSPC, got {:?}", other.err()),
    }
    file.append(b"3").unwrap();
    file.close().unwrap();
    // A failed append wrote nothing.
    assert_eq!(read(&env, "/db/f"), b"xy13");
}

#[test]
fn every_kind_can_be_failed() {
    let (env, _) = setup();
    write_file(&env, Path::new("/db/f"), b"data", false).unwrap();
    let f = Path::new("/db/f");
    type Attempt = fn(&FaultEnv) -> Result<()>;
    let attempts: [(OpKind, Attempt); 8] = [
        (OpKind::Open, |env| {
            env.new_sequential_file(Path::new("/db/f")).map(drop)
        }),
        (OpKind::Read, |env| {
            let file = env.new_random_access_file(Path::new("/db/f"))?;
            file.read_at(0, &mut [0u8; 4]).map(drop)
        }),
        (OpKind::Append, |env| {
            env.new_appendable_file(Path::new("/db/f"))?.append(b"+")
        }),
        (OpKind::Sync, |env| {
            env.new_appendable_file(Path::new("/db/f"))?.sync()
        }),
        (OpKind::Rename, |env| {
            env.rename(Path::new("/db/f"), Path::new("/db/g"))?;
            env.rename(Path::new("/db/g"), Path::new("/db/f"))
        }),
        (OpKind::Remove, |env| {
            write_file(env, Path::new("/db/r"), b"", false)?;
            env.remove_file(Path::new("/db/r"))
        }),
        (OpKind::Lock, |env| {
            env.lock_file(Path::new("/db/LOCK")).map(drop)
        }),
        (OpKind::SyncDir, |env| env.sync_dir(Path::new("/db"))),
    ];
    for (kind, attempt) in attempts {
        attempt(&env).unwrap();
        env.fail_always(kind, InjectedError::Io);
        assert_injected(attempt(&env), libc::EIO);
        assert_injected(attempt(&env), libc::EIO);
        env.clear_faults();
        attempt(&env).unwrap();
    }
    assert!(env.file_exists(f));
    assert!(!env.file_exists(Path::new("/db/g")));
}

#[test]
fn injected_failures_have_no_effect() {
    let (env, _) = setup();
    write_file(&env, Path::new("/db/a"), b"a", false).unwrap();
    env.fail_always(OpKind::Rename, InjectedError::Io);
    env.fail_always(OpKind::Remove, InjectedError::NoSpace);
    env.fail_always(OpKind::Open, InjectedError::Io);
    assert_injected(
        env.rename(Path::new("/db/a"), Path::new("/db/b")),
        libc::EIO,
    );
    assert_injected(env.remove_file(Path::new("/db/a")), libc::ENOSPC);
    assert_injected(env.new_writable_file(Path::new("/db/c")), libc::EIO);
    env.clear_faults();
    assert_eq!(sorted_children(&env, "/db"), ["a"]);
    assert_eq!(read(&env, "/db/a"), b"a");
}

#[test]
fn short_write_leaves_a_prefix() {
    let (env, _) = setup();
    let mut file = env.new_writable_file(Path::new("/db/f")).unwrap();
    file.append(b"head:").unwrap();
    env.fail_after(OpKind::Append, 1, InjectedError::ShortWrite);
    assert_injected(file.append(b"0123456789"), libc::EIO);
    assert_eq!(read(&env, "/db/f"), b"head:01234");
    // The prefix is ordinary unsynced data.
    file.sync().unwrap();
    file.append(b"!").unwrap();
    env.sync_dir(Path::new("/db")).unwrap();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert_eq!(read(&env, "/db/f"), b"head:01234");
}

#[test]
fn handles_are_dead_after_power_loss() {
    let (env, _) = setup();
    half_synced_file(&env, "/db/a", b"ok", b"");
    let mut writer = env.new_appendable_file(Path::new("/db/a")).unwrap();
    let mut seq = env.new_sequential_file(Path::new("/db/a")).unwrap();
    let random = env.new_random_access_file(Path::new("/db/a")).unwrap();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();

    assert!(writer.append(b"late").is_err());
    assert!(writer.flush().is_err());
    assert!(writer.sync().is_err());
    assert!(writer.close().is_err());
    assert!(seq.read(&mut [0u8; 2]).is_err());
    assert!(random.read_at(0, &mut [0u8; 2]).is_err());
    drop(writer);
    assert_eq!(read(&env, "/db/a"), b"ok");

    // New handles work.
    let mut writer = env.new_appendable_file(Path::new("/db/a")).unwrap();
    writer.append(b"!").unwrap();
    writer.close().unwrap();
    assert_eq!(read(&env, "/db/a"), b"ok!");
}

#[test]
fn power_loss_releases_locks() {
    let (env, mem) = setup();
    let lock = env.lock_file(Path::new("/db/LOCK")).unwrap();
    assert!(env.lock_file(Path::new("/db/LOCK")).is_err());
    env.sync_dir(Path::new("/db")).unwrap();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert!(env.file_exists(Path::new("/db/LOCK")));
    let relocked = env.lock_file(Path::new("/db/LOCK")).unwrap();
    // The dead process's lock going away later must not release the new holder's.
    drop(lock);
    assert!(mem.lock_file(Path::new("/db/LOCK")).is_err());
    env.unlock_file(relocked).unwrap();
    mem.lock_file(Path::new("/db/LOCK")).unwrap();
}

#[test]
fn concurrent_writers_keep_their_synced_prefix() {
    let (env, _) = setup();
    let names: Vec<String> = (0..4).map(|t| format!("/db/{t}")).collect();
    for name in &names {
        write_file(&env, Path::new(name), b"", true).unwrap();
    }
    env.sync_dir(Path::new("/db")).unwrap();
    let synced: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = names
            .iter()
            .map(|name| {
                let env = env.clone();
                s.spawn(move || {
                    let mut file = env.new_appendable_file(Path::new(name)).unwrap();
                    let mut synced = 0;
                    for i in 0..200usize {
                        file.append(&[i as u8; 10]).unwrap();
                        if i % 7 == 0 {
                            file.sync().unwrap();
                            synced = (i + 1) * 10;
                        }
                    }
                    synced
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 3)
        .unwrap();
    for (name, synced) in names.iter().zip(synced) {
        let got = read(&env, name);
        assert_eq!(got.len(), synced, "{name}");
        assert!(got
            .chunks(10)
            .enumerate()
            .all(|(i, chunk)| chunk == [i as u8; 10]));
    }
}

#[test]
fn crash_after_lets_the_nth_operation_happen_and_refuses_the_rest() {
    let (env, _) = setup();
    let mut file = env.new_writable_file(Path::new("/db/f")).unwrap();
    file.append(b"a").unwrap();
    env.crash_after(OpKind::Append, 2);
    file.append(b"b").unwrap();
    assert_eq!(env.crash_point(), None);
    file.append(b"c").unwrap();
    let point = env.crash_point().unwrap().unwrap();
    assert_eq!(
        (point.kind, point.path.as_path()),
        (OpKind::Append, Path::new("/db/f"))
    );
    // Every kind of operation now fails and changes nothing.
    assert!(file.append(b"d").is_err());
    assert!(file.sync().is_err());
    assert!(file.flush().is_err());
    assert!(env.new_writable_file(Path::new("/db/g")).is_err());
    assert!(env.rename(Path::new("/db/f"), Path::new("/db/h")).is_err());
    assert!(env.remove_file(Path::new("/db/f")).is_err());
    assert!(env.sync_dir(Path::new("/db")).is_err());
    assert!(env.create_dir(Path::new("/db/sub")).is_err());
    assert!(env.new_sequential_file(Path::new("/db/f")).is_err());
    assert!(env.lock_file(Path::new("/db/LOCK")).is_err());
    // Crash failures are not injected faults.
    assert!(env.injected_faults().is_empty());
    assert_eq!(read(&*env.inner().clone(), "/db/f"), b"abc");
    assert_eq!(sorted_children(&env, "/db"), ["f"]);

    // Power loss revives the process; nothing of `f` was synced.
    env.sync_dir(Path::new("/db")).unwrap_err();
    env.simulate_power_loss(PowerLossMode::DropUnsynced, 0)
        .unwrap();
    assert_eq!(env.crash_point(), None);
    assert_eq!(sorted_children(&env, "/db"), Vec::<String>::new());
    write_file(&env, Path::new("/db/g"), b"alive", true).unwrap();
}

#[test]
fn crash_now_and_clear_faults() {
    let (env, _) = setup();
    env.crash_now();
    assert_eq!(env.crash_point(), Some(None));
    assert!(write_file(&env, Path::new("/db/f"), b"x", false).is_err());
    env.clear_faults();
    write_file(&env, Path::new("/db/f"), b"x", false).unwrap();
    env.sync_dir(Path::new("/db")).unwrap();
    // A crash rule that never fired is disarmed by power loss.
    env.crash_after(OpKind::Rename, 1);
    env.simulate_power_loss(PowerLossMode::TornTail, 0).unwrap();
    env.rename(Path::new("/db/f"), Path::new("/db/g")).unwrap();
    env.rename(Path::new("/db/g"), Path::new("/db/f")).unwrap();
    assert_eq!(env.crash_point(), None);
}

#[test]
fn injected_faults_are_recorded_with_kind_and_path() {
    let (env, _) = setup();
    env.fail_after(OpKind::Open, 2, InjectedError::NoSpace);
    write_file(&env, Path::new("/db/a"), b"", false).unwrap();
    assert!(write_file(&env, Path::new("/db/b"), b"", false).is_err());
    env.fail_always(OpKind::SyncDir, InjectedError::Io);
    assert!(env.sync_dir(Path::new("/db")).is_err());
    let here = std::thread::current().name().unwrap().to_owned();
    assert_eq!(
        env.injected_faults(),
        [
            InjectedFault {
                kind: OpKind::Open,
                error: InjectedError::NoSpace,
                path: "/db/b".into(),
                thread: here.clone(),
            },
            InjectedFault {
                kind: OpKind::SyncDir,
                error: InjectedError::Io,
                path: "/db".into(),
                thread: here,
            },
        ]
    );
    let env2 = env.clone();
    std::thread::Builder::new()
        .name("elsewhere".into())
        .spawn(move || env2.sync_dir(Path::new("/db")).unwrap_err())
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(env.injected_faults()[2].thread, "elsewhere");
}

#[test]
fn crash_after_matching_counts_only_the_chosen_paths() {
    let (env, _) = setup();
    let mut a = env.new_writable_file(Path::new("/db/a.log")).unwrap();
    let mut b = env.new_writable_file(Path::new("/db/b.ldb")).unwrap();
    env.crash_after_matching(OpKind::Append, 2, |p| {
        p.extension().is_some_and(|e| e == "ldb")
    });
    a.append(b"1").unwrap();
    b.append(b"1").unwrap();
    a.append(b"2").unwrap();
    a.append(b"3").unwrap();
    assert_eq!(env.crash_point(), None);
    b.append(b"2").unwrap();
    let point = env.crash_point().unwrap().unwrap();
    assert_eq!(point.path, Path::new("/db/b.ldb"));
    assert!(a.append(b"4").is_err());
    assert_eq!(read(&**env.inner(), "/db/a.log"), b"123");
}
