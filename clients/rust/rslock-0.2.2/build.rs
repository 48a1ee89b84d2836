//! Reads the rslock version an adapter is built with from its own Cargo.lock, so the hello
//! names what is installed, and tells the 0.2/0.3 source whether the crate has
//! `LockError::TtlExceeded` (0.3.0 on: PR #9), the one API difference between the two releases
//! it is built against. The build script of all three rslock projects (0.2.2, 0.3.0, and
//! clients/rust/rslock's 0.10, where the cfg is unused).

fn main() {
    println!("cargo:rustc-check-cfg=cfg(ttl_exceeded)");
    // Read at run time, not baked in with env!(): setup builds every checkout into one shared
    // target folder, where a build script compiled for another checkout's path is reused.
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let lock = std::path::Path::new(&dir).join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).expect("the adapter's Cargo.lock");
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
    if version != "0.2.2" {
        println!("cargo:rustc-cfg=ttl_exceeded");
    }
}
