//! What the daemon counts as it serves: requests by method and tool, their latency, errors by
//! kind, open connections. Plain atomics, written on every request and read by `/metrics`;
//! the per-project figures are read from the projects themselves when scraped.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use booger_proto::tools::TOOLS;

/// Upper bounds of the latency buckets, in seconds (Prometheus `le`).
pub(crate) const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// The JSON-RPC methods counted by name; any other is counted as `other`.
pub(crate) const METHODS: &[&str] = &[
    "booger/hello",
    "booger/call",
    "daemon/status",
    "shutdown",
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "prompts/list",
    "other",
];

/// One tool's calls.
#[derive(Default)]
pub(crate) struct ToolStats {
    pub calls: AtomicU64,
    /// Calls that answered `isError: true`.
    pub errors: AtomicU64,
    /// Calls stopped by the heavy-call deadline.
    pub timeouts: AtomicU64,
    /// Cumulative counts per bucket of `BUCKETS`, then +Inf.
    pub buckets: [AtomicU64; BUCKETS.len() + 1],
    pub micros: AtomicU64,
}

pub(crate) struct Metrics {
    pub tools: Vec<ToolStats>,
    pub methods: Vec<AtomicU64>,
    pub connections_open: AtomicU64,
    pub connections_total: AtomicU64,
    /// JSON-RPC errors answered, by code: parse, invalid request, method not found, invalid
    /// params, other.
    pub rpc_errors: [AtomicU64; 5],
    pub http_requests: AtomicU64,
    /// HTTP requests refused: no or a wrong token, a foreign Origin or Host.
    pub http_refused: AtomicU64,
    /// MCP sessions open over HTTP.
    pub mcp_sessions_open: AtomicU64,
    /// Tool calls of the last minute, by second.
    recent: [Second; RECENT_SLOTS],
    /// The latest calls' durations in microseconds, a ring: the page's latency figures are
    /// quantiles of these, not bucket bounds.
    latest: [AtomicU32; LATEST_CALLS],
    /// Calls written to `latest` so far (the next slot, modulo its length).
    latest_next: AtomicU64,
}

/// How many of the latest calls the latency figures describe.
pub(crate) const LATEST_CALLS: usize = 1024;

/// Slots of the last-minute ring (more than 60, so the second being filled never overwrites
/// one still counted).
const RECENT_SLOTS: usize = 64;

/// One second's tool calls. Which second it holds moves on when a call lands in a later one.
#[derive(Default)]
struct Second {
    at: AtomicU64,
    calls: AtomicU64,
    micros: AtomicU64,
}

/// Seconds since the counters were made (the daemon's start).
fn now_s() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs() + 1
}

pub(crate) const RPC_ERROR_CODES: [(&str, i64); 5] = [
    ("parse_error", -32700),
    ("invalid_request", -32600),
    ("method_not_found", -32601),
    ("invalid_params", -32602),
    ("other", 0),
];

impl Default for Metrics {
    fn default() -> Self {
        Self {
            tools: TOOLS.iter().map(|_| ToolStats::default()).collect(),
            methods: METHODS.iter().map(|_| AtomicU64::new(0)).collect(),
            connections_open: AtomicU64::new(0),
            connections_total: AtomicU64::new(0),
            rpc_errors: Default::default(),
            http_requests: AtomicU64::new(0),
            http_refused: AtomicU64::new(0),
            mcp_sessions_open: AtomicU64::new(0),
            recent: std::array::from_fn(|_| Second::default()),
            latest: std::array::from_fn(|_| AtomicU32::new(0)),
            latest_next: AtomicU64::new(0),
        }
    }
}

/// The daemon's counters (one daemon per process).
pub(crate) fn get() -> &'static Metrics {
    static METRICS: std::sync::OnceLock<Metrics> = std::sync::OnceLock::new();
    METRICS.get_or_init(Metrics::default)
}

fn add(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl Metrics {
    /// Counts one tool call that took `took`.
    pub(crate) fn tool_call(&self, tool: &str, took: Duration, is_error: bool, timed_out: bool) {
        let Some(i) = TOOLS.iter().position(|t| t.name == tool) else { return };
        let s = &self.tools[i];
        add(&s.calls);
        if is_error {
            add(&s.errors);
        }
        if timed_out {
            add(&s.timeouts);
        }
        let secs = took.as_secs_f64();
        for (b, le) in s.buckets.iter().zip(BUCKETS.iter().copied().chain([f64::INFINITY])) {
            if secs <= le {
                add(b);
            }
        }
        s.micros.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
        let now = now_s();
        let second = &self.recent[now as usize % RECENT_SLOTS];
        if second.at.swap(now, Ordering::Relaxed) != now {
            // A call racing this one across the second's start may be lost: the figure is a
            // rate on a page, not an account.
            second.calls.store(0, Ordering::Relaxed);
            second.micros.store(0, Ordering::Relaxed);
        }
        add(&second.calls);
        second.micros.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
        let slot = self.latest_next.fetch_add(1, Ordering::Relaxed) as usize % LATEST_CALLS;
        self.latest[slot].store(took.as_micros().min(u32::MAX as u128) as u32, Ordering::Relaxed);
    }

    /// The `q` quantiles (each 0..=1) of the latest calls' durations in milliseconds, and how
    /// many calls they describe (up to [`LATEST_CALLS`]); empty before the first call.
    pub(crate) fn latest_latency(&self, qs: &[f64]) -> (usize, Vec<f64>) {
        let n = (self.latest_next.load(Ordering::Relaxed) as usize).min(LATEST_CALLS);
        let mut micros: Vec<u32> = self.latest[..n].iter().map(|m| m.load(Ordering::Relaxed)).collect();
        if micros.is_empty() {
            return (0, Vec::new());
        }
        micros.sort_unstable();
        let at = |q: f64| micros[((q * n as f64).ceil() as usize).clamp(1, n) - 1] as f64 / 1000.0;
        (n, qs.iter().map(|&q| at(q)).collect())
    }

    /// Tool calls answered since the start.
    pub(crate) fn calls(&self) -> u64 {
        self.tools.iter().map(|t| t.calls.load(Ordering::Relaxed)).sum()
    }

    /// Tool calls answered in the last minute, and their total time in microseconds.
    pub(crate) fn last_minute(&self) -> (u64, u64) {
        let now = now_s();
        self.recent
            .iter()
            .filter(|s| now.saturating_sub(s.at.load(Ordering::Relaxed)) < 60)
            .fold((0, 0), |(c, m), s| (c + s.calls.load(Ordering::Relaxed), m + s.micros.load(Ordering::Relaxed)))
    }

    pub(crate) fn method(&self, method: &str) {
        let i = METHODS.iter().position(|m| *m == method).unwrap_or(METHODS.len() - 1);
        add(&self.methods[i]);
    }

    pub(crate) fn rpc_error(&self, code: i64) {
        let i = RPC_ERROR_CODES.iter().position(|(_, c)| *c == code).unwrap_or(RPC_ERROR_CODES.len() - 1);
        add(&self.rpc_errors[i]);
    }

    pub(crate) fn connection_opened(&self) {
        add(&self.connections_open);
        add(&self.connections_total);
    }

    pub(crate) fn connection_closed(&self) {
        self.connections_open.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative() {
        let m = Metrics::default();
        m.tool_call("search", Duration::from_millis(3), false, false);
        m.tool_call("search", Duration::from_secs(20), true, true);
        let s = &m.tools[0];
        let counts: Vec<u64> = s.buckets.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        assert_eq!(counts[0], 0); // ≤ 1 ms
        assert_eq!(counts[2], 1); // ≤ 5 ms
        assert_eq!(counts[BUCKETS.len() - 1], 1); // ≤ 10 s
        assert_eq!(counts[BUCKETS.len()], 2); // +Inf: every call
        assert_eq!(s.errors.load(Ordering::Relaxed), 1);
        assert_eq!(m.last_minute().0, 2);
        assert_eq!(m.latest_latency(&[0.5, 0.99]), (2, vec![3.0, 20_000.0]));
        // The figures follow the latest calls once the ring has wrapped.
        for _ in 0..LATEST_CALLS {
            m.tool_call("grep", Duration::from_micros(420), false, false);
        }
        assert_eq!(m.latest_latency(&[0.5, 0.95]), (LATEST_CALLS, vec![0.42, 0.42]));
        m.method("nonsense");
        assert_eq!(m.methods[METHODS.len() - 1].load(Ordering::Relaxed), 1);
    }
}
