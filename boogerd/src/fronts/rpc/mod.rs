//! The socket protocol: one JSON-RPC 2.0 message per line, in both directions.
//!
//! [`Methods`] is the method table; this module is the rest of JSON-RPC: framing, telling
//! requests from notifications (no `id`: handled, never answered) and responses, batches, the
//! replies, and the exact JSON-RPC error for malformed input (-32700 not JSON, -32600 not a
//! request, -32601 unknown method). Each line is parsed once.
//!
//! Requests on one connection run concurrently (an agent may send a slow call and a fast one),
//! at most `IN_FLIGHT` at once; replies carry their `id` and go out through one writer task
//! behind a bounded queue, so a client that stops reading stops being read. `booger/hello`
//! alone runs in order, so what it sets up holds for every later line.

mod methods;

use std::sync::Arc;

use booger_proto::wire::{self, code};
use interprocess::local_socket::tokio::Stream;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, mpsc};

pub(crate) use methods::Methods;
pub use methods::methods;

use crate::engine::Daemon;
use crate::fronts::connection::Connection;
use crate::tools::Session;

/// Longest accepted line. Longer input is answered with -32600 and the connection is closed.
pub(crate) const MAX_LINE: usize = 16 * 1024 * 1024;
/// Requests of one connection that run at once. The next line is read only when one ends: a
/// client that sends without reading its replies stops being read, instead of growing the
/// daemon's memory and starving other clients.
const IN_FLIGHT: usize = 16;
/// Replies waiting for the writer. With `IN_FLIGHT`, this bounds what a connection holds.
const REPLY_QUEUE: usize = 32;
/// How long the requests in flight when a connection's input ends may take to be answered.
const IN_FLIGHT_GRACE: std::time::Duration = std::time::Duration::from_secs(600);
/// Most requests in one JSON-RPC batch.
pub(crate) const MAX_BATCH: usize = 100;

pub(crate) async fn serve_connection(conn: Stream, methods: Methods, daemon: Arc<Daemon>) {
    let (recv, send) = tokio::io::split(conn);
    serve(recv, send, methods, daemon).await;
}

/// Serves one connection's byte streams until the peer closes, a line breaks the framing or
/// the daemon stops. The fuzz target `rpc_lines` drives this with arbitrary bytes.
pub async fn serve<R, W>(input: R, output: W, methods: Methods, daemon: Arc<Daemon>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let connection = Connection::new(Session::anonymous);
    let id = connection.id;

    let (tx, rx) = mpsc::channel::<String>(REPLY_QUEUE);
    let slots = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT));
    let writer = tokio::spawn(write_lines(output, rx));
    let mut reader = BufReader::new(input);
    let stopped = daemon.stopped();
    tokio::pin!(stopped);
    let mut stopping = false;
    let mut line = Vec::with_capacity(1024);
    tracing::debug!(connection = id, "connected");
    crate::base::metrics::get().connection_opened();
    loop {
        line.clear();
        let read = tokio::select! {
            r = read_line(&mut reader, &mut line) => r,
            () = &mut stopped => {
                stopping = true;
                break;
            }
        };
        match read {
            Ok(0) => break,
            Ok(_) if line == wire::END_OF_INPUT_LINE.as_bytes() => break,
            Ok(_) => {
                // Wait for a free slot before taking the line on (or for the daemon to stop).
                let slot = tokio::select! {
                    s = slots.clone().acquire_owned() => s.expect("slots are never closed"),
                    () = &mut stopped => {
                        stopping = true;
                        break;
                    }
                };
                handle_line(&line, &methods, &connection, &tx, slot).await;
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                let _ = tx.send(error_reply(&Value::Null, code::INVALID_REQUEST, &e.to_string())).await;
                // Read the rest of the line away (for a while) before closing: closing on
                // unread input resets the connection, and the client would never see why.
                let _ = tokio::time::timeout(std::time::Duration::from_secs(5), discard_line(&mut reader)).await;
                break;
            }
            Err(e) => {
                tracing::debug!(connection = id, error = %e, "read failed");
                break;
            }
        }
    }
    if !stopping {
        answer_in_flight(&slots, stopped).await;
    }
    drop(tx);
    // A client that stopped reading would hold the writer (and so this task) forever.
    let abort = writer.abort_handle();
    if tokio::time::timeout(std::time::Duration::from_secs(2), writer).await.is_err() {
        abort.abort();
    }
    crate::base::metrics::get().connection_closed();
    tracing::debug!(connection = id, "closed");
}

/// Waits until every request in flight has queued its reply (every slot is back), once the
/// input ended but not the daemon: a client that ended its input still reads, and a long
/// `index` call takes minutes. A client that stopped reading too holds them at most
/// [`IN_FLIGHT_GRACE`]; a daemon that stops does not wait.
async fn answer_in_flight(slots: &tokio::sync::Semaphore, stopped: std::pin::Pin<&mut impl Future<Output = ()>>) {
    tokio::select! {
        _ = tokio::time::timeout(IN_FLIGHT_GRACE, slots.acquire_many(IN_FLIGHT as u32)) => {}
        () = stopped => {}
    }
}

/// Reads one line (without its newline) into `buf`; 0 means end of stream.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let n = reader.take(MAX_LINE as u64 + 1).read_until(b'\n', buf).await?;
    if buf.len() > MAX_LINE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("message longer than {MAX_LINE} bytes"),
        ));
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    Ok(n)
}

/// Reads and drops input up to the next newline (or the end of the stream).
async fn discard_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<()> {
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(());
        }
        let (n, done) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        reader.consume(n);
        if done {
            return Ok(());
        }
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut w: W, mut rx: mpsc::Receiver<String>) {
    let mut out = Vec::with_capacity(4096);
    while let Some(first) = rx.recv().await {
        // Coalesce whatever is already queued into one write.
        out.clear();
        out.extend_from_slice(first.as_bytes());
        out.push(b'\n');
        while let Ok(more) = rx.try_recv() {
            out.extend_from_slice(more.as_bytes());
            out.push(b'\n');
        }
        if w.write_all(&out).await.is_err() {
            return;
        }
    }
    let _ = w.shutdown().await;
}

/// Takes one line on; `slot` is held until its reply is queued.
async fn handle_line(
    line: &[u8],
    methods: &Methods,
    connection: &Arc<Connection>,
    tx: &mpsc::Sender<String>,
    slot: OwnedSemaphorePermit,
) {
    let Ok(text) = std::str::from_utf8(line) else {
        let _ = tx.send(error_reply(&Value::Null, code::PARSE_ERROR, "Parse error: message is not UTF-8")).await;
        return;
    };
    if text.trim().is_empty() {
        return;
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let _ = tx.send(error_reply(&Value::Null, code::PARSE_ERROR, &format!("Parse error: {e}"))).await;
            return;
        }
    };
    // `booger/hello` alone runs in order: what it sets up holds for every later line.
    if value.get("method").and_then(Value::as_str) == Some(wire::HELLO) {
        if let Some(reply) = answer(value, methods, connection).await {
            let _ = tx.send(reply).await;
        }
        return;
    }
    let (methods, connection, tx) = (methods.clone(), Arc::clone(connection), tx.clone());
    tokio::spawn(async move {
        if let Some(reply) = answer(value, &methods, &connection).await {
            let _ = tx.send(reply).await;
        }
        drop(slot);
    });
}

/// The reply to one parsed message or batch, if it gets one: what every front (the socket,
/// HTTP) answers.
pub(crate) async fn answer(value: Value, methods: &Methods, connection: &Arc<Connection>) -> Option<String> {
    match value {
        Value::Array(items) => handle_batch(items, methods, connection).await,
        single => handle_message(single, methods, connection).await,
    }
}

/// A batch's replies in one array (none when it held only notifications).
async fn handle_batch(items: Vec<Value>, methods: &Methods, connection: &Arc<Connection>) -> Option<String> {
    if items.is_empty() {
        return Some(error_reply(&Value::Null, code::INVALID_REQUEST, "Invalid request: empty batch"));
    }
    if items.len() > MAX_BATCH {
        let why = format!("Invalid request: a batch of {} messages; at most {MAX_BATCH}", items.len());
        return Some(error_reply(&Value::Null, code::INVALID_REQUEST, &why));
    }
    let mut replies = Vec::new();
    for item in items {
        replies.extend(handle_message(item, methods, connection).await);
    }
    (!replies.is_empty()).then(|| format!("[{}]", replies.join(",")))
}

/// A JSON-RPC error reply that no request id could be read for.
pub(crate) fn parse_error(why: &str) -> String {
    error_reply(&Value::Null, code::PARSE_ERROR, &format!("Parse error: {why}"))
}

/// One JSON-RPC message as read: what every front (the socket, HTTP, the team server)
/// dispatches on.
pub(crate) enum Message {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// A response from the peer; booger never sends requests, so there is nothing to match.
    Response,
}

/// Reads one message (not a batch); `Err` is the error reply it gets.
pub(crate) fn read_message(mut value: Value) -> Result<Message, String> {
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let invalid = |why: &str| error_reply(&id, code::INVALID_REQUEST, &format!("Invalid request: {why}"));
    let Some(obj) = value.as_object_mut() else {
        return Err(error_reply(&Value::Null, code::INVALID_REQUEST, "Invalid request: expected a JSON object"));
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid("`jsonrpc` must be \"2.0\""));
    }
    if !matches!(obj.get("id"), None | Some(Value::Null | Value::String(_) | Value::Number(_))) {
        return Err(error_reply(
            &Value::Null,
            code::INVALID_REQUEST,
            "Invalid request: `id` must be a string or a number",
        ));
    }
    let method = match obj.get("method") {
        Some(Value::String(m)) => m.clone(),
        Some(_) => return Err(invalid("`method` must be a string")),
        None if obj.contains_key("result") || obj.contains_key("error") => return Ok(Message::Response),
        None => return Err(invalid("missing `method`")),
    };
    if !matches!(obj.get("params"), None | Some(Value::Object(_) | Value::Array(_))) {
        return Err(invalid("`params` must be an object or an array"));
    }
    let params = obj.remove("params").unwrap_or(Value::Null);
    Ok(match obj.remove("id") {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method, params },
    })
}

/// Handles one message; returns the reply line, if the message gets one.
async fn handle_message(value: Value, methods: &Methods, connection: &Arc<Connection>) -> Option<String> {
    let message = match read_message(value) {
        Err(reply) => return Some(reply),
        Ok(m) => m,
    };
    match message {
        Message::Response => None,
        Message::Notification { method, params } => {
            let _ = methods.call(&method, params, connection).await;
            None
        }
        Message::Request { id, method, params } => {
            crate::base::metrics::get().method(&method);
            let reply = match methods.call(&method, params, connection).await {
                None => return Some(error_reply(&id, code::METHOD_NOT_FOUND, &format!("Method not found: {method}"))),
                Some(Ok(result)) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
                Some(Err(e)) => {
                    crate::base::metrics::get().rpc_error(e.code);
                    json!({ "jsonrpc": "2.0", "id": id, "error": e.to_json() })
                }
            };
            Some(reply.to_string())
        }
    }
}

/// An error reply to the request `id` (null when none could be read).
pub(crate) fn error_reply(id: &Value, code: i64, message: &str) -> String {
    crate::base::metrics::get().rpc_error(code);
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }).to_string()
}
