//! `load`: key/value pairs from JSON into write batches.
//!
//! Two input forms, both streamed (memory stays bounded by one batch, whatever the input size):
//!
//! ```text
//! object       {"key1": "value1", "key2": "value2", ...}
//!              duplicate keys are allowed; the last one wins (later puts override earlier)
//! JSON Lines   {"key": "key1", "value": "value1"}
//!              {"key": "key2", "value": "value2"}
//!              one object a line (or any whitespace between objects), exactly those two fields
//! ```
//!
//! Keys and values are JSON strings in the chosen [`Encoding`] (`utf8`: the string's own bytes;
//! `hex`; `base64`). [`InputFormat::Auto`] decides from the first object: if it has exactly the
//! two fields `key` and `value` the input is JSON Lines, otherwise an object of pairs (so an
//! object file holding exactly the two keys `"key"` and `"value"` reads as one JSON Lines
//! record: name the format to be sure). Errors name the line and column.
//!
//! Batches are handed to a caller-supplied sink (usually `DB::write_opt`), closed at
//! [`LoadOptions::batch_size`] pairs or [`LoadOptions::batch_bytes`] bytes, whichever comes
//! first.

use std::fmt;
use std::io::{BufReader, Read};
use std::time::{Duration, Instant};

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};

use crate::text::Encoding;
use strata::{Error, Result, WriteBatch};

/// The JSON shape of a load's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputFormat {
    /// Decide from the first object (see the module documentation).
    #[default]
    Auto,
    /// One object mapping keys to values.
    Object,
    /// `{"key": ..., "value": ...}` objects, one a line.
    Lines,
}

impl std::str::FromStr for InputFormat {
    type Err = Error;

    fn from_str(name: &str) -> Result<InputFormat> {
        match name {
            "auto" => Ok(InputFormat::Auto),
            "object" | "json" => Ok(InputFormat::Object),
            "lines" | "jsonl" => Ok(InputFormat::Lines),
            _ => Err(Error::InvalidArgument(format!(
                "unknown input format {name:?} (auto, object or lines)"
            ))),
        }
    }
}

/// How [`load_json`] reads and batches.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Encoding of keys and values in the JSON strings.
    pub encoding: Encoding,
    /// Shape of the input.
    pub format: InputFormat,
    /// Pairs per write batch (at least 1).
    pub batch_size: usize,
    /// Encoded bytes at which a batch is written even if it has fewer pairs.
    pub batch_bytes: usize,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            encoding: Encoding::Utf8,
            format: InputFormat::Auto,
            batch_size: 1000,
            batch_bytes: 4 << 20,
        }
    }
}

/// What a load did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadSummary {
    /// Pairs written (duplicates included).
    pub pairs: u64,
    /// Bytes of keys and values written.
    pub bytes: u64,
    /// Write batches handed to the sink.
    pub batches: u64,
    /// Time taken, reading and writing.
    pub elapsed: Duration,
}

/// Reads pairs from `input` (see the module documentation) and hands them, in order, in write
/// batches to `write`. Stops at the first malformed input or failed write; the batches written
/// before stay written.
///
/// ```no_run
/// # fn demo(db: &strata::DB, file: std::fs::File) -> strata::Result<()> {
/// use strata_tools::{load_json, LoadOptions};
/// let sync = strata::WriteOptions { sync: true };
/// let summary = load_json(file, &LoadOptions::default(), &mut |b| db.write_opt(&sync, b))?;
/// println!("{} pairs", summary.pairs);
/// # Ok(())
/// # }
/// ```
pub fn load_json(
    input: impl Read,
    options: &LoadOptions,
    write: &mut dyn FnMut(&WriteBatch) -> Result<()>,
) -> Result<LoadSummary> {
    let start = Instant::now();
    let mut loader = Loader {
        options,
        write,
        batch: WriteBatch::new(),
        summary: LoadSummary::default(),
        mode: match options.format {
            InputFormat::Auto => None,
            InputFormat::Object => Some(Mode::Object),
            InputFormat::Lines => Some(Mode::Lines),
        },
        failure: None,
    };
    let mut de = serde_json::Deserializer::from_reader(BufReader::new(input));
    // `end` succeeds once only whitespace is left; otherwise another object follows (and `end`
    // has consumed nothing but whitespace).
    while de.end().is_err() {
        if let Err(e) = TopLevel(&mut loader).deserialize(&mut de) {
            return Err(loader
                .failure
                .take()
                .unwrap_or_else(|| Error::InvalidArgument(format!("bad JSON input: {e}"))));
        }
    }
    loader.flush()?;
    loader.summary.elapsed = start.elapsed();
    Ok(loader.summary)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Object,
    Lines,
}

struct Loader<'a> {
    options: &'a LoadOptions,
    write: &'a mut dyn FnMut(&WriteBatch) -> Result<()>,
    batch: WriteBatch,
    summary: LoadSummary,
    /// Decided by the options or by the first object.
    mode: Option<Mode>,
    /// A write error, kept whole while serde unwinds with a message.
    failure: Option<Error>,
}

impl Loader<'_> {
    fn pair<E: de::Error>(&mut self, key: &str, value: &str) -> Result<(), E> {
        let encoding = self.options.encoding;
        let key = encoding
            .decode(key)
            .map_err(|e| E::custom(format!("key {key:?}: {}", plain(&e))))?;
        let value = encoding
            .decode(value)
            .map_err(|e| E::custom(format!("value of key {key:?}: {}", plain(&e))))?;
        self.batch.put(&key, &value);
        self.summary.pairs += 1;
        self.summary.bytes += (key.len() + value.len()) as u64;
        if self.batch.len() >= self.options.batch_size.max(1)
            || self.batch.approximate_size() >= self.options.batch_bytes
        {
            self.flush().map_err(|e| {
                let message = e.to_string();
                self.failure = Some(e);
                E::custom(message)
            })?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        self.summary.batches += 1;
        let result = (self.write)(&self.batch);
        self.batch.clear();
        result
    }
}

/// An error's message without the kind prefix (`invalid argument: `).
fn plain(error: &Error) -> String {
    match error {
        Error::InvalidArgument(message) => message.clone(),
        other => other.to_string(),
    }
}

/// One top-level JSON value: an object, read by the loader's mode.
struct TopLevel<'l, 'a>(&'l mut Loader<'a>);

impl<'de> DeserializeSeed<'de> for TopLevel<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopLevel<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let loader = self.0;
        match loader.mode {
            Some(Mode::Object) => object_rest(loader, &mut map),
            Some(Mode::Lines) => {
                let (key, value) = record(&mut map)?;
                loader.pair(&key, &value)
            }
            None => detect(loader, &mut map),
        }
    }
}

/// Loads the remaining pairs of an object.
fn object_rest<'de, A: MapAccess<'de>>(
    loader: &mut Loader<'_>,
    map: &mut A,
) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<String>()? {
        let value: String = map.next_value()?;
        loader.pair(&key, &value)?;
    }
    Ok(())
}

/// Reads a JSON Lines record: exactly the fields `key` and `value`, in either order.
fn record<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(String, String), A::Error> {
    let mut key = None;
    let mut value = None;
    while let Some(name) = map.next_key::<String>()? {
        let slot = match name.as_str() {
            "key" => &mut key,
            "value" => &mut value,
            other => {
                return Err(de::Error::custom(format!(
                    "unexpected field {other:?} (a JSON Lines record has \"key\" and \"value\")"
                )))
            }
        };
        if slot.replace(map.next_value::<String>()?).is_some() {
            return Err(de::Error::custom(format!("field {name:?} given twice")));
        }
    }
    match (key, value) {
        (Some(key), Some(value)) => Ok((key, value)),
        (None, _) => Err(de::Error::missing_field("key")),
        (_, None) => Err(de::Error::missing_field("value")),
    }
}

/// Reads the first object, deciding the mode from it (at most two fields are held back).
fn detect<'de, A: MapAccess<'de>>(loader: &mut Loader<'_>, map: &mut A) -> Result<(), A::Error> {
    let is_field = |name: &str| name == "key" || name == "value";
    let Some(k1) = map.next_key::<String>()? else {
        loader.mode = Some(Mode::Object);
        return Ok(());
    };
    let v1: String = map.next_value()?;
    if !is_field(&k1) {
        loader.mode = Some(Mode::Object);
        loader.pair(&k1, &v1)?;
        return object_rest(loader, map);
    }
    let Some(k2) = map.next_key::<String>()? else {
        loader.mode = Some(Mode::Object);
        return loader.pair(&k1, &v1);
    };
    let v2: String = map.next_value()?;
    if is_field(&k2) && k1 != k2 {
        if let Some(k3) = map.next_key::<String>()? {
            let v3: String = map.next_value()?;
            loader.mode = Some(Mode::Object);
            loader.pair(&k1, &v1)?;
            loader.pair(&k2, &v2)?;
            loader.pair(&k3, &v3)?;
            return object_rest(loader, map);
        }
        loader.mode = Some(Mode::Lines);
        let (key, value) = if k1 == "key" { (v1, v2) } else { (v2, v1) };
        return loader.pair(&key, &value);
    }
    loader.mode = Some(Mode::Object);
    loader.pair(&k1, &v1)?;
    loader.pair(&k2, &v2)?;
    object_rest(loader, map)
}

#[cfg(test)]
mod tests;
