//! A checkpoint whose target was inside the database's own directory was written there: named
//! like one of the database's files (`db/000100.log`), the copy — a directory — was taken for a
//! log by every later open, writer or read-only, which failed ("Is a directory"). A checkpoint
//! must never write into its source. Found in the review of issue 15. A target inside the
//! database's directory (resolved through `..` and symbolic links) is now refused.

use std::collections::BTreeSet;
use std::path::Path;

use strata::{Error, Options, DB};

fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_checkpoint_inside_the_source_broke_every_later_open() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("db");
    let options = Options {
        create_if_missing: true,
        ..Options::default()
    };
    let db = DB::open(&source, options.clone()).unwrap();
    db.put(b"a", b"1").unwrap();
    std::fs::create_dir(source.join("sub")).unwrap();
    std::os::unix::fs::symlink(&source, dir.path().join("link")).unwrap();
    let before = names(&source);
    for target in [
        source.join("000100.log"),
        source.join("sub/copy"),
        dir.path().join("link/copy"),
    ] {
        let err = db.checkpoint(&target).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(err.to_string().contains("inside"), "{err}");
        assert_eq!(names(&source), before, "nothing written into the source");
    }
    let reader = DB::open_read_only(&source, Options::default()).unwrap();
    reader.checkpoint(source.join("000101.log")).unwrap_err();
    // Beside the source, through `..`, is no part of it.
    db.checkpoint(source.join("../copy")).unwrap();
    db.put(b"b", b"2").unwrap();
    drop((db, reader));
    let db = DB::open(&source, options).unwrap();
    assert_eq!(db.get(b"b").unwrap(), Some(b"2".to_vec()));
    let copy = DB::open(dir.path().join("copy"), Options::default()).unwrap();
    assert_eq!(copy.get(b"a").unwrap(), Some(b"1".to_vec()));
}
