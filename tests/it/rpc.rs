//! JSON-RPC on the raw socket: error codes, notifications, batches, the hello handshake.

use booger_tests::Env;
use serde_json::json;

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
