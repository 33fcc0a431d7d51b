//! The database: open and recovery, write path, read path, snapshots, properties, repair.

pub(crate) mod filename;
