//! The log format (WAL and manifest).
