//! Write batches.
// PLACEHOLDER
/// An atomic group of updates.
#[derive(Debug, Default, Clone)]
pub struct WriteBatch {
    rep: Vec<u8>,
}
