//! Whole files through an `Env`: read, written, edited in place, listed and copied, a manifest
//! written by hand, and the info log.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use strata::testing::{
    encode_version_edit, read_log_file, version_edit_fields, write_log_file, EditFields,
};
use strata::Env;

/// A whole file's bytes.
pub fn read_file(env: &dyn Env, path: &Path) -> strata::Result<Vec<u8>> {
    let mut file = env.new_sequential_file(path)?;
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// The comparator name the first edit of the live manifest of the database in `dir` records
/// (a format-extension marker, or the comparator's own name).
pub fn recorded_comparator(env: &dyn Env, dir: &Path) -> String {
    let current = String::from_utf8(read_file(env, &dir.join("CURRENT")).unwrap()).unwrap();
    let records = read_log_file(env, &dir.join(current.trim_end())).unwrap();
    version_edit_fields(&records.records[0])
        .unwrap()
        .comparator
        .expect("the first edit names the comparator")
}

/// Creates (or truncates) the file at `path` holding `bytes`, and closes it (unsynced).
pub fn write_file(env: &dyn Env, path: &Path, bytes: &[u8]) {
    let mut file = env.new_writable_file(path).unwrap();
    file.append(bytes).unwrap();
    file.close().unwrap();
}

/// Reads the file at `path`, lets `edit` change its bytes, and writes them back (pass a fault
/// env's inner env to do it behind the database's back).
pub fn rewrite_file(env: &dyn Env, path: &Path, edit: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = read_file(env, path).unwrap();
    edit(&mut bytes);
    write_file(env, path, &bytes);
}

/// Appends raw bytes to file `name` in `dir` of `env` (pass a fault env's inner one: behind the
/// database's back), as a torn write leaves them.
pub fn append_raw(env: &dyn Env, dir: &str, name: &str, bytes: &[u8]) {
    let mut file = env.new_appendable_file(&Path::new(dir).join(name)).unwrap();
    file.append(bytes).unwrap();
    file.close().unwrap();
}

/// The names in `dir` that `keep` accepts, sorted (so numbered files come oldest first).
pub fn file_names(env: &dyn Env, dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut names: Vec<String> = env
        .children(dir)
        .unwrap()
        .into_iter()
        .filter(|name| keep(name))
        .collect();
    names.sort();
    names
}

/// The numbers of the files in `dir` named `<number><suffix>` (`suffix` `.ldb`: the tables).
pub fn numbered_files(env: &dyn Env, dir: &Path, suffix: &str) -> BTreeSet<u64> {
    env.children(dir)
        .unwrap()
        .iter()
        .filter_map(|name| name.strip_suffix(suffix)?.parse().ok())
        .collect()
}

/// The value files (`<number>.vlog`) in `dir`, by number, with their sizes.
pub fn value_file_sizes(env: &dyn Env, dir: &Path) -> BTreeMap<u64, u64> {
    env.children(dir)
        .unwrap()
        .into_iter()
        .filter_map(|name| {
            let number = name.strip_suffix(".vlog")?.parse().ok()?;
            Some((number, env.file_size(&dir.join(&name)).ok()?))
        })
        .collect()
}

/// Copies every file of `dir` in `from` to the same path in `to`.
pub fn copy_dir(from: &dyn Env, to: &dyn Env, dir: &Path) {
    to.create_dir(dir).unwrap();
    for name in from.children(dir).unwrap() {
        let path = dir.join(&name);
        write_file(to, &path, &read_file(from, &path).unwrap());
    }
}

/// Writes `MANIFEST-<number>` in `dir`, holding `edits` (synced), and a `CURRENT` naming it:
/// a database as a manifest written by hand describes it.
pub fn write_manifest(env: &dyn Env, dir: &Path, number: u64, edits: &[EditFields]) {
    let name = format!("MANIFEST-{number:06}");
    let records: Vec<Vec<u8>> = edits
        .iter()
        .map(|edit| encode_version_edit(edit).unwrap())
        .collect();
    let records: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    write_log_file(env, &dir.join(&name), &records).unwrap();
    write_file(env, &dir.join("CURRENT"), format!("{name}\n").as_bytes());
}

/// The database's info log (`LOG`), empty when it has none.
pub fn info_log(env: &dyn Env, dir: &Path) -> String {
    let text = read_file(env, &dir.join("LOG")).unwrap_or_default();
    String::from_utf8_lossy(&text).into_owned()
}

/// The last `lines` lines of the database's info log, for failure reports.
pub fn log_tail(env: &dyn Env, dir: &Path, lines: usize) -> String {
    let text = info_log(env, dir);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
