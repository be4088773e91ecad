//! The daemon's HTTP face: health for anyone, everything else behind the token, foreign
//! sites refused, metrics that a Prometheus parser reads and that move.

use std::io::{Read, Write};
use std::net::TcpStream;

use booger_tests::{Env, describe, stdout};
use serde_json::{Value, json};

struct Reply {
    status: u16,
    head: String,
    body: String,
}

/// One HTTP/1.1 GET on loopback, with the given extra headers (`Host` unless given).
fn get(base: &str, path: &str, headers: &[(&str, &str)]) -> Reply {
    let authority = base.strip_prefix("http://").unwrap();
    let mut s = TcpStream::connect(authority).unwrap();
    s.set_read_timeout(Some(booger_tests::TIMEOUT)).unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {authority}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    assert!(!head.to_ascii_lowercase().contains("transfer-encoding: chunked"), "{head}");
    let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    Reply { status, head: head.to_owned(), body: body.to_owned() }
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
    for path in ["/metrics", "/", "/api/status"] {
        assert_eq!(get(&base, path, &[]).status, 401, "{path} without a token");
        assert_eq!(get(&base, path, &[("Authorization", "Bearer nope")]).status, 401, "{path} with a wrong token");
        assert_eq!(get(&base, path, &[("Authorization", &bearer)]).status, 200, "{path} with the token");
    }
    // The address `booger dashboard` prints sets a cookie and leaves the token out of the URL.
    let out = env.run(&["dashboard"]);
    assert!(out.status.success(), "{}", describe(&out));
    let page = stdout(&out).trim().to_owned();
    assert_eq!(page, format!("{base}/?token={token}"));
    let r = get(&base, &format!("/?token={token}"), &[]);
    assert_eq!(r.status, 303, "{}", r.head);
    let cookie = r.head.lines().find_map(|l| l.strip_prefix("set-cookie: ")).expect("a cookie").to_owned();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().unwrap();
    assert_eq!(get(&base, "/", &[("Cookie", pair)]).status, 200);

    // DNS rebinding and cross-site requests: refused, token or not.
    let evil = [("Origin", "http://evil.example"), ("Authorization", bearer.as_str())];
    assert_eq!(get(&base, "/metrics", &evil).status, 403);
    assert_eq!(get(&base, "/health", &[("Origin", "http://evil.example")]).status, 403);
    assert_eq!(get(&base, "/metrics", &[("Host", "evil.example"), ("Authorization", &bearer)]).status, 403);
    let local_origin = base.clone();
    assert_eq!(get(&base, "/metrics", &[("Origin", &local_origin), ("Authorization", &bearer)]).status, 200);
}

#[test]
fn metrics_parse_as_prometheus_text_and_move_after_a_search() {
    let env = Env::new();
    let root = env.project("measured");
    std::fs::write(root.join("app.py"), "def retry_upload(blob):\n    return blob\n").unwrap();
    let _d = env.start_daemon();
    assert!(env.run(&["index", root.to_str().unwrap()]).status.success());
    let facts = env.json(&["daemon", "status"]);
    let base = facts["http_url"].as_str().unwrap().to_owned();
    let token = std::fs::read_to_string(facts["http_token_file"].as_str().unwrap()).unwrap();
    let bearer = format!("Bearer {token}");
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
