//! What the store's tests share: a project folder and a place for its index.

use std::path::PathBuf;

/// A temporary folder holding a project `p` with `files` (relative path, text) and the place
/// `i` for its index; both go when the first value is dropped.
pub fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (root, index) = (dir.path().join("p"), dir.path().join("i"));
    std::fs::create_dir_all(&root).expect("the project folder");
    for (path, text) in files {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().expect("a file in the project")).expect("its folder");
        std::fs::write(file, text).expect("a project file");
    }
    (dir, root, index)
}
