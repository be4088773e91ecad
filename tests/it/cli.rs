//! `booger <tool>` from a shell: human output, --json, exit codes, argument errors.

use booger_tests::{Env, describe, stderr, stdout};

#[test]
fn projects_add_list_remove_round_trip() {
    let env = Env::new();
    let proj = env.project("delta");
    let _d = env.start_daemon();
    // A relative path is relative to the caller's directory.
    let out = env.run_in(Some(proj.parent().unwrap()), &["projects", "add", "delta"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(stdout(&out).contains("Added") && stdout(&out).contains(proj.to_str().unwrap()), "{}", describe(&out));
    let again = env.run(&["projects", "add", proj.to_str().unwrap()]);
    assert!(stdout(&again).contains("Already registered"), "{}", describe(&again));

    let list = env.run(&["projects"]);
    assert!(stdout(&list).contains("delta"), "{}", describe(&list));

    let removed = env.json(&["projects", "remove", "delta"]);
    assert_eq!(removed["removed"], true);
    assert_eq!(env.json(&["projects", "list"])["projects"], serde_json::json!([]));
}

/// The file system's root, the home directory and system trees are no projects: registering
/// them (or indexing them, which registers) is refused with what to do instead.
#[test]
fn dangerous_roots_are_refused_unless_forced() {
    let env = Env::new();
    let _d = env.start_daemon();
    let home = env.dir.path().to_str().unwrap().to_owned(); // the daemon's HOME
    for root in ["/", "/etc", "/proc", "/usr", home.as_str()] {
        let out = env.run(&["projects", "add", root]);
        assert_eq!(out.status.code(), Some(1), "{root}: {}", describe(&out));
        let err = stderr(&out);
        assert!(err.contains("--force") && err.contains("add-all"), "{root}: {err}");
    }
    let out = env.run(&["index", "/etc"]);
    assert!(!out.status.success() && stderr(&out).contains("--force"), "{}", describe(&out));
    assert_eq!(env.json(&["projects", "list"])["projects"], serde_json::json!([]), "nothing was registered");
    // Below them is fine: a directory in the home is a project like any other.
    let proj = env.project("fine");
    assert!(env.run(&["projects", "add", proj.to_str().unwrap()]).status.success());
}

/// A directory with more files to index than the daemon's `--confirm-above-files` is
/// registered only with `--force`; the refusal says how many and what to do.
#[test]
fn very_large_trees_need_force() {
    let env = Env::new();
    let _d = env.start_daemon_with(&["--confirm-above-files", "20"]);
    let big = env.project("big");
    for i in 0..25 {
        std::fs::write(big.join(format!("m{i}.py")), format!("def f{i}():\n    return {i}\n")).unwrap();
    }
    let small = env.project("small");
    std::fs::write(small.join("a.py"), "def a():\n    return 1\n").unwrap();
    for args in [&["projects", "add"][..], &["index"][..]] {
        let out = env.run(&[args, &[big.to_str().unwrap()]].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", describe(&out));
        let err = stderr(&out);
        assert!(err.contains("more than 20 files") && err.contains("--force"), "{args:?}: {err}");
    }
    assert_eq!(env.json(&["projects", "list"])["projects"], serde_json::json!([]), "nothing was registered");
    assert!(env.run(&["projects", "add", small.to_str().unwrap()]).status.success());
    let out = env.run(&["projects", "add", big.to_str().unwrap(), "--force"]);
    assert!(out.status.success(), "{}", describe(&out));
    // Registered: indexing it again needs no confirmation.
    assert!(env.run(&["index", big.to_str().unwrap()]).status.success());
}

#[test]
fn status_defaults_to_the_current_directory() {
    let env = Env::new();
    let proj = env.project("epsilon");
    let _d = env.start_daemon();
    let out = env.run_in(Some(&proj), &["status"]);
    assert!(
        stdout(&out).contains("is not a registered project") && stdout(&out).contains("booger projects add"),
        "{}",
        describe(&out)
    );
    assert!(env.run_in(Some(&proj), &["projects", "add"]).status.success());
    let sub = proj.join("src");
    std::fs::create_dir_all(&sub).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&env.run_in(Some(&sub), &["status", "--json"]).stdout).unwrap();
    assert_eq!(v["project"]["name"], "epsilon", "{v}");
}

#[test]
fn command_line_mistakes_exit_2_with_a_hint() {
    let env = Env::new();
    let out = env.run(&["projects", "explode"]);
    // The catalogue's validation, with the message an agent gets from the daemon; a usage
    // error all the same (exit 2), like a missing argument or a value out of range.
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("`action` must be one of list, add, add-all, remove"), "{}", describe(&out));
    let out = env.run(&["grep"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        stderr(&out).contains("missing PATTERN") && stderr(&out).contains("usage: booger grep PATTERN"),
        "{}",
        describe(&out)
    );
    let out = env.run(&["grep", "x", "--head-limit", "5000"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("from 1 to 1000, got 5000"), "{}", describe(&out));
    let out = env.run(&["search", "x", "--head-limit", "many"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));

    let out = env.run(&["status", "--bogus", "1"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        stderr(&out).contains("unknown option --bogus") && stderr(&out).contains("usage: booger status"),
        "{}",
        describe(&out)
    );

    let out = env.run(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("unknown command `frobnicate`"), "{}", describe(&out));
}

#[test]
fn tool_errors_exit_1_and_json_keeps_the_error() {
    let env = Env::new();
    let _d = env.start_daemon();
    let out = env.run(&["projects", "add", "/definitely/not/here", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"].as_str().unwrap().contains("does not exist"), "{v}");
}

#[test]
fn help_lists_every_tool() {
    let env = Env::new();
    let out = env.run(&["help"]);
    assert!(out.status.success());
    for t in booger_proto::tools::TOOLS {
        assert!(stdout(&out).contains(t.name), "help misses {}", t.name);
    }
    let out = env.run(&["help", "projects"]);
    assert!(stdout(&out).contains("usage: booger projects [ACTION] [PATH]"), "{}", describe(&out));
}

/// `--help` after a command that acts asks how to use it: `daemon stop --help` leaves the
/// daemon running, `model install --help` fetches nothing.
#[test]
fn help_after_a_command_only_explains_it() {
    let env = Env::new();
    let _d = env.start_daemon();
    for (args, usage) in [
        (&["daemon", "stop", "--help"][..], "usage: booger daemon"),
        (&["daemon", "uninstall", "-h"][..], "usage: booger daemon"),
        (&["model", "install", "--help"][..], "usage: booger model"),
        (&["dashboard", "--help"][..], "usage: booger dashboard"),
        (&["mcp", "--help"][..], "usage: booger mcp"),
        (&["setup", "--help"][..], "usage: booger setup"),
        (&["completions", "--help"][..], "usage: booger completions"),
    ] {
        let out = env.run(args);
        assert!(out.status.success() && stdout(&out).contains(usage), "{args:?}: {}", describe(&out));
    }
    let status = env.json(&["daemon", "status"]);
    assert!(status["pid"].is_number(), "the daemon stopped: {status}");
    let model = env.json(&["model", "status"]);
    assert_eq!(model["installed"], false, "{model}");
}

/// `booger search a b c 2>&1 | true`: whoever reads the output may go away before it is
/// written, stderr included; booger then exits with its own code, never a panic (101).
#[test]
fn closed_output_never_panics_and_words_make_one_query() {
    use std::process::Stdio;
    let env = Env::new();
    let proj = env.project("words");
    std::fs::write(proj.join("a.py"), "def retry_upload(blob):\n    return blob\n").unwrap();
    let _d = env.start_daemon();
    assert!(env.run(&["index", proj.to_str().unwrap()]).status.success());
    // Unquoted words are one query.
    let out = env.run(&["search", "retry", "upload", "--project", proj.to_str().unwrap()]);
    assert!(out.status.success() && stdout(&out).contains("a.py"), "{}", describe(&out));
    for args in [&["search", "retry", "upload", "--project", proj.to_str().unwrap()][..], &["grep"][..]] {
        for _ in 0..5 {
            let mut child = env
                .command(booger_tests::bin("booger"))
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // Both pipes closed before booger writes a byte.
            drop(child.stdout.take());
            drop(child.stderr.take());
            let status = child.wait().unwrap();
            assert!(matches!(status.code(), Some(0 | 2)), "{args:?}: {status:?}");
        }
    }
}

/// Paths as a shell gives them: relative to the current directory, absolute, or pasted as
/// booger prints them (`path:12`, `path:12-40`, grep's `path:12:5`).
#[test]
fn paths_are_relative_to_the_current_directory_absolute_or_with_lines() {
    let env = Env::new();
    let proj = env.project("paths");
    std::fs::create_dir_all(proj.join("src/net")).unwrap();
    std::fs::write(proj.join("src/net/tcp.py"), "def connect(host):\n    return host\n").unwrap();
    std::fs::write(proj.join("src/util.py"), "def helper():\n    return 1\n").unwrap();
    std::fs::write(proj.join("top.py"), "def connect_top():\n    return 2\n").unwrap();
    let _d = env.start_daemon();
    assert!(env.run(&["index", proj.to_str().unwrap()]).status.success());
    let src = proj.join("src");
    let in_src = |args: &[&str]| env.run_in(Some(&src), args);
    let ok = |out: std::process::Output| {
        assert!(out.status.success(), "{}", describe(&out));
        stdout(&out)
    };

    // cwd-relative: `net/tcp.py` from src/ is src/net/tcp.py.
    let text = ok(in_src(&["symbols", "net/tcp.py"]));
    assert!(text.contains("src/net/tcp.py") && text.contains("connect"), "{text}");
    // Absolute.
    let abs = proj.join("src/net/tcp.py");
    let text = ok(in_src(&["symbols", abs.to_str().unwrap()]));
    assert!(text.contains("def connect(host)"), "{text}");
    // As booger printed it: path:line, path:line-line, path:line:column.
    for pasted in ["net/tcp.py:1", "net/tcp.py:1-2", "net/tcp.py:2:5"] {
        let text = ok(in_src(&["symbols", pasted]));
        assert!(text.contains("def connect(host)"), "{pasted}: {text}");
    }
    // A filter from the current directory: only what is under src/.
    let text = ok(in_src(&["search", "connect", "--path-prefix", "."]));
    assert!(text.contains("src/net/tcp.py") && !text.contains("top.py"), "{text}");
    let text = ok(in_src(&["grep", "def ", "--path-prefix", "net"]));
    assert!(text.contains("src/net/tcp.py:1:") && !text.contains("util.py"), "{text}");
    // Root-relative from a subdirectory still works when it names a file.
    let text = ok(in_src(&["symbols", "src/util.py"]));
    assert!(text.contains("helper"), "{text}");
    // Notes and focus take the same paths.
    ok(in_src(&["annotate", "net/tcp.py:1", "the socket opens here"]));
    let notes = env.json(&["annotations", "--project", proj.to_str().unwrap()]);
    assert_eq!(notes["annotations"][0]["target"], "src/net/tcp.py:1", "{notes}");

    // Outside the project: a usage mistake that says so, not advice to re-index.
    let out = in_src(&["symbols", "/etc/passwd"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr(&out).contains("outside the project"), "{}", describe(&out));
    let out = in_src(&["symbols", "nothing/here.py"]);
    assert!(stdout(&out).contains("No file or folder") && !stdout(&out).contains("booger index"), "{}", describe(&out));

    // --project as a path from the current directory, from outside the project.
    let beside = env.dir.path();
    let relative = proj.strip_prefix(beside).unwrap().to_str().unwrap().to_owned();
    let text = ok(env.run_in(Some(beside), &["search", "connect", "--project", &relative]));
    assert!(text.contains("src/net/tcp.py"), "{text}");
    let text = ok(env.run_in(Some(&src), &["search", "connect", "--project", ".."]));
    assert!(text.contains("src/net/tcp.py"), "{text}");
}

/// Completion scripts a shell accepts, that complete commands, flags and their values from
/// the catalogue. bash is checked always; zsh and fish where installed (Debian packages `zsh`
/// and `fish`; CI installs them and sets BOOGER_REQUIRE_SHELLS=1).
#[test]
fn completions_are_scripts_the_shells_accept() {
    use std::process::Command;
    let env = Env::new();
    let script = |shell: &str| {
        let out = env.run(&["completions", shell]);
        assert!(out.status.success(), "{}", describe(&out));
        let path = env.dir.path().join(format!("booger.{shell}"));
        std::fs::write(&path, &out.stdout).unwrap();
        path
    };
    let bash = script("bash");
    let out = Command::new("bash").arg("-n").arg(&bash).output().unwrap();
    assert!(out.status.success(), "bash -n: {}", describe(&out));
    // And it completes: a command, a flag, a flag's values.
    let probe = format!(
        "source '{}'\n\
         t() {{ COMP_WORDS=(\"$@\"); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMPREPLY=(); _booger; echo \"${{COMPREPLY[*]}}\"; }}\n\
         t booger sea\nt booger search --output-mode f\nt booger grep --case\nt booger daemon un\n",
        bash.display()
    );
    let out = Command::new("bash").arg("-c").arg(probe).output().unwrap();
    assert_eq!(
        stdout(&out),
        "search search-expand\nfiles_with_matches\n--case-insensitive\nuninstall\n",
        "{}",
        describe(&out)
    );

    for shell in ["zsh", "fish"] {
        let path = script(shell);
        match Command::new(shell).arg("-n").arg(&path).output() {
            Ok(out) => assert!(out.status.success(), "{shell} -n: {}", describe(&out)),
            Err(_) => booger_tests::missing_optional(
                &format!("`{shell} -n` on the completion script"),
                shell,
                "BOOGER_REQUIRE_SHELLS",
            ),
        }
    }
    let out = env.run(&["completions", "powershell"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("bash|zsh|fish"), "{}", describe(&out));
}

/// A shell's answer says how to page in flags, as the person will type it; an agent's says it
/// in arguments.
#[test]
fn paging_hints_are_flags_on_the_command_line() {
    let env = Env::new();
    let proj = env.project("pages");
    let body: String =
        (0..30).map(|i| format!("def handler_{i}(request):\n    return request.body + {i}\n\n")).collect();
    std::fs::write(proj.join("views.py"), body).unwrap();
    let _d = env.start_daemon();
    assert!(env.run(&["index", proj.to_str().unwrap()]).status.success());
    let run = |args: &[&str]| {
        let out = env.run_in(Some(&proj), args);
        assert!(out.status.success(), "{}", describe(&out));
        stdout(&out)
    };
    let text = run(&["search", "handler request", "--head-limit", "3"]);
    assert!(text.contains("--offset 3") && !text.contains("offset="), "{text}");
    let text = run(&["grep", "return", "--head-limit", "2"]);
    assert!(text.contains("(--head-limit): --offset 2"), "{text}");
    let text = run(&["references", "request", "--head-limit", "2"]);
    assert!(text.contains("--offset 2"), "{text}");
    let text = run(&["search", "handler request", "--max-lines", "50", "--max-tokens", "60"]);
    let cursor = text.split("--cursor ").nth(1).and_then(|r| r.split(']').next()).expect("a --cursor hint").to_owned();
    let more = run(&["search", "handler request", "--max-lines", "50", "--max-tokens", "60", "--cursor", &cursor]);
    assert_ne!(more, text, "the cursor continued nothing");
    // An agent reads arguments.
    let (text, _, _) =
        env.call(&proj, "agent", "search", serde_json::json!({ "query": "handler request", "head_limit": 3 }));
    assert!(text.contains("offset=3"), "{text}");
    // A page with more after it is not the complete answer.
    let (_, data, _) = env.call(&proj, "agent", "grep", serde_json::json!({ "pattern": "return", "head_limit": 2 }));
    assert!(data["cursor"].is_string() && data["complete"] == false, "{data}");
    let (_, data, _) = env.call(&proj, "agent", "grep", serde_json::json!({ "pattern": "handler_29" }));
    assert!(data["cursor"].is_null() && data["complete"] == true, "{data}");
}

/// A newcomer's first hour: the first command says a daemon now runs and how to stop it,
/// every command's `--help` explains it (rc 0) in the client's own names, a boolean flag is a
/// flag (`--literal true` is not part of the pattern), and a user error is a message, not a
/// stack trace.
#[test]
fn the_first_hour_needs_no_guesswork() {
    let env = Env::new();
    let proj = env.project("first");
    std::fs::write(proj.join("app.py"), "def parse(x):\n    return x\n\nflag = true\n").unwrap();
    // No daemon yet: the first command starts one and says so.
    let out = env.run(&["index", proj.to_str().unwrap()]);
    assert!(out.status.success(), "{}", describe(&out));
    let said = stderr(&out);
    assert!(said.contains("started the daemon") && said.contains("booger daemon stop"), "{said}");
    assert!(said.contains("boogerd.log"), "{said}");
    assert!(!stdout(&out).contains("root hash"), "{}", describe(&out));
    // The next command finds it running and says nothing of it.
    let out = env.run_in(Some(&proj), &["grep", "parse", "--literal", "true"]);
    assert!(out.status.success() && stderr(&out).is_empty(), "{}", describe(&out));
    assert!(stdout(&out).contains("app.py:1:def parse(x):"), "the pattern is `parse`: {}", describe(&out));

    let help = env.run(&["--help"]);
    assert!(!stdout(&help).contains("boogerd"), "{}", stdout(&help));
    for (args, says) in [
        (&["team", "--help"][..], "usage: booger team status|publish|token"),
        (&["team", "token", "--help"][..], "token add NAME --repos PATTERN"),
        (&["team", "status", "--help"][..], "usage: booger team status"),
        (&["mcp", "--help"][..], "Serves MCP"),
        (&["hook", "--help"][..], "usage: booger hook claude-code"),
        (&["grep", "--help"][..], "  --literal            Match the pattern as plain text.\n"),
    ] {
        let out = env.run(args);
        assert!(out.status.success() && stdout(&out).contains(says), "{args:?}: {}", describe(&out));
        assert!(!stdout(&out).contains("boogerd token") && !stdout(&out).contains("team-status"), "{args:?}");
    }
    let out = env.run(&["frobnicate"]);
    assert!(stderr(&out).contains("team") && stderr(&out).contains("dashboard"), "{}", describe(&out));

    // A user error from the daemon's binary: a message and a failing exit, no backtrace.
    let mut cmd = std::process::Command::new(booger_tests::bin("boogerd"));
    cmd.args(["token", "list"]).env("RUST_BACKTRACE", "1").env_remove("BOOGER_TEAM_URL");
    cmd.env("BOOGER_HOME", env.dir.path().join("no-team"));
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(stderr(&out).contains("no team index") && !stderr(&out).contains("backtrace"), "{}", describe(&out));
}
