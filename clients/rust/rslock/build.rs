//! Reads the rslock version this adapter is built with from its own Cargo.lock, so the hello
//! names what is installed instead of a number written in the source.

fn main() {
    let lock = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock");
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
