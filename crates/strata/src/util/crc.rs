//! Masked CRC32C, as stored in log records and block trailers.
//!
//! A CRC of data that itself contains CRCs is weak, so stored checksums are "masked":
//! rotated right by 15 bits and offset by a constant. On-disk: never change.

use crc_fast::{CrcAlgorithm, Digest};

const MASK_DELTA: u32 = 0xa282_ead8;

/// CRC32C (Castagnoli) of `data`, hardware-accelerated where the CPU has it.
pub(crate) fn crc32c(data: &[u8]) -> u32 {
    crc_fast::crc32_iscsi(data)
}

/// CRC32C of the concatenation of `init`'s data and `data`, given `init = crc32c(prefix)`.
pub(crate) fn extend(init: u32, data: &[u8]) -> u32 {
    // A finished CRC32C is its register inverted: undo that to go on from it.
    let mut digest = Digest::new_with_init_state(CrcAlgorithm::Crc32Iscsi, u64::from(!init));
    digest.update(data);
    // The finished CRC is 32 bits wide.
    digest.finalize() as u32
}

/// The masked form of `crc` that is written to disk.
pub(crate) fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask`].
pub(crate) fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_check_values() {
        // RFC 3720 test vectors.
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62a8_ab43);
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    }

    #[test]
    fn extend_equals_whole() {
        assert_eq!(extend(crc32c(b"hello "), b"world"), crc32c(b"hello world"));
    }

    /// CRC32C computed one bit at a time from its definition (reflected polynomial
    /// 0x82f63b78, register and result inverted): the oracle for the accelerated paths.
    fn bitwise(data: &[u8]) -> u32 {
        let mut reg = !0u32;
        for &byte in data {
            reg ^= u32::from(byte);
            for _ in 0..8 {
                reg = if reg & 1 == 1 {
                    (reg >> 1) ^ 0x82f6_3b78
                } else {
                    reg >> 1
                };
            }
        }
        !reg
    }

    /// Bytes that are not all alike, so that a path reading the wrong word cannot pass.
    fn varied(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i * 131 + (i >> 8) * 7 + 17) as u8)
            .collect()
    }

    /// crc-fast chooses its path by length and alignment: on x86 the crc32 instruction up to
    /// 256 bytes, PCLMULQDQ or VPCLMULQDQ folding from 384 after aligning, its unrolled loop
    /// from 768, and a tail of the remainder. Every length across those thresholds, at every
    /// start within a 64-byte line, must agree with the oracle.
    #[test]
    fn every_length_across_the_path_thresholds_agrees_with_the_definition() {
        let bytes = varied(1100 + 64);
        for skip in 0..64 {
            for len in 0..=1100 {
                let data = &bytes[skip..skip + len];
                assert_eq!(
                    crc32c(data),
                    bitwise(data),
                    "{len} bytes from offset {skip}"
                );
            }
        }
    }

    proptest::proptest! {
        /// Random data of lengths to 4200 bytes at any start within a 64-byte line: the CRC
        /// agrees with the oracle, and a CRC extended from any prefix's equals the whole's.
        #[test]
        fn accelerated_paths_agree_with_the_definition(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4200),
            skip in 0usize..64,
            split in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let data = bytes.get(skip..).unwrap_or_default();
            proptest::prop_assert_eq!(crc32c(data), bitwise(data));
            let (head, tail) = data.split_at(split.index(data.len() + 1));
            proptest::prop_assert_eq!(extend(crc32c(head), tail), crc32c(data));
        }
    }

    #[test]
    fn mask_round_trips_and_changes_value() {
        let crc = crc32c(b"foo");
        assert_ne!(mask(crc), crc);
        assert_ne!(mask(mask(crc)), crc);
        assert_eq!(unmask(mask(crc)), crc);
        assert_eq!(unmask(unmask(mask(mask(crc)))), crc);
    }
}
