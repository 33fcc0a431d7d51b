//! What a [`FaultEnv`](super::FaultEnv) remembers about durability, and the rewrite that brings
//! its inner env back to the durable state on simulated power loss.
//!
//! Files are inodes ([`Node`]): they keep their identity across renames and after removal while
//! something still needs their contents. Each tracked directory has two listings, name to inode:
//! `current` (what the inner env holds now) and `durable` (`current` as of the directory's last
//! `sync_dir`). Power loss makes every tracked directory hold its durable listing, each file cut
//! to its synced length by the chosen [`PowerLossMode`].
//!
//! Not thread-safe by itself: the `FaultEnv` keeps it inside its state mutex.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::PowerLossMode;
use crate::env::{normalize_path, read_file_to_vec, write_file, Env, RandomAccessFile};
use crate::error::Result;

/// Identity of a file; never reused within one `Namespace`.
pub(super) type NodeId = u64;

/// A file as the durability model sees it.
pub(super) struct Node {
    /// Bytes appended so far (the file's length).
    pub(super) len: u64,
    /// The length at the last successful `sync`: bytes below it survive power loss.
    pub(super) synced: u64,
    /// How many durable listings name this file.
    durable_links: u32,
    /// True while a current listing names this file.
    linked: bool,
    /// An open reader that keeps an unlinked file's contents alive while a durable listing still
    /// names it (so power loss can bring it back).
    handle: Option<Arc<dyn RandomAccessFile>>,
    /// Made by `new_log_file`: written through a memory map on the real file system, so power
    /// loss leaves it as [`cut_mapped`] says.
    pub(super) mapped: bool,
}

/// The files of one directory.
#[derive(Default)]
struct Listing {
    current: BTreeMap<OsString, NodeId>,
    durable: BTreeMap<OsString, NodeId>,
}

/// A file's place: its directory (normalized) and its name in it.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) dir: PathBuf,
    pub(super) name: OsString,
}

impl Entry {
    /// The entry `path` names; `None` for a root, which is no file.
    pub(super) fn of(path: &Path) -> Option<Entry> {
        let path = normalize_path(path);
        Some(Entry {
            name: path.file_name()?.to_os_string(),
            dir: path.parent()?.to_path_buf(),
        })
    }

    fn path(&self) -> PathBuf {
        self.dir.join(&self.name)
    }
}

/// Inodes and the listings of every tracked directory.
#[derive(Default)]
pub(super) struct Namespace {
    next_id: NodeId,
    nodes: HashMap<NodeId, Node>,
    dirs: BTreeMap<PathBuf, Listing>,
}

impl Namespace {
    pub(super) fn node_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        self.nodes.get_mut(&id)
    }

    /// Starts tracking `dir` (normalized) unless already tracked. The files the inner env holds
    /// there now are taken as durable, data and entry.
    pub(super) fn track(&mut self, inner: &dyn Env, dir: &Path) {
        if self.dirs.contains_key(dir) {
            return;
        }
        let mut listing = Listing::default();
        let list_at = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        for name in inner.children(list_at).unwrap_or_default() {
            let path = dir.join(&name);
            if inner.children(&path).is_ok() {
                continue; // A subdirectory: not modelled.
            }
            let len = inner.file_size(&path).unwrap_or(0);
            let id = self.new_node(len, len, 1, true);
            listing.current.insert(name.clone().into(), id);
            listing.durable.insert(name.into(), id);
        }
        self.dirs.insert(dir.to_path_buf(), listing);
    }

    fn new_node(&mut self, len: u64, synced: u64, durable_links: u32, linked: bool) -> NodeId {
        let id = self.next_id;
        self.next_id += 1;
        let node = Node {
            len,
            synced,
            durable_links,
            linked,
            handle: None,
            mapped: false,
        };
        self.nodes.insert(id, node);
        id
    }

    /// The file the current listing has at `entry`.
    pub(super) fn file(&self, entry: &Entry) -> Option<NodeId> {
        self.dirs.get(&entry.dir)?.current.get(&entry.name).copied()
    }

    /// A new file of `len` unsynced bytes, in no listing yet.
    pub(super) fn new_file(&mut self, len: u64) -> NodeId {
        self.new_node(len, 0, 0, false)
    }

    /// A new file of `len` unsynced bytes, linked at `entry`.
    pub(super) fn create(&mut self, entry: &Entry, len: u64) -> NodeId {
        let id = self.new_file(len);
        if let Some(replaced) = self.link(entry, id) {
            self.park(replaced, None);
        }
        id
    }

    /// Puts `id` at `entry` in the current listing; returns the file it replaced, now unlinked
    /// (give it to [`Namespace::park`]).
    pub(super) fn link(&mut self, entry: &Entry, id: NodeId) -> Option<NodeId> {
        if let Some(node) = self.nodes.get_mut(&id) {
            node.linked = true;
        }
        let listing = self.dirs.entry(entry.dir.clone()).or_default();
        let replaced = listing.current.insert(entry.name.clone(), id)?;
        if let Some(node) = self.nodes.get_mut(&replaced) {
            node.linked = false;
        }
        Some(replaced)
    }

    /// Takes the file at `entry` out of the current listing.
    pub(super) fn unlink(&mut self, entry: &Entry) -> Option<NodeId> {
        let id = self.dirs.get_mut(&entry.dir)?.current.remove(&entry.name)?;
        if let Some(node) = self.nodes.get_mut(&id) {
            node.linked = false;
        }
        Some(id)
    }

    /// True when the file now at `entry` is named by a durable listing, so its contents must
    /// be kept (by a reader opened before it is unlinked) for power loss to bring it back.
    pub(super) fn needs_keeping(&self, entry: &Entry) -> bool {
        self.file(entry)
            .and_then(|id| self.nodes.get(&id))
            .is_some_and(|node| node.durable_links > 0 && node.handle.is_none())
    }

    /// Settles an unlinked file: kept (with `handle` on its contents) while a durable listing
    /// names it, forgotten otherwise.
    pub(super) fn park(&mut self, id: NodeId, handle: Option<Arc<dyn RandomAccessFile>>) {
        if let Some(node) = self.nodes.get_mut(&id) {
            if node.durable_links > 0 {
                node.handle = node.handle.take().or(handle);
            }
        }
        self.forget_if_unreferenced(id);
    }

    fn forget_if_unreferenced(&mut self, id: NodeId) {
        if self
            .nodes
            .get(&id)
            .is_some_and(|node| node.durable_links == 0 && !node.linked)
        {
            self.nodes.remove(&id);
        }
    }

    /// Directory `from` (normalized) was renamed to `to`: it and every tracked directory
    /// below it keep their listings, current and durable, under the new name.
    pub(super) fn rename_dir(&mut self, from: &Path, to: &Path) {
        let moved: Vec<PathBuf> = self
            .dirs
            .keys()
            .filter(|dir| dir.starts_with(from))
            .cloned()
            .collect();
        for old in moved {
            if let (Some(listing), Ok(rest)) = (self.dirs.remove(&old), old.strip_prefix(from)) {
                self.dirs.insert(normalize_path(&to.join(rest)), listing);
            }
        }
    }

    /// `sync_dir(dir)` succeeded: the current listing of `dir` becomes its durable one.
    pub(super) fn sync_dir(&mut self, dir: &Path) {
        let Some(listing) = self.dirs.get_mut(dir) else {
            return;
        };
        let old = std::mem::replace(&mut listing.durable, listing.current.clone());
        // Count the new links before dropping the old ones, so a file in both stays.
        for id in listing.durable.values() {
            if let Some(node) = self.nodes.get_mut(id) {
                node.durable_links += 1;
            }
        }
        for id in old.into_values() {
            if let Some(node) = self.nodes.get_mut(&id) {
                node.durable_links -= 1;
            }
            self.forget_if_unreferenced(id);
        }
    }

    /// Rewrites the inner env so every tracked directory holds its durable listing, each file
    /// cut by `mode`; then everything that survived is durable.
    ///
    /// Every surviving file's bytes are decided before anything is changed: undoing a rename may
    /// read a file from the very path another survivor is written to.
    pub(super) fn power_loss(
        &mut self,
        inner: &dyn Env,
        mode: PowerLossMode,
        rng: &mut SplitMix64,
    ) -> Result<()> {
        let linked_at: HashMap<NodeId, PathBuf> = self
            .dirs
            .iter()
            .flat_map(|(dir, listing)| {
                listing
                    .current
                    .iter()
                    .map(move |(name, &id)| (id, dir.join(name)))
            })
            .collect();

        // Each inode's surviving bytes, decided once even if two listings name it.
        let mut fates: HashMap<NodeId, Fate> = HashMap::new();
        let mut plan: Vec<(Entry, Survivor)> = Vec::new();
        for (dir, listing) in &self.dirs {
            for (name, &id) in &listing.durable {
                let Some(node) = self.nodes.get(&id) else {
                    continue;
                };
                let entry = Entry {
                    dir: dir.clone(),
                    name: name.clone(),
                };
                let linked = linked_at.get(&id);
                let fate = match fates.get(&id) {
                    Some(fate) => fate.clone(),
                    None => {
                        let fate = decide(inner, node, linked, mode, rng)?;
                        fates.insert(id, fate.clone());
                        fate
                    }
                };
                let survivor = match (fate, linked) {
                    (Fate::Lost, _) => continue,
                    (Fate::Unchanged, Some(at)) if *at == entry.path() => Survivor::Keep(node.len),
                    (Fate::Unchanged, Some(at)) => {
                        Survivor::Write(Arc::new(read_file_to_vec(inner, at)?))
                    }
                    (Fate::Unchanged, None) => continue,
                    (Fate::Cut(bytes), _) => Survivor::Write(bytes),
                };
                plan.push((entry, survivor));
            }
        }

        let kept: HashSet<PathBuf> = plan
            .iter()
            .filter(|(_, survivor)| matches!(survivor, Survivor::Keep(_)))
            .map(|(entry, _)| entry.path())
            .collect();
        for path in linked_at.values() {
            if !kept.contains(path) {
                inner.remove_file(path)?;
            }
        }
        for (entry, survivor) in &plan {
            if let Survivor::Write(bytes) = survivor {
                if !inner.file_exists(&entry.dir) {
                    inner.create_dir(&entry.dir)?;
                }
                write_file(inner, &entry.path(), bytes, false)?;
            }
        }

        // A fresh start: what is there now is all durable.
        self.nodes.clear();
        for listing in self.dirs.values_mut() {
            listing.current.clear();
            listing.durable.clear();
        }
        for (entry, survivor) in plan {
            let len = match survivor {
                Survivor::Keep(len) => len,
                Survivor::Write(bytes) => bytes.len() as u64,
            };
            let id = self.new_node(len, len, 1, true);
            let listing = self.dirs.entry(entry.dir).or_default();
            listing.current.insert(entry.name.clone(), id);
            listing.durable.insert(entry.name, id);
        }
        Ok(())
    }
}

/// What power loss leaves of one inode.
#[derive(Clone)]
enum Fate {
    /// Nothing unsynced: the contents stay as they are.
    Unchanged,
    /// These bytes.
    Cut(Arc<Vec<u8>>),
    /// The contents are gone (an unlinked file whose contents could not be kept).
    Lost,
}

/// What power loss leaves at one path.
enum Survivor {
    /// The file now there stays, with this length.
    Keep(u64),
    /// These bytes are written there.
    Write(Arc<Vec<u8>>),
}

/// Decides the surviving bytes of `node`, now at `linked` (if linked).
fn decide(
    inner: &dyn Env,
    node: &Node,
    linked: Option<&PathBuf>,
    mode: PowerLossMode,
    rng: &mut SplitMix64,
) -> Result<Fate> {
    if node.synced >= node.len && linked.is_some() {
        return Ok(Fate::Unchanged);
    }
    let contents = match (linked, &node.handle) {
        (Some(path), _) => read_file_to_vec(inner, path)?,
        (None, Some(handle)) => read_all(handle.as_ref())?,
        (None, None) => return Ok(Fate::Lost),
    };
    let survivor = if node.mapped {
        cut_mapped(contents, node.synced, mode, rng)
    } else {
        cut(contents, node.synced, mode, rng)
    };
    Ok(Fate::Cut(Arc::new(survivor)))
}

fn read_all(file: &dyn RandomAccessFile) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read_at(out.len() as u64, &mut buf)?;
        match buf.get(..n) {
            Some(read) if n > 0 => out.extend_from_slice(read),
            _ => return Ok(out),
        }
    }
}

/// `contents` after power loss, when its first `synced` bytes are durable.
pub(super) fn cut(
    mut contents: Vec<u8>,
    synced: u64,
    mode: PowerLossMode,
    rng: &mut SplitMix64,
) -> Vec<u8> {
    let synced = usize::try_from(synced).map_or(contents.len(), |s| s.min(contents.len()));
    let unsynced = (contents.len() - synced) as u64;
    if unsynced == 0 {
        return contents;
    }
    match mode {
        PowerLossMode::DropUnsynced => contents.truncate(synced),
        PowerLossMode::TornTail => {
            let kept = rng.below(unsynced + 1) as usize;
            contents.truncate(synced + kept);
        }
        PowerLossMode::GarbageTail => {
            let garbage = 1 + rng.below(unsynced) as usize;
            contents.truncate(synced);
            contents.extend((0..garbage).map(|_| rng.next() as u8));
        }
    }
    contents
}

/// What power loss leaves of a file written through a memory map (the write-ahead log of
/// `env/posix/mapped_log.rs`), `synced` bytes of it durable: the kernel writes the unsynced
/// pages back in any order, each 4 KiB page whole or not at all, and a page not written back
/// reads as zeros (its space was reserved zero-filled). `DropUnsynced` loses every unsynced page;
/// the other modes keep each one or not, at random. The file may also keep the zeros reserved up
/// to the end of its last 32 KiB log block.
pub(super) fn cut_mapped(
    mut contents: Vec<u8>,
    synced: u64,
    mode: PowerLossMode,
    rng: &mut SplitMix64,
) -> Vec<u8> {
    const PAGE: usize = 4096;
    const BLOCK: usize = 32 * 1024;
    let synced = usize::try_from(synced).map_or(contents.len(), |s| s.min(contents.len()));
    let mut page_start = synced - synced % PAGE;
    while page_start < contents.len() {
        let page_end = contents.len().min(page_start + PAGE);
        let lost = mode == PowerLossMode::DropUnsynced || rng.below(2) == 0;
        if lost {
            if let Some(unsynced) = contents.get_mut(synced.max(page_start)..page_end) {
                unsynced.fill(0);
            }
        }
        page_start += PAGE;
    }
    if rng.below(2) == 0 {
        contents.resize(contents.len().div_ceil(BLOCK) * BLOCK, 0);
    }
    contents
}

/// A small seeded generator (SplitMix64): deterministic, good enough to pick cut points.
pub(super) struct SplitMix64(u64);

impl SplitMix64 {
    pub(super) fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `0..n`; `n` must be positive.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
