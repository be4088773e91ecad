//! Files a project ships but nobody edits by hand: generated, vendored, binary by attribute,
//! fuzz corpora. They are set aside (not indexed, counted in the report) unless the project
//! asks for them: an agent looking for the code to change wants none of them, and a fuzz
//! corpus or a lockfile can outnumber the source.
//!
//! What a repository says wins over convention: `.gitattributes` (every one on the way down
//! to a file, deeper ones first, `.git/info/attributes` above all) with `linguist-generated`,
//! `linguist-vendored`, `binary` and `-diff`, set or unset. Without a word from it, well-known
//! names decide: vendor folders, fuzz corpora, minified and protobuf output, and a header
//! that says the file is generated. Lockfiles stay: measured on the commit-subject sets,
//! setting them aside moved BM25's length statistics enough to lose zustand's Fn@10 (0.710 →
//! 0.667), and an agent looking for a dependency's version reads them.
//!
//! A repository is untrusted: attribute files are read up to [`MAX_ATTRIBUTE_BYTES`] and
//! [`MAX_RULES`] lines in all, and a pattern that does not compile is ignored.

use std::path::Path;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Why a file is set aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    Generated,
    Vendored,
    /// `binary` or `-diff` in `.gitattributes`.
    Binary,
    FuzzCorpus,
}

impl Origin {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Origin::Generated => "generated",
            Origin::Vendored => "vendored",
            Origin::Binary => "binary by attribute",
            Origin::FuzzCorpus => "fuzz corpus",
        }
    }
}

/// More than any real attributes file; a larger one is read this far.
const MAX_ATTRIBUTE_BYTES: u64 = 256 * 1024;
/// Rule lines kept across a project's attribute files.
const MAX_RULES: usize = 4096;

/// Folders whose files are someone else's code.
const VENDOR_DIRS: &[&str] =
    &["vendor", "third_party", "third-party", "thirdparty", "node_modules", "bower_components"];
/// Files written by package managers: indexed whatever their header says (see the module's
/// comment), set aside only by the repository's attributes.
const LOCKFILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "go.sum",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "composer.lock",
    "Gemfile.lock",
];
/// Name endings of compiler and bundler output, and of the project files an IDE writes
/// (Xcode's: thousands of lines of object ids no one edits by hand).
const GENERATED_SUFFIXES: &[&str] = &[
    ".min.js",
    ".min.css",
    ".js.map",
    ".css.map",
    ".pb.go",
    ".pb.cc",
    ".pb.h",
    "_pb2.py",
    "_pb2.pyi",
    "_pb2_grpc.py",
    ".pbxproj",
    ".xcworkspacedata",
    ".xcuserstate",
];
/// A generated file says so this early, or not at all.
const HEADER_BYTES: usize = 1024;

/// The three attributes booger reads, each as one matcher per attributes file: lines that
/// set it match, lines that unset it are exceptions (`!`), so the matcher's last-match-wins
/// is git's.
#[derive(Default)]
struct Matchers {
    generated: Option<Gitignore>,
    vendored: Option<Gitignore>,
    binary: Option<Gitignore>,
}

/// The attributes files of one project (or of the part of it a survey looks at).
#[derive(Default)]
pub(crate) struct Attributes {
    /// By precedence: `.git/info/attributes` first, then deeper directories before their
    /// parents. Each with its directory, relative to the root (`""` for the root).
    files: Vec<(String, Matchers)>,
}

impl Attributes {
    /// Reads the attributes files of `root`, `.git/info/attributes`, and each of `dirs` and
    /// of their parents (relative directories, as a walk lists them).
    pub(crate) fn load<'a>(root: &Path, dirs: impl IntoIterator<Item = &'a str>) -> Self {
        let mut wanted: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
        wanted.insert("");
        for d in dirs {
            let mut d = d;
            while wanted.insert(d) {
                d = crate::source::parent_dir(d);
            }
        }
        let mut budget = MAX_RULES;
        let mut files = Vec::new();
        if let Some(m) = read(&root.join(".git/info/attributes"), root, &mut budget) {
            files.push((String::new(), m));
        }
        // Deeper first: a longer path sorts after its parent, so reverse.
        for d in wanted.iter().rev() {
            let dir = if d.is_empty() { root.to_owned() } else { root.join(d) };
            if let Some(m) = read(&dir.join(".gitattributes"), &dir, &mut budget) {
                files.push(((*d).to_owned(), m));
            }
        }
        Self { files }
    }

    /// Why `rel` (a root-relative file path) is set aside, if it is, judged by its path.
    pub(crate) fn origin(&self, rel: &str) -> Option<Origin> {
        let said = |pick: fn(&Matchers) -> &Option<Gitignore>| self.said(rel, pick);
        let generated = said(|m| &m.generated);
        let vendored = said(|m| &m.vendored);
        if generated == Some(true) {
            return Some(Origin::Generated);
        }
        if vendored == Some(true) {
            return Some(Origin::Vendored);
        }
        if said(|m| &m.binary) == Some(true) {
            return Some(Origin::Binary);
        }
        if vendored.is_none() && by_convention_vendored(rel) {
            return Some(Origin::Vendored);
        }
        if generated.is_none() {
            if is_fuzz_corpus(rel) {
                return Some(Origin::FuzzCorpus);
            }
            if by_convention_generated(rel) {
                return Some(Origin::Generated);
            }
        }
        None
    }

    /// True if a header saying "generated" may set `rel` aside: not a lockfile (Cargo's says
    /// `@generated`), and not a file the repository's attributes say is not generated.
    pub(crate) fn header_decides(&self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        !LOCKFILES.contains(&name) && !self.says_not_generated(rel)
    }

    /// True if the repository's attributes say `rel` is not generated (a header must not
    /// overrule them).
    fn says_not_generated(&self, rel: &str) -> bool {
        self.said(rel, |m| &m.generated) == Some(false)
    }

    /// What the attributes files say of one attribute of `rel`: set, unset, or nothing (the
    /// deepest file that says anything wins; within a file, its last matching line).
    fn said(&self, rel: &str, pick: fn(&Matchers) -> &Option<Gitignore>) -> Option<bool> {
        self.files.iter().filter(|(dir, _)| crate::source::is_under(rel, dir)).find_map(|(dir, m)| {
            let inner = if dir.is_empty() { rel } else { &rel[dir.len() + 1..] };
            match pick(m).as_ref()?.matched(inner, false) {
                Match::Ignore(_) => Some(true),
                Match::Whitelist(_) => Some(false),
                Match::None => None,
            }
        })
    }
}

/// True if the first bytes say the file was generated: Go's `Code generated ... DO NOT EDIT`,
/// protobuf's and most generators' `DO NOT EDIT` beside "generated", or `@generated`.
pub(crate) fn has_generated_header(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(HEADER_BYTES)]);
    head.contains("@generated") || (head.contains("DO NOT EDIT") && head.to_ascii_lowercase().contains("generated"))
}

fn by_convention_vendored(rel: &str) -> bool {
    let mut dirs = rel.split('/');
    dirs.next_back();
    dirs.any(|d| VENDOR_DIRS.contains(&d))
}

/// `fuzz/corpus/...`, `fuzzing/artifacts/...` (cargo-fuzz, libFuzzer) and Go's
/// `testdata/fuzz/...`.
fn is_fuzz_corpus(rel: &str) -> bool {
    // Asked of every file a walk finds: consecutive folder names, without collecting them.
    let mut dirs = rel.split('/');
    dirs.next_back();
    let mut previous = "";
    dirs.any(|d| {
        let hit = (previous.starts_with("fuzz") && matches!(d, "corpus" | "artifacts" | "crashes"))
            || (previous == "testdata" && d == "fuzz");
        previous = d;
        hit
    })
}

fn by_convention_generated(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    GENERATED_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// One attributes file's matchers, or None when it is absent or says nothing booger reads.
fn read(file: &Path, dir: &Path, budget: &mut usize) -> Option<Matchers> {
    // Never through a symlink, never a FIFO: only a regular file is read.
    let text = crate::base::repo_file::read_text(file, MAX_ATTRIBUTE_BYTES)?;
    let mut builders = [GitignoreBuilder::new(dir), GitignoreBuilder::new(dir), GitignoreBuilder::new(dir)];
    let mut used = [false; 3];
    for line in text.lines() {
        if *budget == 0 {
            break;
        }
        let line = line.trim();
        // Comments, blank lines, macro definitions; negative patterns are not allowed.
        if line.is_empty() || line.starts_with('#') || line.starts_with("[attr]") || line.starts_with('!') {
            continue;
        }
        let mut words = line.split_ascii_whitespace();
        let Some(pattern) = words.next() else { continue };
        for word in words {
            let Some((which, set)) = attribute(word) else { continue };
            let line = if set { pattern.to_owned() } else { format!("!{pattern}") };
            if builders[which].add_line(None, &line).is_ok() {
                used[which] = true;
                *budget = budget.saturating_sub(1);
            }
        }
    }
    let build = |i: usize| used[i].then(|| builders[i].build().ok()).flatten();
    let m = Matchers { generated: build(0), vendored: build(1), binary: build(2) };
    (m.generated.is_some() || m.vendored.is_some() || m.binary.is_some()).then_some(m)
}

/// Which of the three attributes a word sets (true) or unsets (false): 0 generated,
/// 1 vendored, 2 binary (`binary`, or `diff` unset).
fn attribute(word: &str) -> Option<(usize, bool)> {
    let (name, set) = if let Some(n) = word.strip_prefix('-') {
        (n, false)
    } else if let Some((n, v)) = word.split_once('=') {
        (n, !matches!(v, "false" | "0" | "no"))
    } else if word.starts_with('!') {
        return None; // back to unspecified: say nothing
    } else {
        (word, true)
    };
    match name {
        "linguist-generated" => Some((0, set)),
        "linguist-vendored" => Some((1, set)),
        "binary" => Some((2, set)),
        "diff" => Some((2, !set)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for (p, body) in files {
            std::fs::create_dir_all(t.path().join(p).parent().unwrap()).unwrap();
            std::fs::write(t.path().join(p), body).unwrap();
        }
        t
    }

    #[test]
    fn attributes_decide_with_the_last_matching_line_and_deeper_files_first() {
        let t = project(&[
            (
                ".gitattributes",
                "gen/** linguist-generated\ngen/keep.rs -linguist-generated\n*.dat binary\nlib/** linguist-vendored=true\n",
            ),
            ("sub/.gitattributes", "*.rs linguist-generated\nown.rs linguist-generated=false\n"),
            ("vendor/.gitattributes", "ours.c -linguist-vendored\n"),
        ]);
        let a = Attributes::load(t.path(), ["gen", "sub", "sub/deep", "vendor", "lib"]);
        assert_eq!(a.origin("gen/a.rs"), Some(Origin::Generated));
        assert_eq!(a.origin("gen/keep.rs"), None);
        assert_eq!(a.origin("x/y.dat"), Some(Origin::Binary));
        assert_eq!(a.origin("lib/z.py"), Some(Origin::Vendored));
        assert_eq!(a.origin("sub/deep/b.rs"), Some(Origin::Generated));
        assert_eq!(a.origin("sub/own.rs"), None);
        assert!(!a.header_decides("sub/own.rs") && a.header_decides("sub/other.rs"));
        assert!(!a.header_decides("Cargo.lock"), "a lockfile's header does not set it aside");
        assert_eq!(a.origin("top.rs"), None);
        // Convention, unless the repository says otherwise.
        assert_eq!(a.origin("vendor/theirs.c"), Some(Origin::Vendored));
        assert_eq!(a.origin("vendor/ours.c"), None);
    }

    #[test]
    fn conventions_name_corpora_vendor_folders_and_compiler_output_only() {
        let a = Attributes::default();
        for rel in ["fuzz/corpus/query/0a1b", "fuzzing/artifacts/crash-1", "pkg/testdata/fuzz/FuzzX/1"] {
            assert!(a.origin(rel).is_some(), "{rel}");
        }
        for rel in [
            "web/app.min.js",
            "api/v1/x.pb.go",
            "proto/x_pb2.py",
            "a/node_modules/b/i.js",
            "App.xcodeproj/project.pbxproj",
        ] {
            assert!(a.origin(rel).is_some(), "{rel}");
        }
        for rel in ["fuzz/fuzz_targets/query.rs", "src/vendor.rs", "corpus/words.txt", "Cargo.lock", "main.go"] {
            assert_eq!(a.origin(rel), None, "{rel}");
        }
    }

    #[test]
    fn headers_that_say_generated() {
        assert!(has_generated_header(b"// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n"));
        assert!(has_generated_header(b"# This file is automatically @generated by Cargo.\n"));
        assert!(!has_generated_header(b"// DO NOT EDIT without asking the team\nfn main() {}\n"));
        let mut late = vec![b' '; HEADER_BYTES];
        late.extend_from_slice(b"@generated");
        assert!(!has_generated_header(&late));
    }

    #[test]
    fn hostile_attribute_files_are_bounded() {
        let mut big = String::new();
        for i in 0..20_000 {
            big.push_str(&format!("f{i}/** linguist-generated\n"));
        }
        big.push_str("[unclosed linguist-generated\n");
        let t = project(&[(".gitattributes", &big)]);
        let a = Attributes::load(t.path(), []);
        assert_eq!(a.origin("f1/x.rs"), Some(Origin::Generated));
        assert_eq!(a.origin("f19999/x.rs"), None, "lines past the budget are not read");
    }
}
