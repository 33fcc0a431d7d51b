//! A read-only handle checks each log record it replays against the format extensions the
//! manifest records (`write::check_logged_batch`), and skips a record that uses another one as
//! damage. `ManifestFollower::refresh` reads only the edits appended since its last read
//! (`ReadManifest::read_after`), but `ReadManifest::replay` started their extensions from none,
//! not from the earlier read's: after the writer's first flush appended an edit that records no
//! comparator, the handle "recorded" no extension, and every expiring put or range deletion
//! logged since was skipped, acknowledged writes the handle never showed (a handle opened anew
//! showed them). Found by helper-35 in the review of the memtables' key filter (issue 21).
//! `read_after` now carries the extensions over as it does the counters.

use std::time::Duration;

use strata::{Options, DB};

fn options() -> Options {
    Options {
        create_if_missing: true,
        expiring_keys: true,
        range_deletes: true,
        ..Options::default()
    }
}

#[test]
fn expiring_puts_and_range_deletions_logged_after_a_flush_reach_a_refreshed_handle() {
    let dir = tempfile::tempdir().unwrap();
    let writer = DB::open(dir.path(), options()).unwrap();
    writer.put(b"gone", b"old").unwrap();
    let handle = DB::open_read_only(dir.path(), options()).unwrap();
    // A flush: the manifest gets an edit without a comparator record.
    writer.compact_range(None, None).unwrap();
    handle.refresh().unwrap();
    writer
        .put_with_ttl(b"expiring", b"v", Duration::from_secs(3600))
        .unwrap();
    writer.delete_range(b"gone", b"gonf").unwrap();
    handle.refresh().unwrap();
    assert_eq!(writer.get(b"expiring").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(writer.get(b"gone").unwrap(), None);
    let fresh = DB::open_read_only(dir.path(), options()).unwrap();
    assert_eq!(fresh.get(b"expiring").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(fresh.get(b"gone").unwrap(), None);
    assert_eq!(
        handle.get(b"expiring").unwrap().as_deref(),
        Some(&b"v"[..]),
        "the refreshed handle lost an acknowledged expiring put"
    );
    assert_eq!(
        handle.get(b"gone").unwrap(),
        None,
        "the refreshed handle lost an acknowledged range deletion"
    );
}
