//! The records of a Java `StrataWriteBatch`, decoded into an engine batch for `StrataDB.write`.
//!
//! `StrataWriteBatch.java` gathers its updates in Java; per update: a tag byte (1 put, 0
//! delete), the key's length (4 bytes, little-endian) and the key, then for a put the value's
//! length and the value. A malformed record is an error naming its offset, never a panic.

use crate::errors::Error;

const DELETE: u8 = 0;
const PUT: u8 = 1;

/// The engine batch holding `records`' updates, in order.
pub(crate) fn decode(records: &[u8]) -> Result<strata::WriteBatch, Error> {
    let mut batch = strata::WriteBatch::with_capacity(records.len() + 12);
    let mut rest = records;
    while let Some((&tag, after_tag)) = rest.split_first() {
        let at = records.len() - rest.len();
        let malformed = || Error::Misuse(format!("a malformed write batch record at offset {at}"));
        let (key, after_key) = field(after_tag).ok_or_else(malformed)?;
        rest = match tag {
            PUT => {
                let (value, after_value) = field(after_key).ok_or_else(malformed)?;
                batch.put(key, value);
                after_value
            }
            DELETE => {
                batch.delete(key);
                after_key
            }
            _ => return Err(malformed()),
        };
    }
    Ok(batch)
}

/// A length-prefixed field at the start of `bytes`, and what follows it.
fn field(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = bytes.split_first_chunk::<4>()?;
    let len = usize::try_from(u32::from_le_bytes(*len)).ok()?;
    (len <= rest.len()).then(|| rest.split_at(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tag: u8, fields: &[&[u8]]) -> Vec<u8> {
        let mut out = vec![tag];
        for field in fields {
            out.extend_from_slice(&(field.len() as u32).to_le_bytes());
            out.extend_from_slice(field);
        }
        out
    }

    #[test]
    fn puts_and_deletes_decode_in_order() {
        let mut records = record(PUT, &[b"k1", b"v1"]);
        records.extend(record(DELETE, &[b"k2"]));
        records.extend(record(PUT, &[b"", b""]));
        let batch = decode(&records).map_err(|e| format!("{e:?}"));
        let mut expected = strata::WriteBatch::new();
        expected.put(b"k1", b"v1");
        expected.delete(b"k2");
        expected.put(b"", b"");
        let ops = |b: &strata::WriteBatch| format!("{:?}", b.iter().collect::<Vec<_>>());
        assert_eq!(batch.as_ref().map(ops), Ok(ops(&expected)));
        assert_eq!(decode(&[]).map(|b| b.len()).ok(), Some(0));
    }

    #[test]
    fn malformed_records_are_errors() {
        let whole = record(PUT, &[b"key", b"value"]);
        for cut in 1..whole.len() {
            let error = decode(&whole[..cut]).err().map(|e| format!("{e:?}"));
            assert!(error.is_some_and(|e| e.contains("malformed write batch record at offset 0")));
        }
        let mut bad_tag = whole.clone();
        bad_tag.extend(record(7, &[b"k"]));
        let error = decode(&bad_tag).err().map(|e| format!("{e:?}"));
        assert!(error.is_some_and(|e| e.contains(&format!("at offset {}", whole.len()))));
    }
}
