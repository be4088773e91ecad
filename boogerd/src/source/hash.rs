//! Content hashes and the Merkle fingerprint of a tree.
//!
//! A file's hash is BLAKE3 of its bytes. A directory's hash is BLAKE3 over its sorted
//! children, each as `name \0 kind \0 hash \n`, so the root hash identifies the whole indexed
//! tree: two indexes of the same files have the same root, whatever their mtimes.

use std::collections::BTreeMap;

pub(crate) fn file_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// The root hash of the tree formed by `files` (`/`-separated relative path → content hash).
pub(crate) fn merkle_root<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    #[derive(Default)]
    struct Dir<'a> {
        dirs: BTreeMap<&'a str, Dir<'a>>,
        files: BTreeMap<&'a str, &'a str>,
    }
    fn hash(dir: &Dir) -> String {
        // Sorted by name across files and directories alike.
        let mut entries: Vec<(&str, &str, String)> =
            dir.files.iter().map(|(n, h)| (*n, "f", (*h).to_owned())).collect();
        entries.extend(dir.dirs.iter().map(|(n, d)| (*n, "d", hash(d))));
        entries.sort_by(|a, b| a.0.cmp(b.0));
        let mut hasher = blake3::Hasher::new();
        for (name, kind, h) in entries {
            hasher.update(name.as_bytes());
            hasher.update(b"\0");
            hasher.update(kind.as_bytes());
            hasher.update(b"\0");
            hasher.update(h.as_bytes());
            hasher.update(b"\n");
        }
        hasher.finalize().to_hex().to_string()
    }
    let mut root = Dir::default();
    for (path, h) in files {
        let mut parts: Vec<&str> = path.split('/').collect();
        let name = parts.pop().unwrap_or(path);
        let mut dir = &mut root;
        for p in parts {
            dir = dir.dirs.entry(p).or_default();
        }
        dir.files.insert(name, h);
    }
    hash(&root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_depends_on_content_and_place_not_order() {
        let a = merkle_root([("src/a.rs", "1"), ("src/b.rs", "2"), ("README", "3")]);
        let b = merkle_root([("README", "3"), ("src/b.rs", "2"), ("src/a.rs", "1")]);
        assert_eq!(a, b);
        assert_ne!(a, merkle_root([("src/a.rs", "1"), ("src/b.rs", "9"), ("README", "3")]));
        assert_ne!(a, merkle_root([("src/a.rs", "1"), ("lib/b.rs", "2"), ("README", "3")]));
        assert_eq!(file_hash(b"abc").len(), 64);
    }
}
