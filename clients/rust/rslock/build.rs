//! Reads the rslock version this adapter is built with from its own Cargo.lock, so the hello
//! names what is installed instead of a number written in the source.

fn main() {
    // Read at run time, not baked in with env!(): setup builds every checkout into one shared
    // target folder, where a build script compiled for another checkout's path is reused.
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let lock = std::path::Path::new(&dir).join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).expect("clients/rust/rslock/Cargo.lock");
    let mut lines = text.lines();
    let mut version = None;
    while let Some(line) = lines.next() {
        if line == "name = \"rslock\"" {
            version = lines
                .next()
                .and_then(|l| l.strip_prefix("version = \""))
                .and_then(|v| v.strip_suffix('"'));
            break;
        }
    }
    let version = version.expect("Cargo.lock names an rslock package with its version");
    println!("cargo:rustc-env=RSLOCK_VERSION={version}");
}
