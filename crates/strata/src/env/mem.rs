//! PLACEHOLDER
use std::path::Path;
use std::sync::Arc;

use super::*;

/// An in-memory file system.
#[derive(Debug, Default)]
pub struct MemEnv;

impl MemEnv {
    /// An empty in-memory file system.
    pub fn new() -> MemEnv {
        MemEnv
    }
}

impl Env for MemEnv {
    fn new_sequential_file(&self, _: &Path) -> Result<Box<dyn SequentialFile>> {
        unimplemented!()
    }
    fn new_random_access_file(&self, _: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        unimplemented!()
    }
    fn new_writable_file(&self, _: &Path) -> Result<Box<dyn WritableFile>> {
        unimplemented!()
    }
    fn new_appendable_file(&self, _: &Path) -> Result<Box<dyn WritableFile>> {
        unimplemented!()
    }
    fn file_exists(&self, _: &Path) -> bool {
        unimplemented!()
    }
    fn children(&self, _: &Path) -> Result<Vec<String>> {
        unimplemented!()
    }
    fn remove_file(&self, _: &Path) -> Result<()> {
        unimplemented!()
    }
    fn create_dir(&self, _: &Path) -> Result<()> {
        unimplemented!()
    }
    fn remove_dir(&self, _: &Path) -> Result<()> {
        unimplemented!()
    }
    fn file_size(&self, _: &Path) -> Result<u64> {
        unimplemented!()
    }
    fn rename(&self, _: &Path, _: &Path) -> Result<()> {
        unimplemented!()
    }
    fn lock_file(&self, _: &Path) -> Result<Box<dyn FileLock>> {
        unimplemented!()
    }
    fn unlock_file(&self, _: Box<dyn FileLock>) -> Result<()> {
        unimplemented!()
    }
    fn sync_dir(&self, _: &Path) -> Result<()> {
        unimplemented!()
    }
    fn now_micros(&self) -> u64 {
        unimplemented!()
    }
}
