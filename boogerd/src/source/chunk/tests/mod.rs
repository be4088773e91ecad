//! Chunker tests: what holds in every language (docs kept with their item, huge items split,
//! broken and binary input, every line in a chunk); `languages` has a fixture per language →
//! the expected outline.
//!
//! Each outline line is `kind name [parent] L<start>-<end> | signature`.

mod languages;

use std::path::Path;

use booger_proto::tools::ChunkKind;

use super::{Chunk, chunk_file};

fn outline(path: &str, src: &str) -> Vec<String> {
    let chunked = chunk_file(Path::new(path), src.as_bytes(), false);
    assert!(chunked.problem.is_none(), "{path}: {:?}", chunked.problem);
    chunked.chunks.iter().map(line).collect()
}

fn line(c: &Chunk) -> String {
    let parent = c.parent.as_deref().map(|p| format!(" [{p}]")).unwrap_or_default();
    format!("{} {}{} L{}-{} | {}", c.kind, c.name, parent, c.start_line, c.end_line, c.signature)
}

fn check(path: &str, src: &str, expected: &[&str]) {
    let got = outline(path, src);
    if got != expected {
        panic!(
            "{path} outline differs.\ngot:\n{}\n",
            got.iter().map(|l| format!("    \"{l}\",")).collect::<Vec<_>>().join("\n")
        );
    }
}

#[test]
fn docs_and_docstrings_stay_with_their_item() {
    let rs = chunk_file(Path::new("a.rs"), include_str!("../fixtures/sample.rs").as_bytes(), false);
    let new = rs.chunks.iter().find(|c| c.name == "new").unwrap();
    assert_eq!(new.doc.as_deref(), Some("Makes one."));
    assert!(new.content.starts_with("    /// Makes one.\n    pub fn new"), "{}", new.content);
    let config = rs.chunks.iter().find(|c| c.name == "Config" && c.kind == ChunkKind::Struct).unwrap();
    assert_eq!(config.doc.as_deref(), Some("A configuration."));
    assert!(config.content.contains("#[derive(Debug)]"));

    let py = chunk_file(Path::new("a.py"), include_str!("../fixtures/sample.py").as_bytes(), false);
    let which = py.chunks.iter().find(|c| c.name == "which").unwrap();
    assert_eq!(which.doc.as_deref(), Some("Find the full path of an executable."));
    let cache = py.chunks.iter().find(|c| c.name == "Cache").unwrap();
    assert_eq!(cache.doc.as_deref(), Some("A small LRU cache."));

    let go = chunk_file(Path::new("a.go"), include_str!("../fixtures/sample.go").as_bytes(), false);
    assert_eq!(
        go.chunks.iter().find(|c| c.name == "NewServer").unwrap().doc.as_deref(),
        Some("NewServer makes a server.")
    );
}

#[test]
fn huge_functions_are_split_with_the_signature_repeated() {
    let body: String = (0..800).map(|i| format!("    let v{i} = compute({i});\n")).collect();
    let src = format!("fn big(x: u32) -> u32 {{\n{body}    0\n}}\n");
    let c = chunk_file(Path::new("big.rs"), src.as_bytes(), false).chunks;
    assert!(c.len() >= 3, "{}", c.len());
    for part in &c {
        assert_eq!(
            (part.kind, part.name.as_str(), part.signature.as_str()),
            (booger_proto::tools::ChunkKind::Function, "big", "fn big(x: u32) -> u32")
        );
        assert!(part.content.len() <= super::MAX_CHUNK_BYTES);
    }
    // The parts tile the function, line after line.
    for w in c.windows(2) {
        assert_eq!(w[0].end_line + 1, w[1].start_line);
    }
    let joined: String = c.iter().map(|p| p.content.as_str()).collect();
    assert!(joined == src.trim_end(), "parts do not tile the function");
}

#[test]
fn broken_code_keeps_its_items_and_reports_the_errors() {
    let src = "fn ok() {}\n\nfn broken( {\n  let x = ;\n\nstruct Fine { a: u8 }\n";
    let c = chunk_file(Path::new("b.rs"), src.as_bytes(), false);
    assert!(c.problem.as_deref().is_some_and(|p| p.contains("syntax error")), "{:?}", c.problem);
    assert!(c.chunks.iter().any(|ch| ch.name == "ok"));
    // Every line with text is in some chunk.
    for (i, line) in src.lines().enumerate() {
        let n = i as u32 + 1;
        if !line.trim().is_empty() {
            assert!(c.chunks.iter().any(|ch| ch.start_line <= n && n <= ch.end_line), "line {n} lost: {line}");
        }
    }
}

#[test]
fn binary_garbage_in_a_source_file_does_not_panic() {
    let junk: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 | 1).collect();
    for name in ["x.rs", "x.py", "x.ts", "x.go", "x.c", "x.md", "x.txt"] {
        let c = chunk_file(Path::new(name), &junk, false);
        assert!(!c.chunks.is_empty(), "{name}");
    }
}

#[test]
fn oversized_files_become_fixed_blocks_without_parsing() {
    let src = "fn a() {}\n".repeat(10_000);
    let c = chunk_file(Path::new("gen.rs"), src.as_bytes(), true);
    assert!(c.chunks.iter().all(|ch| ch.kind == ChunkKind::Raw));
    assert_eq!(c.chunks.iter().map(|ch| ch.content.as_str()).collect::<String>(), src);
}

/// grep reads chunks, so every line with text on it must be whole in some chunk, at its own
/// line number: comments after an item on its line, comments between methods, closing braces.
#[test]
fn every_line_is_whole_in_some_chunk() {
    let extra_py = "import os  # why\nx = 1; import re\nimport sys\n\n\nclass A:\n    x = 1  # trailing\n\n    ##\n\n    def f(self):\n        pass\n\n    #~~~~~~\n    def g(self):\n        pass\n#\n#\n";
    let extra_rs =
        "pub const A: u8 = 0; // FIXME: why\nimpl X {\n    fn a() {}\n    // --\n}\n\n////////\nfn b() {}   \n";
    let files = [
        ("sample.rs", include_str!("../fixtures/sample.rs")),
        ("sample.py", include_str!("../fixtures/sample.py")),
        ("sample.ts", include_str!("../fixtures/sample.ts")),
        ("sample.go", include_str!("../fixtures/sample.go")),
        ("sample.c", include_str!("../fixtures/sample.c")),
        ("extra.py", extra_py),
        ("extra.rs", extra_rs),
    ];
    for (path, src) in files {
        let chunks = chunk_file(Path::new(path), src.as_bytes(), false).chunks;
        for (i, line) in src.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let n = i as u32 + 1;
            let whole = chunks
                .iter()
                .any(|c| c.start_line <= n && c.content.lines().nth((n - c.start_line) as usize) == Some(line));
            assert!(whole, "{path}:{n} {line:?} is not whole in any chunk");
        }
    }
}

/// Property: any bytes under any file name chunk without a panic, into chunks that lie inside
/// the file (lines from 1 to its last line, start before end).
#[test]
fn any_bytes_chunk_into_chunks_inside_the_file() {
    const PIECES: &[&str] = &[
        "fn ",
        "def ",
        "class ",
        "struct ",
        "impl ",
        "func ",
        "function ",
        "#include ",
        "#define X(",
        "# ",
        "## ",
        "```",
        "{",
        "}",
        "(",
        ")",
        "[",
        "]",
        "<",
        ">",
        ";",
        ":",
        "\n",
        "\r\n",
        "    ",
        "\t",
        "\"",
        "'",
        "`",
        "/*",
        "*/",
        "//",
        "\"\"\"",
        "x",
        "name_1",
        "=>",
        "->",
        "é",
        "🦀",
        "\0",
        "\u{feff}",
        "\\",
        "@",
        "export ",
    ];
    const NAMES: &[&str] =
        &["a.rs", "a.py", "a.go", "a.c", "a.h", "a.ts", "a.tsx", "a.js", "a.md", "a.txt", "Makefile", "noext"];
    let mut rng = crate::base::rng::Rng::new(0x2545_F491_4F6C_DD1D);
    for round in 0..3_000 {
        let len = rng.below(80);
        let mut bytes: Vec<u8> = Vec::new();
        for _ in 0..len {
            if rng.below(10) == 0 {
                bytes.push(rng.below(256) as u8); // a stray byte, UTF-8 or not
            } else {
                bytes.extend_from_slice(rng.pick(PIECES).as_bytes());
            }
        }
        let name = NAMES[round % NAMES.len()];
        let lines = bytes.split(|b| *b == b'\n').count().max(1) as u32;
        for too_large in [false, true] {
            let chunked = chunk_file(Path::new(name), &bytes, too_large);
            for c in &chunked.chunks {
                assert!(
                    1 <= c.start_line && c.start_line <= c.end_line && c.end_line <= lines,
                    "{name} ({lines} lines) {bytes:?}: {} L{}-{}",
                    c.kind,
                    c.start_line,
                    c.end_line
                );
            }
        }
    }
}

/// The catalogue's `language` enum names exactly the languages the index stores.
#[test]
fn the_catalogue_names_every_language() {
    let names: Vec<&str> = crate::source::lang::SPECS.iter().map(|s| s.name).collect();
    assert_eq!(names, booger_proto::tools::LANGUAGES);
}

// The languages read through the same table-driven walk (`grammars.rs`): each fixture shows
// its types, members with their parents, imports, properties with code, and test forms.
