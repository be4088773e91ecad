//! What the store's tests share: a project folder and a place for its index.

use std::path::PathBuf;

/// A temporary folder holding a project `p` with `files` (relative path, text) and the place
/// `i` for its index; both go when the first value is dropped.
pub(crate) fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf, PathBuf) {
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

/// `text` chunked as the indexer chunks it, as a write of file `path`: with its trigram rows
/// (`inline`, as a small run writes them) or leaving them to the background pass.
pub(crate) fn file_write(path: &str, text: &str, inline: bool) -> super::FileWrite {
    let chunks = crate::source::chunk::chunk_file(std::path::Path::new(path), text.as_bytes(), false).chunks;
    super::FileWrite {
        path: path.to_owned(),
        size: text.len() as u64,
        mtime_ns: 0,
        hash: text.to_owned(),
        language: "text".to_owned(),
        problem: None,
        grams: inline.then(|| super::grams::file_blocks(&chunks)),
        words: None,
        packed: None,
        ways: None,
        chunks: Some(chunks),
    }
}

/// The chunks [`Store::scan`](super::Store::scan) reads for the trigram query `expr`, in its
/// order.
pub(crate) fn scanned(store: &super::Store, expr: &str) -> Vec<super::scan::Scanned> {
    scanned_by(store, Some(expr))
}

/// The chunks [`Store::scan`](super::Store::scan) reads for what a match of `literal` must
/// hold (every chunk, if nothing narrows it), in its order.
pub(crate) fn scanned_for(store: &super::Store, literal: &str) -> Vec<super::scan::Scanned> {
    let pattern = regex_syntax::escape(literal);
    scanned_by(store, crate::domain::search::grams::required(&pattern, false).as_deref())
}

fn scanned_by(store: &super::Store, expr: Option<&str>) -> Vec<super::scan::Scanned> {
    let mut found = Vec::new();
    store
        .scan(
            &super::search::Filters::default(),
            expr,
            |_| super::scan::Keep::Yes,
            |c, _| {
                found.push(c.clone());
                true
            },
        )
        .expect("a scan");
    found
}
