//! Internals exposed to fuzz targets, benches and interop tests (feature `testing`).
//! Not part of the stable API.
