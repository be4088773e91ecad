//! The daemon's HTTP face: health for anyone, everything else behind the token, foreign
//! sites refused, metrics that a Prometheus parser reads and that move.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use booger_tests::{Env, describe, stdout, write};
use serde_json::{Value, json};

struct Reply {
    status: u16,
    head: String,
    body: String,
}

/// One HTTP/1.1 GET on loopback, with the given extra headers (`Host` unless given).
fn get(base: &str, path: &str, headers: &[(&str, &str)]) -> Reply {
    request(base, "GET", path, headers, "")
}

/// One HTTP/1.1 request on loopback, with the given extra headers (`Host` unless given).
fn request(base: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let authority = base.strip_prefix("http://").unwrap();
    let mut s = TcpStream::connect(authority).unwrap();
    s.set_read_timeout(Some(booger_tests::TIMEOUT)).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {authority}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    assert!(!head.to_ascii_lowercase().contains("transfer-encoding: chunked"), "{head}");
    let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    Reply { status, head: head.to_owned(), body: body.to_owned() }
}

impl Reply {
    /// A response header's value (names are matched without case).
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// The daemon's HTTP address and a `Bearer` header value with its token.
fn address_and_bearer(env: &Env) -> (String, String) {
    let facts = env.json(&["daemon", "status"]);
    let base = facts["http_url"].as_str().unwrap_or_else(|| panic!("no http_url: {facts}")).to_owned();
    let token = std::fs::read_to_string(facts["http_token_file"].as_str().unwrap()).unwrap();
    (base, format!("Bearer {token}"))
}

/// `/metrics` read by Prometheus' own Python parser: `{name{labels}: value}` of every sample.
fn parse_metrics(env: &Env, text: &str) -> serde_json::Map<String, Value> {
    let file = env.dir.path().join("metrics.txt");
    std::fs::write(&file, text).unwrap();
    let out = booger_tests::python_with_mcp(env)
        .arg("-c")
        .arg(
            "import json, sys\n\
             from prometheus_client.parser import text_string_to_metric_families\n\
             out = {}\n\
             for family in text_string_to_metric_families(open(sys.argv[1]).read()):\n\
             \x20   for s in family.samples:\n\
             \x20       labels = ','.join('%s=%s' % kv for kv in sorted(s.labels.items()))\n\
             \x20       out['%s{%s}' % (s.name, labels)] = s.value\n\
             print(json.dumps(out))\n",
        )
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "the Prometheus parser rejects /metrics: {}\n{text}", describe(&out));
    serde_json::from_slice::<Value>(&out.stdout).unwrap().as_object().unwrap().clone()
}

#[test]
fn health_is_open_the_rest_needs_the_token_and_foreign_sites_are_refused() {
    let env = Env::new();
    let _d = env.start_daemon();
    let facts = env.json(&["daemon", "status"]);
    let base = facts["http_url"].as_str().unwrap_or_else(|| panic!("no http_url: {facts}")).to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    let token_file = std::path::PathBuf::from(facts["http_token_file"].as_str().unwrap());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777, 0o600);
    let token = std::fs::read_to_string(&token_file).unwrap();
    let bearer = format!("Bearer {token}");

    let r = get(&base, "/health", &[]);
    assert_eq!(r.status, 200, "{}", r.head);
    let health: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(health["status"], "serving", "{health}");
    for path in ["/metrics", "/api/status", "/api/events"] {
        assert_eq!(get(&base, path, &[]).status, 401, "{path} without a token");
        assert_eq!(get(&base, path, &[("Authorization", "Bearer nope")]).status, 401, "{path} with a wrong token");
        if path != "/api/events" {
            assert_eq!(get(&base, path, &[("Authorization", &bearer)]).status, 200, "{path} with the token");
        }
    }
    // The page is a shell with no data; the address `booger dashboard` prints carries the
    // token in its fragment, which no browser sends. No cookie is ever set or accepted: a
    // browser would send it to every server on the loopback address, whatever its port.
    let out = env.run(&["dashboard"]);
    assert!(out.status.success(), "{}", describe(&out));
    let page = stdout(&out).trim().to_owned();
    assert_eq!(page, format!("{base}/#token={token}"));
    let r = get(&base, "/", &[]);
    assert_eq!(r.status, 200, "{}", r.head);
    assert!(!r.head.to_ascii_lowercase().contains("set-cookie") && !r.body.contains(&token), "{}", r.head);
    assert_eq!(get(&base, &format!("/api/status?token={token}"), &[]).status, 401, "a token in the query");
    let cookie = format!("booger_token={token}");
    assert_eq!(get(&base, "/api/status", &[("Cookie", &cookie)]).status, 401, "a cookie");

    // DNS rebinding and cross-site requests: refused, token or not.
    let evil = [("Origin", "http://evil.example"), ("Authorization", bearer.as_str())];
    assert_eq!(get(&base, "/metrics", &evil).status, 403);
    assert_eq!(get(&base, "/health", &[("Origin", "http://evil.example")]).status, 403);
    assert_eq!(get(&base, "/metrics", &[("Host", "evil.example"), ("Authorization", &bearer)]).status, 403);
    let local_origin = base.clone();
    assert_eq!(get(&base, "/metrics", &[("Origin", &local_origin), ("Authorization", &bearer)]).status, 200);

    // The scheme is case-insensitive; an Origin that is not ASCII is foreign, not absent;
    // answers are neither sniffed nor cached.
    let lower = format!("bearer {token}");
    assert_eq!(get(&base, "/api/status", &[("Authorization", &lower)]).status, 200);
    let odd = [("Origin", "http://\u{e9}vil.example"), ("Authorization", bearer.as_str())];
    assert_eq!(get(&base, "/api/status", &odd).status, 403);
    let r = get(&base, "/api/status", &[("Authorization", &bearer)]);
    let head = r.head.to_ascii_lowercase();
    assert!(head.contains("x-content-type-options: nosniff") && head.contains("cache-control: no-store"), "{head}");
}

/// The token file is written through a name of its own: a symlink planted where its
/// temporary file goes is replaced, not written through.
#[test]
fn the_token_is_never_written_through_a_planted_symlink() {
    let env = Env::new();
    let victim = env.dir.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let run_dir = env.socket.parent().unwrap().to_owned();
    std::fs::create_dir_all(&run_dir).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&run_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&victim, run_dir.join("http.tmp")).unwrap();
    let _d = env.start_daemon();
    let facts = env.json(&["daemon", "status"]);
    assert!(facts["http_url"].is_string(), "{facts}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    let token_file = std::path::PathBuf::from(facts["http_token_file"].as_str().unwrap());
    assert_eq!(std::fs::read_to_string(token_file).unwrap().len(), 64);
}

#[test]
fn metrics_parse_as_prometheus_text_and_move_after_a_search() {
    let env = Env::new();
    let root = env.project("measured");
    std::fs::write(root.join("app.py"), "def retry_upload(blob):\n    return blob\n").unwrap();
    let _d = env.start_daemon();
    assert!(env.run(&["index", root.to_str().unwrap()]).status.success());
    let (base, bearer) = address_and_bearer(&env);
    let scrape = || {
        let r = get(&base, "/metrics", &[("Authorization", &bearer)]);
        assert_eq!(r.status, 200, "{}", r.head);
        assert!(r.head.to_ascii_lowercase().contains("content-type: text/plain; version=0.0.4"), "{}", r.head);
        parse_metrics(&env, &r.body)
    };
    let before = scrape();
    let calls = "booger_tool_calls_total{tool=search}";
    let count = "booger_tool_call_duration_seconds_count{tool=search}";
    let n = |m: &serde_json::Map<String, Value>, k: &str| m.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let (_, _, err) = env.call(&root, "s", "search", json!({ "query": "retry upload" }));
    assert!(!err);
    // A malformed call: an error reply, counted by its code.
    let r = env.connect().request(9, "tools/call", json!({}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let after = scrape();
    let invalid = "booger_rpc_errors_total{code=invalid_params}";
    assert_eq!(n(&after, invalid), n(&before, invalid) + 1.0, "{after:?}");
    assert_eq!(n(&after, calls), n(&before, calls) + 1.0, "{after:?}");
    assert_eq!(n(&after, count), n(&before, count) + 1.0);
    assert!(
        n(&after, "booger_rpc_requests_total{method=booger/call}")
            > n(&before, "booger_rpc_requests_total{method=booger/call}")
    );
    assert!(n(&after, "booger_resident_memory_bytes{}") > 0.0);
    assert_eq!(n(&after, "booger_project_files{project=measured}"), 1.0, "{after:?}");
    assert!(n(&after, "booger_project_index_bytes{project=measured}") > 0.0);
}

#[test]
fn a_public_address_needs_to_be_asked_for() {
    let env = Env::new();
    let _d = env.start_daemon_with(&["--http", "0.0.0.0:0"]);
    let facts = env.json(&["daemon", "status"]);
    assert!(facts["http_url"].is_null(), "{facts}");
    assert!(facts["http_problem"].as_str().unwrap().contains("--http-allow-remote"), "{facts}");
    // The socket serves all the same.
    assert!(env.run(&["projects"]).status.success());
}

/// The official Python SDK speaks MCP over Streamable HTTP: the tools and the answer are the
/// ones stdio gets, and each HTTP session keeps its own notes.
#[test]
fn mcp_over_http_answers_as_stdio_does_with_sessions_of_their_own() {
    let env = Env::new();
    let root = env.git_project("served");
    std::fs::write(root.join("app.py"), "def retry_upload(blob):\n    return send(blob)\n").unwrap();
    std::fs::write(root.join("send.py"), "def send(blob):\n    return retry_upload(blob)\n").unwrap();
    // Notes change the user's state: over HTTP only when the daemon allows it.
    let _d = env.start_daemon_with(&["--http-allow-writes"]);
    assert!(env.run(&["index", root.to_str().unwrap()]).status.success());
    let (base, bearer) = address_and_bearer(&env);
    let url = format!("{base}/mcp?project={}", root.display());
    let mut py = booger_tests::python_with_mcp(&env);
    py.env("BOOGER_HTTP_TOKEN", bearer.strip_prefix("Bearer ").unwrap())
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python/mcp_sdk_client.py"))
        .arg(booger_tests::bin("booger"))
        .arg(&root)
        .args(["--http", &url, "retry upload"]);
    let out = booger_tests::output_within(py, std::time::Duration::from_secs(120));
    assert!(out.status.success(), "{}", describe(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(&out)));
    assert_eq!(v["http_tools"], v["stdio_tools"], "{v}");
    assert_eq!(v["http_isError"], false, "{v}");
    assert!(v["http_text"].as_str().unwrap().contains("app.py"), "{v}");
    assert_eq!(v["http_text"], v["stdio_text"], "the same search, over HTTP and over stdio");
    assert!(v["a_notes"].as_str().unwrap().contains("only session A sees this"), "{v}");
    assert!(!v["b_notes"].as_str().unwrap().contains("only session A sees this"), "{v}");
    // The SDK ended both sessions on leaving (DELETE).
    let r = get(&base, "/metrics", &[("Authorization", &bearer)]);
    assert!(r.body.contains("\nbooger_mcp_http_sessions 0\n"), "{}", r.body);
}

/// `/mcp` at the protocol's edges: sessions from `initialize` only, unknown ones 404, a
/// notification 202, malformed JSON a JSON-RPC parse error, DELETE ends a session; the
/// token and the Origin rules hold as for every page.
#[test]
fn mcp_over_http_sessions_and_errors() {
    let env = Env::new();
    let _d = env.start_daemon();
    let (base, bearer) = address_and_bearer(&env);
    let auth = ("Authorization", bearer.as_str());
    let json_type = ("Content-Type", "application/json");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

    assert_eq!(request(&base, "POST", "/mcp", &[json_type], init).status, 401, "no token");
    let evil = [auth, json_type, ("Origin", "http://evil.example")];
    assert_eq!(request(&base, "POST", "/mcp", &evil, init).status, 403, "a foreign Origin");
    let r = request(&base, "POST", "/mcp", &[auth, json_type], ping);
    assert_eq!(r.status, 400, "no session: {}", r.body);
    assert!(r.body.contains("initialize"), "{}", r.body);
    let r = request(&base, "POST", "/mcp", &[auth, json_type, ("Mcp-Session-Id", "nope")], ping);
    assert_eq!(r.status, 404, "{}", r.body);
    let r = request(&base, "POST", "/mcp", &[auth, json_type], "{not json");
    assert_eq!(r.status, 400);
    assert_eq!(serde_json::from_str::<Value>(&r.body).unwrap()["error"]["code"], -32700, "{}", r.body);

    let r = request(&base, "POST", "/mcp", &[auth, json_type], init);
    assert_eq!(r.status, 200, "{}", r.body);
    let reply: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(reply["result"]["protocolVersion"], "2025-06-18", "{reply}");
    let sid = r.header("mcp-session-id").expect("a session id").to_owned();
    let session = ("Mcp-Session-Id", sid.as_str());
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(request(&base, "POST", "/mcp", &[auth, json_type, session], note).status, 202);
    let r = request(&base, "POST", "/mcp", &[auth, json_type, session], ping);
    assert_eq!((r.status, serde_json::from_str::<Value>(&r.body).unwrap()["id"].clone()), (200, json!(2)));
    let unknown = r#"{"jsonrpc":"2.0","id":3,"method":"no/such"}"#;
    let r = request(&base, "POST", "/mcp", &[auth, json_type, session], unknown);
    assert_eq!(serde_json::from_str::<Value>(&r.body).unwrap()["error"]["code"], -32601, "{}", r.body);
    let bad_tool =
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":5}}}"#;
    let r = request(&base, "POST", "/mcp", &[auth, json_type, session], bad_tool);
    let reply: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    // By default HTTP only reads: a tool that changes something is refused with the reason,
    // alone or inside a batch.
    for call in [
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"projects","arguments":{"action":"add","path":"/tmp"}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"batch","arguments":{"calls":[{"tool":"annotate","arguments":{"target":"a","note":"n"}}]}}}"#,
    ] {
        let r = request(&base, "POST", "/mcp", &[auth, json_type, session], call);
        assert!(r.body.contains("--http-allow-writes"), "{}", r.body);
    }
    let old = ("MCP-Protocol-Version", "1999-01-01");
    assert_eq!(request(&base, "POST", "/mcp", &[auth, json_type, session, old], ping).status, 400);

    // Opening sessions does not end the ones in use: past the limit a new one is refused.
    for _ in 0..63 {
        assert_eq!(request(&base, "POST", "/mcp", &[auth, json_type], init).status, 200);
    }
    let r = request(&base, "POST", "/mcp", &[auth, json_type], init);
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(r.body.contains("too many MCP sessions"), "{}", r.body);
    let r = request(&base, "POST", "/mcp", &[auth, json_type, session], ping);
    assert_eq!(r.status, 200, "the session in use was ended: {}", r.body);

    assert_eq!(request(&base, "DELETE", "/mcp", &[auth, session], "").status, 204);
    assert_eq!(request(&base, "POST", "/mcp", &[auth, json_type, session], ping).status, 404, "ended");
}

/// The page's one action: re-index a project, for a registered project only, never from
/// another site.
#[test]
fn the_reindex_button_starts_a_run() {
    let env = Env::new();
    let root = env.project("button");
    std::fs::write(root.join("a.py"), "def a():\n    return 1\n").unwrap();
    let _d = env.start_daemon_with(&["--no-watch"]);
    assert!(env.run(&["index", root.to_str().unwrap()]).status.success());
    let (base, bearer) = address_and_bearer(&env);
    let auth = ("Authorization", bearer.as_str());
    assert_eq!(request(&base, "POST", "/api/projects/button/index", &[], "").status, 401);
    let evil = [auth, ("Origin", "http://evil.example")];
    assert_eq!(request(&base, "POST", "/api/projects/button/index", &evil, "").status, 403);
    assert_eq!(request(&base, "POST", "/api/projects/nosuch/index", &[auth], "").status, 404);
    // Not watched: only a run finds the new function.
    std::fs::write(root.join("a.py"), "def freshly_written():\n    return 2\n").unwrap();
    let found = |env: &Env| {
        let (text, _, _) = env.call(&root, "s", "search", json!({ "query": "freshly_written" }));
        text.contains("a.py")
    };
    assert!(!found(&env));
    assert_eq!(request(&base, "POST", "/api/projects/button/index", &[auth, ("Origin", &base)], "").status, 202);
    let deadline = std::time::Instant::now() + booger_tests::TIMEOUT;
    while !found(&env) {
        assert!(std::time::Instant::now() < deadline, "the button's run did not index the change");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The page shows a project's last `booger eval` beside the grep ranking (as last seen once
/// the index is released), and a dash before there is one.
#[test]
fn the_status_page_shows_the_last_eval() {
    let env = Env::new();
    let root = env.git_project("measured");
    for (i, subject) in
        ["Add the upload retry loop", "Handle expired tokens in the cache", "Parse nested config sections"]
            .iter()
            .enumerate()
    {
        booger_tests::write(
            &root,
            &format!("m{i}.py"),
            format!("def step_{i}():\n    \"\"\"{subject}.\"\"\"\n    return {i}\n"),
        );
        booger_tests::commit_all(&root, subject);
    }
    let _d = env.start_daemon_with(&["--idle-release-secs", "2"]);
    assert!(env.run(&["index", root.to_str().unwrap()]).status.success());
    let (base, bearer) = address_and_bearer(&env);
    let auth = ("Authorization", bearer.as_str());
    let project = || {
        let status: Value = serde_json::from_str(&get(&base, "/api/status", &[auth]).body).unwrap();
        status["projects"].as_array().unwrap().iter().find(|p| p["name"] == "measured").cloned().unwrap()
    };
    assert!(project().get("quality").is_none(), "no eval yet");
    let e = env.json(&["eval", "--project", root.to_str().unwrap()]);
    let q = project()["quality"].clone();
    assert_eq!(q["queries"], 3, "{q}");
    assert_eq!(q["search_r10"], e["methods"]["search"]["all"]["R@10"], "{q}");
    assert!(q["grep_r10"].is_number(), "{q}");
    assert!(get(&base, "/", &[auth]).body.contains("Search quality"));
    // Released when idle: the page still shows what it last saw, without opening the index.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while project()["loaded"] != false {
        assert!(std::time::Instant::now() < deadline, "the idle project was never released");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(project()["quality"], q);
}

/// Headless Chromium where installed (Debian package `chromium`): the status page lists the
/// project with its file count, and the count follows a file added to the project without a
/// reload. Skipped without Chromium unless BOOGER_REQUIRE_CHROMIUM=1 (CI sets it). The
/// screenshot is left in the target directory (`status-page.png`) for a person to look at.
#[test]
fn the_status_page_in_a_browser_follows_the_files_live() {
    let Some(chromium) = booger_tests::chromium() else {
        booger_tests::missing_optional("the status page in a browser", "chromium", "BOOGER_REQUIRE_CHROMIUM");
        return;
    };
    let env = Env::new();
    let root = env.project("on-the-page");
    for name in ["one.py", "two.py", "three.rs"] {
        std::fs::write(root.join(name), format!("// {name}\nfn f() {{}}\n")).unwrap();
    }
    let _d = env.start_daemon();
    assert!(env.run(&["index", root.to_str().unwrap()]).status.success());
    let out = env.run(&["dashboard"]);
    assert!(out.status.success(), "{}", describe(&out));
    let url = stdout(&out).trim().to_owned();
    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("status-page.png");
    let mut py = env.command("python3");
    py.arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python/status_page_browser.py"))
        .arg(&chromium)
        .arg(&url)
        .arg("on-the-page")
        .arg(root.join("added.py"))
        .arg(&shot);
    let out = booger_tests::output_within(py, std::time::Duration::from_secs(120));
    assert!(out.status.success(), "{}", describe(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(&out)));
    assert_eq!(v["before"], "3", "{v}");
    assert_eq!(v["after"], "4", "{v}");
    assert_eq!(v["no_reload"], true, "{v}");
    assert_eq!(v["live"], "live", "{v}");
    assert_eq!(v["errors"], json!([]), "the page's console: {v}");
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000, "a screenshot");
}

/// Idle connections cannot freeze the daemon: past the cap one is refused with a 503 at once,
/// one that sends nothing is closed after the header deadline, and the socket's clients are
/// served all along.
#[test]
fn idle_http_connections_are_capped_and_closed() {
    let env = Env::new();
    let root = env.project("busy");
    write(&root, "a.py", "def held_open():\n    pass\n");
    let _d = env.start_daemon();
    env.json(&["index", root.to_str().unwrap()]);
    let facts = env.json(&["daemon", "status"]);
    let base = facts["http_url"].as_str().unwrap().to_owned();
    let authority = base.strip_prefix("http://").unwrap().to_owned();
    let idle: Vec<TcpStream> = (0..200).map(|_| TcpStream::connect(&authority).unwrap()).collect();
    // The socket's clients are served while they are held.
    let started = std::time::Instant::now();
    let out =
        env.run_within(None, &["search", "held_open", "--project", root.to_str().unwrap()], Duration::from_secs(20));
    assert!(out.status.success() && stdout(&out).contains("a.py"), "{}", describe(&out));
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    // Past the cap: a clear refusal, at once.
    let mut refused = 0;
    for mut s in idle.iter().skip(150).map(|s| s.try_clone().unwrap()) {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        if answer.starts_with("HTTP/1.1 503") && answer.contains("too many") {
            refused += 1;
        }
    }
    assert!(refused >= 40, "{refused} of the last 50 were refused");
    // Within the cap: closed once the header deadline passes with nothing sent.
    let mut first = idle[0].try_clone().unwrap();
    first.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut buf = [0u8; 64];
    // Closed by the server: end of stream or a reset; a read that times out means still open.
    let read = first.read(&mut buf);
    let closed = match &read {
        Ok(0) => true,
        Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
        Ok(_) => false,
    };
    assert!(closed, "an idle connection was kept open: {read:?}");
    drop(idle);
    assert_eq!(get(&base, "/health", &[]).status, 200);
}
