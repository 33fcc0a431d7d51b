//! Which keys a database holds after each workload, for space amplification: a model that
//! runs the same workloads as the engines, in the harness's process.
//!
//! Every engine sees the same operations (the workloads are seeded), so what a database
//! holds depends on the workloads alone. [`LiveKeys`] is an [`Engine`] that keeps a bit per
//! key number and nothing else; the harness runs each workload that writes (see
//! [`Benchmark::writes`]) through the very loops the engines run (`workloads::run`), so the
//! model cannot drift from them. It also counts the bytes of the live entries while every
//! live entry has the same size (one `--value_size`), and says "unknown" once sizes mix (an
//! `overwrite` after `fill100K` without a fresh database). It runs untimed, between workloads,
//! outside the engines' processes: it adds to no engine's time or memory. A bitmap of `num`
//! bits costs 12.5 MB at 100M keys.
//!
//! `--use_existing_db` starts from a database the model has not seen: its live bytes stay
//! unknown.

use std::path::Path;
use std::sync::Mutex;

use super::config::BenchOptions;
use super::engine::{BenchResult, Cursor, Engine};
use super::keys::{KeyBuf, KEY_SIZE};
use super::progress::Progress;
use super::workloads::{self, Workload};

/// What the harness knows of the live data of the databases under test.
pub struct Live {
    /// `None`: the databases hold data the model never saw.
    model: Option<LiveKeys>,
}

impl Live {
    /// A model of empty databases, or of unknown ones (`existing`: `--use_existing_db`).
    pub fn new(existing: bool) -> Live {
        Live {
            model: (!existing).then(LiveKeys::empty),
        }
    }

    /// Applies the effect of `w` on the databases (a fresh database for a `fill*`).
    pub fn apply(&mut self, w: &Workload<'_>) -> BenchResult<()> {
        if w.bench.fresh_db() {
            self.model = Some(LiveKeys::empty());
        }
        match &self.model {
            Some(model) if w.bench.writes() => {
                workloads::run(model, w, &Progress::hidden()).map(drop)
            }
            _ => Ok(()),
        }
    }

    /// Bytes of live keys and values; `None` when unknown.
    pub fn bytes(&self) -> Option<u64> {
        self.model.as_ref()?.state().bytes()
    }
}

/// Sizes of the live entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sizes {
    /// No entry written since the database was empty.
    Empty,
    /// Every entry written has this many bytes of key and value.
    All(usize),
    /// Entries of several sizes were written.
    Mixed,
}

/// The model's state: one bit per key number.
#[derive(Debug)]
struct State {
    bits: Vec<u64>,
    count: u64,
    sizes: Sizes,
}

impl State {
    fn bytes(&self) -> Option<u64> {
        match self.sizes {
            Sizes::Empty => Some(0),
            _ if self.count == 0 => Some(0),
            Sizes::All(size) => Some(self.count * size as u64),
            Sizes::Mixed => None,
        }
    }

    fn is_set(&self, n: u64) -> bool {
        let word = (n / 64) as usize;
        self.bits
            .get(word)
            .is_some_and(|w| w & (1 << (n % 64)) != 0)
    }

    fn set(&mut self, n: u64, size: usize) {
        let word = (n / 64) as usize;
        if word >= self.bits.len() {
            self.bits.resize(word + 1, 0);
        }
        if !self.is_set(n) {
            self.bits[word] |= 1 << (n % 64);
            self.count += 1;
        }
        self.sizes = match self.sizes {
            Sizes::Empty => Sizes::All(size),
            Sizes::All(s) if s == size => Sizes::All(s),
            _ => Sizes::Mixed,
        };
    }

    fn clear(&mut self, n: u64) {
        if self.is_set(n) {
            self.bits[(n / 64) as usize] &= !(1 << (n % 64));
            self.count -= 1;
        }
    }

    /// The first live key number at or after `from`.
    fn next_at_or_after(&self, from: u64) -> Option<u64> {
        let mut word = (from / 64) as usize;
        let mut mask = u64::MAX << (from % 64);
        while let Some(&w) = self.bits.get(word) {
            let hit = w & mask;
            if hit != 0 {
                return Some(word as u64 * 64 + u64::from(hit.trailing_zeros()));
            }
            word += 1;
            mask = u64::MAX;
        }
        None
    }

    /// The last live key number before `before`.
    fn prev_before(&self, before: u64) -> Option<u64> {
        let end = before.min(self.bits.len() as u64 * 64);
        (0..end).rev().find(|&n| self.is_set(n))
    }
}

/// The key number of a workload key (16 decimal digits), and whether bytes follow it (a
/// missing key, which sorts after it).
fn key_number(key: &[u8]) -> Option<(u64, bool)> {
    let digits = key.get(..KEY_SIZE)?;
    let mut n = 0u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(d - b'0');
    }
    Some((n, key.len() > KEY_SIZE))
}

/// The live-key model (see the module doc). Holds no values: reads find keys with empty
/// values.
#[derive(Debug)]
pub struct LiveKeys {
    state: Mutex<State>,
}

/// A write of the model: a put of a key number with its entry size, or a delete.
#[derive(Debug, Clone, Copy)]
pub enum ModelOp {
    Put(u64, usize),
    Delete(u64),
    /// A key that is no workload key: the write fails.
    NotAKey,
}

impl LiveKeys {
    fn empty() -> LiveKeys {
        LiveKeys {
            state: Mutex::new(State {
                bits: Vec::new(),
                count: 0,
                sizes: Sizes::Empty,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn not_a_key(key: &[u8]) -> String {
    format!(
        "live-key model: `{}` is no workload key",
        key.escape_ascii()
    )
}

impl Engine for LiveKeys {
    type Batch = Vec<ModelOp>;
    type Cursor<'a> = LiveCursor<'a>;

    fn open(_dir: &Path, _options: &BenchOptions) -> BenchResult<Self> {
        Ok(LiveKeys::empty())
    }

    fn destroy(_dir: &Path) -> BenchResult<()> {
        Ok(())
    }

    fn version(&self) -> String {
        "live-key model".to_owned()
    }

    fn put(&self, key: &[u8], value: &[u8], _sync: bool) -> BenchResult<()> {
        let mut batch = vec![];
        Self::batch_put(&mut batch, key, value);
        self.write(&mut batch, false)
    }

    fn new_batch() -> Vec<ModelOp> {
        Vec::new()
    }

    fn batch_put(batch: &mut Vec<ModelOp>, key: &[u8], value: &[u8]) {
        batch.push(match key_number(key) {
            Some((n, false)) => ModelOp::Put(n, key.len() + value.len()),
            _ => ModelOp::NotAKey,
        });
    }

    fn batch_delete(batch: &mut Vec<ModelOp>, key: &[u8]) {
        batch.push(match key_number(key) {
            Some((n, false)) => ModelOp::Delete(n),
            _ => ModelOp::NotAKey,
        });
    }

    fn write(&self, batch: &mut Vec<ModelOp>, _sync: bool) -> BenchResult<()> {
        let mut state = self.state();
        for op in batch.drain(..) {
            match op {
                ModelOp::Put(n, size) => state.set(n, size),
                ModelOp::Delete(n) => state.clear(n),
                ModelOp::NotAKey => return Err("live-key model: a write of no workload key".into()),
            }
        }
        Ok(())
    }

    fn get(&self, key: &[u8]) -> BenchResult<Option<usize>> {
        let present = match key_number(key) {
            Some((n, false)) => self.state().is_set(n),
            _ => false,
        };
        Ok(present.then_some(0))
    }

    fn delete_range(&self, start: &[u8], end: &[u8]) -> BenchResult<()> {
        let (Some((from, _)), Some((to, _))) = (key_number(start), key_number(end)) else {
            return Err(not_a_key(if key_number(start).is_none() {
                start
            } else {
                end
            }));
        };
        let mut state = self.state();
        let mut n = from;
        while let Some(hit) = state.next_at_or_after(n).filter(|&hit| hit < to) {
            state.clear(hit);
            n = hit + 1;
        }
        Ok(())
    }

    fn cursor(&self) -> LiveCursor<'_> {
        LiveCursor {
            model: self,
            at: None,
            key: [0; KEY_SIZE],
            error: None,
        }
    }

    fn compact(&self) -> BenchResult<()> {
        Ok(())
    }

    fn property(&self, _name: &str) -> Option<String> {
        None
    }

    fn stats(&self) -> Option<String> {
        None
    }
}

/// A cursor over the model's live keys, each with an empty value.
pub struct LiveCursor<'a> {
    model: &'a LiveKeys,
    at: Option<u64>,
    key: [u8; KEY_SIZE],
    error: Option<String>,
}

impl LiveCursor<'_> {
    fn go(&mut self, at: Option<u64>) {
        self.at = at;
        if let Some(n) = at {
            self.key.copy_from_slice(KeyBuf::new().key(n));
        }
    }
}

impl Cursor for LiveCursor<'_> {
    fn valid(&self) -> bool {
        self.at.is_some()
    }
    fn seek_to_first(&mut self) {
        let first = self.model.state().next_at_or_after(0);
        self.go(first);
    }
    fn seek_to_last(&mut self) {
        let last = self.model.state().prev_before(u64::MAX);
        self.go(last);
    }
    fn seek(&mut self, target: &[u8]) {
        let Some((n, beyond)) = key_number(target) else {
            self.error = Some(not_a_key(target));
            self.go(None);
            return;
        };
        let found = self.model.state().next_at_or_after(n + u64::from(beyond));
        self.go(found);
    }
    fn next(&mut self) {
        let found = self
            .at
            .and_then(|n| self.model.state().next_at_or_after(n + 1));
        self.go(found);
    }
    fn prev(&mut self) {
        let found = self.at.and_then(|n| self.model.state().prev_before(n));
        self.go(found);
    }
    fn key(&self) -> &[u8] {
        &self.key
    }
    fn value(&self) -> &[u8] {
        &[]
    }
    fn status(&self) -> BenchResult<()> {
        self.error.clone().map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::Benchmark;
    use super::super::keys::ValuePool;
    use super::*;

    fn workload(bench: Benchmark, pool: &ValuePool) -> Workload<'_> {
        Workload {
            bench,
            num: 1000,
            reads: 600,
            value_size: 100,
            threads: 1,
            histogram: false,
            seed: 1000,
            values: pool,
        }
    }

    #[test]
    fn fills_overwrites_and_deletes_change_the_live_bytes() {
        let pool = ValuePool::new(1, 100_000);
        let mut live = Live::new(false);
        assert_eq!(live.bytes(), Some(0));
        live.apply(&workload(Benchmark::Fillseq, &pool))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(live.bytes(), Some(1000 * 116));
        // Reads change nothing; a random fill starts over and leaves about 63% of the keys.
        live.apply(&workload(Benchmark::Readrandom, &pool))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(live.bytes(), Some(1000 * 116));
        live.apply(&workload(Benchmark::Fillrandom, &pool))
            .unwrap_or_else(|e| panic!("{e}"));
        let distinct = live.bytes().unwrap_or(0) / 116;
        assert!((580..=680).contains(&distinct), "{distinct}");
        // The mix's updates add keys; deleting a range of everything leaves nothing.
        live.apply(&workload(Benchmark::Leveledmix, &pool))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(live.bytes().unwrap_or(0) / 116 >= distinct);
        live.apply(&workload(Benchmark::Deleterange, &pool))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(live.bytes(), Some(0));
    }

    #[test]
    fn mixed_value_sizes_and_existing_databases_are_unknown() {
        let pool = ValuePool::new(1, 100_000);
        let mut live = Live::new(false);
        live.apply(&workload(Benchmark::Fill100K, &pool))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(live.bytes(), Some(KEY_SIZE as u64 + 100_000));
        live.apply(&workload(Benchmark::Overwrite, &pool))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(live.bytes(), None);
        let mut existing = Live::new(true);
        existing
            .apply(&workload(Benchmark::Overwrite, &pool))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(existing.bytes(), None);
    }

    #[test]
    fn cursor_walks_live_keys_both_ways() {
        let model = LiveKeys::empty();
        let mut key = KeyBuf::new();
        for n in [3u64, 64, 65, 200] {
            model
                .put(key.key(n), b"v", false)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let mut batch = LiveKeys::new_batch();
        LiveKeys::batch_delete(&mut batch, key.key(65));
        model
            .write(&mut batch, false)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut c = model.cursor();
        c.seek_to_first();
        let mut forward = vec![];
        while c.valid() {
            forward.push(key_number(c.key()).map(|(n, _)| n));
            c.next();
        }
        assert_eq!(forward, [Some(3), Some(64), Some(200)]);
        c.seek_to_last();
        assert_eq!(key_number(c.key()), Some((200, false)));
        c.prev();
        assert_eq!(key_number(c.key()), Some((64, false)));
        c.seek(key.missing(3));
        assert_eq!(key_number(c.key()), Some((64, false)));
        c.seek(b"nokey");
        assert!(!c.valid() && c.status().is_err());
        assert!(model.put(b"x", b"v", false).is_err());
    }
}
