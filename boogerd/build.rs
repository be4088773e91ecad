//! Release builds of the daemon on Linux compress their debug sections with zlib: the line
//! tables that give a panic's backtrace its files and lines (about 40 MB of the daemon)
//! take a third of the space, and std's backtraces and gdb read them as they are.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux && std::env::var("PROFILE").is_ok_and(|p| p == "release") {
        println!("cargo:rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
    }
}
