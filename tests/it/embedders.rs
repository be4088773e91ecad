//! Embedders other than the built-in static tier: an Ollama or OpenAI-compatible service (a
//! small HTTP server in the test speaks their APIs), a service that is down, a missing URL,
//! and `booger model install` for the transformer tier.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use booger_tests::{Env, TIMEOUT, describe};

// The semantic tests' project: four documented Python functions.
use super::semantic::project;
use serde_json::{Value, json};

/// An embedding service: Ollama's `/api/embed` and OpenAI's `/v1/embeddings`, answering
/// bag-of-words vectors (each word adds one to a hashed dimension), so texts that share
/// words are near. It records every input; `down` makes it drop connections unanswered.
struct Service {
    url: String,
    inputs: Arc<Mutex<Vec<String>>>,
    down: Arc<AtomicBool>,
}

impl Service {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let inputs = Arc::new(Mutex::new(Vec::new()));
        let down = Arc::new(AtomicBool::new(false));
        let (seen, off) = (inputs.clone(), down.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (seen, off) = (seen.clone(), off.clone());
                std::thread::spawn(move || serve(conn, &seen, &off));
            }
        });
        Self { url, inputs, down }
    }
}

fn serve(conn: TcpStream, seen: &Mutex<Vec<String>>, down: &AtomicBool) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut conn = conn;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 || down.load(Ordering::SeqCst) {
            return;
        }
        let mut length = 0;
        loop {
            let mut h = String::new();
            reader.read_line(&mut h).unwrap();
            if h.trim().is_empty() {
                break;
            }
            if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let req: Value = serde_json::from_slice(&body).unwrap();
        let texts: Vec<String> =
            req["input"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
        seen.lock().unwrap().extend(texts.iter().cloned());
        let vectors: Vec<Vec<f32>> = texts.iter().map(|t| bag_of_words(t)).collect();
        let answer = if request_line.contains("/api/embed") {
            json!({ "model": req["model"], "embeddings": vectors })
        } else {
            // OpenAI's shape, listed in reverse: clients must follow `index`.
            let data: Vec<Value> = vectors
                .iter()
                .enumerate()
                .rev()
                .map(|(i, v)| json!({ "object": "embedding", "index": i, "embedding": v }))
                .collect();
            json!({ "object": "list", "data": data })
        };
        let body = answer.to_string();
        let head =
            format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
        if conn.write_all(head.as_bytes()).and_then(|_| conn.write_all(body.as_bytes())).is_err() {
            return;
        }
    }
}

fn bag_of_words(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; 64];
    let text = text.trim_start_matches("search_document: ").trim_start_matches("search_query: ");
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2) {
        let h = word.to_lowercase().bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
        v[(h % 64) as usize] += 1.0;
    }
    v
}

fn call(env: &Env, root: &Path, tool: &str, args: Value) -> (String, Value) {
    let (text, data, is_error) = env.call(root, "embedder-tests", tool, args.clone());
    assert!(!is_error, "{tool} {args}: {text}");
    (text, data)
}

/// Waits until `done` holds for the `embed` tool's report.
fn wait_for(env: &Env, root: &Path, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let (_, d) = call(env, root, "embed", json!({}));
        if done(&d) {
            return d;
        }
        assert!(Instant::now() < deadline, "never {what}: {d}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn first(data: &Value) -> &str {
    data["results"][0]["name"].as_str().unwrap_or_default()
}

#[test]
fn an_ollama_service_embeds_and_answers_once_it_covers_the_project() {
    let env = Env::new();
    let service = Service::start();
    let _daemon = env.start_daemon_with(&["--embedder", "ollama", "--embed-url", &service.url]);
    let root = project(&env, "svc");
    let d = wait_for(&env, &root, "answered by ollama", |d| {
        d["answering"] == "ollama/nomic-embed-text" && d["embedded"] == d["embeddable"] && d["running"] == false
    });
    assert_eq!(d["tiers"][0]["embedded"], d["embeddable"], "the static tier covers the project too: {d}");

    let (text, data) = call(&env, &root, "semantic-search", json!({ "query": "send the blob to storage" }));
    assert_eq!(first(&data), "upload_with_backoff", "{text}");
    assert!(!text.contains("static tier"), "the service answers: {text}");
    let inputs = service.inputs.lock().unwrap().clone();
    assert!(inputs.iter().any(|t| t.starts_with("search_document: ") && t.contains("upload")), "{inputs:?}");
    assert!(inputs.iter().any(|t| t == "search_query: send the blob to storage"), "{inputs:?}");

    // The service stops answering: the query cannot be embedded, so the answer is lexical
    // and says why and what to do.
    service.down.store(true, Ordering::SeqCst);
    let (text, data) = call(&env, &root, "hybrid-search", json!({ "query": "upload_with_backoff" }));
    assert_eq!(first(&data), "upload_with_backoff", "{text}");
    assert!(
        text.contains("ollama/nomic-embed-text") && text.contains("ollama serve") && text.contains("lexical results"),
        "{text}"
    );
}

#[test]
fn an_openai_compatible_server_is_read_by_index_not_by_order() {
    let env = Env::new();
    let service = Service::start();
    let url = format!("{}/v1", service.url);
    let _daemon =
        env.start_daemon_with(&["--embedder", "openai", "--embed-url", &url, "--embed-model", "test-embedder"]);
    let root = project(&env, "oai");
    wait_for(&env, &root, "answered by the server", |d| {
        d["answering"] == "openai/test-embedder" && d["embedded"] == d["embeddable"] && d["running"] == false
    });
    for (query, want) in
        [("send the blob to storage", "upload_with_backoff"), ("read a date and time", "parse_timestamp")]
    {
        let (text, data) = call(&env, &root, "semantic-search", json!({ "query": query }));
        assert_eq!(first(&data), want, "{query}: {text}");
    }
    let inputs = service.inputs.lock().unwrap().clone();
    assert!(inputs.iter().all(|t| !t.starts_with("search_")), "no task prefixes for other models: {inputs:?}");
}

#[test]
fn a_service_that_is_down_leaves_the_static_tier_answering() {
    let env = Env::new();
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let _daemon = env.start_daemon_with(&["--embedder", "ollama", "--embed-url", &closed]);
    let root = project(&env, "down");
    let d = wait_for(&env, &root, "covered by the static tier", |d| {
        d["tiers"][0]["embedded"] == d["embeddable"] && d["running"] == false && !d["error"].is_null()
    });
    assert!(d["answering"].as_str().unwrap().starts_with("static-"), "{d}");
    let error = d["error"].as_str().unwrap();
    assert!(error.contains("not answering") && error.contains("ollama serve"), "{error}");

    let (text, data) =
        call(&env, &root, "semantic-search", json!({ "query": "wait longer and try the transfer again" }));
    assert_eq!(first(&data), "upload_with_backoff", "{text}");
    assert!(text.contains("ollama serve") && text.contains("the static tier answers"), "{text}");
    let (text, data) = call(&env, &root, "search", json!({ "query": "parse_timestamp" }));
    assert_eq!(first(&data), "parse_timestamp", "lexical search is untouched: {text}");
    let status = env.run(&["status", root.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("not answering"), "{}", describe(&status));
}

#[test]
fn a_misconfigured_embedder_is_reported_and_the_static_tier_answers() {
    let env = Env::new();
    let _daemon = env.start_daemon_with(&["--embedder", "openai"]);
    let root = project(&env, "nourl");
    let facts = env.json(&["daemon", "status"]);
    let problem = facts["embeddings"]["problem"].as_str().unwrap_or_default();
    assert!(problem.contains("--embed-url"), "{facts}");
    wait_for(&env, &root, "covered", |d| d["embedded"] == d["embeddable"] && d["running"] == false);
    let (text, data) = call(&env, &root, "semantic-search", json!({ "query": "read a date and time" }));
    assert_eq!(first(&data), "parse_timestamp", "{text}");
    assert!(text.contains("--embed-url") && text.contains("static tier answers"), "{text}");

    let out = env.boogerd().args(["--embedder", "nonsense", "--print-config"]).output().unwrap();
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("use auto, static, minilm"),
        "{}",
        describe(&out)
    );
}

#[test]
fn model_install_checks_what_it_installs() {
    let env = Env::new();
    let empty = env.dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = env.run(&["model", "install", "--from", empty.to_str().unwrap()]);
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lacks one of model.safetensors"), "{}", describe(&out));
    let status = env.run(&["model", "status"]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("not installed"), "{}", describe(&status));

    // Files that are not a model: installed as asked, but the restarted daemon says why it
    // cannot use them (not built with the transformer tier, or the weights are unreadable).
    let _daemon = env.start_daemon();
    let fake = env.dir.path().join("fake");
    std::fs::create_dir_all(&fake).unwrap();
    for f in ["model.safetensors", "config.json", "vocab.txt"] {
        std::fs::write(fake.join(f), "not a model").unwrap();
    }
    let out = env.run(&["model", "install", "--from", fake.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("installed all-MiniLM-L6-v2") && text.contains("cannot use it"), "{}", describe(&out));
    assert!(text.contains("transformer"), "{}", describe(&out));
    let facts = env.json(&["daemon", "status"]);
    assert_eq!(facts["embeddings"]["tiers"].as_array().map(Vec::len), Some(1), "the static tier alone: {facts}");
    let out = env.run(&["model", "remove"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(!env.home.join(booger_proto::paths::MINILM_DIR).exists());
}
