//! An iterator that holds nothing but an error: stands in for a source that could not be
//! opened, so the error surfaces from the merged iterator's `status()`.

use super::InternalIterator;
use crate::error::{Error, Result};

pub(crate) struct ErrorIter {
    error: Error,
}

impl ErrorIter {
    pub(crate) fn new(error: Error) -> ErrorIter {
        ErrorIter { error }
    }
}

impl InternalIterator for ErrorIter {
    fn valid(&self) -> bool {
        false
    }
    fn seek_to_first(&mut self) {}
    fn seek_to_last(&mut self) {}
    fn seek(&mut self, _target: &[u8]) {}
    fn next(&mut self) {}
    fn prev(&mut self) {}
    fn key(&self) -> &[u8] {
        &[]
    }
    fn value(&self) -> &[u8] {
        &[]
    }
    fn status(&self) -> Result<()> {
        Err(self.error.clone())
    }
}
