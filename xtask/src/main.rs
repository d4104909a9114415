//! Project automation, run as `cargo xtask <task>` (the cargo-xtask convention).

fn main() {
    eprintln!("usage: cargo xtask <task>");
    std::process::exit(2);
}
