//! Repository rules checked as tests: the thin client stays thin, every tool is documented.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

fn normal_deps(package: &str) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .current_dir(repo())
        .args(["tree", "--offline", "-p", package, "-e", "normal", "--prefix", "none"])
        .output()
        .expect("cargo tree");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn thin_client_and_proto_pull_no_async_runtime_sqlite_or_parser() {
    for package in ["booger-client", "booger-proto"] {
        let tree = normal_deps(package);
        for heavy in ["tokio ", "rusqlite ", "tree-sitter ", "axum ", "clap "] {
            assert!(!tree.lines().any(|l| l.starts_with(heavy)), "{package} depends on {heavy}:\n{tree}");
        }
    }
}

#[test]
fn readme_documents_every_tool_and_starts_with_the_two_commands() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    for t in booger_proto::tools::TOOLS {
        assert!(readme.contains(&format!("`{}`", t.name)), "README.md does not mention the tool `{}`", t.name);
    }
    // The test command a newcomer copies from the README is exactly the one CI runs.
    let readme_test = readme.lines().find(|l| l.starts_with("cargo test")).expect("README shows the test command");
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == readme_test.trim()), "README's `{readme_test}` is not a line of .ci/run");
}

#[test]
fn the_client_reads_no_tool_by_name_and_no_payload_field() {
    // Long calls draw progress and calls that go on are called again by convention
    // (`booger/progress`, `running`), for every tool alike.
    let mut dirs = vec![repo().join("booger-client/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                for peek in ["spec.name ==", "spec.name !=", "[\"data\"]", "data.get(", ".data["] {
                    assert!(
                        !code.contains(peek),
                        "{}:{}: the client reads a tool's answer: {line}",
                        path.display(),
                        n + 1
                    );
                }
            }
        }
    }
}

/// The README's quick start runs as written: every `booger` line of its second block (after
/// the install), in a fresh repository, with a temporary home. `cd ~/src/your-repo && ` stands
/// for the repository.
#[test]
fn the_readmes_quick_start_runs_as_written() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme.find("## Quick start").expect("a quick start");
    let block = readme[start..].split("```sh\n").nth(2).and_then(|b| b.split("```").next()).expect("its second block");
    let env = booger_tests::Env::new();
    let repo_dir = env.git_project("your-repo");
    std::fs::write(
        repo_dir.join("uploads.py"),
        "def retry_failed_uploads(queue):\n    \"\"\"Where failed uploads are retried.\"\"\"\n    return queue\n",
    )
    .unwrap();
    let mut ran = 0;
    for line in block.lines() {
        let command = line.split(" # ").next().unwrap_or_default().trim();
        let command = command.strip_prefix("cd ~/src/your-repo && ").unwrap_or(command);
        let Some(words) = command.strip_prefix("booger ") else { continue };
        let args = shell_words(words);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = env.run_in(Some(&repo_dir), &args);
        assert!(out.status.success(), "`{command}`: {}", booger_tests::describe(&out));
        if args[0] == "search" {
            assert!(booger_tests::stdout(&out).contains("retry_failed_uploads"), "{}", booger_tests::describe(&out));
        }
        ran += 1;
    }
    assert!(ran >= 5, "the quick start's booger lines: {block}");
}

/// A command line's words: spaces split, double quotes group.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !words.last().unwrap().is_empty() {
                    words.push(String::new());
                }
            }
            c => words.last_mut().unwrap().push(c),
        }
    }
    words.retain(|w| !w.is_empty());
    words
}
