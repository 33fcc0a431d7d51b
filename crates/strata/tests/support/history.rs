//! A recorded history of writes, and the checks that a database holds a prefix of it, or what
//! a salvage of it can leave.
//!
//! A history starts from a known state (`base`) and lists every write attempted since, in the
//! order the calls returned, each marked acknowledged or failed and synced or not. Every value
//! written is unique (it names the write that made it), so a value found in the database can be
//! traced back to its write.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use strata::WriteBatch;

use super::state::Model;

/// One write call: its range deletions `[start, end)`, then its updates (a value, or `None`
/// for a deletion), applied atomically.
#[derive(Debug, Clone)]
pub struct Op {
    /// Range deletions (format extension `range-deletes`), applied before `updates`.
    pub range_deletes: Vec<(Vec<u8>, Vec<u8>)>,
    pub updates: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    pub sync: bool,
    /// The call returned `Ok`.
    pub acked: bool,
}

impl Op {
    /// The batch that performs this write.
    pub fn batch(&self) -> WriteBatch {
        let mut batch = WriteBatch::new();
        for (start, end) in &self.range_deletes {
            batch.delete_range(start, end);
        }
        for (key, value) in &self.updates {
            match value {
                Some(value) => batch.put(key, value),
                None => batch.delete(key),
            }
        }
        batch
    }

    pub fn apply(&self, model: &mut Model) {
        for (start, end) in &self.range_deletes {
            model.retain(|k, _| k < start || k >= end);
        }
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
            for (start, end) in op.range_deletes.iter().filter(|(s, e)| s < e) {
                let deleted: Vec<Vec<u8>> = model
                    .range(start.clone()..end.clone())
                    .map(|(k, _)| k.clone())
                    .collect();
                for key in deleted {
                    let before = model.get(&key) != state.get(&key);
                    model.remove(&key);
                    let after = model.get(&key) != state.get(&key);
                    differing = differing + usize::from(after) - usize::from(before);
                }
            }
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

    /// Whether `state` is what salvaging the history can leave (`strata::repair` after a power
    /// loss, docs/guarantees.md): every key holds its value after the first `min_len` ops (the
    /// synced ones) or the value one of the later ops left it at, so no synced write is lost
    /// and nothing is there that no write put there. Unlike a prefix, later writes may be kept
    /// without earlier ones. Checked key by key: a batch kept in part is not caught.
    pub fn salvaged(&self, state: &Model, min_len: usize) -> bool {
        let synced = self.state_after(min_len);
        let later = &self.ops[min_len..];
        let keys = synced.keys().chain(state.keys()).chain(
            later
                .iter()
                .flat_map(|op| op.updates.iter().map(|(key, _)| key)),
        );
        let mut allowed: BTreeMap<Vec<u8>, Vec<Option<Vec<u8>>>> = keys
            .map(|key| (key.clone(), vec![synced.get(key).cloned()]))
            .collect();
        for op in later {
            // What the op leaves each key it touches at (a batch may write a key twice).
            let mut left = BTreeMap::new();
            for (start, end) in op.range_deletes.iter().filter(|(s, e)| s < e) {
                for (key, _) in allowed.range(start.clone()..end.clone()) {
                    left.insert(key.clone(), None);
                }
            }
            for (key, value) in &op.updates {
                left.insert(key.clone(), value.clone());
            }
            for (key, value) in left {
                allowed.get_mut(&key).unwrap().push(value);
            }
        }
        allowed
            .iter()
            .all(|(key, values)| values.contains(&state.get(key).cloned()))
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
