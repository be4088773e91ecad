//! MCP through `booger mcp`: handshake, tools, resources, notifications, clean exit.

use std::time::Duration;

use booger_tests::Env;
use serde_json::{Value, json};

#[test]
fn handshake_negotiates_the_protocol_revision() {
    let env = Env::new();
    let _d = env.start_daemon();
    for version in ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let mut m = env.mcp(None);
        let init = m.handshake(version);
        assert_eq!(init["protocolVersion"], version, "client's supported revision is echoed");
        assert_eq!(init["serverInfo"]["name"], "booger");
        assert!(init["capabilities"]["tools"].is_object());
        assert!(init["capabilities"]["resources"].is_object());
        assert!(m.close().success());
    }
    // An unknown revision gets our newest; the client decides whether to go on.
    let mut m = env.mcp(None);
    assert_eq!(m.handshake("1999-01-01")["protocolVersion"], "2026-07-28");
}

#[test]
fn tools_list_publishes_a_schema_for_every_tool() {
    let env = Env::new();
    let _d = env.start_daemon();
    let mut m = env.mcp_with(None, &["--tools", "all"]);
    m.handshake("2025-11-25");
    let tools = m.request("tools/list", json!({}))["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, booger_proto::tools::names());
    for t in &tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert_eq!(t["outputSchema"]["type"], "object", "{t}");
        assert!(t["description"].as_str().unwrap().len() > 20, "{t}");
        assert!(!t["title"].as_str().unwrap().is_empty(), "{t}");
    }
}

#[test]
fn tool_call_answers_text_content() {
    let env = Env::new();
    let proj = env.project("gamma");
    let _d = env.start_daemon();
    let mut m = env.mcp(Some(&proj));
    m.handshake("2025-11-25");
    let added = m.request("tools/call", json!({ "name": "projects", "arguments": { "action": "add" } }));
    assert_eq!(added["result"]["isError"], false, "{added}");
    let status = m.request("tools/call", json!({ "name": "status", "arguments": {} }));
    let text = status["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(status["result"]["content"][0]["type"], "text");
    assert!(text.contains("project: gamma"), "{text}");
}

#[test]
fn bad_tool_arguments_are_tool_errors_that_say_how_to_fix_them() {
    let env = Env::new();
    let _d = env.start_daemon();
    let mut m = env.mcp(None);
    m.handshake("2025-11-25");
    let cases = [
        (json!({ "project": 7 }), "`project` must be a string"),
        (json!({ "projet": "x" }), "unknown argument `projet`"),
    ];
    for (args, expect) in cases {
        let r = m.request("tools/call", json!({ "name": "status", "arguments": args }));
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(expect), "{text}");
    }
    // A blank query asks for nothing: an error, not an empty answer.
    for query in ["", "  \n"] {
        let r = m.request("tools/call", json!({ "name": "search", "arguments": { "query": query } }));
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("`query` must be a string that is not blank"), "{text}");
    }
    let r = m.request("tools/call", json!({ "name": "projects", "arguments": { "action": "remove", "path": "nope" } }));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"]["content"][0]["text"].as_str().unwrap().contains("no project named nope"), "{r}");
    // An unknown tool is a protocol error, not a tool error.
    let r = m.request("tools/call", json!({ "name": "frobnicate", "arguments": {} }));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("tools/list"), "{r}");
}

#[test]
fn resources_list_and_read() {
    let env = Env::new();
    let d = env.start_daemon();
    let mut m = env.mcp(None);
    m.handshake("2025-11-25");
    let list = m.request("resources/list", json!({}));
    assert_eq!(list["result"]["resources"][0]["uri"], "booger://status");
    let read = m.request("resources/read", json!({ "uri": "booger://status" }));
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    let facts: Value = serde_json::from_str(text).unwrap();
    assert_eq!(facts["pid"], d.child.id());
    let missing = m.request("resources/read", json!({ "uri": "booger://nope" }));
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    let prompts = m.request("prompts/list", json!({}));
    assert_eq!(prompts["result"]["prompts"], json!([]), "{prompts}");
}

#[test]
fn notifications_get_no_reply() {
    let env = Env::new();
    let _d = env.start_daemon();
    let mut m = env.mcp(None);
    m.handshake("2025-11-25");
    m.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    m.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 9 } }));
    // Even an unknown method sent as a notification is not answered.
    m.send(&json!({ "jsonrpc": "2.0", "method": "no/such/method" }));
    // The next reply is the ping's: nothing came back for the notifications.
    let pong = m.request("ping", json!({}));
    assert_eq!(pong["id"], 2);
    assert!(m.recv_within(Duration::from_millis(200)).is_none());
}

#[test]
fn closing_stdin_ends_the_session_after_pending_replies() {
    let env = Env::new();
    let _d = env.start_daemon();
    let mut m = env.mcp(None);
    m.handshake("2025-11-25");
    // Send and close at once: the reply must still arrive before the pump exits.
    m.send(&json!({ "jsonrpc": "2.0", "id": 42, "method": "tools/list" }));
    drop(m.stdin.take());
    let reply = m.recv();
    assert_eq!(reply["id"], 42);
    assert!(m.close().success());
}

#[test]
fn mcp_session_starts_the_daemon_itself() {
    let env = Env::new();
    let mut m = env.mcp(None);
    let init = m.handshake("2025-11-25");
    assert_eq!(init["serverInfo"]["name"], "booger");
    assert!(m.close().success());
}

/// An upgrade, `booger daemon stop` or a crash ends the daemon, not the agent's session: the
/// next call reaches a new daemon through the same `booger mcp`.
#[test]
fn an_mcp_session_survives_a_daemon_restart() {
    let env = Env::new();
    let proj = env.project("delta");
    std::fs::write(proj.join("app.py"), "def survive_restart():\n    return 1\n").unwrap();
    let mut d = env.start_daemon();
    let mut m = env.mcp(Some(&proj));
    m.handshake("2025-11-25");
    env.json(&["index", proj.to_str().unwrap()]);
    let before = m.request("tools/call", json!({ "name": "status", "arguments": {} }));
    assert_eq!(before["result"]["isError"], false, "{before}");

    d.signal(libc::SIGTERM);
    d.wait();
    let found = m.request("tools/call", json!({ "name": "search", "arguments": { "query": "survive_restart" } }));
    assert_eq!(found["result"]["isError"], false, "{found}");
    let text = found["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("survive_restart"), "{text}");
    let now = env.json(&["daemon", "status"]);
    assert_ne!(now["pid"], d.child.id(), "a new daemon answers");
    assert!(m.close().success());
}
