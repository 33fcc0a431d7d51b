//! Every test `docs/guarantees.md` cites exists: each `` `file.rs::test` `` names a file (in
//! `crates/strata/tests/` unless the path starts at the repository root) that defines
//! `fn test`, and each `` `file.rs` `` a file that exists; `` `::test` `` continues the file cited
//! before it. A rename that forgets the document fails here.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::{Path, PathBuf};

/// A citation: the file, and the test when one is named.
#[derive(Debug, PartialEq, Eq)]
struct Citation {
    file: String,
    test: Option<String>,
}

/// The citations of `doc`, in order (backticked spans naming a `.rs` file or `::test`).
fn citations(doc: &str) -> Vec<Citation> {
    let mut out: Vec<Citation> = Vec::new();
    for (i, span) in doc.split('`').enumerate() {
        if i % 2 == 0 || span.contains(char::is_whitespace) {
            continue;
        }
        if let Some(test) = span.strip_prefix("::") {
            let file = out
                .last()
                .map(|c| c.file.clone())
                .expect("`::test` after a file");
            out.push(Citation {
                file,
                test: Some(test.to_owned()),
            });
        } else if let Some((file, test)) = span.split_once(".rs::") {
            out.push(Citation {
                file: format!("{file}.rs"),
                test: Some(test.to_owned()),
            });
        } else if span.ends_with(".rs") {
            out.push(Citation {
                file: span.to_owned(),
                test: None,
            });
        }
    }
    out
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn resolve(file: &str) -> PathBuf {
    let root = repository_root();
    if file.starts_with("crates/") || file.starts_with("bindings/") {
        root.join(file)
    } else {
        root.join("crates/strata/tests").join(file)
    }
}

#[test]
fn every_cited_test_exists() {
    let doc = std::fs::read_to_string(repository_root().join("docs/guarantees.md")).unwrap();
    let cited = citations(&doc);
    assert!(cited.len() > 40, "found only {} citations", cited.len());
    let mut missing = Vec::new();
    for c in &cited {
        let path = resolve(&c.file);
        let Ok(source) = std::fs::read_to_string(&path) else {
            missing.push(format!("{}: no such file ({})", c.file, path.display()));
            continue;
        };
        if let Some(test) = &c.test {
            if !source.contains(&format!("fn {test}(")) {
                missing.push(format!("{}::{test}: no such test", c.file));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/guarantees.md cites:\n{}",
        missing.join("\n")
    );
}

#[test]
fn citations_are_read_in_every_form() {
    let doc = "a (`x.rs::one`, `::two`; `dir/y.rs`) and `crates/z/tests/w.rs::three`, `not code`";
    let cite = |file: &str, test: Option<&str>| Citation {
        file: file.to_owned(),
        test: test.map(str::to_owned),
    };
    assert_eq!(
        citations(doc),
        vec![
            cite("x.rs", Some("one")),
            cite("x.rs", Some("two")),
            cite("dir/y.rs", None),
            cite("crates/z/tests/w.rs", Some("three")),
        ]
    );
}
