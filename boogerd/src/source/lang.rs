//! Which language a file is, from its path (and shebang): a pure function, no I/O.

use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    C,
    Markdown,
    /// Any other text file: raw chunks.
    Text,
}

impl Lang {
    pub fn detect(path: &Path, head: &[u8]) -> Lang {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("rs") => Lang::Rust,
            Some("py" | "pyi" | "pyw") => Lang::Python,
            Some("js" | "mjs" | "cjs" | "jsx") => Lang::JavaScript,
            Some("ts" | "mts" | "cts") => Lang::TypeScript,
            Some("tsx") => Lang::Tsx,
            Some("go") => Lang::Go,
            Some("c" | "h") => Lang::C,
            Some("md" | "markdown" | "mdx") => Lang::Markdown,
            _ => Self::from_shebang(head).unwrap_or(Lang::Text),
        }
    }

    fn from_shebang(head: &[u8]) -> Option<Lang> {
        let line = head.strip_prefix(b"#!")?;
        let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
        let line = std::str::from_utf8(line).ok()?;
        if line.contains("python") {
            Some(Lang::Python)
        } else if line.contains("node") || line.contains("deno") || line.contains("bun") {
            Some(Lang::JavaScript)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Go => "go",
            Lang::C => "c",
            Lang::Markdown => "markdown",
            Lang::Text => "text",
        }
    }

    /// The tree-sitter grammar, for the languages chunked structurally.
    pub fn grammar(self) -> Option<tree_sitter::Language> {
        Some(match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Markdown | Lang::Text => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_extension_then_shebang() {
        assert_eq!(Lang::detect(Path::new("a/b.rs"), b""), Lang::Rust);
        assert_eq!(Lang::detect(Path::new("x.PY"), b""), Lang::Python);
        assert_eq!(Lang::detect(Path::new("x.tsx"), b""), Lang::Tsx);
        assert_eq!(Lang::detect(Path::new("x.h"), b""), Lang::C);
        assert_eq!(Lang::detect(Path::new("README.md"), b""), Lang::Markdown);
        assert_eq!(Lang::detect(Path::new("bin/tool"), b"#!/usr/bin/env python3\nprint(1)"), Lang::Python);
        assert_eq!(Lang::detect(Path::new("notes.txt"), b"hello"), Lang::Text);
    }

    #[test]
    fn every_grammar_loads() {
        for lang in [Lang::Rust, Lang::Python, Lang::JavaScript, Lang::TypeScript, Lang::Tsx, Lang::Go, Lang::C] {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&lang.grammar().unwrap()).unwrap();
            assert!(p.parse("", None).is_some(), "{lang:?}");
        }
    }
}
