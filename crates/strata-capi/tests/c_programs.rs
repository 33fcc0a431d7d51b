//! Builds the C programs in `tests/c/` against `libstrata` with the system C compiler and
//! runs them: every function of the C API and of Strata's extensions (`strata/c.h`), the
//! README's C example, the header checked against LevelDB's own, the static library, and the
//! exported symbols.
//!
//! Each program gets a fresh `TEST_TMPDIR`. With `STRATA_CAPI_VALGRIND=1` (as `make test`
//! sets it) the programs run under valgrind, failing on any invalid access or definite leak.

#![allow(clippy::expect_used)] // tests fail loudly by design

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The profile directory above this test's `deps/` (`target/debug` or `target/release`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// The SONAME the shared library carries (set by `build.rs`): what programs linked to it need.
const SONAME: &str = concat!("libstrata.so.", env!("CARGO_PKG_VERSION_MAJOR"));

/// A directory holding `libstrata.so`, `libstrata.so.<major>` (its SONAME, which programs
/// linked to it look for at run time) and `libstrata.a`, linked to cargo's fresh build.
///
/// The libraries are built first: `cargo test` builds only the Rust test harnesses of a
/// `cdylib`/`staticlib` crate, not the libraries themselves, so this asks cargo for them (once
/// per run; cargo holds no lock while tests run, and the engine's artifacts are shared with the
/// test build).
fn lib_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let built = profile_dir();
            let profile = if built.ends_with("release") {
                "--release"
            } else {
                "--profile=test"
            };
            run(Command::new(env!("CARGO"))
                .args(["build", "--quiet", "-p", "strata-capi", profile])
                .arg("--manifest-path")
                .arg(crate_dir().join("Cargo.toml")));
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
                "libstrata-{}",
                built.file_name().expect("profile name").to_string_lossy()
            ));
            std::fs::create_dir_all(&dir).expect("create the library directory");
            for (name, file) in [
                ("libstrata.so", "libstrata.so"),
                (SONAME, "libstrata.so"),
                ("libstrata.a", "libstrata.a"),
            ] {
                let target = built.join(file);
                assert!(target.exists(), "{} not built", target.display());
                let link = dir.join(name);
                let _ = std::fs::remove_file(&link);
                std::os::unix::fs::symlink(&target, &link).expect("link the library");
            }
            dir
        })
        .clone()
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn include_dir() -> PathBuf {
    crate_dir().join("../../include")
}

fn c_source(name: &str) -> PathBuf {
    crate_dir().join("tests/c").join(name)
}

/// The path of LevelDB's own header, when libleveldb-dev is installed.
const LEVELDB_HEADER: &str = "/usr/include/leveldb/c.h";

fn run(command: &mut Command) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Compiles `source` (plus `extra` arguments) into `out/<stem>`, linked to the shared library.
fn compile(source: &str, out: &Path, extra: &[&str]) -> PathBuf {
    let exe = out.join(source.trim_end_matches(".c"));
    let lib = lib_dir();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    run(Command::new(cc)
        .args(["-std=gnu11", "-g", "-Wall", "-Wextra", "-Werror"])
        .args(extra)
        .arg(c_source(source))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lstrata", "-lpthread"]));
    exe
}

fn include_flag() -> String {
    format!("-I{}", include_dir().display())
}

/// Runs a test program with its own test directory, under valgrind when asked to.
fn execute(exe: &Path) -> Output {
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut command = if std::env::var_os("STRATA_CAPI_VALGRIND").is_some_and(|v| v == "1") {
        let mut c = Command::new("valgrind");
        c.args([
            "-q",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--show-leak-kinds=definite",
        ])
        .arg(exe);
        c
    } else {
        Command::new(exe)
    };
    run(command.env("TEST_TMPDIR", tmp.path()))
}

/// Builds and runs one C test program.
fn build_and_run(source: &str) -> Output {
    let out = tempfile::tempdir().expect("temp dir");
    let exe = compile(source, out.path(), &[&include_flag()]);
    execute(&exe)
}

#[test]
fn database_functions_behave_as_leveldbs() {
    build_and_run("db_test.c");
}

#[test]
fn write_batches_iterators_and_snapshots_behave_as_leveldbs() {
    build_and_run("batch_iter_test.c");
}

#[test]
fn comparator_and_filter_policy_callbacks_are_used() {
    build_and_run("callbacks_test.c");
}

#[test]
fn one_database_serves_many_threads() {
    build_and_run("threads_test.c");
}

#[test]
fn read_only_handles_and_checkpoints_from_c() {
    build_and_run("strata_ext_test.c");
}

#[test]
fn batched_reads_range_deletes_and_expiring_keys_from_c() {
    build_and_run("strata_range_ops_test.c");
}

#[test]
fn value_separation_and_head_from_c() {
    build_and_run("strata_value_separation_test.c");
}

#[test]
fn readme_c_example_runs_and_prints_the_scan() {
    let output = build_and_run("example.c");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "banana = yellow\nbanana -> yellow\ncherry -> dark red\n"
    );
}

#[test]
fn static_library_links_with_the_system_libraries_only() {
    let out = tempfile::tempdir().expect("temp dir");
    let exe = out.path().join("example_static");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    run(Command::new(cc)
        .args(["-std=gnu11", "-Wall", "-Werror", &include_flag()])
        .arg(c_source("example.c"))
        .arg(lib_dir().join("libstrata.a"))
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lutil", "-lgcc_s"])
        .arg("-o")
        .arg(&exe));
    let deps = run(Command::new("ldd").arg(&exe));
    assert!(
        !String::from_utf8_lossy(&deps.stdout).contains("libstrata"),
        "statically linked program still needs libstrata.so"
    );
    execute(&exe);
}

#[test]
fn shared_library_carries_its_soname() {
    let dynamic = run(Command::new("readelf")
        .arg("--dynamic")
        .arg(lib_dir().join("libstrata.so")));
    let dynamic = String::from_utf8_lossy(&dynamic.stdout);
    assert!(
        dynamic.contains(&format!("Library soname: [{SONAME}]")),
        "no SONAME {SONAME} in:\n{dynamic}"
    );
}

/// The names starting with `prefix` declared as functions in a header: every `<prefix>x(`.
fn declared_functions(header: &Path, prefix: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(header).expect("read header");
    let mut names = BTreeSet::new();
    for (start, _) in text.match_indices(prefix) {
        let rest = &text[start..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if rest[end..].starts_with('(') {
            names.insert(rest[..end].to_string());
        }
    }
    names
}

/// Every function `leveldb/c.h` declares, then every function `strata/c.h` adds.
fn header_functions() -> (BTreeSet<String>, BTreeSet<String>) {
    (
        declared_functions(&include_dir().join("leveldb/c.h"), "leveldb_"),
        declared_functions(&include_dir().join("strata/c.h"), "strata_"),
    )
}

#[test]
fn library_exports_exactly_the_functions_the_headers_declare() {
    let nm = run(Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib_dir().join("libstrata.so")));
    let exported: BTreeSet<String> = String::from_utf8_lossy(&nm.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2))
        .map(str::to_string)
        .collect();
    let (leveldb, strata) = header_functions();
    assert_eq!(leveldb.len(), 68, "{leveldb:?}");
    assert_eq!(strata.len(), 16, "{strata:?}");
    let declared: BTreeSet<String> = leveldb.union(&strata).cloned().collect();
    assert_eq!(
        exported, declared,
        "exported symbols differ from the headers"
    );
    if Path::new(LEVELDB_HEADER).exists() {
        assert_eq!(
            leveldb,
            declared_functions(Path::new(LEVELDB_HEADER), "leveldb_")
        );
    }
}

#[test]
fn header_declarations_match_leveldbs_header() {
    if !Path::new(LEVELDB_HEADER).exists() {
        eprintln!("skipped: {LEVELDB_HEADER} is not installed");
        return;
    }
    let ours = include_dir().join("leveldb/c.h");
    let define = format!("-DSTRATA_HEADER=\"{}\"", ours.display());
    let out = tempfile::tempdir().expect("temp dir");
    let exe = compile("header_compat_test.c", out.path(), &[&define]);
    execute(&exe);
}

/// The fenced blocks of `lang` in a Markdown text.
fn code_blocks(markdown: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    let mut blocks = Vec::new();
    let mut rest = markdown;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```").expect("unterminated code block");
        blocks.push(body[..end].to_string());
        rest = &body[end..];
    }
    blocks
}

#[test]
fn readme_c_example_is_the_tested_example_c() {
    let readme = std::fs::read_to_string(crate_dir().join("../../README.md")).expect("README");
    let example = std::fs::read_to_string(c_source("example.c")).expect("example.c");
    let blocks = code_blocks(&readme, "c");
    assert!(!blocks.is_empty(), "README has no C example");
    for block in blocks {
        assert!(
            example.contains(&block),
            "README's C block is not part of tests/c/example.c:\n{block}"
        );
    }
}

#[test]
fn c_tests_call_every_function_of_the_headers() {
    let mut sources = String::new();
    for name in [
        "check.h",
        "example.c",
        "db_test.c",
        "batch_iter_test.c",
        "callbacks_test.c",
        "threads_test.c",
        "strata_ext_test.c",
        "strata_range_ops_test.c",
        "strata_value_separation_test.c",
    ] {
        sources += &std::fs::read_to_string(c_source(name)).expect("C test source");
    }
    let (leveldb, strata) = header_functions();
    let uncalled: Vec<String> = leveldb
        .into_iter()
        .chain(strata)
        .filter(|f| !sources.contains(&format!("{f}(")))
        .collect();
    assert!(uncalled.is_empty(), "no C test calls {uncalled:?}");
}

#[test]
fn header_compiles_as_cplusplus() {
    let out = tempfile::tempdir().expect("temp dir");
    let exe = out.path().join("example_cpp");
    let lib = lib_dir();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    if Command::new(&cxx).arg("--version").output().is_err() {
        eprintln!("skipped: no C++ compiler ({cxx})");
        return;
    }
    run(Command::new(cxx)
        .args(["-x", "c++", "-Wall", "-Wextra", "-Werror", &include_flag()])
        .arg(c_source("example.c"))
        .args(["-x", "none"])
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lstrata", "-o"])
        .arg(&exe));
    execute(&exe);
}

/// The C tests, minus the checks of Strata's extensions, pass against LevelDB 1.23 itself:
/// what they expect of Strata is what LevelDB does.
#[test]
fn c_tests_pass_against_real_leveldb_too() {
    if !Path::new(LEVELDB_HEADER).exists() {
        eprintln!("skipped: {LEVELDB_HEADER} is not installed");
        return;
    }
    let out = tempfile::tempdir().expect("temp dir");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    for source in [
        "example.c",
        "db_test.c",
        "batch_iter_test.c",
        "callbacks_test.c",
        "threads_test.c",
    ] {
        let exe = out.path().join(source.trim_end_matches(".c"));
        run(Command::new(&cc)
            .args([
                "-std=gnu11",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-DAGAINST_LEVELDB",
            ])
            .arg(c_source(source))
            .arg("-o")
            .arg(&exe)
            .args(["-lleveldb", "-lpthread"]));
        let tmp = tempfile::tempdir().expect("temp dir");
        run(Command::new(&exe).env("TEST_TMPDIR", tmp.path()));
    }
}
