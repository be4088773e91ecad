//! Which language a file is, from its path, its name and its first bytes: a pure function,
//! no I/O. Every language is one row of [`SPECS`]; what its syntax tree means to the chunker
//! is one row of `chunk::grammars`.

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
    Java,
    Kotlin,
    CSharp,
    Cpp,
    Ruby,
    Php,
    Swift,
    Scala,
    Lua,
    Bash,
    Elixir,
}

/// How a language is recognised.
pub struct Spec {
    pub lang: Lang,
    /// As stored in the index and given to the `language` filter.
    pub name: &'static str,
    /// Lower-case, without the dot.
    pub extensions: &'static [&'static str],
    /// Whole file names that have no telling extension (`Gemfile`).
    pub file_names: &'static [&'static str],
    /// Words of a `#!` line (`python3` contains `python`).
    pub interpreters: &'static [&'static str],
}

const fn spec(
    lang: Lang,
    name: &'static str,
    extensions: &'static [&'static str],
    file_names: &'static [&'static str],
    interpreters: &'static [&'static str],
) -> Spec {
    Spec { lang, name, extensions, file_names, interpreters }
}

/// Every language, in the catalogue's order (new ones are appended).
pub(crate) const SPECS: &[Spec] = &[
    spec(Lang::Rust, "rust", &["rs"], &[], &[]),
    spec(Lang::Python, "python", &["py", "pyi", "pyw"], &["SConstruct", "SConscript"], &["python"]),
    spec(Lang::JavaScript, "javascript", &["js", "mjs", "cjs", "jsx"], &[], &["node", "deno", "bun"]),
    spec(Lang::TypeScript, "typescript", &["ts", "mts", "cts"], &[], &[]),
    spec(Lang::Tsx, "tsx", &["tsx"], &[], &[]),
    spec(Lang::Go, "go", &["go"], &[], &[]),
    spec(Lang::C, "c", &["c", "h"], &[], &[]),
    spec(Lang::Markdown, "markdown", &["md", "markdown", "mdx"], &[], &[]),
    spec(Lang::Text, "text", &[], &[], &[]),
    spec(Lang::Java, "java", &["java"], &[], &[]),
    spec(Lang::Kotlin, "kotlin", &["kt", "kts"], &[], &["kotlin"]),
    spec(Lang::CSharp, "csharp", &["cs", "csx"], &[], &[]),
    spec(
        Lang::Cpp,
        "cpp",
        &["cpp", "cc", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp", "inl", "cu", "cuh"],
        &[],
        &[],
    ),
    spec(
        Lang::Ruby,
        "ruby",
        &["rb", "rake", "gemspec", "ru", "rbw"],
        &["Gemfile", "Rakefile", "Guardfile", "Podfile", "Vagrantfile", "Brewfile", "Fastfile"],
        &["ruby"],
    ),
    spec(Lang::Php, "php", &["php", "phtml", "php8", "php7", "phpt"], &[], &["php"]),
    spec(Lang::Swift, "swift", &["swift"], &[], &["swift"]),
    spec(Lang::Scala, "scala", &["scala", "sc", "sbt"], &[], &["scala"]),
    spec(Lang::Lua, "lua", &["lua", "rockspec"], &[], &["lua"]),
    spec(
        Lang::Bash,
        "bash",
        &["sh", "bash", "bats", "ksh"],
        &[".bashrc", ".bash_profile", ".bash_aliases", ".profile", "PKGBUILD"],
        &["bash", "sh", "zsh", "ksh", "bats"],
    ),
    spec(Lang::Elixir, "elixir", &["ex", "exs"], &[], &["elixir"]),
];

impl Lang {
    pub fn detect(path: &Path, head: &[u8]) -> Lang {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        if ext.as_deref() == Some("h") {
            return if looks_like_cpp(head) { Lang::Cpp } else { Lang::C };
        }
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
        let by_name = SPECS
            .iter()
            .find(|s| ext.as_deref().is_some_and(|e| s.extensions.contains(&e)) || s.file_names.contains(&file));
        match by_name {
            Some(s) => s.lang,
            None => Self::from_shebang(head).unwrap_or(Lang::Text),
        }
    }

    /// `#!/usr/bin/env python3`, `#!/bin/sh -e`: the interpreter's name, without version.
    fn from_shebang(head: &[u8]) -> Option<Lang> {
        let line = head.strip_prefix(b"#!")?;
        let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
        let line = std::str::from_utf8(line).ok()?;
        let mut words = line.split_whitespace();
        let mut program = words.next()?.rsplit('/').next()?;
        if program == "env" {
            program = words.find(|w| !w.starts_with('-'))?;
        }
        let program = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        SPECS.iter().find(|s| s.interpreters.contains(&program)).map(|s| s.lang)
    }

    pub(crate) fn spec(self) -> &'static Spec {
        SPECS.iter().find(|s| s.lang == self).expect("every language has a spec")
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }
}

/// A test file by its path, in any language's convention: in a test folder (`tests/`,
/// `src/test/`, `spec/`, `__tests__/`, `FluentValidation.Tests/`, `SwiftyJSONTests/`) or a
/// folder of test inputs (`testdata/`, `fixtures/`, `__mocks__/`), or named
/// as one (`test_x.py`, `x_test.go`, `x.spec.ts`, `x_spec.rb`, `XTest.java`, `XTests.cs`,
/// `XSpec.scala`, `conftest.py`).
pub(crate) fn is_test_path(path: &str) -> bool {
    let (folders, file) = path.rsplit_once('/').unwrap_or(("", path));
    let test_folder = |seg: &str| {
        let lower = seg.to_ascii_lowercase();
        // Test inputs too: Go's `testdata`, fixture folders, Jest's `__mocks__`.
        matches!(
            lower.as_str(),
            "test"
                | "tests"
                | "testing"
                | "__tests__"
                | "spec"
                | "specs"
                | "testdata"
                | "fixtures"
                | "__fixtures__"
                | "__mocks__"
        ) || [".tests", "_tests", "-tests", ".test", ".specs"].iter().any(|s| lower.ends_with(s))
            || seg.ends_with("Tests")
    };
    let stem = file.split('.').next().unwrap_or(file);
    folders.split('/').any(test_folder)
        || file.starts_with("test_")
        || file.contains("_test.")
        || file.contains(".test.")
        || file.contains(".spec.")
        || file.contains("_spec.")
        || file == "conftest.py"
        // A suite in one file: hiredis's `test.c`, a Django app's `tests.py`.
        || stem.eq_ignore_ascii_case("test")
        || stem.eq_ignore_ascii_case("tests")
        || ["Test", "Tests", "Spec", "IT"]
            .iter()
            .any(|s| stem.strip_suffix(s).and_then(|rest| rest.chars().last()).is_some_and(|c| c.is_ascii_lowercase()))
}

/// A `.h` header is C++ when its text says so: a namespace, a template, a class with access
/// sections, `std::`. C headers that only wrap themselves in `extern "C"` stay C.
fn looks_like_cpp(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(64 * 1024)]);
    let comment = |line: &str| line.starts_with('*') || line.starts_with("//") || line.starts_with("/*");
    text.lines().map(str::trim_start).filter(|line| !comment(line)).any(|line| {
        // `namespace llvm {`, `namespace std _GLIBCXX_VISIBILITY(default)`; not prose.
        (line.starts_with("namespace ") && (line.contains('{') || line.split_whitespace().count() <= 3))
            || line.starts_with("template<")
            || line.starts_with("template <")
            || line.starts_with("public:")
            || line.starts_with("private:")
            || line.starts_with("protected:")
            || (line.starts_with("class ") && !line.ends_with(';'))
            || line.contains("std::")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_extension_then_name_then_shebang() {
        assert_eq!(Lang::detect(Path::new("a/b.rs"), b""), Lang::Rust);
        assert_eq!(Lang::detect(Path::new("x.PY"), b""), Lang::Python);
        assert_eq!(Lang::detect(Path::new("x.tsx"), b""), Lang::Tsx);
        assert_eq!(Lang::detect(Path::new("README.md"), b""), Lang::Markdown);
        assert_eq!(Lang::detect(Path::new("build.gradle.kts"), b""), Lang::Kotlin);
        assert_eq!(Lang::detect(Path::new("lib/tasks/db.rake"), b""), Lang::Ruby);
        assert_eq!(Lang::detect(Path::new("Gemfile"), b"source 'x'"), Lang::Ruby);
        assert_eq!(Lang::detect(Path::new("src/App.hpp"), b""), Lang::Cpp);
        assert_eq!(Lang::detect(Path::new("bin/tool"), b"#!/usr/bin/env python3\nprint(1)"), Lang::Python);
        assert_eq!(Lang::detect(Path::new("bin/run"), b"#!/bin/bash -e\necho"), Lang::Bash);
        assert_eq!(Lang::detect(Path::new("bin/rake"), b"#!/usr/bin/env ruby\n"), Lang::Ruby);
        assert_eq!(Lang::detect(Path::new("bin/x"), b"#!/usr/bin/env -S lua5.4\n"), Lang::Lua);
        assert_eq!(Lang::detect(Path::new("notes.txt"), b"hello"), Lang::Text);
        assert_eq!(Lang::detect(Path::new("bin/x"), b"#!/usr/bin/perl\n"), Lang::Text);
    }

    #[test]
    fn a_header_is_cpp_when_its_text_says_so() {
        assert_eq!(Lang::detect(Path::new("x.h"), b"int f(void);\n"), Lang::C);
        let c = b"#ifdef __cplusplus\nextern \"C\" {\n#endif\nstruct s { int a; };\nclass_t *c;\n";
        assert_eq!(Lang::detect(Path::new("x.h"), c), Lang::C);
        let prose = b"/* Parsing with\n   namespace processing as described above. The rest */\nint f(void);";
        assert_eq!(Lang::detect(Path::new("x.h"), prose), Lang::C);
        assert_eq!(Lang::detect(Path::new("x.h"), b"namespace cli {\nclass App {\npublic:\n};\n}"), Lang::Cpp);
        assert_eq!(Lang::detect(Path::new("x.h"), b"#pragma once\ntemplate <typename T> T f();"), Lang::Cpp);
        assert_eq!(Lang::detect(Path::new("x.h"), b"void f(std::string s);"), Lang::Cpp);
    }

    #[test]
    fn test_files_by_each_languages_convention() {
        for path in [
            "tests/test_units.py",
            "pkg/server_test.go",
            "src/app.spec.ts",
            "spec/httparty/request_spec.rb",
            "src/test/java/org/jsoup/parser/AttributeParseTest.java",
            "src/FluentValidation.Tests/ValidatorTests.cs",
            "Tests/SwiftyJSONTests/ArrayTests.swift",
            "tests/Routing/RouteTest.php",
            "core/src/FooSpec.scala",
            "test/my_app_test.exs",
            "conftest.py",
            "test.c",
            "polls/tests.py",
            "cmd/testdata/golden.go",
            "src/chunk/fixtures/sample.rs",
            "src/__mocks__/fs.ts",
        ] {
            assert!(is_test_path(path), "{path}");
        }
        for path in [
            "src/latest.rs",
            "lib/contest.py",
            "src/Manifest.java",
            "src/Attest.cs",
            "src/HTTP.java",
            "x/spectrum.c",
            "testing.py",
            "src/fixture.rs",
            "mocks/server.go",
        ] {
            assert!(!is_test_path(path), "{path}");
        }
    }

    #[test]
    fn every_language_has_one_spec_and_distinct_names() {
        let mut names: Vec<&str> = SPECS.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SPECS.len());
        for s in SPECS {
            assert_eq!(s.lang.spec().name, s.name);
        }
    }
}
