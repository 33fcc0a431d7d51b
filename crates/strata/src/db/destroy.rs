//! Destroying a database: removing every file it owns, never anything else.

use std::path::Path;

use crate::error::Result;
use crate::filename::{lock_file_name, parse_file_name, FileType};
use crate::options::Options;

/// Removes the database files in `dir` (holding its lock meanwhile, so an open database is
/// refused) and then the directory itself if nothing else is in it. A missing directory is
/// not an error.
pub(crate) fn destroy(dir: &Path, options: &Options) -> Result<()> {
    let env = &options.env;
    let Ok(names) = env.children(dir) else {
        return Ok(());
    };
    let lock_path = lock_file_name(dir);
    let lock = env.lock_file(&lock_path)?;
    let mut result = Ok(());
    for name in names {
        match parse_file_name(&name) {
            Some((_, FileType::DbLock)) | None => {}
            Some(_) => {
                if let Err(e) = env.remove_file(&dir.join(&name)) {
                    result = result.and(Err(e));
                }
            }
        }
    }
    let _ = env.unlock_file(lock);
    let _ = env.remove_file(&lock_path);
    // Fails (harmlessly) when the directory holds files that are not the database's.
    let _ = env.remove_dir(dir);
    result
}
