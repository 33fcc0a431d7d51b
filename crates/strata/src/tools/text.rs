//! How the tools show byte strings to people: escaped ASCII or hex.
//!
//! Escaped form: printable ASCII stands for itself except `\` `'` `"`, which are backslashed;
//! `\t` `\r` `\n` are written so; every other byte is `\xNN` (lowercase hex). The
//! `strata-tools` crate reads that form back (its `unescape`), so a key printed by `dump` or
//! `scan` can be pasted into `get`.

use std::fmt;

/// How a byte string is shown to a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Show {
    /// Escaped ASCII (see the module documentation).
    #[default]
    Escaped,
    /// Lowercase hexadecimal, two digits a byte.
    Hex,
}

impl Show {
    /// `bytes` shown this way; a `Display` (and `serde::Serialize` as a string) that does not
    /// allocate.
    pub fn bytes(self, bytes: &[u8]) -> Shown<'_> {
        Shown { bytes, show: self }
    }
}

/// A byte string as [`Show`] presents it.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a> {
    bytes: &'a [u8],
    show: Show,
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.show {
            Show::Escaped => write!(f, "{}", self.bytes.escape_ascii()),
            Show::Hex => {
                for byte in self.bytes {
                    write!(f, "{byte:02x}")?;
                }
                Ok(())
            }
        }
    }
}

impl serde::Serialize for Shown<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_and_hex_forms() {
        let raw = b"a b\x00\xff'\"\\\n\t\r~";
        assert_eq!(
            Show::Escaped.bytes(raw).to_string(),
            r#"a b\x00\xff\'\"\\\n\t\r~"#
        );
        assert_eq!(Show::Hex.bytes(b"\x00\x01\xab\xff").to_string(), "0001abff");
        let json = serde_json::to_string(&Show::Hex.bytes(b"\x01")).unwrap();
        assert_eq!(json, "\"01\"");
    }
}
