//! The JNI library behind Strata's Java binding: `io.github.stratakv.StrataDBFactory`, a
//! `DBFactory` of the `org.iq80.leveldb` API (leveldb-api 0.12), over the Strata engine.
//!
//! Each Java class with native methods has its module here (`factory`, `db`, `iterator`,
//! `key_iterator`, `batch`, `snapshot`); Java objects reach their native side through `long` handles
//! (`handle`), errors come back as `DBException`s (`errors`), and Java comparators and
//! loggers are called from any thread (`comparator`, `logger`, `attach`).
//!
//! Nothing a Java caller does crashes the JVM: null arguments and closed objects are errors,
//! every native method catches panics, and a comparator that throws poisons its database
//! instead of corrupting it (see `comparator`).

mod attach;
mod batch;
mod bytes;
mod comparator;
mod database;
mod db;
mod errors;
mod factory;
mod fast;
mod handle;
mod iterator;
mod java;
mod key_iterator;
mod logger;
mod options;
mod scratch;
mod snapshot;
mod strings;
