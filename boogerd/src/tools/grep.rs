//! `grep`: regex or literal search over the indexed text, line by line.

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use super::{Session, explain_empty, filters, int, project_store};
use crate::domain::search::format;
use crate::domain::search::lines::LineMatcher;
use crate::store::scan::Keep;
use crate::{base::hints, engine::Daemon};

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> ToolReply {
    let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or_default();
    let literal = args.get("literal").and_then(Value::as_bool).unwrap_or(false);
    let source = if literal { regex::escape(pattern) } else { pattern.to_owned() };
    let case_insensitive = args.get("case_insensitive").and_then(Value::as_bool).unwrap_or(false);
    let matcher = match LineMatcher::new(&source, case_insensitive) {
        Ok(m) => m,
        Err(e) => {
            return ToolReply::error(format!(
                "grep: invalid regex {shown}: {}. Escape special characters, or pass literal=true to match the text as is",
                e.to_string().lines().last().unwrap_or_default().trim(),
                shown = super::quoted(pattern)
            ));
        }
    };
    let (project, store) = match project_store(daemon, session, args) {
        Ok(ps) => ps,
        Err(reply) => return reply,
    };
    let f = filters(args);
    let context = int(args, "context", 0);
    // A cursor is the offset of the next match: the same paging, as the other tools spell it.
    let offset = match args.get("cursor").and_then(Value::as_str) {
        Some(c) => match c.parse::<usize>() {
            Ok(n) => n,
            Err(_) => {
                return ToolReply::error(format!("grep: cursor {c:?} is not one grep returned; drop it to start over"));
            }
        },
        None => int(args, "offset", 0),
    };
    let limit = int(args, "head_limit", 50);
    let budget = int(args, "max_tokens", format::DEFAULT_MAX_TOKENS) * format::CHARS_PER_TOKEN;
    let mut total = 0usize;
    let mut out = String::new();
    let mut results = Vec::new();
    let mut cut = false;
    // The regex's literals narrow the chunks to read through the trigram index; a pattern
    // without a literal of three characters reads every chunk. Either way reading stops after
    // SCAN_DEADLINE (a common literal in a huge tree leaves many chunks too).
    let grams = crate::domain::search::grams::required(&source, case_insensitive);
    let started = std::time::Instant::now();
    let mut timed_out = false;
    // The last line counted, as (path, line): a line two chunks share is counted once.
    let mut last: (String, usize) = (String::new(), 0);
    let mut each = |chunk: &crate::store::scan::Scanned, content: &str| {
        let content = own_text(chunk, content);
        if last.0 != chunk.path {
            last = (chunk.path.clone(), 0);
        }
        // The chunk's lines, split only if one is shown with context.
        let mut lines: Option<Vec<&str>> = None;
        matcher.each_line(content, |k, line| {
            let n = chunk.start_line as usize + k;
            if n <= last.1 {
                return true;
            }
            last.1 = n;
            let line = line.strip_suffix('\r').unwrap_or(line); // shown without a CRLF's CR
            total += 1;
            if total <= offset || results.len() >= limit || cut {
                return true;
            }
            let mut piece = String::new();
            let around = |c: usize, l: &str| format!("{}-{}-{}\n", chunk.path, chunk.start_line as usize + c, clip(l));
            if context > 0 {
                let lines = lines.get_or_insert_with(|| content.lines().collect());
                for (c, l) in lines.iter().enumerate().take(k).skip(k.saturating_sub(context)) {
                    piece.push_str(&around(c, l));
                }
                piece.push_str(&format!("{}:{n}:{}\n", chunk.path, clip(line)));
                for (c, l) in lines.iter().enumerate().skip(k + 1).take(context) {
                    piece.push_str(&around(c, l));
                }
                piece.push_str("--\n");
            } else {
                piece.push_str(&format!("{}:{n}:{}\n", chunk.path, clip(line)));
            }
            if out.len() + piece.len() > budget {
                cut = true;
                return true;
            }
            out.push_str(&piece);
            results.push(json!({ "path": chunk.path, "line": n, "text": line }));
            true
        });
        true
    };
    // Whether a chunk is worth reading line by line: asked of every chunk read, before its
    // text is copied out of SQLite; also where the deadline is checked.
    let keep = |content: &str| {
        if started.elapsed() > SCAN_DEADLINE {
            timed_out = true;
            return Keep::Stop;
        }
        if matcher.may_match(content) { Keep::Yes } else { Keep::No }
    };
    let scanned = store.scan(&f, grams.as_deref(), keep, &mut each);
    if let Err(e) = scanned {
        return ToolReply::error(format!("grep: {e}"));
    }
    let stopped = timed_out.then(|| {
        let why = match &grams {
            None => "has no literal of 3 characters to narrow by, so every chunk is read",
            Some(_) => "leaves too many chunks to read",
        };
        format!(
            "[stopped after {:.1} s: {} {why}; narrow with path_prefix or language, or a longer literal]\n",
            SCAN_DEADLINE.as_secs_f64(),
            super::quoted(pattern)
        )
    });
    if total == 0 {
        let why =
            explain_empty(&project, &store, &f, &format!("No lines match {shown}.", shown = super::quoted(pattern)));
        let why = stopped.map_or(why.clone(), |s| format!("{s}{why}"));
        let data = json!({ "project": project.name, "results": [], "total": 0, "reason": why, "complete": !timed_out, "cursor": null });
        return ToolReply::ok(why.clone(), data);
    }
    let shown = results.len();
    let mut text =
        format!("{total} matching line(s); showing {}-{}\n{out}", (offset + 1).min(offset + shown), offset + shown);
    if offset + shown < total {
        let why = if cut {
            format!("cut at {}", hints::arg("max_tokens", budget / format::CHARS_PER_TOKEN))
        } else {
            hints::name("head_limit")
        };
        text.push_str(&format!(
            "[{} more ({why}): {}]\n",
            total - offset - shown,
            hints::arg("offset", offset + shown)
        ));
    }
    if let Some(s) = stopped {
        text.push_str(&s);
    }
    let cursor = (offset + shown < total).then(|| (offset + shown).to_string());
    let data = json!({ "project": project.name, "total": total, "results": results, "complete": !timed_out, "cursor": cursor });
    ToolReply::ok(text.trim_end(), data)
}

/// A pattern the trigram index cannot narrow reads chunks for at most this long.
const SCAN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(3);

/// The chunk's text from its own first line on (see [`crate::store::grams::own_start`]).
fn own_text<'a>(chunk: &crate::store::scan::Scanned, content: &'a str) -> &'a str {
    &content[crate::store::grams::own_start(chunk.kind, content, chunk.bytes)..]
}

/// Very long lines (minified code, data) are shown clipped.
fn clip(line: &str) -> &str {
    if line.len() > 300 { &line[..line.floor_char_boundary(300)] } else { line }
}
