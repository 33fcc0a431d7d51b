//! Shared by the reliability tests: a recorded history of writes, the check that a database
//! holds a prefix of it, and the helpers that read a database's whole state.
//!
//! A history starts from a known state (`base`) and lists every write attempted since, in the
//! order the calls returned, each marked acknowledged or failed and synced or not. Every value
//! written is unique (it names the write that made it), so a value found in the database can be
//! traced back to its write.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design
#![allow(dead_code)] // each test crate uses a part

pub mod hook_env;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use strata::{Env, ReadOptions, WriteBatch, DB};

/// A database's contents: user key to value.
pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// One write call: its updates (a value, or `None` for a deletion) applied atomically.
#[derive(Debug, Clone)]
pub struct Op {
    pub updates: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    pub sync: bool,
    /// The call returned `Ok`.
    pub acked: bool,
}

impl Op {
    /// The batch that performs this write.
    pub fn batch(&self) -> WriteBatch {
        let mut batch = WriteBatch::new();
        for (key, value) in &self.updates {
            match value {
                Some(value) => batch.put(key, value),
                None => batch.delete(key),
            }
        }
        batch
    }

    pub fn apply(&self, model: &mut Model) {
        for (key, value) in &self.updates {
            match value {
                Some(value) => model.insert(key.clone(), value.clone()),
                None => model.remove(key),
            };
        }
    }
}

/// Every write attempted since the database was known to hold `base`.
#[derive(Debug, Clone, Default)]
pub struct History {
    pub base: Model,
    pub ops: Vec<Op>,
}

impl History {
    /// Starts over from a verified state.
    pub fn restart(&mut self, state: Model) {
        self.base = state;
        self.ops.clear();
    }

    /// Number of ops every surviving state must include: up to the last synced acknowledged one.
    pub fn synced_len(&self) -> usize {
        self.ops
            .iter()
            .rposition(|op| op.acked && op.sync)
            .map_or(0, |i| i + 1)
    }

    /// Number of ops up to the last acknowledged one.
    pub fn acked_len(&self) -> usize {
        self.ops
            .iter()
            .rposition(|op| op.acked)
            .map_or(0, |i| i + 1)
    }

    /// The state after `base` and the first `len` ops.
    pub fn state_after(&self, len: usize) -> Model {
        let mut model = self.base.clone();
        for op in &self.ops[..len] {
            op.apply(&mut model);
        }
        model
    }

    /// Every `len >= min_len` such that `base` plus the first `len` ops equals `state`, in
    /// increasing order. Linear in the history: keeps a count of keys where the model differs.
    pub fn matching_prefixes(&self, state: &Model, min_len: usize) -> Vec<usize> {
        let mut model = self.base.clone();
        let keys: BTreeSet<&Vec<u8>> = model.keys().chain(state.keys()).collect();
        let mut differing = keys
            .into_iter()
            .filter(|k| model.get(*k) != state.get(*k))
            .count();
        let mut found = Vec::new();
        if differing == 0 && min_len == 0 {
            found.push(0);
        }
        for (i, op) in self.ops.iter().enumerate() {
            for (key, value) in &op.updates {
                let before = model.get(key) != state.get(key);
                match value {
                    Some(value) => model.insert(key.clone(), value.clone()),
                    None => model.remove(key),
                };
                let after = model.get(key) != state.get(key);
                differing = differing + usize::from(after) - usize::from(before);
            }
            if differing == 0 && i + 1 >= min_len {
                found.push(i + 1);
            }
        }
        found
    }

    /// Why `state` is no prefix state at or past `min_len`: the keys where it differs from the
    /// state after `min_len` ops and from the state after all of them, each value traced to
    /// the write that made it.
    pub fn explain(&self, state: &Model, min_len: usize) -> String {
        let mut out = String::new();
        let synced = self.synced_len();
        let _ = writeln!(
            out,
            "history: {} ops ({} acknowledged, last synced ack at #{}), must hold >= {min_len}",
            self.ops.len(),
            self.ops.iter().filter(|op| op.acked).count(),
            synced as i64 - 1
        );
        for (label, len) in [
            ("required prefix", min_len),
            ("full history", self.ops.len()),
        ] {
            let model = self.state_after(len);
            let keys: BTreeSet<&Vec<u8>> = model.keys().chain(state.keys()).collect();
            let diffs: Vec<&Vec<u8>> = keys
                .into_iter()
                .filter(|k| model.get(*k) != state.get(*k))
                .collect();
            let _ = writeln!(out, "vs {label} ({len} ops): {} keys differ", diffs.len());
            for key in diffs.into_iter().take(8) {
                let _ = writeln!(
                    out,
                    "  {}: db {} / model {}",
                    String::from_utf8_lossy(key),
                    self.trace(key, state.get(key)),
                    self.trace(key, model.get(key)),
                );
            }
        }
        out
    }

    /// Names the write that gave `key` the value `value` (or the deletions that could have
    /// removed it).
    fn trace(&self, key: &[u8], value: Option<&Vec<u8>>) -> String {
        let writers: Vec<String> = self
            .ops
            .iter()
            .enumerate()
            .filter(|(_, op)| {
                op.updates
                    .iter()
                    .any(|(k, v)| k.as_slice() == key && v.as_ref() == value)
            })
            .map(|(i, op)| {
                format!(
                    "#{i}{}{}",
                    if op.sync { "s" } else { "" },
                    if op.acked { "" } else { "!" }
                )
            })
            .collect();
        let from_base = self.base.get(key) == value && value.is_some();
        match value {
            None => format!(
                "absent (deleted by {writers:?}{})",
                if self.base.contains_key(key) {
                    ""
                } else {
                    ", absent in base"
                }
            ),
            Some(v) => format!(
                "{:?}.. (written by {writers:?}{})",
                String::from_utf8_lossy(&v[..v.len().min(24)]),
                if from_base { ", in base" } else { "" }
            ),
        }
    }
}

/// Every pair a forward scan with `options` finds.
pub fn scan(db: &DB, options: &ReadOptions) -> strata::Result<Model> {
    let mut state = Model::new();
    let mut it = db.iter_opt(options);
    it.seek_to_first();
    while it.valid() {
        state.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status()?;
    Ok(state)
}

/// The whole database by a forward scan, checked against a backward scan and point lookups of
/// `probe_keys` (which must agree with the scan).
pub fn read_state(db: &DB, probe_keys: &[Vec<u8>]) -> strata::Result<Model> {
    let state = scan(db, &ReadOptions::default())?;
    let mut it = db.iter();
    let mut backward = 0;
    it.seek_to_last();
    while it.valid() {
        backward += 1;
        it.prev();
    }
    it.status()?;
    assert_eq!(backward, state.len(), "backward scan saw a different count");
    for key in probe_keys {
        let got = db.get(key)?;
        assert_eq!(
            got.as_ref(),
            state.get(key),
            "get and scan disagree on {}",
            String::from_utf8_lossy(key)
        );
    }
    Ok(state)
}

/// The seeds of a randomized test's trials: the one in the environment variable `seed_var`
/// alone if set (to rerun a reported failure), else `count_var` (default `default_count`)
/// seeds spread from `salt`.
pub fn seeds(seed_var: &str, count_var: &str, default_count: u64, salt: u64) -> Vec<u64> {
    if let Ok(seed) = std::env::var(seed_var) {
        return vec![seed
            .parse()
            .unwrap_or_else(|_| panic!("{seed_var} is a number"))];
    }
    let n = std::env::var(count_var)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default_count);
    (0..n)
        .map(|trial: u64| trial.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt)
        .collect()
}

/// The last `lines` lines of the database's info log, for failure reports.
pub fn log_tail(env: &dyn Env, dir: &Path, lines: usize) -> String {
    let text = read_file(env, &dir.join("LOG")).unwrap_or_default();
    let text = String::from_utf8_lossy(&text).into_owned();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

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

/// Appends raw bytes to file `name` in `dir` of `env` (pass a fault env's inner one: behind the
/// database's back), as a torn write leaves them.
pub fn append_raw(env: &dyn Env, dir: &str, name: &str, bytes: &[u8]) {
    let mut file = env.new_appendable_file(&Path::new(dir).join(name)).unwrap();
    file.append(bytes).unwrap();
    file.close().unwrap();
}
