//! File names as answers print them: whatever bytes a repository names a file with, the
//! walk either indexes it under a name that prints as itself (UTF-8, no control character)
//! or reports it skipped under an escaped name with no control character either, so no
//! answer line can be forged by a name.
#![no_main]

use std::os::unix::ffi::OsStrExt;
use std::sync::OnceLock;

use boogerd::engine::index::walk;
use libfuzzer_sys::fuzz_target;

fn dir() -> &'static std::path::Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir")).path()
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() || data.len() > 200 || data.contains(&0) || data.contains(&b'/') || data == b"." || data == b".."
    {
        return;
    }
    let root = dir();
    let file = root.join(std::ffi::OsStr::from_bytes(data));
    if std::fs::write(&file, b"x").is_err() {
        return;
    }
    let tree = walk::walk(root);
    let _ = std::fs::remove_file(&file);
    let shown: Vec<&String> = tree.files.iter().map(|f| &f.rel).chain(tree.skipped.iter().map(|s| &s.path)).collect();
    for s in &shown {
        assert!(!s.chars().any(char::is_control), "a name printed with a control character: {s:?}");
    }
    // An indexed file is named by exactly its bytes: what an answer prints opens that file.
    for f in &tree.files {
        assert_eq!(f.rel.as_bytes(), data, "indexed under another name");
    }
    assert!(shown.len() <= 1, "{shown:?}");
});
