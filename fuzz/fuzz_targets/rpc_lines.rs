//! The socket protocol: any bytes a client may send, through the real line framing and the
//! real method table of a daemon on a temporary data directory. No panic, and every line the
//! daemon writes back is a JSON-RPC 2.0 response (or a batch of them).
#![no_main]

use std::sync::{Arc, Mutex, OnceLock};

use boogerd::{engine::Config, engine::Daemon, fronts::rpc};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::AsyncReadExt;

struct World {
    _home: tempfile::TempDir,
    config: Config,
    runtime: tokio::runtime::Runtime,
    /// Replaced after an input asked it to shut down.
    daemon: Mutex<Arc<Daemon>>,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let home = tempfile::tempdir().expect("temp dir");
        let mut config = Config::from_env();
        config.data_dir = home.path().join("data");
        config.socket = home.path().join("sock");
        config.watch = false;
        config.embed = false;
        std::fs::create_dir_all(&config.data_dir).expect("data dir");
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let daemon = Mutex::new(Daemon::new(config.clone()));
        World { _home: home, config, runtime, daemon }
    })
}

fn daemon(world: &World) -> Arc<Daemon> {
    let mut d = world.daemon.lock().expect("daemon lock");
    if d.is_stopping() {
        *d = Daemon::new(world.config.clone());
    }
    d.clone()
}

fn is_response(v: &Value) -> bool {
    v.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && v.get("id").is_some()
        && (v.get("result").is_some() != v.get("error").is_some())
}

fuzz_target!(|data: &[u8]| {
    let world = world();
    let daemon = daemon(world);
    let methods = rpc::methods(daemon.clone());
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (_, server_out) = tokio::io::split(server);
    let output = world.runtime.block_on(async {
        let serve = rpc::serve(data, server_out, methods, daemon);
        let read = async move {
            let mut client = client;
            let mut out = Vec::new();
            let _ = client.read_to_end(&mut out).await;
            out
        };
        tokio::join!(serve, read).1
    });
    for line in output.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
        let ok = match &v {
            Value::Array(items) => !items.is_empty() && items.iter().all(is_response),
            one => is_response(one),
        };
        assert!(ok, "not a JSON-RPC response: {v}");
    }
});
