//! The engine's own cost of the benchmark's "get of one cached key" (bench/Seed002Bench.java's
//! `cachedGet`), called from Rust: the difference to the Java figure is the JNI overhead per
//! call (crossing into native code, copying the key in and the value out). It reads the value
//! as the binding does: lent by `get_with` and copied into a buffer of the scratch's size.
//!
//! `cargo run --release --example cached_get [calls]` (default 5,000,000).

use std::hint::black_box;
use std::time::Instant;

fn main() -> strata::Result<()> {
    let calls: u32 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5_000_000);
    let dir = std::env::temp_dir().join(format!("strata-cached-get-{}", std::process::id()));
    let options = strata::Options {
        create_if_missing: true,
        ..strata::Options::default()
    };
    {
        let db = strata::DB::open(&dir, options.clone())?;
        let key = b"key123456".to_vec();
        db.put(&key, b"value123456")?;
        let read = strata::ReadOptions::default();
        let mut buffer = vec![0u8; 64 << 10];
        let mut get = |key: &[u8]| {
            db.get_with(&read, key, |value| {
                buffer[..value.len()].copy_from_slice(value);
                value.len()
            })
        };
        for _ in 0..calls {
            black_box(get(black_box(&key))?);
        }
        let start = Instant::now();
        for _ in 0..calls {
            black_box(get(black_box(&key))?);
        }
        let nanos = start.elapsed().as_nanos() / u128::from(calls);
        println!("engine get of one cached key from Rust, per call: {nanos} ns");
    }
    strata::destroy(&dir, &options)
}
