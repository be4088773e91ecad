//! `grep`: regex or literal search over the indexed text, line by line.

use booger_proto::answers;
use booger_proto::tools::args;
use booger_proto::wire::ToolReply;

use super::call::{Call, Outcome, ToolError, answer, failed, filters, quoted};
use crate::base::hints;
use crate::domain::search::format;
use crate::domain::search::lines::LineMatcher;
use crate::store::scan::{Keep, Scanned};

pub(super) fn run(call: &Call, a: args::Grep) -> Outcome {
    let pattern = a.pattern.as_str();
    let (source, matcher) = matcher(&a)?;
    #[cfg(not(feature = "team"))]
    if a.team {
        return Err(super::without_team::refused("grep"));
    }
    let snap = call.snapshot(a.on.project.as_deref())?;
    let f = filters(&a.filters);
    let mut lines = paging(&a)?;
    // The regex's literals narrow the chunks to read through the trigram index; a pattern
    // without a literal of three characters reads every chunk. Either way reading stops after
    // SCAN_DEADLINE (a common literal in a huge tree leaves many chunks too).
    let grams = crate::domain::search::grams::required(&source, a.case_insensitive);
    let started = std::time::Instant::now();
    let mut timed_out = false;
    // Whether a chunk is worth reading line by line: asked of every chunk read, before its
    // text is copied out of SQLite; also where the deadline is checked.
    let keep = |content: &str| {
        if started.elapsed() > SCAN_DEADLINE {
            timed_out = true;
            return Keep::Stop;
        }
        if matcher.may_match(content) { Keep::Yes } else { Keep::No }
    };
    let mut each = |chunk: &Scanned, content: &str| lines.take(chunk, own_text(chunk, content), &matcher);
    snap.store.scan(&f, grams.as_deref(), keep, &mut each).map_err(|e| failed("grep", e))?;
    #[cfg_attr(not(feature = "team"), allow(unused_mut))]
    let mut unreached: Option<String> = None;
    #[cfg(feature = "team")]
    if a.team && !timed_out {
        let narrow = crate::domain::search::grams::required_in_team(&source, a.case_insensitive);
        match team_lines(call, &f, &snap.project.name, narrow.as_ref(), started + SCAN_DEADLINE, &matcher, &mut lines)?
        {
            Ok(all) => timed_out = !all,
            Err(note) => unreached = Some(note),
        }
    }
    if lines.total == 0
        && let Some(unreached) = &unreached
    {
        // Asked of the team index, which was not read: no answer, not "no matches".
        return Err(ToolError::Refused(format!("grep: {}; nothing local matched either", unreached.trim())));
    }
    let stopped = timed_out.then(|| stopped_early(pattern, grams.is_some()));
    let stopped = match (stopped, unreached) {
        (Some(s), Some(u)) => Some(format!("{s}{u}")),
        (s, u) => s.or(u),
    };
    if lines.total == 0 {
        let why = call.explain_empty(&snap.project, &snap.store, &f, &format!("No lines match {}.", quoted(pattern)));
        let why = stopped.map_or(why.clone(), |s| format!("{s}{why}"));
        let data = answers::Grep {
            project: Some(snap.project.name.clone()),
            results: Some(Vec::new()),
            reason: Some(why.clone()),
            complete: !timed_out,
            ..Default::default()
        };
        return Ok(answer(why, &data));
    }
    Ok(lines.answer(Some(&snap.project.name), stopped, !timed_out))
}

/// The call's pattern as a regular expression (`literal`: escaped), and its line matcher.
pub(super) fn matcher(a: &args::Grep) -> Result<(String, LineMatcher), ToolError> {
    let pattern = a.pattern.as_str();
    let source = if a.literal { regex::escape(pattern) } else { pattern.to_owned() };
    let matcher = LineMatcher::new(&source, a.case_insensitive).map_err(|e| {
        ToolError::Refused(format!(
            "grep: invalid regex {}: {}. Escape special characters, or pass literal=true to match the text as is",
            quoted(pattern),
            e.to_string().lines().last().unwrap_or_default().trim(),
        ))
    })?;
    Ok((source, matcher))
}

/// The page of matching lines the call asks for: from its offset or cursor, its head_limit
/// and budget, with its context lines.
pub(super) fn paging(a: &args::Grep) -> Result<Lines, ToolError> {
    // A cursor is the offset of the next match: the same paging, as the other tools spell it.
    let offset = match a.paging.cursor.as_deref() {
        Some(c) => c.parse::<usize>().map_err(|_| {
            ToolError::Refused(format!("grep: cursor {c:?} is not one grep returned; drop it to start over"))
        })?,
        None => a.paging.offset.unwrap_or(0),
    };
    let budget = a.paging.max_tokens.unwrap_or(format::DEFAULT_MAX_TOKENS) * format::CHARS_PER_TOKEN;
    Ok(Lines::new(offset, a.paging.head_limit.unwrap_or(50), budget, a.context))
}

/// The team index's other repositories' lines, narrowed by the same trigrams, into `lines`:
/// whether all were read before `deadline`, or the note that the team index was out of reach.
#[cfg(feature = "team")]
fn team_lines(
    call: &Call,
    f: &crate::store::search::Filters,
    project: &str,
    narrow: Option<&crate::store::team::TeamGrams>,
    deadline: std::time::Instant,
    matcher: &LineMatcher,
    lines: &mut Lines,
) -> Result<Result<bool, String>, ToolError> {
    let link = super::team::link(call, "grep")?;
    let skip = [project.to_owned()];
    let tf = super::team::filters(f, &skip);
    let read = link.with(|t| {
        t.grep_chunks(narrow, &tf, deadline, |row| {
            lines.take_team(&row, matcher);
            true
        })
    });
    Ok(read.map_err(|e| super::team::unreachable_note(&e.to_string())))
}

/// The matching lines of a scan: all counted, one page kept within its budget.
pub(super) struct Lines {
    offset: usize,
    limit: usize,
    budget: usize,
    context: usize,
    pub total: usize,
    out: String,
    results: Vec<answers::Line>,
    cut: bool,
    /// The last line counted, as (path, line): a line two chunks share is counted once.
    last: (String, usize),
}

impl Lines {
    fn new(offset: usize, limit: usize, budget: usize, context: usize) -> Self {
        let (out, results, last) = (String::new(), Vec::new(), (String::new(), 0));
        Self { offset, limit, budget, context, total: 0, out, results, cut: false, last }
    }

    /// Counts the lines of one chunk that match, keeping those on the page.
    pub(super) fn take(&mut self, chunk: &Scanned, content: &str, matcher: &LineMatcher) -> bool {
        if self.last.0 != chunk.path {
            self.last = (chunk.path.clone(), 0);
        }
        // The chunk's lines, split only if one is shown with context.
        let mut split: Option<Vec<&str>> = None;
        matcher.each_line(content, |k, line| {
            let n = chunk.start_line as usize + k;
            if n <= self.last.1 {
                return true;
            }
            self.last.1 = n;
            let line = line.strip_suffix('\r').unwrap_or(line); // shown without a CRLF's CR
            self.total += 1;
            if self.total <= self.offset || self.results.len() >= self.limit || self.cut {
                return true;
            }
            let mut piece = String::new();
            let around = |c: usize, l: &str| format!("{}-{}-{}\n", chunk.path, chunk.start_line as usize + c, clip(l));
            if self.context > 0 {
                let lines = split.get_or_insert_with(|| content.lines().collect());
                for (c, l) in lines.iter().enumerate().take(k).skip(k.saturating_sub(self.context)) {
                    piece.push_str(&around(c, l));
                }
                piece.push_str(&format!("{}:{n}:{}\n", chunk.path, clip(line)));
                for (c, l) in lines.iter().enumerate().skip(k + 1).take(self.context) {
                    piece.push_str(&around(c, l));
                }
                piece.push_str("--\n");
            } else {
                piece.push_str(&format!("{}:{n}:{}\n", chunk.path, clip(line)));
            }
            if self.out.len() + piece.len() > self.budget {
                self.cut = true;
                return true;
            }
            self.out.push_str(&piece);
            self.results.push(answers::Line { path: chunk.path.clone(), line: n as u64, text: Some(line.to_owned()) });
            true
        });
        true
    }

    /// Counts the lines of a team chunk that match (named repository@commit:path).
    #[cfg(feature = "team")]
    pub(super) fn take_team(&mut self, row: &crate::store::team::TeamHit, matcher: &LineMatcher) {
        if !matcher.may_match(&row.chunk.content) {
            return;
        }
        let chunk = Scanned {
            id: 0,
            path: super::team::label(row),
            kind: row.chunk.kind,
            start_line: row.chunk.start_line,
            bytes: row.chunk.end_byte - row.chunk.start_byte,
        };
        self.take(&chunk, own_text(&chunk, &row.chunk.content), matcher);
    }

    /// The answer: the page's lines, and how to get the rest. `project`: the one they are of
    /// (none on the team server: each line names its repository).
    pub(super) fn answer(self, project: Option<&str>, stopped: Option<String>, scanned_all: bool) -> ToolReply {
        let Self { offset, total, out, results, cut, budget, .. } = self;
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
        let data = answers::Grep {
            project: project.map(str::to_owned),
            total: total as u64,
            results: Some(results),
            // Complete: every match is in this answer (a page with a cursor after it is not).
            complete: scanned_all && cursor.is_none(),
            cursor,
            ..Default::default()
        };
        answer(text.trim_end(), &data)
    }
}

/// What an answer says when the scan stopped at [`SCAN_DEADLINE`]: why so much was read
/// (`narrowed`: the trigram index narrowed it, and too little), and how to narrow it.
fn stopped_early(pattern: &str, narrowed: bool) -> String {
    let why = if narrowed {
        "leaves too many chunks to read"
    } else {
        "has no literal of 3 characters to narrow by, so every chunk is read"
    };
    format!(
        "[stopped after {:.1} s: {} {why}; narrow with path_prefix or language, or a longer literal]\n",
        SCAN_DEADLINE.as_secs_f64(),
        quoted(pattern)
    )
}

/// A pattern the trigram index cannot narrow reads chunks for at most this long.
const SCAN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(3);

/// The chunk's text from its own first line on (see [`crate::store::grams::own_start`]).
fn own_text<'a>(chunk: &Scanned, content: &'a str) -> &'a str {
    &content[crate::store::grams::own_start(chunk.kind, content, chunk.bytes)..]
}

/// Very long lines (minified code, data) are shown clipped.
fn clip(line: &str) -> &str {
    if line.len() > 300 { &line[..line.floor_char_boundary(300)] } else { line }
}
