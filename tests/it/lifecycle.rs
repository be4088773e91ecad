//! Starting, refusing, stopping and restarting the daemon.

use std::os::unix::fs::PermissionsExt;

use booger_tests::{Env, describe, stderr, stdout};

#[test]
fn socket_is_private_to_its_user() {
    let env = Env::new();
    let _d = env.start_daemon();
    let mode = std::fs::metadata(&env.socket).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "socket mode {mode:o}");
    let dir_mode = std::fs::metadata(env.socket.parent().unwrap()).unwrap().permissions().mode() & 0o777;
    assert_eq!(dir_mode, 0o700, "socket dir mode {dir_mode:o}");
}

#[test]
fn second_daemon_on_a_live_socket_exits_cleanly_and_leaves_the_first_serving() {
    let env = Env::new();
    let first = env.start_daemon();
    let out = booger_tests::output_within(env.boogerd(), booger_tests::TIMEOUT);
    // Exit 0: a service manager restarts a daemon that fails (systemd's Restart=on-failure,
    // launchd's KeepAlive), and would loop against the one already serving.
    assert!(out.status.success(), "second daemon did not exit cleanly: {}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("already running") && err.contains(&first.child.id().to_string()), "{err}");
    // The first one still answers.
    assert_eq!(env.json(&["daemon", "status"])["pid"], first.child.id());
}

#[test]
fn stale_socket_of_a_killed_daemon_is_replaced() {
    let env = Env::new();
    let mut d = env.start_daemon();
    d.signal(libc::SIGKILL);
    d.wait();
    assert!(env.socket.exists(), "a SIGKILLed daemon leaves its socket file behind");
    let d2 = env.start_daemon();
    assert_eq!(env.json(&["daemon", "status"])["pid"], d2.child.id());
}

#[test]
fn sigterm_and_sigint_stop_gracefully_and_remove_the_socket() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let env = Env::new();
        let mut d = env.start_daemon();
        d.signal(sig);
        let status = d.wait();
        assert!(status.success(), "signal {sig}: {status}: {}", d.log_text());
        assert!(!env.socket.exists(), "socket left behind after signal {sig}");
        assert!(d.log_text().contains("stopped"), "{}", d.log_text());
    }
}

#[test]
fn daemon_stop_waits_until_the_daemon_is_gone() {
    let env = Env::new();
    let mut d = env.start_daemon();
    let out = env.run(&["daemon", "stop"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(stdout(&out).contains(&format!("stopped boogerd (pid {})", d.child.id())), "{}", describe(&out));
    assert!(d.wait().success());
    let out = env.run(&["daemon", "status"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(stdout(&out).contains("not running"));
    // Stopping what is not running is not an error.
    assert!(env.run(&["daemon", "stop"]).status.success());
}

#[test]
fn client_starts_the_daemon_when_none_runs() {
    let env = Env::new();
    let out = env.run(&["status"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(stdout(&out).contains("boogerd"), "{}", describe(&out));
    let status = env.json(&["daemon", "status"]);
    assert!(status["pid"].as_u64().unwrap() > 0);
    // The autostarted daemon logs into the data dir.
    let log = std::fs::read_to_string(env.home.join("boogerd.log")).unwrap();
    assert!(log.contains("boogerd ready"), "{log}");
}

#[test]
fn autostart_failure_names_the_log_file() {
    let env = Env::new();
    let mut cmd = env.booger(None);
    // A daemon binary that exits at once never comes up.
    cmd.env("BOOGER_DAEMON", "/bin/false").arg("status");
    let out = booger_tests::output_within(cmd, booger_tests::TIMEOUT);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("did not answer") && err.contains("boogerd.log"), "{err}");
}

#[test]
fn registry_survives_a_restart_and_a_kill() {
    let env = Env::new();
    let proj = env.project("alpha");
    let mut d = env.start_daemon();
    let added = env.json(&["projects", "add", proj.to_str().unwrap()]);
    assert_eq!(added["added"], true);
    d.signal(libc::SIGKILL);
    d.wait();
    let _d2 = env.start_daemon();
    let list = env.json(&["projects"]);
    assert_eq!(list["projects"][0]["root"], proj.to_str().unwrap());
    assert_eq!(list["projects"][0]["name"], "alpha");
}

#[test]
fn two_clients_at_once() {
    let env = Env::new();
    let proj = env.project("beta");
    let _d = env.start_daemon();
    let mut a = env.mcp(Some(&proj));
    let mut b = env.mcp(None);
    a.handshake("2025-11-25");
    b.handshake("2025-06-18");
    // Interleave requests on both sessions.
    for _ in 0..20 {
        assert_eq!(a.request("ping", serde_json::json!({}))["result"], serde_json::json!({}));
        assert_eq!(b.request("ping", serde_json::json!({}))["result"], serde_json::json!({}));
    }
    let sa = a.request("tools/call", serde_json::json!({ "name": "status", "arguments": {} }));
    let sb = b.request("tools/call", serde_json::json!({ "name": "status", "arguments": {} }));
    let ta = sa["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    let tb = sb["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    // Each session keeps its own default project.
    assert!(ta.contains(proj.to_str().unwrap()), "{ta}");
    assert!(!tb.contains(proj.to_str().unwrap()), "{tb}");
    assert!(a.close().success());
    assert!(b.close().success());
}

#[test]
fn racing_clients_start_exactly_one_daemon() {
    let env = Env::new();
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let mut cmd = env.booger(None);
            cmd.args(["status", "--json"]);
            std::thread::spawn(move || booger_tests::output_within(cmd, booger_tests::TIMEOUT))
        })
        .collect();
    let mut pids = Vec::new();
    for h in handles {
        let out = h.join().unwrap();
        assert!(out.status.success(), "{}", describe(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        pids.push(v["pid"].as_u64().unwrap());
    }
    pids.dedup();
    assert_eq!(pids.len(), 1, "clients talked to different daemons: {pids:?}");
}

/// MCP launchers keep only HOME and PATH: the client then computes another socket path than
/// a daemon started from a full shell. It (`booger daemon status`, `booger mcp`) must still
/// find that daemon, and a second daemon on the same data directory must be refused.
#[test]
fn one_daemon_per_data_directory_however_the_client_was_started() {
    let env = Env::new();
    let home = env.dir.path().join("user");
    let runtime = env.dir.path().join("xdg-run");
    std::fs::create_dir_all(&home).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let bare = |program: std::path::PathBuf| {
        let mut c = std::process::Command::new(program);
        c.env_clear().env("HOME", &home).env("PATH", &path).current_dir(&home);
        c
    };
    let mut full = bare(booger_tests::bin("boogerd"));
    full.env("XDG_RUNTIME_DIR", &runtime).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut first = full.spawn().unwrap();
    let socket = runtime.join("booger/boogerd.sock");
    let deadline = std::time::Instant::now() + booger_tests::TIMEOUT;
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(std::time::Instant::now() < deadline, "the daemon never listened on {}", socket.display());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }

    let mut status = bare(booger_tests::bin("booger"));
    status.args(["daemon", "status", "--json"]);
    let out = booger_tests::output_within(status, booger_tests::TIMEOUT);
    assert!(out.status.success(), "{}", describe(&out));
    let facts: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(facts["pid"], first.id(), "the bare client reached another daemon: {facts}");

    // `booger mcp` as an MCP launcher starts it (HOME and PATH only) answers from that daemon.
    let mut mcp = bare(booger_tests::bin("booger"));
    mcp.arg("mcp").stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
    let mut shim = mcp.spawn().unwrap();
    let mut to = shim.stdin.take().unwrap();
    let mut from = std::io::BufReader::new(shim.stdout.take().unwrap());
    for msg in [
        serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "bare", "version": "1" } } }),
        serde_json::json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "status", "arguments": {} } }),
    ] {
        use std::io::Write;
        writeln!(to, "{msg}").unwrap();
    }
    let mut answer = serde_json::Value::Null;
    for _ in 0..2 {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut from, &mut line).unwrap();
        answer = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["pid"], first.id(), "booger mcp reached another daemon: {answer}");
    drop(to);
    assert!(shim.wait().unwrap().success());

    let mut second = bare(booger_tests::bin("boogerd"));
    second.arg("--socket").arg(env.dir.path().join("other.sock"));
    let out = booger_tests::output_within(second, booger_tests::TIMEOUT);
    assert!(
        out.status.success(),
        "a second daemon on the same data directory did not exit cleanly: {}",
        describe(&out)
    );
    assert!(!env.dir.path().join("other.sock").exists(), "the second daemon bound its socket");
    let err = stderr(&out);
    assert!(err.contains("already serves the data directory") && err.contains(&first.id().to_string()), "{err}");

    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(first.id() as i32, libc::SIGTERM) };
    first.wait().unwrap();
}

/// A socket directory other users can write to (without the sticky bit that keeps them from
/// removing our files) is refused, with the reason: they could put their own socket there.
#[test]
fn a_socket_directory_others_can_write_is_refused() {
    let env = Env::new();
    let shared = env.dir.path().join("shared-run");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut cmd = std::process::Command::new(booger_tests::bin("boogerd"));
    cmd.arg("--socket").arg(shared.join("d.sock")).arg("--home").arg(&env.home).arg("--no-http");
    let out = booger_tests::output_within(cmd, std::time::Duration::from_secs(20));
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(stderr(&out).contains("other users can write"), "{}", describe(&out));
    assert!(!shared.join("d.sock").exists());
}

/// The daemon's on/off switches read from the environment as people write them (`1`, `yes`,
/// `on`; `0`, `false`), not only clap's `true`: `BOOGER_NO_WATCH=1` once stopped the daemon
/// with a usage error, and a client starting it said only that it did not answer.
#[test]
fn switches_from_the_environment_take_one_and_yes() {
    let status = |off: &str, on: &str| {
        let env = Env::new();
        let project = env.project("p");
        std::fs::write(project.join("a.py"), "def f():\n    return 1\n").unwrap();
        let mut cmd = env.boogerd();
        cmd.env("BOOGER_NO_WATCH", off).env("BOOGER_NO_HTTP", on).env("BOOGER_NO_EMBED", on);
        let _d = env.launch(cmd);
        env.json(&["index", project.to_str().unwrap()]);
        env.json(&["status"])
    };
    let off = status("1", "yes");
    assert!(off["http_url"].is_null() && off["embeddings"].is_null(), "{off}");
    assert_eq!(off["projects"][0]["watch"]["state"], "manual", "{off}");
    let on = status("0", "on");
    assert_ne!(on["projects"][0]["watch"]["state"], "manual", "{on}");
}
