//! How the tools read byte strings back, and the three encodings (`utf8`, `hex`, `base64`) of
//! the JSON that `load` reads and `export` writes.
//!
//! [`unescape`] reads the escaped form that [`Show::Escaped`] writes (see `strata::tools`)
//! back exactly, and also accepts `\0` and uppercase hex digits, so a key printed by `scan` or
//! `dump` can be pasted into `get`.

use std::fmt;

use base64::Engine as _;
use strata::tools::Show;
use strata::{Error, Result};

/// Reads the escaped form back into bytes. Fails on a dangling backslash, an unknown escape or
/// a bad `\x` sequence, naming the position.
pub fn unescape(text: &str) -> Result<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let bad = |what: &str| {
            Error::InvalidArgument(format!("bad escape in {text:?} at character {i}: {what}"))
        };
        let (byte, len) = match bytes.get(i + 1) {
            Some(b'\\') => (b'\\', 2),
            Some(b'\'') => (b'\'', 2),
            Some(b'"') => (b'"', 2),
            Some(b'n') => (b'\n', 2),
            Some(b'r') => (b'\r', 2),
            Some(b't') => (b'\t', 2),
            Some(b'0') => (0, 2),
            Some(b'x') => {
                let hi = bytes.get(i + 2).and_then(|&d| hex_digit(d));
                let lo = bytes.get(i + 3).and_then(|&d| hex_digit(d));
                match (hi, lo) {
                    (Some(hi), Some(lo)) => ((hi << 4) | lo, 4),
                    _ => return Err(bad("\\x needs two hex digits")),
                }
            }
            Some(_) => return Err(bad("unknown escape")),
            None => return Err(bad("backslash at the end")),
        };
        out.push(byte);
        i += len;
    }
    Ok(out)
}

fn hex_digit(d: u8) -> Option<u8> {
    match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        b'A'..=b'F' => Some(d - b'A' + 10),
        _ => None,
    }
}

/// Lowercase hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    Show::Hex.bytes(bytes).to_string()
}

/// Bytes from hex (either case, even length, no separators).
pub fn from_hex(text: &str) -> Result<Vec<u8>> {
    let digits = text.as_bytes();
    if digits.len() % 2 != 0 {
        return Err(Error::InvalidArgument(format!(
            "hex string of odd length {}",
            digits.len()
        )));
    }
    digits
        .chunks_exact(2)
        .enumerate()
        .map(|(i, pair)| {
            let hi = pair.first().copied().and_then(hex_digit);
            let lo = pair.get(1).copied().and_then(hex_digit);
            hi.zip(lo).map(|(hi, lo)| (hi << 4) | lo).ok_or_else(|| {
                Error::InvalidArgument(format!("bad hex digit at character {}", 2 * i))
            })
        })
        .collect()
}

/// How keys and values are written as JSON strings by `export` and read by `load`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// The string is the bytes themselves; only valid UTF-8 can be written this way.
    #[default]
    Utf8,
    /// Lowercase hex (either case is read).
    Hex,
    /// Standard base64 with padding (RFC 4648).
    Base64,
}

impl Encoding {
    /// Appends the encoding of `bytes` to `out`. `Utf8` fails on bytes that are not UTF-8.
    pub fn encode_into(self, bytes: &[u8], out: &mut String) -> Result<()> {
        match self {
            Encoding::Utf8 => {
                let text = std::str::from_utf8(bytes).map_err(|_| {
                    Error::InvalidArgument(format!(
                        "'{}' is not valid UTF-8: use the hex or base64 encoding",
                        bytes.escape_ascii()
                    ))
                })?;
                out.push_str(text);
            }
            Encoding::Hex => {
                use fmt::Write as _;
                // Writing to a String cannot fail.
                let _ = write!(out, "{}", Show::Hex.bytes(bytes));
            }
            Encoding::Base64 => base64::engine::general_purpose::STANDARD.encode_string(bytes, out),
        }
        Ok(())
    }

    /// The bytes a JSON string of this encoding stands for.
    pub fn decode(self, text: &str) -> Result<Vec<u8>> {
        match self {
            Encoding::Utf8 => Ok(text.as_bytes().to_vec()),
            Encoding::Hex => from_hex(text),
            Encoding::Base64 => base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| Error::InvalidArgument(format!("bad base64: {e}"))),
        }
    }
}

impl std::str::FromStr for Encoding {
    type Err = Error;

    fn from_str(name: &str) -> Result<Encoding> {
        match name {
            "utf8" | "utf-8" => Ok(Encoding::Utf8),
            "hex" => Ok(Encoding::Hex),
            "base64" => Ok(Encoding::Base64),
            _ => Err(Error::InvalidArgument(format!(
                "unknown encoding {name:?} (utf8, hex or base64)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escaped_form_is_readable_and_reversible() {
        let raw = b"a b\x00\xff'\"\\\n\t\r~";
        let shown = Show::Escaped.bytes(raw).to_string();
        assert_eq!(shown, r#"a b\x00\xff\'\"\\\n\t\r~"#);
        assert_eq!(unescape(&shown).unwrap(), raw);
        assert_eq!(unescape(r"\0\xAB").unwrap(), vec![0, 0xab]);
        for bad in [r"\", r"\q", r"\x", r"\x1", r"\xg0"] {
            assert!(
                matches!(unescape(bad), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn hex_round_trips_and_rejects_garbage() {
        assert_eq!(to_hex(b"\x00\x01\xab\xff"), "0001abff");
        assert_eq!(from_hex("0001ABff").unwrap(), b"\x00\x01\xab\xff");
        assert_eq!(from_hex("").unwrap(), b"");
        assert!(from_hex("abc").is_err());
        assert!(from_hex("zz").is_err());
    }

    #[test]
    fn encodings_round_trip_and_utf8_refuses_binary() {
        let mut s = String::new();
        Encoding::Base64.encode_into(b"\x00\xffhi", &mut s).unwrap();
        assert_eq!(s, "AP9oaQ==");
        assert_eq!(Encoding::Base64.decode(&s).unwrap(), b"\x00\xffhi");
        assert!(Encoding::Base64.decode("!!").is_err());
        let mut s = String::new();
        assert!(Encoding::Utf8.encode_into(b"\xff", &mut s).is_err());
        Encoding::Utf8
            .encode_into("héllo".as_bytes(), &mut s)
            .unwrap();
        assert_eq!(s, "héllo");
        assert_eq!("hex".parse::<Encoding>().unwrap(), Encoding::Hex);
        assert!("rot13".parse::<Encoding>().is_err());
    }

    proptest! {
        #[test]
        fn every_form_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let escaped = Show::Escaped.bytes(&bytes).to_string();
            prop_assert_eq!(unescape(&escaped).unwrap(), bytes.clone());
            for encoding in [Encoding::Hex, Encoding::Base64] {
                let mut s = String::new();
                encoding.encode_into(&bytes, &mut s).unwrap();
                prop_assert_eq!(encoding.decode(&s).unwrap(), bytes.clone());
            }
        }

        #[test]
        fn unescape_never_panics(text in ".{0,40}") {
            let _ = unescape(&text);
            let _ = from_hex(&text);
        }
    }
}
