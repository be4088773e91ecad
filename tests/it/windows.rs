//! The Windows build under Wine: `booger.exe` starts `boogerd.exe` detached, they talk over a
//! named pipe, and the answers equal the Linux build's on the same tree.
//!
//! Skipped without Debian's `wine64` and `gcc-mingw-w64-x86-64` unless BOOGER_REQUIRE_WINE=1
//! (CI sets it). What Wine cannot show: the pipe's owner-only ACL against another user (Wine
//! runs every process as one user), a start at logon, and Windows' own file-change events
//! (Wine's come from inotify).

use std::path::Path;
use std::time::{Duration, Instant};

use booger_tests::wine::{self, Wine, windows_path};
use booger_tests::{Env, Mcp, commit_all, describe, git, write};
use serde_json::{Value, json};

/// Questions over booger's own client and wire sources, copied as the tree both builds index.
const QUERIES: [&str; 10] = [
    "start the daemon and wait for it",
    "protocol mismatch between client and daemon",
    "named pipe",
    "reconnect after the daemon restarts",
    "systemd unit escaping",
    "where is the data directory",
    "hook event forwarded to the daemon",
    "shell completions",
    "request line json rpc",
    "files private to the user",
];

/// The top ten of `search QUERY --json` as (path, first line, last line).
fn top_ten(answer: &Value) -> Vec<(String, u64, u64)> {
    answer["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results array: {answer}"))
        .iter()
        .map(|r| {
            (r["path"].as_str().unwrap().to_owned(), r["start_line"].as_u64().unwrap(), r["end_line"].as_u64().unwrap())
        })
        .collect()
}

fn json_of(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}", describe(out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", describe(out)))
}

/// A repository of booger's client and wire sources at `root`.
fn source_tree(root: &Path) {
    git(root, &["init", "-q"]);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace");
    booger_tests::copy_tree(&repo.join("booger-client/src"), &root.join("client"), &["rs"], &[]);
    booger_tests::copy_tree(&repo.join("booger-proto/src"), &root.join("proto"), &["rs"], &[]);
    commit_all(root, "sources");
}

/// Asks `ask` until it says yes or `limit` passes; whether it said yes.
fn eventually(limit: Duration, mut ask: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if ask() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn the_windows_build_answers_as_the_linux_build_over_a_named_pipe() {
    let Some(bin) = wine::windows_build() else {
        booger_tests::missing_optional("the Windows build under Wine", wine::PACKAGES, wine::REQUIRE);
        return;
    };
    let wine = Wine::new(bin);
    let env = Env::new();
    let (win_tree, linux_tree) = (wine.dir.path().join("tree"), env.dir.path().join("tree"));
    for root in [&win_tree, &linux_tree] {
        std::fs::create_dir_all(root).unwrap();
        source_tree(root);
    }
    let project = windows_path(&win_tree);

    // The first command starts the daemon, detached, on its named pipe.
    let indexed = wine.run(&win_tree, &["index", &project]);
    assert!(indexed.status.success(), "{}\nlog:\n{}", describe(&indexed), wine.log());
    assert!(String::from_utf8_lossy(&indexed.stderr).contains("started the daemon"), "{}", describe(&indexed));
    let status = json_of(&wine.run(&win_tree, &["daemon", "status", "--json"]));
    assert_eq!(status["socket"], wine.pipe, "{status}");
    assert!(env.run(&["index", linux_tree.to_str().unwrap()]).status.success());

    // The lock file stays readable while held (Windows' locks are mandatory): a client
    // without BOOGER_SOCKET finds the daemon of its data directory through the pipe recorded
    // there, and a second daemon on that directory stands down, naming the first one's pid.
    let mut bare = wine.booger(&win_tree);
    bare.env_remove("BOOGER_SOCKET").args(["daemon", "status", "--json"]);
    let found = json_of(&wine.output(bare));
    assert_eq!(found["socket"], wine.pipe, "{found}");
    let mut second = wine.exe("boogerd.exe", &win_tree);
    second.args(["--socket", r"\\.\pipe\booger-a-second-daemon"]);
    let refused = wine.output(second);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains(&format!("pid {}", status["pid"])) && said.contains(&wine.pipe), "{said}");

    // Same top ten for every query. Both builds' background tiers (the ranking index) finish
    // on their own time: asked again until they agree, for a while.
    for query in QUERIES {
        let (mut windows, mut linux) = (Vec::new(), Vec::new());
        let agreed = eventually(Duration::from_secs(30), || {
            windows = top_ten(&json_of(&wine.run(&win_tree, &["search", query, "--project", &project, "--json"])));
            linux = top_ten(&env.json(&["search", query, "--project", linux_tree.to_str().unwrap()]));
            windows == linux
        });
        assert!(agreed, "{query:?}: Windows answered {windows:?}, Linux {linux:?}");
        assert!(!windows.is_empty(), "{query:?} found nothing");
    }

    // grep and symbols over the pipe.
    let grep = wine.run(&win_tree, &["grep", "PROTOCOL_VERSION", "--project", &project]);
    assert!(String::from_utf8_lossy(&grep.stdout).contains("proto/wire.rs"), "{}", describe(&grep));
    let symbols = wine.run(&win_tree, &["symbols", "client/connect.rs", "--project", &project]);
    assert!(String::from_utf8_lossy(&symbols.stdout).contains("connect_or_start"), "{}", describe(&symbols));

    // An edit reaches the index through the watcher.
    write(&win_tree, "client/fresh.rs", "pub fn freshly_written_by_the_test() -> u32 { 7 }\n");
    let seen = eventually(Duration::from_secs(30), || {
        let out = wine.run(&win_tree, &["search", "freshly_written_by_the_test", "--project", &project]);
        String::from_utf8_lossy(&out.stdout).contains("client/fresh.rs")
    });
    assert!(seen, "the watcher did not pick up a new file\nlog:\n{}", wine.log());

    // MCP over stdio in a repository the daemon has not seen: the first call answers.
    let unseen = wine.dir.path().join("unseen");
    std::fs::create_dir_all(&unseen).unwrap();
    git(&unseen, &["init", "-q"]);
    write(&unseen, "lib.py", "def settle_the_ledger(entries):\n    return sum(entries)\n");
    commit_all(&unseen, "one file");
    let mut cmd = wine.booger(&unseen);
    cmd.arg("mcp");
    let mut mcp = Mcp::spawn(cmd);
    let init = mcp.handshake("2025-06-18");
    assert_eq!(init["serverInfo"]["name"], "booger", "{init}");
    let answer = mcp.request("tools/call", json!({ "name": "search", "arguments": { "query": "settle the ledger" } }));
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("lib.py") && text.contains("settle_the_ledger"), "{answer}\nlog:\n{}", wine.log());
    assert!(mcp.close().success(), "booger.exe mcp did not exit cleanly after stdin closed");

    let stopped = wine.run(&win_tree, &["daemon", "stop"]);
    assert!(stopped.status.success(), "{}", describe(&stopped));

    // `daemon install` writes a Startup-folder script, which starts the daemon as a logon
    // would run it; `uninstall` takes it away.
    let installed = wine.run(&win_tree, &["daemon", "install"]);
    let said = String::from_utf8_lossy(&installed.stdout).into_owned();
    assert!(installed.status.success(), "{}", describe(&installed));
    let script = said.lines().find_map(|l| l.strip_prefix("wrote ")).expect("install says what it wrote").to_owned();
    assert!(script.ends_with(r"Start Menu\Programs\Startup\boogerd.cmd"), "{said}");
    let mut logon = wine.wine_command("wine");
    logon.args(["cmd", "/c", &script]).current_dir(wine.dir.path());
    let ran = wine.output(logon);
    assert!(ran.status.success(), "{}", describe(&ran));
    let status = json_of(&wine.run(&win_tree, &["daemon", "status", "--json"]));
    assert_eq!(status["socket"], wine.pipe, "the Startup script's daemon serves the same pipe: {status}");
    assert!(wine.run(&win_tree, &["daemon", "stop"]).status.success());
    let removed = wine.run(&win_tree, &["daemon", "uninstall"]);
    assert!(String::from_utf8_lossy(&removed.stdout).contains("removed"), "{}", describe(&removed));
    let again = wine.run(&win_tree, &["daemon", "uninstall"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("no booger service is installed"), "{}", describe(&again));
}
