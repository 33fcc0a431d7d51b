//! The stress workload, computed rather than remembered: every operation of every thread is a
//! pure function of `(seed, thread, op index)`, so a verifier can recompute the state any
//! prefix of a thread's operations leaves behind, and check every value byte for byte.
//!
//! Keys (ASCII; thread `t` owns slots `0..keys`, no other thread touches them):
//!
//! ```text
//! key   = tttt "/" ssssss filler      tttt: thread, 4 decimal digits; ssssss: slot, 6 digits;
//!                                     filler: (slot * 7) % 13 bytes of '_', so key lengths vary
//! ```
//!
//! Values (integers little-endian); a value names the one write that produced it:
//!
//! ```text
//! thread (u32) | op index (u64) | write position in the op (u8) | slot (u32) | payload | crc (u32)
//! ```
//!
//! `crc` is the CRC32C of everything before it. The payload's length and bytes come from the
//! PRNG of `(seed, thread, op, position)`: mostly `0..=value_size` bytes, one value in 64 between
//! 1 KiB and 17 KiB; half of every 32 bytes random, half a fixed pattern (so Snappy has work).
//!
//! Operations: op `i` of thread `t` is, by the PRNG of `(seed, t, i)`, a single put (45%), a
//! single delete (20%) or an atomic batch (35%) of 2..=8 writes (3 puts in 4), each on a random
//! slot (one in four among the first sixteenth of the slots, so some keys are hot). A batch may
//! write one slot twice; the later write wins. A workload with range deletes (recorded in the
//! journal; the database then needs `Options::range_deletes`) turns a quarter of the single
//! deletes into range deletes of 1..=8 consecutive slots from a random one (fewer at the end
//! of the slots): one record deleting the keys `[key(first), key(last + 1))`, exactly those
//! slots of the thread.

use crc_fast::crc32_iscsi as crc32c;

/// Most threads a workload may have (the key holds four digits).
pub(crate) const MAX_THREADS: u32 = 1024;
/// Most slots a thread may own (the key holds six digits).
pub(crate) const MAX_KEYS: u32 = 1_000_000;
/// Most writes in one operation.
pub(crate) const MAX_BATCH: usize = 8;
/// thread + op + position + slot before the payload, crc after it.
const VALUE_OVERHEAD: usize = 4 + 8 + 1 + 4 + 4;

/// The parameters that fix every operation's content. Recorded in the journal: a workload can
/// only be verified with the parameters it was written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Workload {
    pub(crate) seed: u64,
    /// Slots per thread.
    pub(crate) keys: u32,
    /// Largest payload of an ordinary (not large) value.
    pub(crate) value_size: u32,
    /// Some deletes are range deletes (see the module documentation).
    pub(crate) range_deletes: bool,
    /// The database keeps values of at least this many bytes in value files
    /// (`Options::value_separation`); the ops are the same either way.
    pub(crate) value_separation: Option<u32>,
}

/// What one operation is, as the database sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpKind {
    Put,
    Delete,
    Batch,
    /// A range delete of the slots of its writes (consecutive, ascending).
    DeleteRange,
}

/// One write of an operation: a put (of the value that `(thread, op, position)` names) or a
/// delete of a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotWrite {
    pub(crate) slot: u32,
    pub(crate) put: bool,
}

/// What a value says about itself once its checksum holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ValueId {
    pub(crate) thread: u32,
    pub(crate) op: u64,
    pub(crate) pos: u8,
    pub(crate) slot: u32,
}

impl Workload {
    /// Fills `out` with the writes of op `index` of `thread`, in order, and says what kind of
    /// operation it is. `out` holds 1 write for a put or delete, 2..=8 for a batch.
    pub(crate) fn op(&self, thread: u32, index: u64, out: &mut Vec<SlotWrite>) -> OpKind {
        out.clear();
        let mut rng = Rng::new(self.seed, u64::from(thread), index, 0x6f70);
        let roll = rng.below(100);
        let (kind, count) = match roll {
            0..=44 => (OpKind::Put, 1),
            60..=64 if self.range_deletes => {
                let first = self.pick_slot(&mut rng);
                let width = 1 + rng.below(MAX_BATCH as u64) as u32;
                let end = first.saturating_add(width).min(self.keys);
                out.extend((first..end).map(|slot| SlotWrite { slot, put: false }));
                return OpKind::DeleteRange;
            }
            45..=64 => (OpKind::Delete, 1),
            _ => (OpKind::Batch, 2 + rng.below(MAX_BATCH as u64 - 1) as usize),
        };
        for _ in 0..count {
            let slot = self.pick_slot(&mut rng);
            let put = match kind {
                OpKind::Put => true,
                OpKind::Delete | OpKind::DeleteRange => false,
                OpKind::Batch => rng.below(4) != 0,
            };
            out.push(SlotWrite { slot, put });
        }
        kind
    }

    fn pick_slot(&self, rng: &mut Rng) -> u32 {
        let keys = u64::from(self.keys.max(1));
        let range = if rng.below(4) == 0 {
            (keys / 16).max(1)
        } else {
            keys
        };
        // `range <= keys <= u32::MAX`, so the slot fits.
        rng.below(range) as u32
    }

    /// Appends the key of `slot` of `thread` to `out`.
    pub(crate) fn write_key(&self, thread: u32, slot: u32, out: &mut Vec<u8>) {
        use std::io::Write as _;
        // Writing to a Vec cannot fail.
        let _ = write!(out, "{thread:04}/{slot:06}");
        out.resize(out.len() + filler_len(slot), b'_');
    }

    /// Appends to `out` the first key after every key of `slot` and the slots before it, and
    /// before every key of the later slots, of `thread`: where a range delete of slots up to
    /// `slot` (included) ends. Past the last slot (whose successor's six digits may not fit),
    /// the end of the thread's keys: `tttt0` sorts after every `tttt/...`.
    pub(crate) fn write_range_end(&self, thread: u32, slot: u32, out: &mut Vec<u8>) {
        use std::io::Write as _;
        if slot + 1 < self.keys {
            self.write_key(thread, slot + 1, out);
        } else {
            // Writing to a Vec cannot fail.
            let _ = write!(out, "{thread:04}0");
        }
    }

    /// The key of `slot` of `thread`.
    pub(crate) fn key(&self, thread: u32, slot: u32) -> Vec<u8> {
        let mut key = Vec::with_capacity(24);
        self.write_key(thread, slot, &mut key);
        key
    }

    /// The `(thread, slot)` whose key `key` is, or `None` if no workload writes such a key.
    pub(crate) fn parse_key(&self, key: &[u8]) -> Option<(u32, u32)> {
        let thread = parse_digits(key.get(..4)?)?;
        if key.get(4) != Some(&b'/') {
            return None;
        }
        let slot = parse_digits(key.get(5..11)?)?;
        if thread >= MAX_THREADS || slot >= self.keys {
            return None;
        }
        let filler = key.get(11..)?;
        (filler.len() == filler_len(slot) && filler.iter().all(|&b| b == b'_'))
            .then_some((thread, slot))
    }

    /// Appends to `out` the value that write `pos` (a put of `slot`) of op `op` of `thread`
    /// stores.
    pub(crate) fn write_value(&self, thread: u32, op: u64, pos: u8, slot: u32, out: &mut Vec<u8>) {
        let start = out.len();
        let mut rng = Rng::new(self.seed, u64::from(thread), op, 0x7600 | u64::from(pos));
        let len = if rng.below(64) == 0 {
            1024 + rng.below(16 * 1024) as usize
        } else {
            rng.below(u64::from(self.value_size) + 1) as usize
        };
        out.reserve(VALUE_OVERHEAD + len);
        out.extend_from_slice(&thread.to_le_bytes());
        out.extend_from_slice(&op.to_le_bytes());
        out.push(pos);
        out.extend_from_slice(&slot.to_le_bytes());
        let mut word = 0u64;
        for i in 0..len {
            let byte = if i % 32 < 16 {
                if i % 8 == 0 {
                    word = rng.next_u64();
                }
                (word >> ((i % 8) * 8)) as u8
            } else {
                b'a' + (i % 26) as u8
            };
            out.push(byte);
        }
        let crc = crc32c(out.get(start..).unwrap_or_default());
        out.extend_from_slice(&crc.to_le_bytes());
    }

    /// Reads the identity out of a stored value, checking its checksum. The caller still has to
    /// check that the write it names is a put of exactly these bytes ([`Workload::is_written`]).
    pub(crate) fn decode_value(&self, value: &[u8]) -> Result<ValueId, String> {
        let body_len = value
            .len()
            .checked_sub(4)
            .filter(|&n| n >= 17)
            .ok_or_else(|| {
                format!(
                    "{} bytes, shorter than the {VALUE_OVERHEAD} of any value written",
                    value.len()
                )
            })?;
        let (body, crc) = value.split_at(body_len);
        let stored = u32::from_le_bytes(fixed(crc)?);
        let actual = crc32c(body);
        if stored != actual {
            return Err(format!(
                "checksum mismatch (stored {stored:#010x}, computed {actual:#010x})"
            ));
        }
        Ok(ValueId {
            thread: u32::from_le_bytes(fixed(body.get(0..4).unwrap_or_default())?),
            op: u64::from_le_bytes(fixed(body.get(4..12).unwrap_or_default())?),
            pos: *body.get(12).ok_or("no position byte")?,
            slot: u32::from_le_bytes(fixed(body.get(13..17).unwrap_or_default())?),
        })
    }

    /// True if write `id.pos` of op `id.op` of `id.thread` is a put of slot `id.slot` that stores
    /// exactly `value`. `scratch` is reused between calls.
    pub(crate) fn is_written(&self, id: ValueId, value: &[u8], scratch: &mut Scratch) -> bool {
        self.op(id.thread, id.op, &mut scratch.writes);
        let named = scratch.writes.get(usize::from(id.pos));
        if named
            != Some(&SlotWrite {
                slot: id.slot,
                put: true,
            })
        {
            return false;
        }
        scratch.value.clear();
        self.write_value(id.thread, id.op, id.pos, id.slot, &mut scratch.value);
        scratch.value == value
    }
}

/// Buffers reused across calls that regenerate operations and values.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub(crate) writes: Vec<SlotWrite>,
    pub(crate) value: Vec<u8>,
}

fn filler_len(slot: u32) -> usize {
    (slot as usize * 7) % 13
}

fn parse_digits(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
    })
}

fn fixed<const N: usize>(bytes: &[u8]) -> Result<[u8; N], String> {
    bytes
        .try_into()
        .map_err(|_| format!("expected {N} bytes, found {}", bytes.len()))
}

/// SplitMix64: small, fast, and good enough to pick operations; seeded by mixing its inputs so
/// neighbouring ops get unrelated streams.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64, a: u64, b: u64, c: u64) -> Rng {
        let mut state = mix(seed ^ 0x5354_5241_5441_0001);
        state = mix(state ^ a.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        state = mix(state ^ b.wrapping_mul(0xc2b2_ae3d_27d4_eb4f));
        Rng(mix(state ^ c))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform in `0..n` (`n > 0`), by the multiply-high method.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
