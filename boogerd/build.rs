//! Release builds of the daemon on Linux:
//! - compress their debug sections with zlib: the line tables that give a panic's backtrace
//!   its files and lines (about 40 MB of the daemon) take a third of the space, and std's
//!   backtraces and gdb read them as they are;
//! - pack their relative relocations (`-z pack-relative-relocs`, DT_RELR): the grammars'
//!   tables of pointers alone need tens of thousands, 24 bytes each in the classic form (1 MB
//!   of the daemon), a few bytes packed. A glibc older than 2.36 cannot load such a program,
//!   so they are packed only when the build is for this machine and its glibc is that recent
//!   (whose distributions ship a linker that packs: binutils 2.38, lld 15, mold).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux && std::env::var("PROFILE").is_ok_and(|p| p == "release") {
        println!("cargo:rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
        if loads_packed_relocations() {
            println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
        }
    }
}

/// Whether the C library the daemon is linked against here loads DT_RELR: a native build (not
/// a cross build, whose C library this script cannot ask) for GNU, glibc 2.36 or later.
fn loads_packed_relocations() -> bool {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("HOST") != var("TARGET") || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return false;
    }
    let Ok(out) = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    // "glibc 2.36"
    let text = String::from_utf8_lossy(&out.stdout);
    let mut version = text.trim().trim_start_matches("glibc ").split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (version.next().unwrap_or(0), version.next().unwrap_or(0));
    out.status.success() && (major, minor) >= (2, 36)
}
