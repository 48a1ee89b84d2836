//! The `lockpick` command line.

fn main() {}
