//! The `strata` command-line tool: a thin shell over library code.

fn main() {
    println!("strata {}", env!("CARGO_PKG_VERSION"));
}
