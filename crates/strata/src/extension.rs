//! Extensions of LevelDB's format, and the mark in the manifest that says which a database
//! uses.
//!
//! An extension writes what LevelDB 1.23 cannot read (range tombstones, expiring values,
//! pointers to values in value files). It is opt-in per database, and a database that uses one records, in place of its comparator's
//! name, a *marker* that LevelDB cannot match: LevelDB checks the comparator name of the
//! manifest's first edit before it reads any log or table, and refuses the directory with its
//! "does not match existing comparator" error. The marker's grammar (ASCII, no spaces):
//!
//! ```text
//! marker    := "strata.v1" ("+" extension)+ ":" comparator
//! extension := "range-deletes" | "expiring-keys" | "value-separation" | "value-compression"
//!              (each at most once, in this order)
//! ```
//!
//! `comparator` is the user comparator's own name, whatever bytes it holds (the first `:`
//! ends the extension list); for example `strata.v1+range-deletes:leveldb.BytewiseComparator`.
//! A database without extensions records the comparator's name alone, as LevelDB does. Reading
//! a recorded name: one that starts with `strata.v` and a digit is a marker (such comparator
//! names are reserved); a marker of another format version, or naming an extension this build
//! does not know, is refused naming it, as is one that does not parse.
//!
//! The marker is recorded (a manifest edit, synced) before the first byte of extension data
//! reaches a log or a table: `db/open.rs` records it at open, when the options enable an
//! extension the manifest does not yet record. An extension recorded but not enabled by the
//! options is refused at open, naming the option that enables it.

use crate::error::{Error, Result};

/// Prefix of every marker: the marker format version this build writes. On-disk: never change.
const MARKER_PREFIX: &str = "strata.v1";
/// Prefix shared by every marker format version.
const MARKER_FAMILY: &str = "strata.v";

/// One extension of the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extension {
    /// Range tombstones: `DB::delete_range` and `WriteBatch::delete_range`.
    RangeDeletes,
    /// Values that expire: `DB::put_with_ttl` and `WriteBatch::put_with_ttl`.
    ExpiringKeys,
    /// Large values in value files beside the tree, pointers in it (docs/design.md, 4.4).
    ValueSeparation,
    /// Values stored Snappy-compressed in value files, named by pointers that carry the
    /// stored length (docs/design.md, 4.4): a build that knows only `value-separation` would
    /// find such pointers malformed.
    ValueCompression,
}

impl Extension {
    /// Every extension, in the order markers list them.
    pub(crate) const ALL: [Extension; 4] = [
        Extension::RangeDeletes,
        Extension::ExpiringKeys,
        Extension::ValueSeparation,
        Extension::ValueCompression,
    ];

    /// The extension's token in a marker. On-disk: never change.
    pub(crate) fn token(self) -> &'static str {
        match self {
            Extension::RangeDeletes => "range-deletes",
            Extension::ExpiringKeys => "expiring-keys",
            Extension::ValueSeparation => "value-separation",
            Extension::ValueCompression => "value-compression",
        }
    }

    /// What the extension is, for error messages.
    pub(crate) fn what(self) -> &'static str {
        match self {
            Extension::RangeDeletes => "range deletes",
            Extension::ExpiringKeys => "expiring keys",
            Extension::ValueSeparation => "value files",
            Extension::ValueCompression => "compressed value files",
        }
    }

    /// The setting of the option that enables the extension.
    pub(crate) fn option(self) -> &'static str {
        match self {
            Extension::RangeDeletes => "Options::range_deletes = true",
            Extension::ExpiringKeys => "Options::expiring_keys = true",
            Extension::ValueSeparation => {
                "Options::value_separation = Some(ValueSeparation { .. })"
            }
            Extension::ValueCompression => {
                "Options::value_separation = Some(ValueSeparation { compression: \
                 CompressionType::Snappy, .. })"
            }
        }
    }

    /// The error of an operation that needs this extension on a database that did not enable
    /// it.
    pub(crate) fn not_enabled(self) -> Error {
        Error::NotSupported(format!(
            "{} are an extension of LevelDB's format: open the database with {} \
             (LevelDB then refuses to open it)",
            self.what(),
            self.option()
        ))
    }

    fn bit(self) -> u8 {
        match self {
            Extension::RangeDeletes => 1,
            Extension::ExpiringKeys => 2,
            Extension::ValueSeparation => 4,
            Extension::ValueCompression => 8,
        }
    }
}

/// A set of extensions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Extensions(u8);

impl Extensions {
    /// The empty set: LevelDB's format.
    pub(crate) const NONE: Extensions = Extensions(0);

    /// Every extension this build knows.
    pub(crate) fn all() -> Extensions {
        let mut set = Extensions::NONE;
        for extension in Extension::ALL {
            set.insert(extension);
        }
        set
    }

    /// The set with each extension whose flag is true.
    pub(crate) fn from_flags(
        range_deletes: bool,
        expiring_keys: bool,
        value_separation: bool,
        value_compression: bool,
    ) -> Extensions {
        let mut set = Extensions::NONE;
        for (extension, on) in [
            (Extension::RangeDeletes, range_deletes),
            (Extension::ExpiringKeys, expiring_keys),
            (Extension::ValueSeparation, value_separation),
            (Extension::ValueCompression, value_compression),
        ] {
            if on {
                set.insert(extension);
            }
        }
        set
    }

    pub(crate) fn insert(&mut self, extension: Extension) {
        self.0 |= extension.bit();
    }

    pub(crate) fn contains(self, extension: Extension) -> bool {
        self.0 & extension.bit() != 0
    }

    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub(crate) fn union(self, other: Extensions) -> Extensions {
        Extensions(self.0 | other.0)
    }

    /// The first extension of this set (in marker order) that `other` lacks.
    pub(crate) fn first_missing_from(self, other: Extensions) -> Option<Extension> {
        self.iter().find(|e| !other.contains(*e))
    }

    /// The extensions of the set, in marker order.
    pub(crate) fn iter(self) -> impl Iterator<Item = Extension> {
        Extension::ALL
            .into_iter()
            .filter(move |e| self.contains(*e))
    }

    /// Fails when this set (what a database records) holds an extension `enabled` lacks,
    /// naming the option that enables it.
    pub(crate) fn check_enabled(self, enabled: Extensions) -> Result<()> {
        match self.first_missing_from(enabled) {
            None => Ok(()),
            Some(missing) => Err(Error::InvalidArgument(format!(
                "this database uses {} (format extension `{}`): open it with {}",
                missing.what(),
                missing.token(),
                missing.option()
            ))),
        }
    }

    /// The name a manifest records for a database with these extensions whose user comparator
    /// is `comparator`: the marker, or the comparator's name alone for the empty set.
    pub(crate) fn recorded_name(self, comparator: &str) -> String {
        if self.is_empty() {
            return comparator.to_owned();
        }
        let mut name = String::from(MARKER_PREFIX);
        for extension in self.iter() {
            name.push('+');
            name.push_str(extension.token());
        }
        name.push(':');
        name.push_str(comparator);
        name
    }
}

/// A comparator name read from a manifest, split into the extensions it records and the user
/// comparator's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecordedName<'a> {
    pub(crate) extensions: Extensions,
    pub(crate) comparator: &'a str,
}

/// Splits a recorded comparator name (see the module documentation). Fails with `NotSupported`
/// for a marker of another format version or naming an unknown extension, and with
/// `Corruption` for a marker that does not parse.
pub(crate) fn parse_recorded_name(name: &str) -> Result<RecordedName<'_>> {
    let Some(rest) = name.strip_prefix(MARKER_FAMILY) else {
        return Ok(plain(name));
    };
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return Ok(plain(name));
    }
    let malformed = || {
        Error::corruption(format!(
            "comparator name {name:?} is a malformed Strata format-extension marker"
        ))
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (version, rest) = rest.split_at(digits);
    if version != &MARKER_PREFIX[MARKER_FAMILY.len()..] {
        return Err(Error::NotSupported(format!(
            "the database records format {MARKER_FAMILY}{version} ({name:?}), written by a \
             newer Strata than this build, which reads {MARKER_PREFIX}"
        )));
    }
    let (list, comparator) = rest.split_once(':').ok_or_else(malformed)?;
    let mut extensions = Extensions::NONE;
    let mut tokens = list.split('+');
    // The list starts with a `+`: the first piece is empty.
    if tokens.next() != Some("") {
        return Err(malformed());
    }
    for token in tokens {
        if token.is_empty() {
            return Err(malformed());
        }
        let extension = Extension::ALL
            .into_iter()
            .find(|e| e.token() == token)
            .ok_or_else(|| {
                Error::NotSupported(format!(
                    "the database uses the format extension `{token}`, which this build of \
                     Strata does not know (recorded as {name:?})"
                ))
            })?;
        if extensions.contains(extension) {
            return Err(malformed());
        }
        extensions.insert(extension);
    }
    if extensions.is_empty() {
        return Err(malformed());
    }
    Ok(RecordedName {
        extensions,
        comparator,
    })
}

fn plain(name: &str) -> RecordedName<'_> {
    RecordedName {
        extensions: Extensions::NONE,
        comparator: name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const BYTEWISE: &str = "leveldb.BytewiseComparator";

    #[test]
    fn no_extension_records_the_comparator_alone() {
        assert_eq!(Extensions::NONE.recorded_name(BYTEWISE), BYTEWISE);
        let parsed = parse_recorded_name(BYTEWISE).unwrap();
        assert_eq!(parsed.extensions, Extensions::NONE);
        assert_eq!(parsed.comparator, BYTEWISE);
    }

    #[test]
    fn markers_list_extensions_in_order() {
        let both = Extensions::from_flags(true, true, false, false);
        assert_eq!(
            both.recorded_name(BYTEWISE),
            "strata.v1+range-deletes+expiring-keys:leveldb.BytewiseComparator"
        );
        assert_eq!(
            Extensions::from_flags(false, true, false, false).recorded_name("a:b"),
            "strata.v1+expiring-keys:a:b"
        );
        assert_eq!(
            Extensions::from_flags(true, true, true, false).recorded_name(BYTEWISE),
            "strata.v1+range-deletes+expiring-keys+value-separation:leveldb.BytewiseComparator"
        );
        let parsed = parse_recorded_name("strata.v1+value-separation:c").unwrap();
        assert_eq!(
            parsed.extensions,
            Extensions::from_flags(false, false, true, false)
        );
        assert_eq!(
            Extensions::from_flags(false, false, true, true).recorded_name(BYTEWISE),
            "strata.v1+value-separation+value-compression:leveldb.BytewiseComparator"
        );
        let parsed = parse_recorded_name("strata.v1+expiring-keys:a:b").unwrap();
        assert_eq!(parsed.comparator, "a:b");
        assert!(parsed.extensions.contains(Extension::ExpiringKeys));
        assert!(!parsed.extensions.contains(Extension::RangeDeletes));
    }

    #[test]
    fn names_that_only_look_like_markers_are_plain() {
        for name in [
            "strata.version",
            "strata.v",
            "strata.vx+range-deletes:c",
            "",
            "s",
        ] {
            assert_eq!(parse_recorded_name(name).unwrap(), plain(name));
        }
    }

    #[test]
    fn unknown_extensions_and_versions_are_refused_by_name() {
        let err = parse_recorded_name("strata.v1+range-deletes+blobs:c").unwrap_err();
        assert!(matches!(err, Error::NotSupported(_)), "{err}");
        assert!(err.to_string().contains("`blobs`"), "{err}");
        let err = parse_recorded_name("strata.v2+anything:c").unwrap_err();
        assert!(matches!(err, Error::NotSupported(_)), "{err}");
        assert!(err.to_string().contains("strata.v2"), "{err}");
    }

    #[test]
    fn malformed_markers_are_corruption() {
        for name in [
            "strata.v1",
            "strata.v1:c",
            "strata.v1range-deletes:c",
            "strata.v1+:c",
            "strata.v1+range-deletes+range-deletes:c",
            "strata.v1+range-deletes",
        ] {
            let err = parse_recorded_name(name).unwrap_err();
            assert!(err.is_corruption(), "{name}: {err}");
        }
    }

    #[test]
    fn a_recorded_extension_must_be_enabled() {
        let recorded = Extensions::from_flags(true, false, false, false);
        recorded
            .check_enabled(Extensions::from_flags(true, true, false, false))
            .unwrap();
        let err = recorded.check_enabled(Extensions::NONE).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(
            err.to_string().contains("Options::range_deletes = true"),
            "{err}"
        );
    }

    proptest! {
        #[test]
        fn markers_round_trip(
            range_deletes in any::<bool>(),
            expiring_keys in any::<bool>(),
            value_separation in any::<bool>(),
            value_compression in any::<bool>(),
            comparator in "[ -~]{0,40}",
        ) {
            let set = Extensions::from_flags(
                range_deletes,
                expiring_keys,
                value_separation,
                value_compression,
            );
            let name = set.recorded_name(&comparator);
            let plain_marker_lookalike = set.is_empty()
                && comparator.starts_with(MARKER_FAMILY)
                && comparator[MARKER_FAMILY.len()..].starts_with(|c: char| c.is_ascii_digit());
            prop_assume!(!plain_marker_lookalike);
            let parsed = parse_recorded_name(&name).unwrap();
            prop_assert_eq!(parsed.extensions, set);
            prop_assert_eq!(parsed.comparator, comparator.as_str());
        }

        #[test]
        fn arbitrary_names_parse_or_fail_cleanly(name in ".{0,60}") {
            match parse_recorded_name(&name) {
                Ok(parsed) => prop_assert!(name.ends_with(parsed.comparator)),
                Err(e) => prop_assert!(
                    e.is_corruption() || matches!(e, Error::NotSupported(_)),
                    "{}", e
                ),
            }
        }
    }
}
