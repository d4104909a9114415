//! The `pawl` command line: parses flags, loads the config, hands over to the platform crate.

fn main() {
    println!("pawl {}", env!("CARGO_PKG_VERSION"));
}
