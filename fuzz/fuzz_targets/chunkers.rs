//! Every chunker, on any bytes under any file name: no panic, every chunk inside the file, and
//! the check chunks made elsewhere must pass (`verify::check`) passes a file's own chunks.
#![no_main]

use std::path::Path;

use boogerd::source::chunk::chunk_file;
use libfuzzer_sys::fuzz_target;

/// One name per chunker and language detector path (extension, shebang-only, unknown).
const NAMES: &[&str] = &[
    "a.rs",
    "a.py",
    "a.go",
    "a.c",
    "a.h",
    "a.ts",
    "a.tsx",
    "a.js",
    "a.jsx",
    "a.mjs",
    "a.md",
    "a.txt",
    "Makefile",
    "noext",
    "a.pyi",
    "a.markdown",
    "a.java",
    "a.kt",
    "a.cs",
    "a.cpp",
    "a.hpp",
    "a.rb",
    "Gemfile",
    "a.php",
    "a.swift",
    "a.scala",
    "a.lua",
    "a.sh",
    "a.ex",
];


fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else { return };
    let name = NAMES[pick as usize % NAMES.len()];
    let too_large = pick >= 128;
    let lines = bytes.split(|b| *b == b'\n').count().max(1) as u32;
    let chunked = chunk_file(Path::new(name), bytes, too_large);
    for c in &chunked.chunks {
        assert!(1 <= c.start_line && c.start_line <= c.end_line && c.end_line <= lines, "{name}: {c:?}");
        assert!(c.start_byte <= c.end_byte && c.end_byte <= bytes.len(), "{name}: {c:?}");
    }
    let checked = boogerd::source::chunk::verify::check(bytes, &chunked.chunks);
    assert_eq!(checked, Ok(()), "{name}: a file's own chunks refused");
});
