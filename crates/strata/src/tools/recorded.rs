//! The format extensions a database records (docs/design.md section 4.1), read from its
//! manifest without opening it: how a tool opens any database, extended or not, with the
//! options its format needs, and without changing that format.

use std::path::Path;

use crate::env::{read_file_to_vec, Env};
use crate::extension::{parse_recorded_name, Extension, Extensions};
use crate::filename::{parse_file_name, FileType};
use crate::options::{Options, ValueSeparation};
use crate::table::format::CompressionType;
use crate::tools::records::{for_each_record, LogItem};
use crate::version::edit::VersionEdit;

/// `options` with every format extension the database in `dir` records turned on: range
/// deletes, expiring keys, and value separation (at [`ValueSeparation::default`] when
/// `options` has none). A database that records none, does not exist, or whose manifest
/// cannot be read gets `options` unchanged (opening it then says what is wrong). Reads through
/// `options.env`.
pub fn with_recorded_extensions(dir: &Path, mut options: Options) -> Options {
    let Some(recorded) = recorded_extensions(&*options.env, dir) else {
        return options;
    };
    options.range_deletes |= recorded.contains(Extension::RangeDeletes);
    options.expiring_keys |= recorded.contains(Extension::ExpiringKeys);
    if recorded.contains(Extension::ValueSeparation) && options.value_separation.is_none() {
        options.value_separation = Some(ValueSeparation::default());
    }
    if recorded.contains(Extension::ValueCompression) {
        options.value_separation = options
            .value_separation
            .map(|separation| separation.with_compression(CompressionType::Snappy));
    }
    options
}

/// The extensions the manifest `CURRENT` names records, from its first edit naming a
/// comparator; `None` when it cannot be read.
fn recorded_extensions(env: &dyn Env, dir: &Path) -> Option<Extensions> {
    let current = read_file_to_vec(env, &dir.join("CURRENT")).ok()?;
    let name = std::str::from_utf8(current.strip_suffix(b"\n")?).ok()?;
    if !matches!(parse_file_name(name), Some((_, FileType::Descriptor))) {
        return None;
    }
    let mut comparator = None;
    let read = for_each_record(env, &dir.join(name), true, false, &mut |item| {
        if let (None, LogItem::Record { data, .. }) = (&comparator, item) {
            comparator = VersionEdit::decode(data).ok().and_then(|e| e.comparator);
        }
        Ok(())
    });
    read.ok()?;
    parse_recorded_name(&comparator?).ok().map(|r| r.extensions)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::db::DB;
    use crate::env::MemEnv;

    fn options(env: &Arc<MemEnv>) -> Options {
        Options {
            env: env.clone(),
            create_if_missing: true,
            ..Options::default()
        }
    }

    #[test]
    fn the_extensions_a_database_records_are_turned_on_and_no_others() {
        let env = Arc::new(MemEnv::new());
        let extended = Options {
            range_deletes: true,
            value_separation: Some(ValueSeparation::new(100)),
            ..options(&env)
        };
        drop(DB::open("/extended", extended).unwrap());
        drop(DB::open("/plain", options(&env)).unwrap());

        let found = with_recorded_extensions(Path::new("/extended"), options(&env));
        assert!(found.range_deletes && !found.expiring_keys);
        assert_eq!(found.value_separation, Some(ValueSeparation::default()));
        // The options open it; without them the open is refused.
        assert!(DB::open("/extended", options(&env)).is_err());
        drop(DB::open("/extended", found).unwrap());
        // A threshold given is kept.
        let given = Options {
            value_separation: Some(ValueSeparation::new(7)),
            ..options(&env)
        };
        let kept = with_recorded_extensions(Path::new("/extended"), given);
        assert_eq!(kept.value_separation, Some(ValueSeparation::new(7)));

        for plain in ["/plain", "/missing"] {
            let same = with_recorded_extensions(Path::new(plain), options(&env));
            assert!(!same.range_deletes && !same.expiring_keys, "{plain}");
            assert_eq!(same.value_separation, None, "{plain}");
        }
    }
}
