//! The log writer over the POSIX env's mapped write-ahead log (`env/posix/mapped_log.rs`):
//! bytes identical to a plainly written log once closed, and a kill at any step of a write
//! (its crash points) leaving whole records, then the log's end.

use std::fs;
use std::path::Path;

use super::tests::read_write_ahead_log;
use super::{LogWriter, BLOCK_SIZE, HEADER_SIZE};
use crate::env::posix::mapped_log::crash_points::{
    mapped_log_writes_stopped, stop_mapped_log_writes_after,
};
use crate::env::posix::mapped_log::WINDOW;
use crate::env::vec_files::VecSink;
use crate::env::{Env, PosixEnv};

/// Records that reach every path of a write: a full record, one leaving exactly a header's
/// room (an empty first fragment follows), one leaving a 3-byte trailer, records spanning
/// several blocks, one too large to stage whole (written in pieces), an empty one, and enough
/// bytes to cross a mapped window.
fn records() -> Vec<Vec<u8>> {
    let block = BLOCK_SIZE;
    let mut sizes = vec![
        100,
        block - 121, // ends 7 bytes before the block's end
        50,          // an empty FIRST there, then the LAST
        block - 67,  // ends 3 bytes before the block's end
        10,          // after a trailer
        block - 24,  // ends at the block's end
        3 * block,   // FIRST, MIDDLE, MIDDLE, LAST
        600_000,     // staged in pieces
        0,           // empty
        1,
    ];
    sizes.extend((0..40).map(|i| (i * 997) % 5_000 + 1));
    sizes.push(400_000); // past the first window
    sizes.extend((0..10).map(|i| i * 31 + 5));
    (0u32..)
        .zip(sizes)
        .map(|(i, len)| {
            (0..len)
                .map(|j| (i as usize * 7 + j * 13 % 251) as u8 | 1)
                .collect()
        })
        .collect()
}

/// The bytes a plain (buffered) writer produces for `records`.
fn plainly_written(records: &[Vec<u8>]) -> Vec<u8> {
    let sink = VecSink::new();
    let mut writer = LogWriter::new(Box::new(sink.clone()));
    for record in records {
        writer.add_record(record).unwrap();
    }
    sink.contents()
}

fn mapped_writer(path: &Path) -> LogWriter {
    LogWriter::new(PosixEnv::new().new_log_file(path).unwrap())
}

#[test]
fn a_closed_or_dropped_log_holds_exactly_what_a_plain_writer_writes() {
    let dir = tempfile::tempdir().unwrap();
    let records = records();
    let expected = plainly_written(&records);
    assert!(
        expected.len() as u64 > WINDOW,
        "the records do not cross a window"
    );
    for close in [true, false] {
        let path = dir.path().join(format!("{close}.log"));
        let mut writer = mapped_writer(&path);
        for record in &records {
            writer.add_record(record).unwrap();
            // Each record is in the file at once, followed by zeros up to its block's end
            // at most.
            let len = writer.file_len() as usize;
            let bytes = fs::read(&path).unwrap();
            assert_eq!(bytes[..len], expected[..len]);
            assert!(bytes.len() - len < BLOCK_SIZE);
            assert!(bytes[len..].iter().all(|&b| b == 0));
        }
        writer.sync().unwrap();
        if close {
            writer.close().unwrap();
            assert!(writer.add_record(b"x").is_err(), "append after close");
        } else {
            drop(writer);
        }
        assert!(fs::read(&path).unwrap() == expected, "close: {close}");
    }
}

/// Stops the writer at each step in turn, as a kill would (a copy or a `pwrite` cut part-way):
/// the log then reads back as the records written before the kill (the one being written
/// included, if its last step ran), with nothing reported.
#[test]
fn a_kill_at_every_step_leaves_whole_records_then_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let records = records();
    let mut unpublished_seen = 0;
    for steps in 0u64.. {
        let path = dir.path().join(format!("{steps}.log"));
        let mut writer = mapped_writer(&path);
        stop_mapped_log_writes_after(Some(steps));
        let mut completed = 0;
        for record in &records {
            writer.add_record(record).unwrap();
            if mapped_log_writes_stopped() {
                break;
            }
            completed += 1;
        }
        let killed = mapped_log_writes_stopped();
        drop(writer); // a killed writer changes nothing more
        stop_mapped_log_writes_after(None);
        if !killed {
            assert!(
                steps > 100,
                "only {steps} steps: the crash points are not counted"
            );
            assert!(
                unpublished_seen > 10,
                "{unpublished_seen} unpublished records seen"
            );
            return;
        }

        let bytes = fs::read(&path).unwrap();
        let out = read_write_ahead_log(&bytes);
        let read = out.records.len();
        assert!(
            read == completed || read == completed + 1,
            "step {steps}: {read} records read, {completed} written before the kill"
        );
        assert!(
            out.records[..] == records[..read],
            "step {steps}: records differ"
        );
        assert_eq!(
            out.reports.count(),
            0,
            "step {steps}: {:?}",
            out.reports.reasons()
        );
        assert!(out.gaps.is_empty(), "step {steps}: gaps {:?}", out.gaps);

        // Where a record was left unpublished, its payload copy was cut short (`copy_torn`).
        let end = plainly_written(&records[..read]).len();
        let block_end = (end / BLOCK_SIZE + 1) * BLOCK_SIZE;
        if let Some(payload) = bytes.get(end + HEADER_SIZE..block_end.min(bytes.len())) {
            if payload.iter().any(|&b| b != 0) {
                unpublished_seen += 1;
            }
        }
        fs::remove_file(&path).unwrap();
    }
}
