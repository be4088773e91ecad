//! `grep`: regex or literal search over the indexed text, line by line.

use booger_proto::wire::ToolReply;
use regex::RegexBuilder;
use serde_json::{Value, json};

use super::{Session, explain_empty, filters, int, project_store};
use crate::Daemon;
use crate::search::format;

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or_default();
    let literal = args.get("literal").and_then(Value::as_bool).unwrap_or(false);
    let source = if literal { regex::escape(pattern) } else { pattern.to_owned() };
    let case_insensitive = args.get("case_insensitive").and_then(Value::as_bool).unwrap_or(false);
    let re = match RegexBuilder::new(&source).case_insensitive(case_insensitive).size_limit(1 << 22).build() {
        Ok(r) => r,
        Err(e) => {
            return ToolReply::error(format!(
                "grep: invalid regex {shown}: {}. Escape special characters, or pass literal=true to match the text as is",
                e.to_string().lines().last().unwrap_or_default().trim(),
                shown = super::quoted(pattern)
            ));
        }
    };
    // A chunk is read line by line only if the pattern matches somewhere in it: one pass of the
    // regex engine (and its literal prefilters) over the whole chunk instead of one call per
    // line. With ^ and $ matching at line ends, whatever matches a line matches its chunk;
    // \A and \z mean something else across lines, so such patterns go line by line.
    let whole = (!source.contains("\\A") && !source.contains("\\z"))
        .then(|| {
            RegexBuilder::new(&source)
                .case_insensitive(case_insensitive)
                .multi_line(true)
                .crlf(true)
                .size_limit(1 << 22)
                .build()
                .ok()
        })
        .flatten();
    let (project, store) = match project_store(daemon, session, args) {
        Ok(ps) => ps,
        Err(reply) => return reply,
    };
    let f = filters(args);
    let context = int(args, "context", 0);
    let offset = int(args, "offset", 0);
    let limit = int(args, "head_limit", 50);
    let budget = int(args, "max_tokens", format::DEFAULT_MAX_TOKENS) * format::CHARS_PER_TOKEN;
    let mut total = 0usize;
    let mut out = String::new();
    let mut results = Vec::new();
    let mut cut = false;
    // The regex's literals narrow the chunks to read through the trigram index; a pattern
    // without a literal of three characters reads every chunk, for at most SCAN_DEADLINE.
    let grams = crate::search::grams::required(&source);
    let started = std::time::Instant::now();
    let mut timed_out = false;
    let mut each = |chunk: &crate::store::search::Candidate, content: &str| {
        if grams.is_none() && started.elapsed() > SCAN_DEADLINE {
            timed_out = true;
            return false;
        }
        if whole.as_ref().is_some_and(|w| !w.is_match(content)) {
            return true;
        }
        let lines: Vec<&str> = content.lines().collect();
        for (k, line) in lines.iter().enumerate() {
            if !re.is_match(line) {
                continue;
            }
            total += 1;
            if total <= offset || results.len() >= limit || cut {
                continue;
            }
            let n = chunk.start_line as usize + k;
            let mut piece = String::new();
            let before = k.saturating_sub(context);
            for (c, l) in lines.iter().enumerate().take(k).skip(before) {
                piece.push_str(&format!("{}-{}-{}\n", chunk.path, chunk.start_line as usize + c, clip(l)));
            }
            piece.push_str(&format!("{}:{n}:{}\n", chunk.path, clip(line)));
            for (c, l) in lines.iter().enumerate().skip(k + 1).take(context) {
                piece.push_str(&format!("{}-{}-{}\n", chunk.path, chunk.start_line as usize + c, clip(l)));
            }
            if context > 0 {
                piece.push_str("--\n");
            }
            if out.len() + piece.len() > budget {
                cut = true;
                continue;
            }
            out.push_str(&piece);
            results.push(json!({ "path": chunk.path, "line": n, "text": line }));
        }
        true
    };
    let scanned = store.scan(&f, grams.as_deref(), &mut each);
    if let Err(e) = scanned {
        return ToolReply::error(format!("grep: {e}"));
    }
    let stopped = timed_out.then(|| {
        format!(
            "[stopped after {:.1} s: {} has no literal of 3 characters to narrow by, so every chunk is read; \
             narrow with path_prefix or language, or add a literal]\n",
            SCAN_DEADLINE.as_secs_f64(),
            super::quoted(pattern)
        )
    });
    if total == 0 {
        let why =
            explain_empty(&project, &store, &f, &format!("No lines match {shown}.", shown = super::quoted(pattern)));
        let why = stopped.map_or(why.clone(), |s| format!("{s}{why}"));
        return ToolReply::ok(why.clone(), json!({ "results": [], "total": 0, "reason": why, "complete": !timed_out }));
    }
    let shown = results.len();
    let mut text =
        format!("{total} matching line(s); showing {}-{}\n{out}", (offset + 1).min(offset + shown), offset + shown);
    if offset + shown < total {
        let why = if cut {
            format!("cut at max_tokens={}", budget / format::CHARS_PER_TOKEN)
        } else {
            "head_limit".to_owned()
        };
        text.push_str(&format!("[{} more ({why}): offset={}]\n", total - offset - shown, offset + shown));
    }
    if let Some(s) = stopped {
        text.push_str(&s);
    }
    ToolReply::ok(text.trim_end(), json!({ "total": total, "results": results, "complete": !timed_out }))
}

/// A pattern the trigram index cannot narrow reads chunks for at most this long.
const SCAN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(3);

/// Very long lines (minified code, data) are shown clipped.
fn clip(line: &str) -> &str {
    if line.len() > 300 { &line[..line.floor_char_boundary(300)] } else { line }
}
