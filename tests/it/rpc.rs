//! JSON-RPC on the raw socket: error codes, notifications, batches, the hello handshake.

use booger_tests::Env;
use serde_json::{Value, json};

#[test]
fn each_json_rpc_error_code() {
    let env = Env::new();
    let _d = env.start_daemon();
    let mut c = env.connect();

    c.send_line("{not json");
    let r = c.recv();
    assert_eq!(r["error"]["code"], -32700, "{r}");
    assert_eq!(r["id"], json!(null));

    for bad in [
        r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#,
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        r#"42"#,
        r#"[]"#,
    ] {
        c.send_line(bad);
        let r = c.recv();
        assert_eq!(r["error"]["code"], -32600, "{bad} -> {r}");
    }

    let r = c.request(5, "no/such/method", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert_eq!(r["id"], 5);

    let r = c.request(6, "tools/call", json!({ "arguments": {} }));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c.request(7, "tools/call", json!({ "name": "nope" }));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c.request(8, "initialize", json!({}));
    assert_eq!(r["error"]["code"], -32602, "{r}");

    // The connection is still usable after all that.
    assert_eq!(c.request(9, "ping", json!({}))["result"], json!({}));
}

#[test]
fn string_ids_are_echoed() {
    let env = Env::new();
    let _d = env.start_daemon();
    let mut c = env.connect();
    c.send_line(r#"{"jsonrpc":"2.0","id":"abc","method":"ping"}"#);
    assert_eq!(c.recv()["id"], "abc");
}

#[test]
fn batches_answer_requests_and_skip_notifications() {
    let env = Env::new();
    let _d = env.start_daemon();
    let mut c = env.connect();
    c.send_line(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"nope"}]"#,
    );
    let r = c.recv();
    let items = r.as_array().expect("a batch gets an array");
    assert_eq!(items.len(), 2, "{r}");
    assert_eq!(items[0]["id"], 1);
    assert_eq!(items[1]["error"]["code"], -32601);
}

#[test]
fn hello_with_another_protocol_version_is_refused_clearly() {
    let env = Env::new();
    let _d = env.start_daemon();
    let mut c = env.connect();
    let r = c.request(1, "booger/hello", json!({ "protocol": 999, "client": "old-booger" }));
    assert_eq!(r["error"]["code"], -32010, "{r}");
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(msg.contains("protocol 999") && msg.contains("booger daemon stop"), "{msg}");
    let ok = c.request(2, "booger/hello", json!({ "protocol": booger_proto_version(), "client": "t" }));
    assert_eq!(ok["result"]["protocol"], booger_proto_version());
}

fn booger_proto_version() -> u32 {
    booger_proto::wire::PROTOCOL_VERSION
}

#[test]
fn shutdown_request_answers_then_stops() {
    let env = Env::new();
    let mut d = env.start_daemon();
    let mut c = env.connect();
    assert_eq!(c.request(1, "shutdown", json!(null))["result"], json!({}));
    assert!(d.wait().success());
    assert!(!env.socket.exists());
}

/// The end-of-input line (a named pipe's half-close) ends the connection as a shut write half
/// does: what is in flight is answered, then the daemon closes, and the daemon serves on.
#[test]
fn the_end_of_input_line_answers_what_is_in_flight_then_closes() {
    use std::io::BufRead;
    let env = Env::new();
    let _d = env.start_daemon();
    let mut c = env.connect();
    c.send_line(&json!({ "jsonrpc": "2.0", "id": 7, "method": "daemon/status" }).to_string());
    c.send_line(booger_proto::wire::END_OF_INPUT_LINE);
    let reply = c.recv();
    assert_eq!(reply["id"], 7, "{reply}");
    assert!(reply["result"]["pid"].is_u64(), "{reply}");
    let mut rest = String::new();
    assert_eq!(c.reader.read_line(&mut rest).expect("read to the end"), 0, "then the daemon closes: {rest}");
    assert!(env.connect().request(8, "daemon/status", json!(null))["result"]["pid"].is_u64());
}

/// A call still running when the client ends its input (an agent's pipe closed right after a
/// long `index`) is answered before the daemon closes the connection, however long it takes:
/// here an index of 3,000 files, seconds in a debug build (the daemon used to give what was
/// in flight 2 seconds).
#[test]
fn a_long_call_in_flight_when_the_input_ends_is_still_answered() {
    let env = Env::new();
    let _d = env.start_daemon();
    let proj = env.project("long");
    // 3,000 files of 60 functions (9 MB): seconds to index in a debug build.
    let body = |i: usize| {
        (0..60)
            .map(|j| format!("def f{i}_{j}(x, y):\n    total = x + y * {j}\n    return total - {i}\n\n"))
            .collect::<String>()
    };
    for i in 0..3000 {
        booger_tests::write(&proj, &format!("d{}/m{i}.py", i % 40), body(i));
    }
    let mut c = env.connect();
    let hello =
        json!({ "protocol": booger_proto::wire::PROTOCOL_VERSION, "client": "t", "project": proj, "session": "l" });
    assert!(c.request(0, "booger/hello", hello).get("result").is_some());
    let started = std::time::Instant::now();
    c.send_line(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "booger/call", "params": { "tool": "index", "arguments": {} } })
            .to_string(),
    );
    c.send_line(booger_proto::wire::END_OF_INPUT_LINE);
    let reply = c.recv();
    assert_eq!(reply["id"], 1, "{reply}");
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(reply["result"]["data"]["report"]["files"], 3000, "after {:?}: {reply}", started.elapsed());
}

/// Batches and lines have limits, and going past them gets an error reply, not silence.
#[test]
fn oversized_batches_and_lines_get_an_error_reply() {
    let env = Env::new();
    let _d = env.start_daemon();
    let mut c = env.connect();
    let batch: Vec<_> = (0..101).map(|i| json!({ "jsonrpc": "2.0", "id": i, "method": "daemon/status" })).collect();
    c.send_line(&serde_json::Value::Array(batch).to_string());
    let r = c.recv();
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("at most 100"), "{r}");
    // A line over 16 MiB: the error comes back before the connection closes.
    let mut c = env.connect();
    let long = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":\"{}\"}}", "a".repeat(17 << 20));
    c.send_line(&long);
    let r = c.recv();
    assert_eq!(r["error"]["code"], -32600, "{r}");
}

/// A client that sends requests and never reads the replies stops being read: the daemon's
/// memory stays small and another client's searches stay fast meanwhile.
#[test]
fn a_client_that_never_reads_costs_neither_memory_nor_latency() {
    use std::io::Write;
    let env = Env::new();
    let d = env.start_daemon();
    let proj = env.project("flood");
    std::fs::write(proj.join("app.py"), "def flood_target():\n    return 1\n").unwrap();
    assert!(env.run(&["index", proj.to_str().unwrap()]).status.success());
    let hello = json!({ "jsonrpc": "2.0", "id": 0, "method": "booger/hello",
        "params": { "protocol": booger_proto::wire::PROTOCOL_VERSION, "client": "flood", "project": proj, "session": "f" } });
    let search = json!({ "jsonrpc": "2.0", "id": 1, "method": "booger/call",
        "params": { "tool": "search", "arguments": { "query": "flood target" } } })
    .to_string();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flooder = {
        let mut c = env.connect();
        c.send_line(&hello.to_string());
        c.stream.set_write_timeout(Some(std::time::Duration::from_millis(200))).unwrap();
        let stop = stop.clone();
        let line = format!("{search}\n").repeat(100);
        std::thread::spawn(move || {
            let mut sent = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Blocks (then times out) once the daemon stops reading: that is the point.
                if c.stream.write_all(line.as_bytes()).is_ok() {
                    sent += 100;
                }
            }
            sent
        })
    };
    std::thread::sleep(std::time::Duration::from_secs(2));
    let mut times = Vec::new();
    for _ in 0..40 {
        let t = std::time::Instant::now();
        let (_, _, err) = env.call(&proj, "other", "search", json!({ "query": "flood target" }));
        times.push(t.elapsed());
        assert!(!err);
    }
    times.sort();
    let rss_kb: u64 = std::fs::read_to_string(format!("/proc/{}/status", d.child.id()))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let sent = flooder.join().unwrap();
    let p95 = times[times.len() * 95 / 100 - 1];
    assert!(p95 < std::time::Duration::from_millis(100), "another client's p95 {p95:?} (flood sent {sent})");
    assert!(rss_kb < 100 * 1024, "daemon RSS {rss_kb} kB while flooded (flood sent {sent})");
}

#[test]
fn a_long_call_reports_its_progress_to_another_connection_by_its_token() {
    let env = Env::new();
    let _d = env.start_daemon();
    let proj = env.project("many");
    for i in 0..3000 {
        booger_tests::write(&proj, &format!("d{}/m{i}.py", i % 30), format!("def f{i}(x):\n    return x + {i}\n"));
    }
    let hello =
        json!({ "protocol": booger_proto::wire::PROTOCOL_VERSION, "client": "t", "project": proj, "session": "p" });
    let mut caller = env.connect();
    assert!(caller.request(0, "booger/hello", hello.clone()).get("result").is_some());
    caller.send_line(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "booger/call",
            "params": { "tool": "index", "arguments": {}, "progress": "tok-1" } })
        .to_string(),
    );
    let mut asker = env.connect();
    assert!(asker.request(0, "booger/hello", hello).get("result").is_some());
    // Unknown tokens (and calls made without one) have nothing to report.
    assert_eq!(asker.request(1, "booger/progress", json!({ "token": "nobody" }))["result"], Value::Null);
    let mut seen = None;
    for id in 2..2000 {
        let r = asker.request(id, "booger/progress", json!({ "token": "tok-1" }));
        if r["result"].is_object() {
            seen = Some(r["result"].clone());
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let p = seen.expect("the running index reported its progress");
    assert_eq!(p["unit"], "files", "{p}");
    assert!(p["done"].as_u64().unwrap() <= p["total"].as_u64().unwrap(), "{p}");
    let done = caller.recv();
    assert_eq!(done["id"], 1);
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert!(done["result"].get("running").is_none(), "a finished call is not running: {done}");
    assert_eq!(asker.request(9999, "booger/progress", json!({ "token": "tok-1" }))["result"], Value::Null);
}
