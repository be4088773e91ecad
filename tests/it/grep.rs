//! `grep` answers from the trigram index exactly what reading every line of every file with the
//! same regex engine finds: the same lines, for literals, alternations, classes, anchors,
//! case-insensitive patterns and patterns with no literal at all (narrowed by the shapes of
//! their characters, or reading every chunk).

use std::collections::BTreeSet;
use std::path::Path;

use booger_tests::{Env, copy_tree, python_stdlib};
use serde_json::Value;

/// (path, line) of every line of every `.py` file under `root` that `re` matches.
fn reference(root: &Path, re: &regex::Regex) -> BTreeSet<(String, u64)> {
    let mut found = BTreeSet::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "py") {
                let Ok(text) = std::fs::read_to_string(&p) else { continue };
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                for (i, line) in text.lines().enumerate() {
                    if re.is_match(line) {
                        found.insert((rel.clone(), i as u64 + 1));
                    }
                }
            }
        }
    }
    found
}

/// Every line booger's grep finds, page after page by the answers' `cursor`, and its count.
fn booger_lines(env: &Env, root: &Path, pattern: &str, case_insensitive: bool) -> (BTreeSet<(String, u64)>, u64) {
    let mut found = BTreeSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = vec!["grep", pattern, "--project", root.to_str().unwrap(), "--head-limit", "1000"];
        args.extend(["--max-tokens", "20000"]);
        if let Some(c) = &cursor {
            args.extend(["--cursor", c]);
        }
        if case_insensitive {
            args.push("--case-insensitive");
        }
        let out: Value = env.json(&args);
        assert_eq!(out["project"], "stdlib", "{pattern:?}");
        let results = out["results"].as_array().cloned().unwrap_or_default();
        for r in &results {
            found.insert((r["path"].as_str().unwrap().to_owned(), r["line"].as_u64().unwrap()));
        }
        let total = out["total"].as_u64().unwrap_or(0);
        match out["cursor"].as_str() {
            Some(c) if !results.is_empty() => cursor = Some(c.to_owned()),
            _ => {
                assert!(out["cursor"].is_null(), "{pattern:?}: a cursor after the last page");
                return (found, total);
            }
        }
    }
}

#[test]
fn grep_finds_exactly_the_lines_a_full_read_finds() {
    let env = Env::new();
    let root = env.project("stdlib");
    let stdlib = python_stdlib();
    for part in ["json", "email", "http", "logging", "urllib", "xml/etree"] {
        copy_tree(&stdlib.join(part), &root.join(part), &["py"], &["__pycache__", "test", "tests"]);
    }
    let _d = env.start_daemon();
    assert!(env.run(&["index", root.to_str().unwrap()]).status.success());
    let patterns: &[(&str, bool)] = &[
        ("def __init__", false),
        ("raise ValueError", false),
        ("import os", false),
        ("TODO|FIXME|XXX", false),
        ("self\\.\\w+ = None", false),
        ("^class \\w+\\(", false),
        ("return$", false),
        ("(Header|Message)Parser", false),
        ("[A-Z]{3,}_[A-Z]+ =", false),
        ("\\bencode\\b", false),
        ("except \\w+Error as", false),
        ("\"\"\"", false),
        ("utf-?8", true),
        ("http://", false),
        ("logging\\.getLogger", false),
        ("DEBUG", true),
        ("\\d{4}", false),
        ("^\\s+#", false),
        ("lambda", false),
        ("__all__ = \\[", false),
        ("yield from", false),
        ("isinstance\\(\\w+, (str|bytes)\\)", false),
        ("é|ü", false),
        ("x", false),
        // Narrowed by line edges and by the shapes of characters (no literal of three).
        ("[0-9]+\\.[0-9]+", false),
        ("[A-Z][a-z]+Error\\b", false),
        ("^\\s+return \\w+$", false),
        ("\\(\\)$", false),
        ("#\\s*[A-Z]{4,}", false),
        ("^@\\w+", false),
        ("0x[0-9a-fA-F]{2,}", false),
        ("[a-z]{2}_[A-Z]", true),
        ("^\\s*\\)$", false),
        ("\\d{4}", true),
    ];
    for &(pattern, ci) in patterns {
        let re = regex::RegexBuilder::new(pattern).case_insensitive(ci).build().unwrap();
        let want = reference(&root, &re);
        let (got, total) = booger_lines(&env, &root, pattern, ci);
        let missing: Vec<_> = want.difference(&got).take(5).collect();
        let extra: Vec<_> = got.difference(&want).take(5).collect();
        assert!(missing.is_empty() && extra.is_empty(), "{pattern:?}: missing {missing:?}, extra {extra:?}");
        assert_eq!(total as usize, want.len(), "{pattern:?}: booger counted {total}, a full read finds {}", want.len());
    }
}
