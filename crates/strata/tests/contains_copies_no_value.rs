//! `DB::contains` and `DB::contains_many` answer without copying the value: with a 1 MiB value
//! in the memtable and then in a table whose block is cached, `get` allocates a buffer the
//! size of the value, and `contains` allocates nothing near it. `get_with` lends the value from
//! the memtable without a copy (from a table it is copied out of the block, as `get` copies
//! it). Measured by a global allocator that records the largest allocation the test's thread
//! makes while measuring.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use strata::{BlockCache, CompressionType, MemEnv, Options, ReadOptions, DB};

/// The system allocator, noting the largest allocation of a measuring thread.
struct Recording;

thread_local! {
    /// `Some(largest so far)` while this thread measures.
    static LARGEST: Cell<Option<usize>> = const { Cell::new(None) };
}

fn note(size: usize) {
    // `try_with`: a thread being torn down no longer has its slot, and is not measuring.
    let _ = LARGEST.try_with(|largest| {
        if let Some(so_far) = largest.get() {
            largest.set(Some(so_far.max(size)));
        }
    });
}

// SAFETY: every call is passed to `System` unchanged; `note` only reads and writes a
// thread-local `Cell` of plain data, which allocates nothing.
unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract for `alloc`, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this layout (every allocation goes there).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: the caller's contract for `realloc`, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Recording = Recording;

/// The largest allocation this thread makes while `f` runs, and `f`'s result.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (usize, T) {
    LARGEST.with(|largest| largest.set(Some(0)));
    let result = f();
    let largest = LARGEST.with(|largest| largest.take()).unwrap();
    (largest, result)
}

const VALUE_SIZE: usize = 1 << 20;
/// Far below the value's size, far above what a lookup's key buffers need.
const SMALL: usize = 64 << 10;

#[test]
fn contains_allocates_nothing_the_size_of_the_value() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        write_buffer_size: 4 << 20,
        compression: CompressionType::None,
        // Room for the 1 MiB block in every shard of the cache.
        block_cache: Some(BlockCache::new(64 << 20)),
        ..support::options(&env)
    };
    let db = DB::open("/db", options).unwrap();
    db.put(b"big", &vec![b'v'; VALUE_SIZE]).unwrap();
    db.put(b"gone", b"x").unwrap();
    db.delete(b"gone").unwrap();
    let keys: [&[u8]; 3] = [b"big", b"gone", b"absent"];

    for place in ["memtable", "table"] {
        if place == "table" {
            db.compact_range(None, None).unwrap();
            assert_eq!(db.property("leveldb.num-files-at-level0").unwrap(), "0");
            // Loads the value's block into the cache, so later reads copy only what they return.
            db.get(b"big").unwrap().unwrap();
        }
        let (get, value) = largest_allocation(|| db.get(b"big").unwrap());
        assert_eq!(value.map(|v| v.len()), Some(VALUE_SIZE));
        assert!(
            get >= VALUE_SIZE,
            "{place}: get's copy of the value ({get} bytes)"
        );
        let (many, values) = largest_allocation(|| db.get_many(&keys).unwrap());
        assert_eq!(values[0].as_ref().map(Vec::len), Some(VALUE_SIZE));
        assert!(
            many >= VALUE_SIZE,
            "{place}: get_many's copy ({many} bytes)"
        );

        let (lent, length) = largest_allocation(|| {
            db.get_with(&ReadOptions::default(), b"big", |value| {
                (value.len(), value.iter().all(|&b| b == b'v'))
            })
            .unwrap()
        });
        assert_eq!(length, Some((VALUE_SIZE, true)), "{place}");
        if place == "memtable" {
            assert!(lent < SMALL, "{place}: get_with allocated {lent} bytes");
        }
        let absent = db.get_with(&ReadOptions::default(), b"gone", |_| -> () {
            panic!("a deleted key's value was lent")
        });
        assert_eq!(absent.unwrap(), None, "{place}");

        let (contains, found) = largest_allocation(|| keys.map(|key| db.contains(key).unwrap()));
        assert_eq!(found, [true, false, false], "{place}");
        assert!(
            contains < SMALL,
            "{place}: contains allocated {contains} bytes"
        );
        let (contains_many, found) = largest_allocation(|| db.contains_many(&keys).unwrap());
        assert_eq!(found, vec![true, false, false], "{place}");
        assert!(
            contains_many < SMALL,
            "{place}: contains_many allocated {contains_many} bytes"
        );
    }
}
