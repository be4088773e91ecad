//! Claude Code's hooks: `booger setup claude-code --hooks` writes them into its settings
//! beside the user's own, the command it wrote answers a Grep in an indexed project with the
//! lines rg prints and leaves everything else to the client's Grep, a new session hears
//! booger is there, and `setup --remove` gives the settings back byte for byte.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use booger_tests::{Env, describe};
use serde_json::{Value, json};

const SETTINGS: &str = "{\n  // my settings\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      { \"matcher\": \"Bash\", \"hooks\": [{ \"type\": \"command\", \"command\": \"true\" }] }\n    ]\n  }\n}\n";

/// Runs a hook command as Claude Code does (through a shell, the event on stdin): its stdout.
fn run_hook(env: &Env, command: &str, event: &Value) -> String {
    let mut cmd = env.command("sh");
    cmd.args(["-c", command]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(event.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "a hook never fails the call: {}", describe(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// The answer the agent reads, or None when the hook left the call to the client.
fn answered(out: &str) -> Option<String> {
    let v: Value = serde_json::from_str(out).ok()?;
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    v["hookSpecificOutput"]["permissionDecisionReason"].as_str().map(str::to_owned)
}

fn grep_event(cwd: &Path, input: Value) -> Value {
    json!({ "hook_event_name": "PreToolUse", "tool_name": "Grep", "cwd": cwd, "tool_input": input })
}

#[test]
fn the_grep_hook_answers_with_rgs_lines_leaves_the_rest_alone_and_setup_round_trips() {
    let env = Env::new();
    let home = env.dir.path().to_owned();
    let settings = home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, SETTINGS).unwrap();
    let repo = env.git_project("app");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(
        repo.join("src/net.py"),
        "def connect_retry(host, attempts=3):\n    for _ in range(attempts):\n        pass\n\n\nclass Pool:\n    def reconnect(self):\n        return connect_retry(self.host)\n",
    )
    .unwrap();
    std::fs::write(repo.join("src/cli.py"), "from net import connect_retry\n\nCONNECT_RETRY = 2\n").unwrap();
    std::fs::write(repo.join("notes.md"), "# Notes\n\nconnect_retry backs off.\n").unwrap();
    booger_tests::git(&repo, &["add", "-A"]);
    booger_tests::git(&repo, &["commit", "-qm", "init"]);
    let _daemon = env.start_daemon();
    assert!(env.run_in(Some(&repo), &["index"]).status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while env.json(&["status", repo.to_str().unwrap()])["project"]["index"]["watch"]["state"] != "watching" {
        assert!(Instant::now() < deadline, "the project never settled");
        std::thread::sleep(Duration::from_millis(100));
    }

    let out = env.run_in(Some(&home), &["setup", "claude-code", "--hooks"]);
    assert!(out.status.success(), "{}", describe(&out));
    let text = std::fs::read_to_string(&settings).unwrap();
    assert!(text.contains("// my settings"), "{text}");
    let v: Value = serde_json::from_str(&strip_comment(&text)).unwrap();
    assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash", "the user's hook stays: {v}");
    assert_eq!(v["hooks"]["PreToolUse"][1]["matcher"], "Grep", "{v}");
    let command = v["hooks"]["PreToolUse"][1]["hooks"][0]["command"].as_str().unwrap().to_owned();
    assert_eq!(v["hooks"]["SessionStart"][0]["hooks"][0]["command"], command.as_str(), "{v}");
    let again = env.run_in(Some(&home), &["setup", "claude-code", "--hooks"]);
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        text,
        "a second setup changes nothing: {}",
        describe(&again)
    );

    // Content: the lines rg prints, paths absolute.
    let out =
        run_hook(&env, &command, &grep_event(&repo, json!({ "pattern": "connect_retry", "output_mode": "content" })));
    let answer = answered(&out).expect("the hook answered");
    let lines: Vec<&str> = answer.lines().skip(1).collect();
    let mut expected = vec![
        format!("{}/notes.md:3:connect_retry backs off.", repo.display()),
        format!("{}/src/cli.py:1:from net import connect_retry", repo.display()),
        format!("{}/src/net.py:1:def connect_retry(host, attempts=3):", repo.display()),
        format!("{}/src/net.py:8:        return connect_retry(self.host)", repo.display()),
    ];
    let mut got: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected, "{answer}");
    if let Ok(rg) = Command::new("rg").args(["-n", "connect_retry"]).arg(&repo).output() {
        let mut rg: Vec<String> = String::from_utf8_lossy(&rg.stdout).lines().map(str::to_owned).collect();
        rg.sort();
        assert_eq!(got, rg, "the same lines as rg");
    }
    // The default mode lists files; case-insensitive and a path narrow it as rg does.
    let out =
        run_hook(&env, &command, &grep_event(&repo, json!({ "pattern": "connect_retry", "-i": true, "path": "src" })));
    let answer = answered(&out).expect("the hook answered");
    assert!(answer.contains("Found 2 files"), "{answer}");
    assert!(answer.contains(&format!("{}/src/cli.py", repo.display())), "{answer}");
    assert!(!answer.contains("notes.md"), "{answer}");
    let out =
        run_hook(&env, &command, &grep_event(&repo, json!({ "pattern": "connect_retry", "output_mode": "count" })));
    assert!(answered(&out).unwrap().contains(&format!("{}/src/net.py:2", repo.display())), "{out}");

    // What grep cannot answer exactly, and a directory booger does not index, go to the client.
    for input in [
        json!({ "pattern": "connect.*\\n.*for", "multiline": true }),
        json!({ "pattern": "connect_retry", "glob": "*.py" }),
        json!({ "pattern": "connect_retry", "output_mode": "content", "-A": 2 }),
    ] {
        assert_eq!(run_hook(&env, &command, &grep_event(&repo, input.clone())), "", "{input}");
    }
    let elsewhere = env.project("elsewhere");
    assert_eq!(run_hook(&env, &command, &grep_event(&elsewhere, json!({ "pattern": "x" }))), "");

    // Gemini CLI: its grep_search answered the same way, in its protocol; its one settings
    // file holds the MCP entry beside the hooks.
    let gemini_settings = home.join(".gemini/settings.json");
    let out = env.run_in(Some(&home), &["setup", "gemini", "--hooks"]);
    assert!(out.status.success(), "{}", describe(&out));
    let g: Value = serde_json::from_str(&std::fs::read_to_string(&gemini_settings).unwrap()).unwrap();
    assert!(g["mcpServers"]["booger"].is_object(), "{g}");
    assert_eq!(g["hooks"]["BeforeTool"][0]["matcher"], "grep_search|search_file_content", "{g}");
    let gemini_command = g["hooks"]["BeforeTool"][0]["hooks"][0]["command"].as_str().unwrap().to_owned();
    assert!(gemini_command.ends_with("hook gemini"), "{gemini_command}");
    let event = json!({ "hook_event_name": "BeforeTool", "tool_name": "grep_search", "cwd": repo,
                        "tool_input": { "pattern": "connect_retry", "dir_path": repo.join("src") } });
    let v: Value = serde_json::from_str(&run_hook(&env, &gemini_command, &event)).unwrap();
    assert_eq!(v["decision"], "deny", "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("{}/src/net.py:8:        return connect_retry(self.host)", repo.display())),
        "{reason}"
    );
    assert!(!reason.contains("notes.md"), "{reason}");
    let with_glob = json!({ "hook_event_name": "BeforeTool", "tool_name": "grep_search", "cwd": repo,
                            "tool_input": { "pattern": "connect_retry", "include": "*.py" } });
    assert_eq!(run_hook(&env, &gemini_command, &with_glob), "");

    // A new session hears about booger.
    let out = run_hook(&env, &command, &json!({ "hook_event_name": "SessionStart", "cwd": repo, "source": "startup" }));
    let v: Value = serde_json::from_str(&out).unwrap();
    let context = v["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(context.contains("booger indexes this project") && context.contains("3 files"), "{context}");

    // No daemon: nothing answered, and none started by a hook.
    assert!(env.run(&["daemon", "stop"]).status.success());
    assert_eq!(run_hook(&env, &command, &grep_event(&repo, json!({ "pattern": "connect_retry" }))), "");
    let status = env.run(&["daemon", "status"]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("not running"), "{}", describe(&status));

    let out = env.run_in(Some(&home), &["setup", "--remove"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), SETTINGS, "the settings as they were, byte for byte");
    assert!(!gemini_settings.exists(), "setup made Gemini's settings, and --remove takes them away");
}

/// The settings without the one line comment this test writes (serde_json reads no comments).
fn strip_comment(text: &str) -> String {
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}
