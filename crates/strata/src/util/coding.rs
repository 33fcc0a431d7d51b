//! Little-endian fixed-width and LEB128-style varint coding, as LevelDB lays them out.
//!
//! Encoders append to a `Vec<u8>`. Decoders take a `&mut &[u8]` cursor, advance it past what they
//! consumed and return `None` when the input is truncated or malformed (a varint32 longer than
//! 5 bytes or overflowing 32 bits, a varint64 longer than 10 bytes); callers turn `None` into a
//! `Corruption` error that names their file and offset. Decoders never panic.

/// Longest encoding of a varint32.
pub(crate) const MAX_VARINT32_LEN: usize = 5;
/// Longest encoding of a varint64.
pub(crate) const MAX_VARINT64_LEN: usize = 10;

pub(crate) fn put_fixed32(dst: &mut Vec<u8>, value: u32) {
    dst.extend_from_slice(&value.to_le_bytes());
}

pub(crate) fn put_fixed64(dst: &mut Vec<u8>, value: u64) {
    dst.extend_from_slice(&value.to_le_bytes());
}

pub(crate) fn put_varint32(dst: &mut Vec<u8>, value: u32) {
    put_varint64(dst, u64::from(value));
}

pub(crate) fn put_varint64(dst: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        dst.push((value as u8) | 0x80);
        value >>= 7;
    }
    dst.push(value as u8);
}

/// Appends `value` prefixed by its length as a varint32.
///
/// Slices longer than `u32::MAX` cannot be represented in LevelDB's formats; callers reject them
/// before they get here (keys and values are checked at the API boundary).
pub(crate) fn put_length_prefixed(dst: &mut Vec<u8>, value: &[u8]) {
    put_varint32(dst, value.len() as u32);
    dst.extend_from_slice(value);
}

/// Reads a little-endian u32 from the first four bytes of `src` (no cursor).
pub(crate) fn decode_fixed32(src: &[u8]) -> Option<u32> {
    let bytes: [u8; 4] = src.get(..4)?.try_into().ok()?;
    Some(u32::from_le_bytes(bytes))
}

/// Reads a little-endian u64 from the first eight bytes of `src` (no cursor).
pub(crate) fn decode_fixed64(src: &[u8]) -> Option<u64> {
    let bytes: [u8; 8] = src.get(..8)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// Reads a little-endian u64 and advances the cursor past it.
pub(crate) fn get_fixed64(src: &mut &[u8]) -> Option<u64> {
    let value = decode_fixed64(src)?;
    *src = src.get(8..)?;
    Some(value)
}

pub(crate) fn get_varint32(src: &mut &[u8]) -> Option<u32> {
    // Fast path: one byte.
    if let Some(&b) = src.first() {
        if b < 0x80 {
            *src = &src[1..];
            return Some(u32::from(b));
        }
    }
    let mut result: u32 = 0;
    for (i, &byte) in src.iter().take(MAX_VARINT32_LEN).enumerate() {
        let bits = u32::from(byte & 0x7f);
        if i == MAX_VARINT32_LEN - 1 && bits > 0x0f {
            return None; // would overflow 32 bits
        }
        result |= bits << (7 * i);
        if byte < 0x80 {
            *src = &src[i + 1..];
            return Some(result);
        }
    }
    None
}

pub(crate) fn get_varint64(src: &mut &[u8]) -> Option<u64> {
    let mut result: u64 = 0;
    for (i, &byte) in src.iter().take(MAX_VARINT64_LEN).enumerate() {
        let bits = u64::from(byte & 0x7f);
        if i == MAX_VARINT64_LEN - 1 && bits > 0x01 {
            return None; // would overflow 64 bits
        }
        result |= bits << (7 * i);
        if byte < 0x80 {
            *src = &src[i + 1..];
            return Some(result);
        }
    }
    None
}

/// Reads a varint32 length and then that many bytes.
pub(crate) fn get_length_prefixed<'a>(src: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = get_varint32(src)? as usize;
    let input: &'a [u8] = src;
    let value = input.get(..len)?;
    *src = input.get(len..)?;
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fixed_round_trip_is_little_endian() {
        let mut buf = Vec::new();
        put_fixed32(&mut buf, 0x0403_0201);
        buf.extend_from_slice(&0x0807_0605_0403_0201u64.to_le_bytes());
        assert_eq!(&buf[..4], &[1, 2, 3, 4]);
        assert_eq!(decode_fixed32(&buf), Some(0x0403_0201));
        assert_eq!(decode_fixed64(&buf[4..]), Some(0x0807_0605_0403_0201));
        assert_eq!(decode_fixed32(&buf[10..]), None);
    }

    #[test]
    fn varint_known_encodings() {
        let mut buf = Vec::new();
        put_varint32(&mut buf, 300);
        assert_eq!(buf, [0xac, 0x02]);
        buf.clear();
        put_varint64(&mut buf, u64::MAX);
        assert_eq!(buf.len(), MAX_VARINT64_LEN);
        assert_eq!(get_varint64(&mut &buf[..]), Some(u64::MAX));
    }

    #[test]
    fn varint32_rejects_overflow_and_truncation() {
        // 5 bytes whose last carries more than 4 bits.
        assert_eq!(get_varint32(&mut &[0xff, 0xff, 0xff, 0xff, 0x1f][..]), None);
        assert_eq!(
            get_varint32(&mut &[0xff, 0xff, 0xff, 0xff, 0x0f][..]),
            Some(u32::MAX)
        );
        assert_eq!(get_varint32(&mut &[0x80, 0x80][..]), None);
        assert_eq!(get_varint32(&mut &[][..]), None);
        assert_eq!(get_varint64(&mut &[0xff; 10][..]), None);
    }

    #[test]
    fn length_prefixed_rejects_short_input() {
        let mut buf = Vec::new();
        put_length_prefixed(&mut buf, b"hello");
        let mut cursor = &buf[..];
        assert_eq!(get_length_prefixed(&mut cursor), Some(&b"hello"[..]));
        assert_eq!(get_length_prefixed(&mut &buf[..buf.len() - 1]), None);
    }

    proptest! {
        #[test]
        fn varints_round_trip(a in any::<u32>(), b in any::<u64>()) {
            let mut buf = Vec::new();
            put_varint32(&mut buf, a);
            put_varint64(&mut buf, b);
            let mut cursor = &buf[..];
            prop_assert_eq!(get_varint32(&mut cursor), Some(a));
            prop_assert_eq!(get_varint64(&mut cursor), Some(b));
            prop_assert!(cursor.is_empty());
        }

        #[test]
        fn decoders_never_panic_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..24)) {
            let mut c = &bytes[..];
            let _ = get_varint32(&mut c);
            let mut c = &bytes[..];
            let _ = get_varint64(&mut c);
            let mut c = &bytes[..];
            if let Some(v) = get_length_prefixed(&mut c) {
                prop_assert!(v.len() + c.len() < bytes.len());
            }
        }
    }
}
