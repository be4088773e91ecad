//! How the team server holds up: tokens checked and revoked, malformed requests, rates, huge
//! bodies and slow clients, the official SDK, a restart of PostgreSQL, TLS.

use std::sync::Arc;
use std::time::{Duration, Instant};

use booger_tests::team_server::{Remote, TeamServer, add_token, agent, post, revoke_token, text};
use booger_tests::{Env, commit_all, describe, write};
use serde_json::{Value, json};

use super::fixture;

/// No token, a wrong one, a revoked one: 401, the revoked one within a second. A session is
/// its token's: another token's request naming it is told there is no such session.
#[test]
fn tokens_are_checked_revoked_within_a_second_and_sessions_are_their_tokens() {
    let f = fixture();
    let url = f.server.mcp();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let http = agent();
    let none = post(&http, &url, None, None, &list);
    assert_eq!(none.status, 401, "{none:?}");
    assert!(none.body.contains("Authorization: Bearer"), "{none:?}");
    let wrong = post(&http, &url, Some("bgt_0000"), None, &list);
    assert_eq!(wrong.status, 401, "{wrong:?}");
    // A web page's request, even with a live token: its origin is not allowed.
    let page = http
        .post(&url)
        .header("authorization", &format!("Bearer {}", f.alpha))
        .header("origin", "https://evil.example")
        .header("content-type", "application/json")
        .send(list.to_string())
        .unwrap();
    assert_eq!(page.status().as_u16(), 403);

    let carol = add_token(&f.env, &f.pg.url, "carol", &["alpha"], None);
    let remote = Remote::open(&url, &carol);
    assert_eq!(remote.call("status", json!({}))["isError"], false);
    // Alice's token with carol's session: not hers.
    let replay = post(&http, &url, Some(&f.alpha), Some(&remote.session), &list);
    assert_eq!(replay.status, 404, "{replay:?}");
    assert!(post(&http, &url, Some(&carol), Some(&remote.session), &list).status == 200);

    revoke_token(&f.env, &f.pg.url, "carol");
    let revoked = Instant::now();
    loop {
        let a = remote.ask("status", json!({}));
        if a.status == 401 {
            break;
        }
        assert!(revoked.elapsed() < Duration::from_secs(1), "a revoked token still answered after 1 s: {a:?}");
        // Meanwhile, it reads nothing: every query checks the token.
        assert!(!a.body.contains("alpha@"), "a revoked token read alpha: {a:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Bad arguments are the caller's to fix.
    let bad = Remote::open(&url, &f.alpha).call("grep", json!({"pattern": "("}));
    assert_eq!(bad["isError"], true, "{bad}");
    assert!(text(&bad).contains("literal=true"), "{bad}");
    let unknown = Remote::open(&url, &f.alpha).ask("index", json!({}));
    assert_eq!(unknown.json()["error"]["code"], -32602, "{unknown:?}");
}

/// A malformed message gets the JSON-RPC code the daemon's own fronts give it: the team
/// server reads messages as they do.
#[test]
fn malformed_json_rpc_gets_the_codes_every_front_gives() {
    let f = fixture();
    let url = f.server.mcp();
    let session = Remote::open(&url, &f.alpha).session;
    let raw = |body: &str| {
        let r = agent()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", &format!("Bearer {}", f.alpha))
            .header("mcp-session-id", &session)
            .config()
            .http_status_as_error(false)
            .build()
            .send(body.to_owned())
            .unwrap();
        let v: Value = serde_json::from_str(&r.into_body().read_to_string().unwrap()).unwrap();
        v["error"]["code"].as_i64()
    };
    assert_eq!(raw("{not json"), Some(-32700));
    assert_eq!(raw(r#"{"id": 1, "method": "tools/list"}"#), Some(-32600), "no jsonrpc member");
    assert_eq!(raw(r#"{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}"#), Some(-32600), "an object id");
    assert_eq!(raw(r#"[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]"#), Some(-32600), "a batch");
    assert_eq!(raw(r#"{"jsonrpc": "2.0", "id": 1, "method": "resources/list"}"#), Some(-32601));
    assert_eq!(raw(r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": 3}"#), Some(-32600));
}

/// Past its rate a token gets 429 with Retry-After, every time; another token is served.
#[test]
fn past_its_rate_a_token_gets_429_and_others_are_served() {
    let f = fixture();
    let url = f.server.mcp();
    let hasty = add_token(&f.env, &f.pg.url, "hasty", &["alpha"], Some(30));
    // initialize and its notification are calls too: 28 of 30 are left.
    let remote = Remote::open(&url, &hasty);
    let answers: Vec<_> = (0..1_030).map(|_| remote.ask("status", json!({}))).collect();
    let ok = answers.iter().filter(|a| a.status == 200).count();
    let limited: Vec<_> = answers.iter().filter(|a| a.status == 429).collect();
    // (The bucket refills a call every 2 s while the loop runs.)
    let others: Vec<_> = answers.iter().filter(|a| a.status != 200 && a.status != 429).collect();
    assert!(
        (27..=30).contains(&ok) && others.is_empty(),
        "{ok} answered, {} refused, others: {others:?}",
        limited.len()
    );
    for a in &limited {
        assert!(
            a.retry_after.as_deref().is_some_and(|r| r.parse::<u64>().is_ok_and(|s| (1..=3).contains(&s))),
            "{a:?}"
        );
    }
    assert!(limited[0].body.contains("30 calls a minute"), "{:?}", limited[0]);
    let other = Remote::open(&url, &f.alpha).call("status", json!({}));
    assert_eq!(other["isError"], false, "{other}");
    // /metrics only with its own secret, whatever the peer's address (a reverse proxy on the
    // same host makes every peer loopback).
    let url = format!("{}/metrics", f.server.base);
    assert_eq!(agent().get(&url).call().unwrap().status().as_u16(), 401);
    let wrong = agent().get(&url).header("Authorization", "Bearer nope").call().unwrap();
    assert_eq!(wrong.status().as_u16(), 401);
    let metrics = booger_tests::team_server::metrics(&f.server.base);
    let counted = format!("booger_team_rate_limited_total{{token=\"hasty\"}} {}", limited.len());
    assert!(metrics.contains(&counted), "{counted} not in {metrics}");
}

/// A 100 MB body is refused without being read whole, and five hundred idle connections
/// and a client that sends its headers a byte at a time do not keep others from answers.
#[test]
fn a_huge_body_idle_connections_and_a_slow_client_leave_others_served() {
    use std::io::{Read, Write};
    let f = fixture();
    let addr = f.server.base.trim_start_matches("http://").to_owned();
    let mut big = std::net::TcpStream::connect(&addr).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        f.alpha,
        100 << 20
    );
    big.write_all(head.as_bytes()).unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..100 {
        if big.write_all(&chunk).is_err() {
            break; // the server stopped reading: it answered already
        }
    }
    let mut reply = String::new();
    big.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = big.read_to_string(&mut reply);
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply:?}");

    // (Fewer than one address's share of connections: the test's client has the same address.)
    let idle: Vec<std::net::TcpStream> = (0..200).map(|_| std::net::TcpStream::connect(&addr).unwrap()).collect();
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHo").unwrap();
    let started = Instant::now();
    let answer = Remote::open(&f.server.mcp(), &f.alpha).call("search", json!({"query": "aardvark"}));
    assert_eq!(answer["isError"], false, "{answer}");
    assert!(started.elapsed() < Duration::from_secs(2), "served in {:?}", started.elapsed());
    drop(idle);
}

/// The official MCP Python SDK's Streamable HTTP client lists the tools and calls them; it
/// checks each answer against the outputSchema the tool published.
#[test]
fn official_sdk_lists_and_calls_the_team_server() {
    let f = fixture();
    let calls = json!([
        {"tool": "status"},
        {"tool": "search", "arguments": {"query": "aardvark swim"}},
        {"tool": "workspace-search", "arguments": {"query": "Burrow"}},
        {"tool": "grep", "arguments": {"pattern": "aardvark_swim"}},
        {"tool": "symbols", "arguments": {"repository": "alpha", "path": "src"}},
        {"tool": "references", "arguments": {"symbol": "aardvark_swim"}},
        {"tool": "directory-summary", "arguments": {"repository": "alpha"}},
        {"tool": "branch-diff", "arguments": {"repository": "alpha", "base": f.alpha_commits[0]}},
        {"tool": "search", "arguments": {"query": "zebrafish", "repository": "beta"}},
        {"tool": "hybrid-search", "arguments": {"query": "aardvark swim"}},
        {"tool": "tests-for", "arguments": {"symbol": "aardvark_swim", "repository": "alpha"}},
        // Every output mode of the listing tools, as the local daemon's SDK test calls them.
        {"tool": "search", "arguments": {"query": "aardvark swim", "output_mode": "files_with_matches"}},
        {"tool": "search", "arguments": {"query": "aardvark swim", "output_mode": "signatures", "head_limit": 1}},
        {"tool": "search", "arguments": {"query": "aardvark swim", "output_mode": "count"}},
        {"tool": "symbols", "arguments": {"repository": "alpha", "output_mode": "files_with_matches"}},
        {"tool": "symbols", "arguments": {"repository": "alpha", "output_mode": "count"}},
        {"tool": "references", "arguments": {"symbol": "aardvark_swim", "output_mode": "files_with_matches"}},
        {"tool": "references", "arguments": {"symbol": "aardvark_swim", "output_mode": "count"}},
        {"tool": "tests-for", "arguments": {"symbol": "aardvark_swim", "output_mode": "files_with_matches"}},
        {"tool": "grep", "arguments": {"pattern": "aardvark_swim", "context": 2, "head_limit": 1}},
        {"tool": "branch-diff", "arguments": {"repository": "alpha", "base": f.alpha_commits[0], "output_mode": "list"}},
        {"tool": "directory-summary", "arguments": {"repository": "alpha", "path": "src", "max_tokens": 50}},
    ]);
    let mut py = booger_tests::python_with_mcp(&f.env);
    py.env("BOOGER_TEAM_TOKEN", &f.alpha)
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python/mcp_team_client.py"))
        .arg(f.server.mcp())
        .arg(calls.to_string());
    let out = booger_tests::output_within(py, Duration::from_secs(120));
    assert!(out.status.success(), "{}", describe(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(&out)));
    assert_eq!(v["server"], "booger-team", "{v}");
    assert_eq!(v["tools"].as_array().unwrap().len(), 10, "{v}");
    let results = v["calls"].as_array().unwrap();
    for r in &results[..8] {
        assert_eq!(r["isError"], false, "{r}");
    }
    assert!(results[1]["text"].as_str().unwrap().contains("alpha@"), "{v}");
    assert!(
        results[7]["text"].as_str().unwrap().contains("aardvark_rest"),
        "branch-diff names the new definition: {v}"
    );
    assert_eq!(results[8]["isError"], true, "{v}");
    assert_eq!(results[9]["isError"], false, "{v}");
    assert!(results[9]["text"].as_str().unwrap().contains("no embeddings"), "{v}");
    assert!(results[10]["text"].as_str().unwrap().contains("test_aardvark_swims"), "tests-for finds the test: {v}");
    for r in &results[11..] {
        assert_eq!(r["isError"], false, "{r}");
    }
    // The audit says who asked what of which repository, and how much it found (written
    // within a second or so).
    let audited = "SELECT count(*) FROM audit a JOIN tokens t ON t.id = a.token_id
                   WHERE t.name = 'alice' AND a.tool = 'branch-diff' AND a.repo = 'alpha' AND a.results = 1 AND a.ok";
    let started = Instant::now();
    while f.pg.sql(audited) == "0" {
        assert!(started.elapsed() < Duration::from_secs(5), "no audit row: {}", f.pg.sql("SELECT * FROM audit"));
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// PostgreSQL restarted under a running team server: calls meanwhile fail cleanly, saying
/// to retry; once it is back, calls succeed without restarting boogerd.
#[test]
fn the_team_server_rides_out_a_restart_of_postgresql() {
    let env = Env::new();
    let mut pg = booger_tests::postgres::start(env.dir.path());
    let _daemon = env.start_daemon_with(&["--team-url", &pg.url]);
    let repo = env.git_project("gamma");
    write(&repo, "lib.rs", "pub fn gamma_ray() -> u32 {\n    7\n}\n");
    commit_all(&repo, "one");
    assert!(env.run(&["projects", "add", repo.to_str().unwrap()]).status.success());
    assert!(env.run_in(Some(&repo), &["publish"]).status.success());
    let token = add_token(&env, &pg.url, "ci", &["*"], None);
    let server = TeamServer::start(&env, &pg.url, &[]);
    let remote = Remote::open(&server.mcp(), &token);
    assert_eq!(remote.call("search", json!({"query": "gamma ray"}))["isError"], false);
    pg.stop();
    let down = remote.ask("search", json!({"query": "gamma ray"}));
    match down.status {
        200 => {
            let v = down.json();
            assert_eq!(v["result"]["isError"], true, "{v}");
            assert!(text(&v["result"]).contains("try again"), "{v}");
        }
        503 => assert_eq!(down.retry_after.as_deref(), Some("1"), "{down:?}"),
        _ => panic!("{down:?}"),
    }
    pg.restart();
    let back = Instant::now();
    loop {
        let a = remote.ask("search", json!({"query": "gamma ray"}));
        if a.status == 200 && a.json()["result"]["isError"] == false {
            assert!(a.body.contains("gamma@"), "{a:?}");
            break;
        }
        assert!(back.elapsed() < Duration::from_secs(15), "not back: {a:?}\n{}", server.said());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Given a certificate and key, the team server speaks TLS itself: a client that trusts the
/// certificate's CA is served, plain HTTP gets no answer, and a client that does not trust it
/// is refused in the handshake.
#[test]
fn tls_on_the_team_servers_own_listener() {
    use std::io::{Read, Write};

    use rustls::pki_types::pem::PemObject;
    let f = fixture();
    let certs = booger_tests::tls_proxy::test_certs();
    let dir = tempfile::tempdir().unwrap();
    let (cert_file, key_file) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_file, &certs.cert).unwrap();
    std::fs::write(&key_file, &certs.key).unwrap();
    let server = TeamServer::start(
        &f.env,
        &f.pg.url,
        &["--team-cert", cert_file.to_str().unwrap(), "--team-key", key_file.to_str().unwrap()],
    );
    let port: u16 = server.base.rsplit(':').next().unwrap().parse().unwrap();

    let https = |trusted: &str| -> std::io::Result<String> {
        let mut roots = rustls::RootCertStore::empty();
        for c in rustls::pki_types::CertificateDer::pem_slice_iter(trusted.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, std::net::TcpStream::connect(("127.0.0.1", port))?);
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        .to_string();
        write!(
            tls,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            f.alpha,
            body.len()
        )?;
        let mut reply = String::new();
        tls.read_to_string(&mut reply)?;
        Ok(reply)
    };
    let reply = https(&certs.ca).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.to_ascii_lowercase().contains("mcp-session-id:"), "{reply}");
    // A CA the server's certificate does not come from: the handshake fails.
    assert!(https(&booger_tests::tls_proxy::test_certs().ca).is_err(), "a certificate from an unknown CA was trusted");
    // Plain HTTP to the TLS port gets no HTTP answer.
    let mut plain = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    plain.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    plain.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let _ = plain.read_to_end(&mut got);
    assert!(!String::from_utf8_lossy(&got).contains("200 OK"), "{}", String::from_utf8_lossy(&got));
}
