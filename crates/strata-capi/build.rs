//! Gives the shared library its ELF SONAME, `libstrata.so.<major version>`: programs linked to it
//! record that name, and `make install-c` installs `libstrata.so.<version>` with the links
//! `libstrata.so.<major>` and `libstrata.so` (see the Makefile).
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let major = env!("CARGO_PKG_VERSION_MAJOR");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libstrata.so.{major}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
