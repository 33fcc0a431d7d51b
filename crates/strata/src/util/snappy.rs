//! Raw Snappy as the formats store it (table blocks, compressed values in value files): the
//! bound on what a compressed stream may claim, and decompression to a known length.

/// Snappy never expands a byte of input into more than ~21 bytes of output (a 3-byte copy
/// element yields at most 64 bytes), so a claimed length beyond this factor is corrupt.
pub(crate) const MAX_EXPANSION: usize = 24;

/// The `length` bytes the raw Snappy stream `compressed` holds. `Err` says why it is damaged:
/// it claims another length, more than [`MAX_EXPANSION`] allows (checked before the buffer is
/// allocated), or does not decompress.
pub(crate) fn decompress_exact(compressed: &[u8], length: usize) -> Result<Vec<u8>, String> {
    if length > compressed.len().saturating_mul(MAX_EXPANSION) {
        return Err(format!(
            "compressed value of {} bytes claims {length} bytes, more than Snappy can expand it to",
            compressed.len()
        ));
    }
    let claimed = snap::raw::decompress_len(compressed)
        .map_err(|e| format!("compressed value has a bad Snappy header: {e}"))?;
    if claimed != length {
        return Err(format!(
            "compressed value decompresses to {claimed} bytes, its pointer says {length}"
        ));
    }
    let mut value = vec![0u8; claimed];
    let n = snap::raw::Decoder::new()
        .decompress(compressed, &mut value)
        .map_err(|e| format!("compressed value does not decompress: {e}"))?;
    if n != claimed {
        return Err(format!(
            "compressed value decompresses to {n} bytes, its header says {claimed}"
        ));
    }
    Ok(value)
}
