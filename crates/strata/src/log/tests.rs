//! Writer and reader together: round trips, damage handling, initial offsets, fuzzing.

use std::sync::Arc;

use parking_lot::Mutex;
use proptest::prelude::*;

use super::*;
use crate::env::vec_files::{VecSink, VecSource};
use crate::env::SequentialFile;
use crate::error::{Error, Result};
use crate::util::crc;

#[derive(Clone, Default)]
pub(crate) struct Reports(Arc<Mutex<Vec<(u64, Error)>>>);

impl Reporter for Reports {
    fn corruption(&mut self, bytes: u64, reason: &Error) {
        self.0.lock().push((bytes, reason.clone()));
    }
}

impl Reports {
    fn dropped(&self) -> u64 {
        self.0.lock().iter().map(|(b, _)| b).sum()
    }
    pub(crate) fn count(&self) -> usize {
        self.0.lock().len()
    }
    pub(crate) fn reasons(&self) -> Vec<String> {
        self.0.lock().iter().map(|(_, e)| e.to_string()).collect()
    }
    fn offsets(&self) -> Vec<Option<u64>> {
        self.0
            .lock()
            .iter()
            .map(|(_, e)| e.corruption_details().and_then(|c| c.offset))
            .collect()
    }
}

/// Writes `records`; returns the file's bytes and the offset where each record's first header
/// lands.
fn write_log(records: &[Vec<u8>]) -> (Vec<u8>, Vec<u64>) {
    let sink = VecSink::new();
    let mut writer = LogWriter::new(Box::new(sink.clone()));
    let mut offsets = Vec::new();
    for record in records {
        let mut at = writer.file_len();
        let left = BLOCK_SIZE as u64 - at % BLOCK_SIZE as u64;
        if left < HEADER_SIZE as u64 {
            at += left;
        }
        offsets.push(at);
        writer.add_record(record).unwrap();
    }
    writer.close().unwrap();
    (sink.contents(), offsets)
}

pub(crate) struct ReadOutcome {
    pub(crate) records: Vec<Vec<u8>>,
    offsets: Vec<u64>,
    pub(crate) reports: Reports,
    /// The gaps a write-ahead log's reader skipped, with the index of the record after each.
    pub(crate) gaps: Vec<(usize, (u64, u64))>,
}

fn read_log_from(file: Box<dyn SequentialFile>, verify: bool, initial_offset: u64) -> ReadOutcome {
    let reports = Reports::default();
    let reader = LogReader::new(
        file,
        Some(Box::new(reports.clone())),
        verify,
        initial_offset,
    );
    read_all(reader, reports)
}

/// Reads `bytes` as the write-ahead log is read ([`LogReader::write_ahead_log`]).
pub(crate) fn read_write_ahead_log(bytes: &[u8]) -> ReadOutcome {
    let reports = Reports::default();
    let reader = LogReader::new(
        Box::new(VecSource::new(bytes.to_vec())),
        Some(Box::new(reports.clone())),
        true,
        0,
    )
    .write_ahead_log();
    read_all(reader, reports)
}

fn read_all(mut reader: LogReader, reports: Reports) -> ReadOutcome {
    let mut scratch = Vec::new();
    let mut records = Vec::new();
    let mut offsets = Vec::new();
    let mut gaps = Vec::new();
    while let Some(record) = reader.read_record(&mut scratch) {
        records.push(record.to_vec());
        offsets.push(reader.last_record_offset());
        if let Some(gap) = reader.take_gap() {
            gaps.push((records.len() - 1, gap));
        }
    }
    // The end is sticky.
    assert!(reader.read_record(&mut scratch).is_none());
    ReadOutcome {
        records,
        offsets,
        reports,
        gaps,
    }
}

fn read_log(bytes: &[u8]) -> ReadOutcome {
    read_log_from(Box::new(VecSource::new(bytes.to_vec())), true, 0)
}

fn read_log_at(bytes: &[u8], initial_offset: u64) -> ReadOutcome {
    read_log_from(
        Box::new(VecSource::new(bytes.to_vec())),
        true,
        initial_offset,
    )
}

/// A record of `len` bytes whose content depends on `seed`.
fn record(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| seed.wrapping_mul(31).wrapping_add(i as u8))
        .collect()
}

fn assert_round_trip(records: &[Vec<u8>]) {
    let (bytes, offsets) = write_log(records);
    let out = read_log(&bytes);
    assert_eq!(out.reports.reasons(), Vec::<String>::new());
    assert_eq!(out.records.len(), records.len());
    assert!(out.records == records, "records differ after a round trip");
    assert_eq!(out.offsets, offsets);
}

/// Rewrites the checksum of the physical record whose header is at `at`.
fn fix_checksum(bytes: &mut [u8], at: usize) {
    let len = usize::from(u16::from_le_bytes([bytes[at + 4], bytes[at + 5]]));
    let crc = crc::mask(crc::crc32c(&bytes[at + 6..at + HEADER_SIZE + len]));
    bytes[at..at + 4].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn empty_file_has_no_records() {
    let out = read_log(&[]);
    assert!(out.records.is_empty());
    assert_eq!(out.reports.count(), 0);
}

#[test]
fn round_trips_empty_small_and_many_records() {
    assert_round_trip(&[Vec::new()]);
    assert_round_trip(&[
        b"foo".to_vec(),
        b"bar".to_vec(),
        Vec::new(),
        b"xxxx".to_vec(),
    ]);
    let many: Vec<Vec<u8>> = (0..20_000u32).map(|i| i.to_string().into_bytes()).collect();
    assert_round_trip(&many);
}

#[test]
fn round_trips_block_sized_and_multi_block_records() {
    let fills_block = BLOCK_SIZE - HEADER_SIZE;
    assert_round_trip(&[record(1, fills_block), record(2, fills_block)]);
    assert_round_trip(&[record(1, BLOCK_SIZE)]);
    assert_round_trip(&[record(1, BLOCK_SIZE), record(2, BLOCK_SIZE + 1)]);
    assert_round_trip(&[
        b"small".to_vec(),
        record(3, 5 * BLOCK_SIZE + 17),
        Vec::new(),
    ]);
    assert_round_trip(&[record(4, 2 * fills_block), record(5, 1)]);
}

#[test]
fn records_leaving_short_trailers_round_trip() {
    for left in 0..=HEADER_SIZE + 1 {
        let first = record(1, BLOCK_SIZE - HEADER_SIZE - left);
        let records = vec![first, record(2, 10), Vec::new(), record(3, 2 * BLOCK_SIZE)];
        assert_round_trip(&records);
        let (bytes, offsets) = write_log(&records);
        if left < HEADER_SIZE {
            // The trailer is zero-filled and the next record starts on the next block.
            assert!(bytes[BLOCK_SIZE - left..BLOCK_SIZE].iter().all(|&b| b == 0));
            assert_eq!(offsets[1], BLOCK_SIZE as u64);
        } else {
            assert_eq!(offsets[1], (BLOCK_SIZE - left) as u64);
        }
    }
}

#[test]
fn short_reads_are_retried() {
    let records = vec![record(1, 100), record(2, 3 * BLOCK_SIZE), record(3, 7)];
    let (bytes, _) = write_log(&records);
    for max_read in [1, 999, BLOCK_SIZE - 1] {
        let out = read_log_from(
            Box::new(VecSource::with_max_read(bytes.clone(), max_read)),
            true,
            0,
        );
        assert!(out.records == records);
        assert_eq!(out.reports.count(), 0);
    }
}

#[test]
fn single_record_buffer_is_reused_across_calls() {
    let (bytes, _) = write_log(&[
        b"one".to_vec(),
        record(1, 2 * BLOCK_SIZE),
        b"three".to_vec(),
    ]);
    let mut reader = LogReader::new(Box::new(VecSource::new(bytes)), None, true, 0);
    let mut scratch = Vec::new();
    assert_eq!(reader.read_record(&mut scratch), Some(&b"one"[..]));
    assert_eq!(
        reader.read_record(&mut scratch).map(<[u8]>::len),
        Some(2 * BLOCK_SIZE)
    );
    assert_eq!(reader.read_record(&mut scratch), Some(&b"three"[..]));
    assert_eq!(reader.read_record(&mut scratch), None);
}

#[test]
fn bad_checksum_drops_the_block_and_reading_goes_on() {
    let records = vec![
        b"foo".to_vec(),
        b"bar".to_vec(),
        record(1, BLOCK_SIZE),
        b"baz".to_vec(),
    ];
    let (mut bytes, offsets) = write_log(&records);
    bytes[HEADER_SIZE + 1] ^= 0x10; // inside "foo"
    let out = read_log(&bytes);
    // "foo", "bar" and the first fragment of the big record share block 0: all gone. The big
    // record's remaining fragment is reported too; "baz" survives.
    assert_eq!(out.records, vec![b"baz".to_vec()]);
    assert_eq!(out.offsets, vec![offsets[3]]);
    let reasons = out.reports.reasons();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons[0].contains("checksum mismatch"), "{reasons:?}");
    assert!(reasons[1].contains("missing start"), "{reasons:?}");
    let first = out.reports.0.lock()[0].clone();
    assert_eq!(first.0, BLOCK_SIZE as u64);
    assert!(matches!(first.1, Error::Corruption(ref c) if c.offset == Some(0)));
}

#[test]
fn checksum_of_header_type_is_checked() {
    let (mut bytes, _) = write_log(&[b"foo".to_vec()]);
    bytes[6] = RecordType::Last as u8;
    let out = read_log(&bytes);
    assert!(out.records.is_empty());
    assert_eq!(out.reports.dropped(), 10);
    assert!(out.reports.reasons()[0].contains("checksum mismatch"));
}

#[test]
fn verify_checksums_off_returns_damaged_payloads() {
    let (mut bytes, _) = write_log(&[b"foo".to_vec(), b"bar".to_vec()]);
    bytes[HEADER_SIZE] = b'g';
    let out = read_log_from(Box::new(VecSource::new(bytes)), false, 0);
    assert_eq!(out.records, vec![b"goo".to_vec(), b"bar".to_vec()]);
    assert_eq!(out.reports.count(), 0);
}

#[test]
fn bad_length_inside_the_file_is_reported() {
    let records = vec![b"foo".to_vec(), record(1, BLOCK_SIZE), b"bar".to_vec()];
    let (mut bytes, _) = write_log(&records);
    bytes[4..6].copy_from_slice(&(BLOCK_SIZE as u16 - 5).to_le_bytes());
    let out = read_log(&bytes);
    assert_eq!(out.records, vec![b"bar".to_vec()]);
    let reasons = out.reports.reasons();
    assert!(reasons[0].contains("bad record length"), "{reasons:?}");
    assert_eq!(out.reports.0.lock()[0].0, BLOCK_SIZE as u64);
}

#[test]
fn bad_length_in_the_last_block_ends_the_log_quietly() {
    let (mut bytes, _) = write_log(&[b"foo".to_vec(), b"bar".to_vec()]);
    let second = HEADER_SIZE + 3;
    bytes[second + 4] = 0xff;
    let out = read_log(&bytes);
    assert_eq!(out.records, vec![b"foo".to_vec()]);
    assert_eq!(out.reports.count(), 0);
}

#[test]
fn truncated_tail_is_a_clean_end() {
    let records = vec![
        b"first".to_vec(),
        record(1, BLOCK_SIZE + 100),
        b"last".to_vec(),
    ];
    let (bytes, offsets) = write_log(&records);
    // Cut anywhere inside the big record (headers, payloads, between fragments).
    let big_start = offsets[1] as usize;
    for cut in (big_start + 1..offsets[2] as usize).step_by(97).chain([
        big_start + 3,
        BLOCK_SIZE,
        BLOCK_SIZE + 3,
    ]) {
        let out = read_log(&bytes[..cut]);
        assert_eq!(out.records, vec![b"first".to_vec()], "cut at {cut}");
        assert_eq!(
            out.reports.count(),
            0,
            "cut at {cut}: {:?}",
            out.reports.reasons()
        );
    }
    // Cut inside the last record.
    for cut in offsets[2] as usize + 1..bytes.len() {
        let out = read_log(&bytes[..cut]);
        assert_eq!(out.records.len(), 2, "cut at {cut}");
        assert_eq!(out.reports.count(), 0);
    }
}

#[test]
fn unknown_record_type_is_reported_and_skipped() {
    let (mut bytes, _) = write_log(&[b"foo".to_vec(), b"bar".to_vec()]);
    bytes[6] = 9;
    fix_checksum(&mut bytes, 0);
    let out = read_log(&bytes);
    assert_eq!(out.records, vec![b"bar".to_vec()]);
    assert_eq!(out.reports.dropped(), 3);
    assert!(out.reports.reasons()[0].contains("unknown record type 9"));
}

#[test]
fn fragments_out_of_sequence_are_reported() {
    // A MIDDLE and a LAST with no FIRST, then a FIRST interrupted by a FULL.
    let (mut bytes, _) = write_log(&[
        b"aa".to_vec(),
        b"bbb".to_vec(),
        b"cccc".to_vec(),
        b"d".to_vec(),
    ]);
    let at = [0, 9, 19, 30];
    for (&h, t) in at
        .iter()
        .zip([RecordType::Middle, RecordType::Last, RecordType::First])
    {
        bytes[h + 6] = t as u8;
        fix_checksum(&mut bytes, h);
    }
    let out = read_log(&bytes);
    assert_eq!(out.records, vec![b"d".to_vec()]);
    let reasons = out.reports.reasons();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert!(reasons[0].contains("missing start"));
    assert!(reasons[1].contains("missing start"));
    assert!(reasons[2].contains("partial record without end"));
    assert_eq!(out.reports.offsets(), vec![Some(0), Some(9), Some(19)]);
    assert_eq!(out.reports.dropped(), 2 + 3 + 4);
}

#[test]
fn damage_inside_a_fragmented_record_drops_it() {
    let records = vec![record(1, 3 * BLOCK_SIZE), b"after".to_vec()];
    let (mut bytes, _) = write_log(&records);
    bytes[BLOCK_SIZE + HEADER_SIZE + 10] ^= 1; // the first MIDDLE fragment
    let out = read_log(&bytes);
    assert_eq!(out.records, vec![b"after".to_vec()]);
    let reasons = out.reports.reasons();
    assert!(reasons[0].contains("checksum mismatch"), "{reasons:?}");
    assert!(
        reasons[1].contains("error in middle of record"),
        "{reasons:?}"
    );
    assert!(
        reasons[2..].iter().all(|r| r.contains("missing start")),
        "{reasons:?}"
    );
}

#[test]
fn zero_filled_regions_are_skipped_silently() {
    let (mut bytes, _) = write_log(&[b"foo".to_vec()]);
    bytes.resize(3 * BLOCK_SIZE, 0);
    let out = read_log(&bytes);
    assert_eq!(out.records, vec![b"foo".to_vec()]);
    assert_eq!(out.reports.count(), 0);
}

/// Regression: a zeroed record header in the middle of a log was taken for the zero-filled
/// tail of a preallocated file, and the records after it in its block were dropped without a
/// report (so even `paranoid_checks` let a damaged log or manifest through).
#[test]
fn zeros_followed_by_data_are_reported() {
    // A zeroed header with records after it in the same block: reported at once.
    let (mut bytes, offsets) = write_log(&[record(1, 100), record(2, 100), record(3, 100)]);
    let second = offsets[1] as usize;
    bytes[second..second + HEADER_SIZE].fill(0);
    let out = read_log(&bytes);
    assert_eq!(out.records, vec![record(1, 100)]);
    assert_eq!(out.reports.offsets(), vec![Some(offsets[1])]);
    assert_eq!(out.reports.dropped(), (bytes.len() - second) as u64);
    assert!(out.reports.reasons()[0].contains("zero-filled region followed by data"));

    // A whole zeroed block: reported when the record after it is met.
    let full = BLOCK_SIZE - HEADER_SIZE;
    let (mut bytes, _) = write_log(&[record(1, full), record(2, full), record(3, 10)]);
    bytes[BLOCK_SIZE..2 * BLOCK_SIZE].fill(0);
    let out = read_log(&bytes);
    assert_eq!(out.records, vec![record(1, full), record(3, 10)]);
    assert_eq!(out.reports.offsets(), vec![Some(BLOCK_SIZE as u64)]);
    assert_eq!(out.reports.dropped(), BLOCK_SIZE as u64);

    // Zeros to the end of the file stay silent, however many blocks they fill.
    bytes.truncate(2 * BLOCK_SIZE);
    bytes.resize(5 * BLOCK_SIZE + 100, 0);
    let out = read_log(&bytes);
    assert_eq!(out.records, vec![record(1, full)]);
    assert_eq!(out.reports.count(), 0);
}

/// The write-ahead log's reader: a record whose header was never published (a writer killed
/// while copying it into a mapped log) is the log's end, silent; zeros followed by data are a
/// gap, not reported but handed to the caller with the record after it (torn fragments within
/// it included); other damage is reported as by any reader, which reads on.
#[test]
fn write_ahead_log_reader_skips_unpublished_records_and_hands_gaps_over() {
    let records = [record(1, 100), record(2, 100), record(3, 100)];
    let (bytes, offsets) = write_log(&records);
    let third = offsets[2] as usize;
    let mut unpublished = bytes.clone();
    unpublished[third..third + HEADER_SIZE].fill(0);
    unpublished.resize(BLOCK_SIZE, 0);
    let out = read_write_ahead_log(&unpublished);
    assert_eq!(out.records, records[..2].to_vec());
    assert_eq!(out.reports.count(), 0, "{:?}", out.reports.reasons());
    assert!(out.gaps.is_empty());
    // The other reader reports the bytes after the zero header as damage.
    assert_eq!(read_log(&unpublished).reports.count(), 1);

    // The same region followed by a record in the next block: a gap before that record.
    let rest = BLOCK_SIZE - 2 * HEADER_SIZE - 100;
    let (mut bytes, offsets) = write_log(&[record(1, 100), record(2, rest), record(3, 100)]);
    assert_eq!(offsets[2], BLOCK_SIZE as u64);
    let second = offsets[1] as usize;
    bytes[second..second + HEADER_SIZE].fill(0);
    let out = read_write_ahead_log(&bytes);
    assert_eq!(out.records, vec![record(1, 100), record(3, 100)]);
    assert_eq!(out.reports.count(), 0, "{:?}", out.reports.reasons());
    assert_eq!(out.gaps, vec![(1, (offsets[1], offsets[2] - offsets[1]))]);
    // The other reader reports it.
    let out = read_log(&bytes);
    assert_eq!(out.records.len(), 2);
    assert!(out.reports.reasons()[0].contains("zero-filled region followed by data"));

    // A record spanning blocks whose FIRST header is unpublished and whose later fragments'
    // are (the mapped writer publishes the FIRST header last), then the end: the gap takes
    // the orphaned fragments with it, silently.
    let big = record(2, 2 * BLOCK_SIZE);
    let (mut bytes, offsets) = write_log(&[record(1, 100), big]);
    bytes[offsets[1] as usize..offsets[1] as usize + HEADER_SIZE].fill(0);
    let out = read_write_ahead_log(&bytes);
    assert_eq!(out.records, vec![record(1, 100)]);
    assert_eq!(out.reports.count(), 0, "{:?}", out.reports.reasons());
    assert!(out.gaps.is_empty());
    assert!(read_log(&bytes).reports.count() > 0);

    // A bad checksum is damage, reported; the reader goes on.
    let (mut bytes, offsets) = write_log(&[record(1, 100), record(2, rest), record(3, 100)]);
    bytes[offsets[1] as usize + HEADER_SIZE + 10] ^= 1;
    let out = read_write_ahead_log(&bytes);
    assert_eq!(out.records, vec![record(1, 100), record(3, 100)]);
    assert_eq!(out.reports.offsets(), vec![Some(offsets[1])]);
    assert!(out.reports.reasons()[0].contains("checksum mismatch"));
    assert!(out.gaps.is_empty());
}

#[test]
fn read_error_is_reported_and_ends_the_log() {
    struct Failing(Option<Vec<u8>>);
    impl SequentialFile for Failing {
        fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
            match self.0.take() {
                Some(data) => {
                    buf[..data.len()].copy_from_slice(&data);
                    Ok(data.len())
                }
                None => Err(Error::io("read", std::io::Error::other("disk on fire"))),
            }
        }
        fn skip(&mut self, _n: u64) -> Result<()> {
            Ok(())
        }
    }
    let (bytes, _) = write_log(&[record(1, BLOCK_SIZE - HEADER_SIZE), b"never".to_vec()]);
    let out = read_log_from(
        Box::new(Failing(Some(bytes[..BLOCK_SIZE].to_vec()))),
        true,
        0,
    );
    assert_eq!(out.records.len(), 1);
    assert_eq!(out.reports.count(), 1);
    assert!(matches!(out.reports.0.lock()[0].1, Error::Io { .. }));
}

#[test]
fn initial_offset_returns_records_starting_at_or_after_it() {
    let fills_block = BLOCK_SIZE - HEADER_SIZE;
    let records = vec![
        record(0, 10_000),
        record(1, 10_000),
        record(2, 2 * BLOCK_SIZE - 1000),
        record(3, 1),
        record(4, 13_716),
        record(5, fills_block),
        Vec::new(),
        record(6, BLOCK_SIZE - 2 * HEADER_SIZE - 3),
        record(7, 100),
        record(8, 2),
    ];
    let (bytes, offsets) = write_log(&records);
    let len = bytes.len() as u64;
    let mut initial_offsets: Vec<u64> = (0..len + 10).step_by(331).collect();
    for &o in &offsets {
        initial_offsets.extend([o.saturating_sub(1), o, o + 1, o + 7]);
    }
    for block in 0..=len / BLOCK_SIZE as u64 + 1 {
        let start = block * BLOCK_SIZE as u64;
        initial_offsets.extend([start, start.saturating_sub(3), start.saturating_sub(7)]);
    }
    initial_offsets.extend([len - 1, len, len + BLOCK_SIZE as u64]);
    for initial in initial_offsets {
        let out = read_log_at(&bytes, initial);
        let first = offsets
            .iter()
            .position(|&o| o >= initial)
            .unwrap_or(offsets.len());
        assert_eq!(out.offsets, offsets[first..], "initial offset {initial}");
        assert!(out.records == records[first..], "initial offset {initial}");
        assert_eq!(out.reports.count(), 0, "initial offset {initial}");
    }
}

#[test]
fn initial_offset_does_not_report_damage_before_it() {
    let (mut bytes, offsets) = write_log(&[b"foo".to_vec(), b"bar".to_vec(), b"baz".to_vec()]);
    bytes[offsets[0] as usize + HEADER_SIZE] ^= 1;
    let out = read_log_at(&bytes, offsets[1]);
    // The damaged first record takes the rest of its block with it, silently.
    assert!(out.records.is_empty());
    assert_eq!(out.reports.count(), 0);
    let out = read_log_at(&bytes, 0);
    assert_eq!(out.reports.count(), 1);
}

/// True when `got` appears in `all` in order (a subsequence).
fn is_subsequence(got: &[Vec<u8>], all: &[Vec<u8>]) -> bool {
    let mut rest = all.iter();
    got.iter().all(|g| rest.any(|a| a == g))
}

fn record_sizes() -> impl Strategy<Value = Vec<usize>> {
    let size = prop_oneof![
        6 => 0usize..64,
        2 => 0usize..BLOCK_SIZE,
        1 => BLOCK_SIZE - 2 * HEADER_SIZE..BLOCK_SIZE + HEADER_SIZE,
        1 => 0usize..3 * BLOCK_SIZE,
    ];
    proptest::collection::vec(size, 0..24)
}

fn records_of(sizes: &[usize]) -> Vec<Vec<u8>> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| record(i as u8, n))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_record_sequences_round_trip(sizes in record_sizes(), max_read in 1usize..2 * BLOCK_SIZE) {
        let records = records_of(&sizes);
        let (bytes, offsets) = write_log(&records);
        let out = read_log_from(Box::new(VecSource::with_max_read(bytes, max_read)), true, 0);
        prop_assert_eq!(out.reports.count(), 0);
        prop_assert!(out.records == records);
        prop_assert_eq!(out.offsets, offsets);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..3 * BLOCK_SIZE), verify in any::<bool>(), initial in 0u64..4 * BLOCK_SIZE as u64) {
        let out = read_log_from(Box::new(VecSource::new(bytes.clone())), verify, initial);
        let total: usize = out.records.iter().map(Vec::len).sum();
        prop_assert!(total <= bytes.len());
        prop_assert!(out.records.len() <= bytes.len() / HEADER_SIZE);
        prop_assert!(out.reports.dropped() <= bytes.len() as u64);
        prop_assert!(out.offsets.iter().all(|&o| o >= initial && o < bytes.len() as u64));
    }

    #[test]
    fn mutated_logs_yield_only_original_records(
        sizes in record_sizes(),
        mutations in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        truncate in proptest::option::of(any::<prop::sample::Index>()),
        initial in 0u64..4 * BLOCK_SIZE as u64,
    ) {
        let records = records_of(&sizes);
        let (mut bytes, _) = write_log(&records);
        prop_assume!(!bytes.is_empty());
        for (at, value) in &mutations {
            let i = at.index(bytes.len());
            bytes[i] = *value;
        }
        if let Some(cut) = truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        let out = read_log_from(Box::new(VecSource::new(bytes.clone())), true, initial);
        prop_assert!(is_subsequence(&out.records, &records));
        prop_assert!(out.reports.dropped() <= bytes.len() as u64);
        // Without checksums nothing is promised about contents, only termination.
        let loose = read_log_from(Box::new(VecSource::new(bytes.clone())), false, initial);
        prop_assert!(loose.records.len() <= bytes.len() / HEADER_SIZE + 1);
    }
}

/// `end_of_last_record` is the file's length exactly when the log ends with a whole record,
/// so a log cut inside a record (or ending in damage) is never taken as clean.
#[test]
fn end_of_last_record_marks_a_clean_end() {
    let records = vec![vec![1u8; 100], vec![2u8; 40_000], vec![3u8; 10]];
    let (bytes, _) = write_log(&records);
    let end_after = |bytes: &[u8]| {
        let mut reader = LogReader::new(Box::new(VecSource::new(bytes.to_vec())), None, true, 0);
        let mut scratch = Vec::new();
        assert_eq!(reader.end_of_last_record(), 0);
        while reader.read_record(&mut scratch).is_some() {}
        reader.end_of_last_record()
    };
    assert_eq!(end_after(&bytes), bytes.len() as u64);
    assert_eq!(end_after(&[]), 0);
    // Cut anywhere inside the last record: the end stays at the previous record's end.
    let second_end = bytes.len() as u64 - 10 - HEADER_SIZE as u64;
    for cut in [1, 5, HEADER_SIZE, HEADER_SIZE + 9] {
        assert_eq!(end_after(&bytes[..bytes.len() - cut]), second_end);
    }
    // Cut inside the fragmented second record.
    assert_eq!(end_after(&bytes[..40_000]), 100 + HEADER_SIZE as u64);
    // Garbage after the end.
    let mut damaged = bytes.clone();
    damaged.extend_from_slice(&[0x5a; 30]);
    assert_eq!(end_after(&damaged), bytes.len() as u64);
}
