//! Damage to every file kind — write-ahead log, table data / filter / metaindex / index block
//! and footer, manifest, `CURRENT` — by flipping a byte, zeroing a range, truncating, removing a
//! range, or deleting the file, and what each part of Strata makes of it:
//!
//! - **paranoid**: `paranoid_checks` on, default reads. Damage must surface as a typed
//!   `Error::Corruption` naming the file (and an offset inside the damaged piece when there is
//!   one), at open for logs, manifests and `CURRENT`, at the first read of the damaged block for
//!   tables. A log cut short is what a crash leaves: it is not an error.
//! - **lenient**: `paranoid_checks` off, reads with `verify_checksums`. Recovery goes on as
//!   LevelDB's does; loss is bounded to the damaged region (a damaged log block costs the
//!   records with a byte in that 32 KiB block, a damaged data block the keys it holds), reads of
//!   damaged table keys fail with a corruption rather than return wrong data, and every other key
//!   reads back.
//! - **repair**: `strata::repair` brings back every key whose bytes were not damaged, and the
//!   repaired database checks clean.
//! - **check**: `strata::tools::check_db` lists a problem naming the file (or, for a log cut
//!   short, a note).
//!
//! Every case is run in each mode on its own copy of one template database (see
//! `corruption/mod.rs`); all cases run even when one fails, and the table of outcomes is
//! printed (`--nocapture`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod corruption;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};

use corruption::{
    assert_check_finds, assert_corruption_in, check, check_reads, check_repair, options,
    snappy_template, template, Damage, TableMap, Template, LOG_BLOCK,
};
use strata::testing::BlockSpan;
use strata::{ReadOptions, DB};

/// What opening and reading a damaged copy gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Open failed with a corruption naming the file.
    OpenFails,
    /// Open succeeded; reads of damaged keys failed with a corruption naming the file, and
    /// none of them read as absent.
    ReadsFail,
    /// Open succeeded; some damaged keys are gone, every other key reads back.
    Lost,
    /// Open succeeded and every key reads back.
    Intact,
}

/// What `check_db` said about the damaged file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    Problem,
    Note,
}

struct Case {
    kind: &'static str,
    what: String,
    /// The damaged file.
    file: String,
    damage: Damage,
    /// Where reported offsets may point (the damaged piece), when errors carry one.
    region: Option<Range<u64>>,
    /// Keys the damage may cost.
    lost: BTreeSet<Vec<u8>>,
    /// Keys it must cost (it really hit them).
    hit: BTreeSet<Vec<u8>>,
    /// The file open failures name, when not the damaged one.
    blamed: Option<String>,
    paranoid: Seen,
    lenient: Seen,
    found: Found,
}

impl Case {
    fn new(kind: &'static str, what: impl Into<String>, file: &str, damage: Damage) -> Case {
        Case {
            kind,
            what: what.into(),
            file: file.to_owned(),
            damage,
            region: None,
            lost: BTreeSet::new(),
            hit: BTreeSet::new(),
            blamed: None,
            paranoid: Seen::OpenFails,
            lenient: Seen::OpenFails,
            found: Found::Problem,
        }
    }

    fn region(mut self, region: Range<u64>) -> Case {
        self.region = Some(region);
        self
    }

    fn loses(mut self, lost: BTreeSet<Vec<u8>>) -> Case {
        self.lost = lost;
        self
    }

    fn hits(mut self, hit: BTreeSet<Vec<u8>>) -> Case {
        self.hit = hit;
        self
    }

    fn blames(mut self, file: &str) -> Case {
        self.blamed = Some(file.to_owned());
        self
    }

    fn expect(mut self, paranoid: Seen, lenient: Seen, found: Found) -> Case {
        self.paranoid = paranoid;
        self.lenient = lenient;
        self.found = found;
        self
    }
}

/// What one case gave in each mode.
#[derive(Debug)]
struct Observed {
    paranoid: Seen,
    lenient: Seen,
    /// Damaged keys lost after lenient recovery / repair.
    lenient_lost: usize,
    repair_lost: usize,
    found: Found,
}

/// Opens a copy of `damaged` and reads everything back, checking every read against the case.
fn open_and_read(
    t: &Template,
    case: &Case,
    damaged: &std::path::Path,
    paranoid: bool,
) -> (Seen, usize) {
    let copy = corruption::copy_dir(damaged);
    let blamed = case.blamed.as_deref().unwrap_or(&case.file);
    let region = case
        .blamed
        .is_none()
        .then_some(())
        .and(case.region.as_ref());
    let db = match DB::open(&copy.path, options(paranoid)) {
        Ok(db) => db,
        Err(e) => {
            assert_corruption_in(&e, blamed, region);
            return (Seen::OpenFails, 0);
        }
    };
    let read = ReadOptions {
        verify_checksums: !paranoid,
        ..ReadOptions::default()
    };
    let reads = check_reads(
        &t.expected,
        &db,
        &read,
        &case.lost,
        &case.file,
        case.region.as_ref(),
    );
    for key in &case.hit {
        let got = db.get_opt(&read, key);
        assert!(
            !matches!(got, Ok(Some(_))),
            "{} was damaged but reads back",
            String::from_utf8_lossy(key)
        );
    }
    let seen = if reads.failed > 0 {
        assert_eq!(reads.absent, 0, "damaged table keys read as absent");
        Seen::ReadsFail
    } else if reads.absent > 0 {
        Seen::Lost
    } else {
        Seen::Intact
    };
    (seen, reads.absent + reads.failed)
}

fn run(t: &Template, case: &Case) -> Observed {
    let damaged = t.copy();
    case.damage.apply(&damaged.path.join(&case.file));
    let (paranoid, _) = open_and_read(t, case, &damaged.path, true);
    let (lenient, lenient_lost) = open_and_read(t, case, &damaged.path, false);
    let back = check_repair(t, &damaged.path, &case.lost);
    let report = check(&damaged.path);
    let found = if let Some(blamed) = &case.blamed {
        assert!(
            report
                .problems
                .iter()
                .any(|p| &p.file == blamed && p.message.contains(&case.file)),
            "check does not report {} in {blamed}:\n{report}",
            case.file
        );
        Found::Problem
    } else if report.problems.iter().any(|p| p.file == case.file) {
        assert_check_finds(&report, &case.file, case.region.as_ref());
        Found::Problem
    } else {
        assert!(
            report.notes.iter().any(|n| n.contains(&case.file)),
            "check says nothing of {}:\n{report}",
            case.file
        );
        Found::Note
    };
    Observed {
        paranoid,
        lenient,
        lenient_lost,
        repair_lost: case.lost.len() - back,
        found,
    }
}

/// Runs every case, prints the outcomes, and fails listing every case that went wrong.
fn run_all(t: &Template, cases: Vec<Case>) {
    let mut failures = Vec::new();
    let mut counts: BTreeMap<(&str, String), usize> = BTreeMap::new();
    for case in &cases {
        let label = format!("{} / {} {}", case.kind, case.damage.verb(), case.what);
        match catch_unwind(AssertUnwindSafe(|| run(t, case))) {
            Ok(seen) => {
                println!(
                    "{label}: paranoid {:?}, lenient {:?} ({} of {} damaged-region keys lost), \
                     repair loses {}, check: {:?}",
                    seen.paranoid,
                    seen.lenient,
                    seen.lenient_lost,
                    case.lost.len(),
                    seen.repair_lost,
                    seen.found
                );
                let expected = (case.paranoid, case.lenient, case.found);
                let got = (seen.paranoid, seen.lenient, seen.found);
                if expected != got {
                    failures.push(format!("{label}: expected {expected:?}, got {got:?}"));
                }
                let outcome = format!(
                    "paranoid {:?}, lenient {:?}, check {:?}",
                    seen.paranoid, seen.lenient, seen.found
                );
                *counts.entry((case.kind, outcome)).or_default() += 1;
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{label}: {message}"));
            }
        }
    }
    for ((kind, outcome), n) in &counts {
        println!("{n:3} x {kind}: {outcome}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Where a reader may report damage to `range` of the log: the 32 KiB blocks it touches, from
/// the first header of the first record with a fragment there (a record dropped for a bad
/// fragment is reported where it starts).
fn blocks_of(t: &Template, range: &Range<u64>) -> Range<u64> {
    let blocks =
        range.start / LOG_BLOCK * LOG_BLOCK..(range.end - 1) / LOG_BLOCK * LOG_BLOCK + LOG_BLOCK;
    let first = t
        .log
        .iter()
        .filter(|r| r.start < blocks.end && blocks.start < r.end)
        .map(|r| r.start)
        .min()
        .unwrap_or(blocks.start);
    first.min(blocks.start)..blocks.end
}

#[test]
fn write_ahead_log_damage() {
    let t = template();
    let log = &t.log_name;
    let size = t.log_size;
    // A record inside one block, and one spanning blocks.
    let small = t
        .log
        .iter()
        .find(|r| r.start > 3 * LOG_BLOCK && r.start / LOG_BLOCK == (r.end - 1) / LOG_BLOCK)
        .unwrap();
    let big = t
        .log
        .iter()
        .find(|r| r.start > LOG_BLOCK && (r.end - r.start) > 2 * LOG_BLOCK)
        .unwrap();
    let one = |k: &Vec<u8>| BTreeSet::from([k.clone()]);
    let mut cases = Vec::new();
    // Damage ends the write-ahead log for recovery (it may be a power loss's gap, before
    // records written later, `log/reader.rs`): it may cost every write after it.
    let mut damaged = |what: &str, damage: Damage, hit: BTreeSet<Vec<u8>>| {
        let region = damage.region(size);
        let lost = t.log_keys_touching(region.start..size);
        cases.push(
            Case::new("wal", what, log, damage)
                .region(blocks_of(t, &region))
                .loses(lost)
                .hits(hit)
                .expect(Seen::OpenFails, Seen::Lost, Found::Problem),
        );
    };
    damaged(
        "a payload byte",
        Damage::Flip(small.start + 40),
        one(&small.key),
    );
    damaged(
        "a checksum byte",
        Damage::Flip(small.start + 1),
        one(&small.key),
    );
    damaged(
        "a length byte",
        Damage::Flip(small.start + 5),
        one(&small.key),
    );
    damaged(
        "a type byte",
        Damage::Flip(small.start + 6),
        one(&small.key),
    );
    let middle = big.start + LOG_BLOCK + 100;
    damaged(
        "a byte of a middle fragment",
        Damage::Flip(middle),
        one(&big.key),
    );
    damaged(
        "a record's header and payload start",
        Damage::Zero(small.start..small.start + 64),
        one(&small.key),
    );
    damaged(
        "a payload range",
        Damage::Zero(small.start + 20..small.start + 60),
        one(&small.key),
    );
    damaged(
        "a whole block",
        Damage::Zero(4 * LOG_BLOCK..5 * LOG_BLOCK),
        t.log_keys_touching(4 * LOG_BLOCK..5 * LOG_BLOCK),
    );
    damaged(
        "an aligned block",
        Damage::Splice(5 * LOG_BLOCK..6 * LOG_BLOCK),
        t.log_keys_touching(5 * LOG_BLOCK..6 * LOG_BLOCK),
    );
    // Removing bytes misaligns every later block: everything after the cut is lost.
    let cut = small.start + 30..small.start + 130;
    let after = t.log_keys_touching(cut.start..size);
    cases.push(
        Case::new(
            "wal",
            "100 bytes mid-record",
            log,
            Damage::Splice(cut.clone()),
        )
        .region(blocks_of(t, &cut).start..size)
        .loses(after.clone())
        .hits(after)
        .expect(Seen::OpenFails, Seen::Lost, Found::Problem),
    );
    // A log cut short is what a crash leaves: not an error, even for paranoid checks.
    for (what, at) in [
        ("inside a record", small.start + 50),
        ("inside a record's header", small.start + 3),
        ("at a block boundary", 6 * LOG_BLOCK),
        ("inside a spanning record", big.start + LOG_BLOCK + 10),
    ] {
        let lost = t.log_keys_touching(at..size);
        cases.push(
            Case::new("wal", what, log, Damage::Truncate(at))
                .region(at..size)
                .loses(lost.clone())
                .hits(lost)
                .expect(Seen::Lost, Seen::Lost, Found::Note),
        );
    }
    let all = t.all_log_keys();
    cases.push(
        Case::new("wal", "the file", log, Damage::Delete)
            .blames(&t.manifest_name)
            .loses(all.clone())
            .hits(all)
            .expect(Seen::OpenFails, Seen::Lost, Found::Problem),
    );
    run_all(t, cases);
}

/// Cases damaging one piece of table `table` (all of whose keys a broken table costs).
fn table_piece_cases(
    table: &TableMap,
    piece: &str,
    range: Range<u64>,
    lost: &BTreeSet<Vec<u8>>,
    paranoid: Seen,
    lenient: Seen,
) -> Vec<Case> {
    let mid = range.start + (range.end - range.start) / 2;
    [
        (format!("{piece}: a middle byte"), Damage::Flip(mid)),
        (
            format!("{piece}: the first byte"),
            Damage::Flip(range.start),
        ),
        (
            format!("{piece}: the last byte"),
            Damage::Flip(range.end - 1),
        ),
        (
            format!("{piece}: 32 bytes"),
            Damage::Zero(mid..(mid + 32).min(range.end)),
        ),
    ]
    .into_iter()
    .map(|(what, damage)| {
        let hit = if lenient == Seen::Intact {
            BTreeSet::new()
        } else {
            lost.clone()
        };
        Case::new("table", what, &table.name, damage)
            .region(range.clone())
            .loses(lost.clone())
            .hits(hit)
            .expect(paranoid, lenient, Found::Problem)
    })
    .collect()
}

/// Every table case, on the first table of `t`.
fn table_cases(t: &Template) -> Vec<Case> {
    let table = &t.tables[0];
    let all = table.keys();
    let mut cases = Vec::new();
    for block in [0, 7, table.data.len() - 1] {
        let (piece, keys) = &table.data[block];
        let keys: BTreeSet<Vec<u8>> = keys.iter().cloned().collect();
        cases.extend(table_piece_cases(
            table,
            &format!("data block {block}"),
            piece.range(),
            &keys,
            Seen::ReadsFail,
            Seen::ReadsFail,
        ));
    }
    // A damaged filter or metaindex costs nothing: reads go without the filter.
    for (name, piece) in [
        ("filter block", table.filter),
        ("metaindex block", table.metaindex),
    ] {
        cases.extend(table_piece_cases(
            table,
            name,
            piece.range(),
            &BTreeSet::new(),
            Seen::Intact,
            Seen::Intact,
        ));
    }
    // Without the index or the footer nothing of the table can be found.
    cases.extend(table_piece_cases(
        table,
        "index block",
        table.index.range(),
        &all,
        Seen::ReadsFail,
        Seen::ReadsFail,
    ));
    let footer = table.footer();
    for (what, damage) in [
        ("footer: the magic number", Damage::Flip(footer.end - 3)),
        ("footer: the index handle", Damage::Flip(footer.start + 4)),
        ("footer: all of it", Damage::Zero(footer.clone())),
    ] {
        cases.push(
            Case::new("table", what, &table.name, damage)
                .region(0..table.size)
                .loses(all.clone())
                .hits(all.clone())
                .expect(Seen::ReadsFail, Seen::ReadsFail, Found::Problem),
        );
    }
    // A metaindex handle pointing elsewhere loses the filter, nothing else.
    cases.push(
        Case::new(
            "table",
            "footer: the metaindex handle",
            &table.name,
            Damage::Flip(footer.start),
        )
        .region(0..table.size)
        .expect(Seen::Intact, Seen::Intact, Found::Problem),
    );
    for (what, at) in [
        ("by one byte", table.size - 1),
        ("to half", table.size / 2),
        ("to nothing", 0),
    ] {
        cases.push(
            Case::new("table", what, &table.name, Damage::Truncate(at))
                .loses(all.clone())
                .hits(all.clone())
                .expect(Seen::ReadsFail, Seen::ReadsFail, Found::Problem),
        );
    }
    let block: BlockSpan = table.data[3].0;
    cases.push(
        Case::new(
            "table",
            "data block 3",
            &table.name,
            Damage::Splice(block.range()),
        )
        .loses(all.clone())
        .hits(all.clone())
        .expect(Seen::ReadsFail, Seen::ReadsFail, Found::Problem),
    );
    cases.push(
        Case::new("table", "the file", &table.name, Damage::Delete)
            .blames(&t.manifest_name)
            .loses(all.clone())
            .expect(Seen::OpenFails, Seen::OpenFails, Found::Problem),
    );
    cases
}

#[test]
fn table_damage() {
    let t = template();
    run_all(t, table_cases(t));
}

#[test]
fn compressed_table_damage() {
    let t = snappy_template();
    run_all(t, table_cases(t));
}

#[test]
fn manifest_damage() {
    let t = template();
    let name = &t.manifest_name;
    let size = fs::metadata(t.path.join(name)).unwrap().len();
    let records = &t.manifest;
    // Damage followed by whole records: never a torn write, always an error.
    let (first_start, first_end) = records[0];
    let (mid_start, mid_end) = records[records.len() / 2];
    let mut cases = Vec::new();
    for (what, damage) in [
        (
            "first record: a payload byte",
            Damage::Flip(first_start + 9),
        ),
        ("first record: a length byte", Damage::Flip(first_start + 4)),
        (
            "middle record: a payload byte",
            Damage::Flip((mid_start + mid_end) / 2),
        ),
        (
            "middle record: header and payload",
            Damage::Zero(mid_start..mid_end),
        ),
        (
            "first record: its payload",
            Damage::Zero(first_start + 7..first_end),
        ),
        (
            "10 bytes of the middle record",
            Damage::Splice(mid_start + 7..mid_start + 17),
        ),
    ] {
        cases.push(
            Case::new("manifest", what, name, damage)
                .region(0..size)
                .expect(Seen::OpenFails, Seen::OpenFails, Found::Problem),
        );
    }
    cases.push(
        Case::new(
            "manifest",
            "inside the first record",
            name,
            Damage::Truncate(9),
        )
        .expect(Seen::OpenFails, Seen::OpenFails, Found::Problem),
    );
    cases.push(
        Case::new("manifest", "the file", name, Damage::Delete)
            .blames("CURRENT")
            .expect(Seen::OpenFails, Seen::OpenFails, Found::Problem),
    );
    run_all(t, cases);
}

#[test]
fn current_damage() {
    let t = template();
    let len = t.manifest_name.len() as u64;
    let mut cases = Vec::new();
    for (what, damage) in [
        ("a digit of the manifest number", Damage::Flip(len - 1)),
        ("the first letter", Damage::Flip(0)),
        ("the newline", Damage::Flip(len)),
        ("all of it", Damage::Zero(0..len + 1)),
        ("to the name without its newline", Damage::Truncate(len)),
        ("to nothing", Damage::Truncate(0)),
    ] {
        cases.push(Case::new("CURRENT", what, "CURRENT", damage).expect(
            Seen::OpenFails,
            Seen::OpenFails,
            Found::Problem,
        ));
    }
    run_all(t, cases);
}
