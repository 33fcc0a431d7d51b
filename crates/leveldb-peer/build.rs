//! Links the system's LevelDB (Debian's `libleveldb-dev`) and Snappy.
fn main() {
    println!("cargo:rustc-link-lib=leveldb");
    println!("cargo:rerun-if-changed=build.rs");
}
