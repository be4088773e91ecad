//! What `/metrics` says of the team server: calls, failures and latencies per token and
//! tool, calls refused for their rate per token, requests without a live token.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

use crate::base::sync::Recover;

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 10] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

#[derive(Default)]
struct Tool {
    calls: u64,
    failed: u64,
    seconds: f64,
    /// Calls at or under each bucket's bound (cumulative, as Prometheus reads them).
    under: [u64; BUCKETS.len()],
}

#[derive(Default)]
struct Figures {
    /// By token name, then tool.
    tools: BTreeMap<String, BTreeMap<String, Tool>>,
    limited: BTreeMap<String, u64>,
    unauthorized: u64,
}

#[derive(Default)]
pub(super) struct Calls(Mutex<Figures>);

impl Calls {
    pub(super) fn called(&self, token: &str, tool: &str, took: Duration, ok: bool) {
        let mut f = self.0.lock().recover();
        let t = f.tools.entry(token.to_owned()).or_default().entry(tool.to_owned()).or_default();
        let s = took.as_secs_f64();
        t.calls += 1;
        t.failed += u64::from(!ok);
        t.seconds += s;
        for (i, bound) in BUCKETS.iter().enumerate() {
            if s <= *bound {
                t.under[i] += 1;
            }
        }
    }

    pub(super) fn limited(&self, token: &str) {
        *self.0.lock().recover().limited.entry(token.to_owned()).or_default() += 1;
    }

    pub(super) fn unauthorized(&self) {
        self.0.lock().recover().unauthorized += 1;
    }

    /// Prometheus text.
    pub(super) fn render(&self, connections: u32, idle: u32, sessions: usize) -> String {
        let f = self.0.lock().recover();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP booger_team_calls_total Tool calls by token and tool.\n# TYPE booger_team_calls_total counter"
        );
        for (token, tools) in &f.tools {
            for (tool, t) in tools {
                let _ =
                    writeln!(out, "booger_team_calls_total{{token=\"{}\",tool=\"{tool}\"}} {}", label(token), t.calls);
            }
        }
        let _ = writeln!(
            out,
            "# HELP booger_team_call_failures_total Tool calls that failed.\n# TYPE booger_team_call_failures_total counter"
        );
        for (token, tools) in &f.tools {
            for (tool, t) in tools {
                let _ = writeln!(
                    out,
                    "booger_team_call_failures_total{{token=\"{}\",tool=\"{tool}\"}} {}",
                    label(token),
                    t.failed
                );
            }
        }
        let _ = writeln!(
            out,
            "# HELP booger_team_call_seconds Tool call latency.\n# TYPE booger_team_call_seconds histogram"
        );
        for (token, tools) in &f.tools {
            for (tool, t) in tools {
                let l = format!("token=\"{}\",tool=\"{tool}\"", label(token));
                for (bound, n) in BUCKETS.iter().zip(t.under) {
                    let _ = writeln!(out, "booger_team_call_seconds_bucket{{{l},le=\"{bound}\"}} {n}");
                }
                let _ = writeln!(out, "booger_team_call_seconds_bucket{{{l},le=\"+Inf\"}} {}", t.calls);
                let _ = writeln!(out, "booger_team_call_seconds_sum{{{l}}} {:.6}", t.seconds);
                let _ = writeln!(out, "booger_team_call_seconds_count{{{l}}} {}", t.calls);
            }
        }
        let _ = writeln!(
            out,
            "# HELP booger_team_rate_limited_total Calls refused for their token's rate.\n# TYPE booger_team_rate_limited_total counter"
        );
        for (token, n) in &f.limited {
            let _ = writeln!(out, "booger_team_rate_limited_total{{token=\"{}\"}} {n}", label(token));
        }
        let _ = writeln!(
            out,
            "# HELP booger_team_unauthorized_total Requests without a live token.\n# TYPE booger_team_unauthorized_total counter\nbooger_team_unauthorized_total {}",
            f.unauthorized
        );
        let _ = writeln!(
            out,
            "# HELP booger_team_index_connections Connections to the team index.\n# TYPE booger_team_index_connections gauge\nbooger_team_index_connections{{state=\"open\"}} {connections}\nbooger_team_index_connections{{state=\"idle\"}} {idle}"
        );
        let _ = writeln!(
            out,
            "# HELP booger_team_sessions MCP sessions open.\n# TYPE booger_team_sessions gauge\nbooger_team_sessions {sessions}"
        );
        out
    }
}

/// A label value as Prometheus text takes it.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}
