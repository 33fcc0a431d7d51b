//! The engine's modules import one way: each module may use the modules below it in
//! [`LAYERS`] (and itself), never one above. This test reads every source file of
//! `crates/strata/src` and fails, naming the file and the import, when an upward import comes
//! back. `lib.rs` (the public face) and the `tools` and `testing` features sit on top and may
//! use anything.
//!
//! Cross-module paths in the engine are written `crate::module::…` (in `use` lists or inline);
//! `super::` stays inside a module. So the check reads `crate::` paths, outside comments, and
//! refuses a `super::` chain long enough to climb out of its top-level module.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::{Path, PathBuf};

/// The engine's layers, lowest first. A module is listed by its name under `src/`.
const LAYERS: &[&str] = &[
    "error",
    "extension",
    "util",
    "env",
    "filename",
    "log",
    "vlog",
    "write_batch",
    "range_del",
    "iter",
    "memtable",
    "table",
    "version",
    "compaction",
    "snapshot",
    "options",
    "db",
];

/// Modules above every layer: they may import anything.
const TOP: &[&str] = &["lib", "tools", "testing"];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|&m| m == module)
}

/// `source` without its comments (line, block and doc comments), string contents kept.
fn strip_comments(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let rest = &source[i..];
        if in_string {
            if rest.starts_with("\\\"") || rest.starts_with("\\\\") {
                out.push_str(&rest[..2]);
                i += 2;
                continue;
            }
            if rest.starts_with('"') {
                in_string = false;
            }
        } else if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
            continue;
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |end| end + 2);
            continue;
        } else if rest.starts_with('"') && !source[..i].ends_with('\'') {
            in_string = true;
        }
        let c = rest.chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// The top-level modules a piece of code names through `crate::` paths, with each path's
/// start (for the report). `use crate::{a::x, b}` names `a` and `b`.
fn crate_imports(code: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut search = 0;
    while let Some(at) = code[search..].find("crate::") {
        let start = search + at;
        search = start + "crate::".len();
        // `crate::` inside a longer identifier (`my_crate::`) is not the crate root.
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[search..];
        let shown: String = rest.chars().take(40).collect();
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group, up to its closing brace.
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 && c == ',' {
                    found.push((first_segment(&item), shown.clone()));
                    item.clear();
                } else {
                    item.push(c);
                }
            }
            if !item.trim().is_empty() {
                found.push((first_segment(&item), shown.clone()));
            }
        } else {
            found.push((first_segment(rest), shown));
        }
    }
    found
}

fn first_segment(path: &str) -> String {
    path.trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The top-level module a source file belongs to, and how deep below `src/` it sits
/// (`src/db.rs` and `src/db/mod.rs`: 1; `src/db/open.rs`: 2).
fn module_of(src: &Path, file: &Path) -> (String, usize) {
    let relative = file.strip_prefix(src).unwrap();
    let parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let top = parts[0].trim_end_matches(".rs").to_owned();
    let depth = if parts.last().is_some_and(|p| p == "mod.rs") {
        parts.len() - 1
    } else {
        parts.len()
    };
    (top, depth)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every upward import in the engine's sources, as readable lines.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut problems = Vec::new();
    for file in &files {
        let (module, depth) = module_of(src, file);
        let name = file.strip_prefix(src).unwrap().display().to_string();
        if TOP.contains(&module.as_str()) {
            continue;
        }
        let Some(own) = rank(&module) else {
            problems.push(format!(
                "{name}: module `{module}` is in no layer of LAYERS"
            ));
            continue;
        };
        let code = strip_comments(&std::fs::read_to_string(file).unwrap());
        for (target, shown) in crate_imports(&code) {
            let allowed = match rank(&target) {
                Some(r) => r <= own,
                // `crate::Error`-style paths through lib.rs re-exports, or a top module.
                None => false,
            };
            if !allowed {
                problems.push(format!(
                    "{name}: `{module}` imports `{target}` above it: crate::{shown}"
                ));
            }
        }
        // From a nested `mod tests` in a file at depth d, d + 1 `super`s reach the crate root.
        let climb = "super::".repeat(depth + 1);
        if code.contains(&climb) {
            problems.push(format!(
                "{name}: a `super::` chain climbs out of `{module}`"
            ));
        }
    }
    problems
}

#[test]
fn engine_modules_import_only_downward() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = violations(&src);
    assert!(
        problems.is_empty(),
        "upward imports (layers, lowest first: {LAYERS:?}):\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_source_directory_is_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let module = name.trim_end_matches(".rs");
        assert!(
            rank(module).is_some() || TOP.contains(&module),
            "src/{name} is in no layer"
        );
    }
}

#[test]
fn the_check_sees_upward_imports_in_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("table")).unwrap();
    std::fs::create_dir_all(src.join("util")).unwrap();
    let lower = "//! fine: crate::db is only mentioned in a comment\nuse crate::error::Result;\n";
    std::fs::write(src.join("util/mod.rs"), lower).unwrap();
    for i in 0..50 {
        std::fs::write(src.join(format!("util/f{i}.rs")), lower).unwrap();
    }
    let upward = "use crate::{util::x, options::ReadOptions};\n\
                  fn f() { let _ = crate::db::open(); }\n\
                  /* crate::compaction in a block comment */\n\
                  const URL: &str = \"http://x\"; use crate::version::Version;\n";
    std::fs::write(src.join("table/reader.rs"), upward).unwrap();
    std::fs::write(
        src.join("table/mod.rs"),
        "mod tests { fn f() { super::super::db::x(); } }\n",
    )
    .unwrap();
    let problems = violations(&src);
    let named = |needle: &str| problems.iter().any(|p| p.contains(needle));
    assert!(named("imports `options`"), "{problems:#?}");
    assert!(named("imports `db`"), "{problems:#?}");
    assert!(
        named("imports `version`"),
        "a `//` in a string is no comment: {problems:#?}"
    );
    assert!(named("table/mod.rs: a `super::` chain"), "{problems:#?}");
    assert!(!named("imports `compaction`"), "{problems:#?}");
    assert!(!named("util/"), "{problems:#?}");
    assert_eq!(problems.len(), 4, "{problems:#?}");
}
