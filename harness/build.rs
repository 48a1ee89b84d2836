//! Builds the allocator shim (`native/alloc_shim.c`) that lets redis-server run under
//! libfaketime, as a shared library in OUT_DIR, and tells the crate where it is
//! (`LOCKPICK_ALLOC_SHIM`).

use std::path::PathBuf;

fn main() {
    let source = PathBuf::from("native/alloc_shim.c");
    println!("cargo:rerun-if-changed={}", source.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let lib = out.join("liblockpick_alloc_shim.so");
    // The cc crate finds the C compiler and its flags for the target; it builds static
    // archives only, so the link into a shared object is one more compiler call.
    let compiler = cc::Build::new()
        .pic(true)
        .opt_level(2)
        .cargo_metadata(false)
        .get_compiler();
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-Wall", "-Wextra", "-o"])
        .arg(&lib)
        .arg(&source)
        .arg("-ldl")
        .status()
        .unwrap_or_else(|e| panic!("run the C compiler {:?}: {e}", compiler.path()));
    assert!(
        status.success(),
        "compile {} failed: {status}",
        source.display()
    );
    println!("cargo:rustc-env=LOCKPICK_ALLOC_SHIM={}", lib.display());
}
