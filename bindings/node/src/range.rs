//! abstract-level's range options (`gt`, `gte`, `lt`, `lte`) as one half-open key range
//! `[lower, upper)`, which the engine's iterator bounds express directly.
//!
//! Keys are ordered bytewise, so the smallest key after `k` is `k` followed by a zero byte:
//! `gt: k` is `lower = k ++ 0x00`, `lte: k` is `upper = k ++ 0x00`. As abstract-level specifies,
//! `gte` wins over `gt` and `lte` over `lt` when both are given. A range whose lower end is not
//! below its upper end is empty.

use crate::bytes::{to_vec, Data};

/// The four range options, as JavaScript passes them (already encoded by abstract-level).
pub(crate) struct RangeOptions<'a> {
    pub(crate) gt: Option<Data<'a>>,
    pub(crate) gte: Option<Data<'a>>,
    pub(crate) lt: Option<Data<'a>>,
    pub(crate) lte: Option<Data<'a>>,
}

/// Keys `>= lower` (when set) and `< upper` (when set).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeyRange {
    pub(crate) lower: Option<Vec<u8>>,
    pub(crate) upper: Option<Vec<u8>>,
}

/// `key` followed by a zero byte: the smallest key ordered after `key`.
fn successor(key: Data<'_>) -> Vec<u8> {
    let mut bytes = to_vec(key);
    bytes.push(0);
    bytes
}

impl KeyRange {
    /// The range the options select.
    pub(crate) fn new(options: RangeOptions<'_>) -> KeyRange {
        let lower = match (options.gte, options.gt) {
            (Some(gte), _) => Some(to_vec(gte)),
            (None, Some(gt)) => Some(successor(gt)),
            (None, None) => None,
        };
        let upper = match (options.lte, options.lt) {
            (Some(lte), _) => Some(successor(lte)),
            (None, Some(lt)) => Some(to_vec(lt)),
            (None, None) => None,
        };
        KeyRange { lower, upper }
    }

    /// True when no key can be in the range.
    pub(crate) fn is_empty(&self) -> bool {
        matches!((&self.lower, &self.upper), (Some(lower), Some(upper)) if lower >= upper)
    }

    /// True when `key` is below the range.
    pub(crate) fn is_below(&self, key: &[u8]) -> bool {
        self.lower.as_deref().is_some_and(|lower| key < lower)
    }

    /// True when `key` is at or above the range's (exclusive) upper end.
    pub(crate) fn is_above(&self, key: &[u8]) -> bool {
        self.upper.as_deref().is_some_and(|upper| key >= upper)
    }

    /// Read options that bound an engine iterator to the range.
    pub(crate) fn read_options(
        &self,
        snapshot: strata::Snapshot,
        fill_cache: bool,
    ) -> strata::ReadOptions {
        strata::ReadOptions {
            snapshot: Some(snapshot),
            fill_cache,
            lower_bound: self.lower.clone(),
            upper_bound: self.upper.clone(),
            ..strata::ReadOptions::default()
        }
    }
}
