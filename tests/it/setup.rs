//! `booger setup` against a temporary home holding real client configurations: it merges
//! booger in without losing anything, is idempotent, refuses what it cannot parse, and
//! `--remove` gives every file back byte for byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use booger_tests::{Env, bin, describe};

/// `booger setup args...` with the env's home (and nothing from the caller's XDG or Codex
/// settings), run in `cwd`.
fn setup(env: &Env, cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = env.booger(Some(cwd));
    cmd.arg("setup").args(args);
    cmd.env("XDG_CONFIG_HOME", env.dir.path().join(".config")).env_remove("CODEX_HOME");
    booger_tests::output_within(cmd, std::time::Duration::from_secs(30))
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every file under `dir` (outside the data directory) with its bytes.
fn snapshot(dir: &Path, skip: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.starts_with(skip) {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                files.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    files
}

const CLAUDE_CODE: &str = r#"{
  "numStartups": 12,
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"]
    }
  },
  "projects": {
    "/home/me/app": { "allowedTools": [] }
  }
}"#;

const VSCODE: &str = "// VS Code's MCP servers\n{\n\t\"servers\": {\n\t\t// the issue tracker\n\t\t\"tracker\": { \"type\": \"http\", \"url\": \"https://tracker.example/mcp\" },\n\t},\n\t\"inputs\": [],\n}\n";

const CODEX: &str = "# my Codex settings\nmodel = \"gpt-5-codex\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\" # keep me\nargs = [\"--db\", \"docs.db\"]\n\n[profiles.fast]\nmodel = \"mini\"\n";

const ZED: &str = "// Zed settings\n{\n  \"theme\": \"One Dark\",\n  \"vim_mode\": true, // yes\n}\n";

const CURSOR_BROKEN: &str = "{ \"mcpServers\": { \"x\": { \"command\": \"x\" }\n";

#[test]
fn setup_all_merges_is_idempotent_refuses_the_unparsable_and_remove_restores_every_byte() {
    let env = Env::new();
    let home = env.dir.path().to_owned();
    let data = env.home.clone();
    write(&home.join(".claude.json"), CLAUDE_CODE);
    write(&home.join(".config/Code/User/mcp.json"), VSCODE);
    write(&home.join(".codex/config.toml"), CODEX);
    write(&home.join(".config/zed/settings.json"), ZED);
    write(&home.join(".cursor/mcp.json"), CURSOR_BROKEN);
    // Windsurf is installed but has no MCP configuration yet.
    std::fs::create_dir_all(home.join(".codeium/windsurf")).unwrap();
    let before = snapshot(&home, &data);

    // Listing changes nothing and names what it would do.
    let out = setup(&env, &home, &[]);
    assert!(out.status.success(), "{}", describe(&out));
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(listing.contains("setup would add booger"), "{listing}");
    assert!(listing.contains("claude-desktop") && listing.contains("not installed"), "{listing}");
    assert_eq!(snapshot(&home, &data), before, "listing wrote something");
    // --print shows the change and writes nothing.
    let out = setup(&env, &home, &["--all", "--print"]);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("+    \"booger\": {") || printed.contains("+\t\t\"booger\""), "{printed}");
    assert_eq!(snapshot(&home, &data), before, "--print wrote something");

    let out = setup(&env, &home, &["--all"]);
    assert_eq!(out.status.code(), Some(1), "an unparsable config fails the run: {}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("~/.cursor/mcp.json") && err.contains("untouched"), "{err}");
    assert_eq!(std::fs::read_to_string(home.join(".cursor/mcp.json")).unwrap(), CURSOR_BROKEN);

    let booger = std::fs::canonicalize(bin("booger")).unwrap();
    let booger = booger.to_str().unwrap();
    // Strict JSON stays strict, with the user's entries and booger once.
    let claude: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".claude.json")).unwrap()).unwrap();
    assert_eq!(claude["numStartups"], 12);
    assert_eq!(claude["projects"]["/home/me/app"]["allowedTools"], serde_json::json!([]));
    let servers: Vec<&String> = claude["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(servers, ["booger", "github"], "{claude}");
    assert_eq!(claude["mcpServers"]["booger"]["command"], booger);
    assert_eq!(claude["mcpServers"]["booger"]["args"], serde_json::json!(["mcp"]));
    assert_eq!(claude["mcpServers"]["booger"]["env"]["BOOGER_HOME"], data.to_str().unwrap());
    let windsurf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".codeium/windsurf/mcp_config.json")).unwrap())
            .unwrap();
    assert_eq!(windsurf["mcpServers"]["booger"]["command"], booger);
    // Commented files keep their comments, entries and order.
    let vscode = std::fs::read_to_string(home.join(".config/Code/User/mcp.json")).unwrap();
    for kept in ["// VS Code's MCP servers", "// the issue tracker", "\"tracker\"", "\"inputs\": []"] {
        assert!(vscode.contains(kept), "lost {kept}: {vscode}");
    }
    assert!(vscode.find("\"tracker\"").unwrap() < vscode.find("\"booger\"").unwrap(), "{vscode}");
    assert!(vscode.contains("\"type\": \"stdio\""), "{vscode}");
    let codex = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap();
    for kept in ["# my Codex settings", "command = \"docs-mcp\" # keep me", "[profiles.fast]", "[mcp_servers.booger]"] {
        assert!(codex.contains(kept), "missing {kept}: {codex}");
    }
    let zed = std::fs::read_to_string(home.join(".config/zed/settings.json")).unwrap();
    assert!(zed.contains("// yes") && zed.contains("\"context_servers\"") && zed.contains("\"source\": \"custom\""));
    for text in [&vscode, &codex, &zed, &serde_json::to_string(&claude).unwrap()] {
        assert_eq!(text.matches("\"booger\":").count() + text.matches("[mcp_servers.booger]").count(), 1, "{text}");
    }

    // A second run changes nothing.
    let after = snapshot(&home, &data);
    let out = setup(&env, &home, &["--all"]);
    let again = String::from_utf8_lossy(&out.stdout);
    assert!(!again.contains("added") && again.matches("unchanged").count() >= 5, "{again}");
    assert_eq!(snapshot(&home, &data), after, "the second run changed a file");

    // --remove gives back every file as it was, byte for byte (and removes the one it created).
    let out = setup(&env, &home, &["--remove"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(snapshot(&home, &data), before, "{}", describe(&out));
}

/// When the client rewrote its file after setup (Claude Code keeps state in ~/.claude.json),
/// `--remove` takes booger's entry out and keeps the client's changes.
#[test]
fn remove_keeps_changes_made_since_setup_and_project_configs_go_in_the_project() {
    let env = Env::new();
    let home = env.dir.path().to_owned();
    write(&home.join(".claude.json"), CLAUDE_CODE);
    assert!(setup(&env, &home, &["claude-code"]).status.success());
    let path = home.join(".claude.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["numStartups"] = 13.into();
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let out = setup(&env, &home, &["--remove", "claude-code"]);
    assert!(out.status.success(), "{}", describe(&out));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["numStartups"], 13);
    assert!(v["mcpServers"].get("booger").is_none() && v["mcpServers"].get("github").is_some(), "{v}");

    // --project writes the project's files for the clients that have them.
    let repo = env.project("repo");
    let out = setup(&env, &home, &["--project", repo.to_str().unwrap(), "claude-code", "cursor", "vscode", "codex"]);
    assert!(out.status.success(), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("codex: no project-level configuration"), "{said}");
    for file in [".mcp.json", ".cursor/mcp.json", ".vscode/mcp.json"] {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(repo.join(file)).unwrap()).unwrap();
        let key = if file == ".vscode/mcp.json" { "servers" } else { "mcpServers" };
        assert_eq!(v[key]["booger"]["args"], serde_json::json!(["mcp"]), "{file}: {v}");
    }
    let out = setup(&env, &home, &["--project", repo.to_str().unwrap(), "--remove"]);
    assert!(out.status.success(), "{}", describe(&out));
    let left: Vec<_> = std::fs::read_dir(&repo).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "setup left {left:?} in the project");
}

#[test]
fn the_skill_names_only_tools_that_exist_and_every_tool() {
    let env = Env::new();
    let home = env.dir.path().to_owned();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let out = setup(&env, &home, &["--skills"]);
    assert!(out.status.success(), "{}", describe(&out));
    let skill = std::fs::read_to_string(home.join(".claude/skills/booger/SKILL.md")).unwrap();
    assert!(!home.join(".codex/skills").exists(), "Codex is not installed here");
    assert!(skill.starts_with("---\nname: booger\ndescription: "), "{skill}");
    // Tools are named as "- `tool`: ..." and called as "`tool(...)`".
    let known = booger_proto::tools::names();
    let mut named = Vec::new();
    for line in skill.lines() {
        if let Some(rest) = line.strip_prefix("- `") {
            named.push(rest.split('`').next().unwrap().to_owned());
        }
        for part in line.split('`').skip(1).step_by(2) {
            if let Some((tool, _)) = part.split_once('(') {
                named.push(tool.to_owned());
            }
        }
    }
    assert!(named.len() > known.len(), "{named:?}");
    for n in &named {
        assert!(known.contains(&n.as_str()), "the skill names `{n}`, which tools/list does not have");
    }
    for k in &known {
        assert!(named.iter().any(|n| n == k), "the skill never names `{k}`");
    }
    // Again: unchanged; --remove deletes it and the folders setup made.
    let out = setup(&env, &home, &["--skills"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("unchanged"), "{}", describe(&out));
    assert!(setup(&env, &home, &["--remove"]).status.success());
    assert!(!home.join(".claude/skills").exists());
    assert!(home.join(".claude").exists());
}

/// setup edits regular files only: a project's configuration that links outside the project,
/// a user's that links to a FIFO, are left alone with the reason (and nothing blocks); a link
/// inside the home directory (dotfiles kept elsewhere) is followed and the real file named;
/// eight setups at once lose no ledger record.
#[test]
fn setup_never_writes_through_a_link_out_and_runs_one_at_a_time() {
    let env = Env::new();
    let home = env.dir.path().to_owned();
    let outside = env.project("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let secret = outside.join("notes.txt");
    std::fs::write(&secret, "keep me").unwrap();
    let repo = env.project("cloned");
    std::fs::create_dir_all(repo.join(".cursor")).unwrap();
    std::os::unix::fs::symlink(&secret, repo.join(".cursor/mcp.json")).unwrap();
    let out = setup(&env, &home, &["--project", repo.to_str().unwrap(), "cursor"]);
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("outside"), "{}", describe(&out));
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "keep me");
    // A folder of the project that links out: nothing is written there either.
    std::os::unix::fs::symlink(&outside, repo.join(".vscode")).unwrap();
    let out = setup(&env, &home, &["--project", repo.to_str().unwrap(), "vscode"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("outside"), "{}", describe(&out));
    assert!(!outside.join("mcp.json").exists());

    let fifo = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let out = setup(&env, &home, &["cursor"]);
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("not a regular file"),
        "{}",
        describe(&out)
    );
    std::fs::remove_file(&fifo).unwrap();

    let dotfiles = home.join("dotfiles/claude.json");
    write(&dotfiles, CLAUDE_CODE);
    std::os::unix::fs::symlink(&dotfiles, home.join(".claude.json")).unwrap();
    let out = setup(&env, &home, &["claude-code"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("dotfiles/claude.json"), "{}", describe(&out));
    assert!(std::fs::symlink_metadata(home.join(".claude.json")).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&dotfiles).unwrap().contains("booger"));

    // Eight at once, each for its own project: every one is in the ledger afterwards.
    let repos: Vec<PathBuf> = (0..8).map(|i| env.project(&format!("p{i}"))).collect();
    std::thread::scope(|s| {
        for r in &repos {
            let env = &env;
            let home = &home;
            s.spawn(move || assert!(setup(env, home, &["--project", r.to_str().unwrap(), "cursor"]).status.success()));
        }
    });
    for r in &repos {
        let out = setup(&env, &home, &["--project", r.to_str().unwrap(), "--remove", "cursor"]);
        assert!(out.status.success(), "{}", describe(&out));
        assert!(!r.join(".cursor/mcp.json").exists(), "{} kept its entry: a lost ledger record", r.display());
    }
}

/// `--remote` writes an HTTP entry for a team server, with the token in a header, beside the
/// local entry; the file is made private; a second run changes nothing; `--remove` takes the
/// team entry out and leaves the local one, and a last `--remove` gives back every byte.
#[test]
fn setup_remote_writes_a_team_server_entry_beside_the_local_one_and_takes_it_out() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let home = env.dir.path();
    let claude = home.join(".claude.json");
    write(&claude, "{\n  // mine\n  \"theme\": \"dark\"\n}\n");
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o644)).unwrap();
    let claude_mode = 0o644;
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    let before = snapshot(home, &env.home);
    let token_file = home.join("team.token");
    write(&token_file, "bgt_secret123\n");
    let url = "https://booger.example/mcp";
    let remote = ["--remote", url, "--token-file", token_file.to_str().unwrap()];

    // --print shows the change, never the token.
    let shown = setup(&env, home, &[&remote[..], &["--print", "claude-code"]].concat());
    assert!(shown.status.success() && booger_tests::stdout(&shown).contains("booger-team"), "{}", describe(&shown));
    assert!(!describe(&shown).contains("bgt_secret123"), "--print showed the token: {}", describe(&shown));
    // A token file that is a FIFO is refused at once, not waited on.
    let fifo = home.join("team.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let out = setup(&env, home, &["--remote", url, "--token-file", fifo.to_str().unwrap(), "claude-code"]);
    assert!(!out.status.success() && describe(&out).contains("not a regular file"), "{}", describe(&out));
    std::fs::remove_file(&fifo).unwrap();

    let out = setup(&env, home, &[&remote[..], &["claude-code", "codex", "cursor", "zed"]].concat());
    assert!(out.status.success(), "{}", describe(&out));
    assert!(booger_tests::stdout(&out).contains("claude-code: added booger-team to"), "{}", describe(&out));
    assert!(
        booger_tests::stdout(&out).contains("zed: its configuration takes no remote MCP server"),
        "{}",
        describe(&out)
    );
    let entry = |path: &Path| -> serde_json::Value {
        let text = std::fs::read_to_string(path).unwrap();
        let clean: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        serde_json::from_str(&clean).unwrap()
    };
    let c = entry(&claude);
    assert_eq!(c["mcpServers"]["booger-team"]["type"], "http", "{c}");
    assert_eq!(c["mcpServers"]["booger-team"]["url"], url, "{c}");
    assert_eq!(c["mcpServers"]["booger-team"]["headers"]["Authorization"], "Bearer bgt_secret123", "{c}");
    assert_eq!(c["theme"], "dark");
    assert_eq!(std::fs::metadata(&claude).unwrap().permissions().mode() & 0o777, 0o600, "it holds a token");
    let cursor = entry(&home.join(".cursor/mcp.json"));
    assert_eq!(cursor["mcpServers"]["booger-team"]["url"], url, "{cursor}");
    let codex = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap();
    assert!(
        codex.contains("[mcp_servers.booger-team]") && codex.contains(url) && codex.contains("Bearer bgt_secret123"),
        "{codex}"
    );

    let again = setup(&env, home, &[&remote[..], &["claude-code"]].concat());
    assert!(booger_tests::stdout(&again).contains("unchanged"), "{}", describe(&again));

    // The local entry beside it; then the team entry out, the local one kept.
    assert!(setup(&env, home, &["claude-code"]).status.success());
    let out = setup(&env, home, &["--remote", url, "--remove", "claude-code"]);
    assert!(out.status.success(), "{}", describe(&out));
    let c = entry(&claude);
    assert!(c["mcpServers"].get("booger-team").is_none(), "{c}");
    assert_eq!(c["mcpServers"]["booger"]["type"], "stdio", "{c}");
    let out = setup(&env, home, &["--remove"]);
    assert!(out.status.success(), "{}", describe(&out));
    let out = setup(&env, home, &["--remote", url, "--remove", "codex", "cursor"]);
    assert!(out.status.success(), "{}", describe(&out));
    let mut after = snapshot(home, &env.home);
    after.remove(&token_file);
    assert_eq!(after, before, "every file as it was");
    assert_eq!(std::fs::metadata(&claude).unwrap().permissions().mode() & 0o777, claude_mode, "its mode as it was");

    let bad = setup(&env, home, &["--remote", url, "claude-code"]);
    assert!(!bad.status.success() && booger_tests::stderr(&bad).contains("--token-file"), "{}", describe(&bad));
}
