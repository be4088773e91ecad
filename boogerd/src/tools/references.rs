//! `references`: every line that mentions a symbol, classified.
//!
//! Candidates come from the full-text index (the symbol's words), then each line is checked
//! with a word-boundary match and classified by what surrounds the name: a definition (the
//! chunk named by it, on its declaration line), an import, a call (`name(`), a type use
//! (`: Name`, `-> Name`, `<Name>`, `impl Name`, `extends Name`) or a plain reference.

use booger_proto::answers::{self, Found, Mention, MentionClass, MentionedIn};
use booger_proto::tools::ChunkKind;
use booger_proto::tools::args;
use booger_proto::wire::ToolReply;

use super::call::{Call, Outcome, ToolError, answer, failed, page, quoted};
use crate::base::hints;
use crate::domain::search::format::{self, Cursor, Page};
use crate::store::search::{Candidate, Filters};

const CANDIDATES: usize = 5_000;

pub(super) fn run(call: &Call, a: args::References) -> Outcome {
    let name = name_of(&a.symbol)?;
    let snap = call.snapshot(a.on.project.as_deref())?;
    let f = Filters { language: a.language, kind: None, path: a.path_prefix.clone() };
    let candidates = snap
        .store
        .fts_matches(name, &f, CANDIDATES, |_| true, |_, text| find_word(text, name).is_some())
        .map_err(|e| failed("references", e))?;
    match mentioned(&candidates, &a)? {
        Some(reply) => Ok(reply),
        None => {
            let symbol = a.symbol.trim();
            let why = call.explain_empty(&snap.project, &snap.store, &f, &format!("No matches for symbol '{symbol}'."));
            let data =
                answers::References { results: Some(Vec::new()), reason: Some(why.clone()), ..Default::default() };
            Ok(answer(why, &data))
        }
    }
}

/// The name a `symbol` argument looks for: `Class.method` / `mod::item` is its last part, what
/// appears in code. `Err` unless that is one identifier.
pub(super) fn name_of(symbol: &str) -> Result<&str, ToolError> {
    let symbol = symbol.trim();
    let name = symbol.rsplit(['.', ':']).next().unwrap_or(symbol);
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        return Err(ToolError::Refused(format!(
            "references: {} is not an identifier; give a name such as parse_config or Server.start",
            quoted(symbol)
        )));
    }
    Ok(name)
}

/// The answer of the mentions of the call's symbol in `candidates` (chunks and their text),
/// in its scope, output mode and page (the team server's too); `None` when there is none.
pub(super) fn mentioned(
    candidates: &[(Candidate, String)],
    a: &args::References,
) -> Result<Option<ToolReply>, ToolError> {
    let symbol = a.symbol.trim();
    let mut mentions = mentions_in(candidates, name_of(symbol)?);
    if let Some(scope) = a.scope.as_deref() {
        mentions.retain(|m| m.class.name() == scope);
    }
    // Definitions first, then by place.
    mentions.sort_by(|a, b| {
        let definition = |m: &Mention| m.class != MentionClass::Definition;
        definition(a).cmp(&definition(b)).then(a.path.cmp(&b.path)).then(a.line.cmp(&b.line))
    });
    mentions.dedup_by(|a, b| a.path == b.path && a.line == b.line);
    if mentions.is_empty() {
        return Ok(None);
    }
    let mut counts = answers::Counts::new();
    for m in &mentions {
        *counts.entry(m.class.name().to_owned()).or_insert(0) += 1;
    }
    let summary = counts.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
    Ok(Some(match a.output_mode {
        Some(args::OutputMode::Count) => answer(
            format!("{} mention(s) of {symbol}: {summary}", mentions.len()),
            &answers::References { total: Some(mentions.len() as u64), by_class: Some(counts), ..Default::default() },
        ),
        Some(args::OutputMode::FilesWithMatches) => by_file(&mentions),
        _ => listed(&mentions, symbol, &summary, page(&a.paging, None, 50, 0)?),
    }))
}

/// Every line of `candidates` that names `name` as a whole word, classified.
fn mentions_in(candidates: &[(Candidate, String)], name: &str) -> Vec<Mention> {
    let mut mentions = Vec::new();
    for (chunk, content) in candidates {
        for (k, line) in content.lines().enumerate() {
            if let Some(at) = find_word(line, name) {
                mentions.push(Mention {
                    path: chunk.path.clone(),
                    line: u64::from(chunk.start_line) + k as u64,
                    class: classify(chunk, k, line, at, name),
                    within: within(chunk),
                    text: Some(line.trim().chars().take(160).collect()),
                });
            }
        }
    }
    mentions
}

/// The files mentioning the symbol, with how often, in the order of their first mention.
fn by_file(mentions: &[Mention]) -> ToolReply {
    let mut files: Vec<MentionedIn> = Vec::new();
    for m in mentions {
        match files.iter_mut().find(|f| f.path == m.path) {
            Some(f) => f.mentions += 1,
            None => files.push(MentionedIn { path: m.path.clone(), mentions: 1 }),
        }
    }
    let text = files.iter().map(|f| format!("{} ({})", f.path, f.mentions)).collect::<Vec<_>>().join("\n");
    answer(
        text,
        &answers::References { results: Some(files.into_iter().map(Found::File).collect()), ..Default::default() },
    )
}

/// A page of the mentions, one line each, within the page's budget.
fn listed(mentions: &[Mention], symbol: &str, summary: &str, page: Page) -> ToolReply {
    let budget = page.max_tokens * format::CHARS_PER_TOKEN;
    let (start, _, end) = page.span(mentions.len());
    let mut text =
        format!("{} mention(s) of {symbol} ({summary}); showing {}-{end}\n", mentions.len(), (start + 1).min(end));
    let mut shown = Vec::new();
    let mut next = None;
    for (i, m) in mentions.iter().enumerate().take(end).skip(start) {
        let within = if m.within.is_empty() { String::new() } else { format!(" in {}", m.within) };
        let line = format!("{}:{} [{}]{within}: {}\n", m.path, m.line, m.class.name(), m.text.as_deref().unwrap_or(""));
        if text.len() + line.len() > budget {
            next = Some(Cursor { index: i, line: 0, end });
            break;
        }
        text.push_str(&line);
        shown.push(Found::Line(m.clone()));
    }
    if let Some(c) = next {
        text.push_str(&format!("[cut at {}: {}]\n", hints::name("max_tokens"), hints::continue_with(&c.encode())));
    } else if end < mentions.len() {
        text.push_str(&format!("[{} more: {}]\n", mentions.len() - end, hints::arg("offset", end)));
    }
    let data = answers::References {
        total: Some(mentions.len() as u64),
        results: Some(shown),
        cursor: next.map(|c| c.encode()),
        ..Default::default()
    };
    answer(text.trim_end(), &data)
}

pub(super) use crate::base::text::find_word;

fn within(c: &Candidate) -> String {
    match (c.kind.as_str(), &c.parent) {
        ("function" | "method" | "test" | "property", Some(p)) if !p.is_empty() => format!("{p}.{}", c.name),
        ("function" | "method" | "class" | "struct" | "impl" | "trait" | "interface" | "enum" | "mod", _) => {
            c.name.clone()
        }
        _ => String::new(),
    }
}

fn classify(chunk: &Candidate, line_in_chunk: usize, line: &str, at: usize, name: &str) -> MentionClass {
    let trimmed = line.trim_start();
    if chunk.kind == ChunkKind::Import
        || [
            "import ",
            "from ",
            "use ",
            "#include",
            "extern crate ",
            "using ",
            "require ",
            "require_relative ",
            "alias ",
        ]
        .iter()
        .any(|k| trimmed.starts_with(k))
        || line.contains("require(")
    {
        return MentionClass::Import;
    }
    let before = line[..at].trim_end();
    let after = line[at + name.len()..].trim_start();
    let decl_words = [
        "fn",
        "def",
        "class",
        "struct",
        "enum",
        "trait",
        "type",
        "interface",
        "func",
        "union",
        "const",
        "static",
        "let",
        "var",
        "macro_rules!",
        "mod",
        "impl",
        // Java, Kotlin, C#, Ruby, PHP, Swift, Scala, Lua, Elixir.
        "fun",
        "function",
        "object",
        "record",
        "protocol",
        "extension",
        "module",
        "defmodule",
        "defp",
        "val",
        "namespace",
    ];
    let last_word = before.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("");
    let is_decl_line = decl_words.contains(&last_word)
        || (chunk.name == name && line_in_chunk <= 3 && before.ends_with(['*', ' ', '\t']) && after.starts_with('('));
    if chunk.name == name && is_decl_line {
        return MentionClass::Definition;
    }
    if decl_words.contains(&last_word) && last_word != "impl" {
        return MentionClass::Definition;
    }
    if after.starts_with('(') || after.starts_with("!(") || after.starts_with("::<") {
        return MentionClass::Call;
    }
    if before.ends_with(':') && !before.ends_with("::")
        || before.ends_with("->")
        || before.ends_with('<')
        || after.starts_with('<')
        || ["impl", "dyn", "extends", "implements", "new", "&", "&mut", "as", "instanceof"].contains(&last_word)
    {
        return MentionClass::Type;
    }
    MentionClass::Reference
}

#[cfg(test)]
mod tests {
    use super::find_word;

    #[test]
    fn whole_words_only() {
        assert_eq!(find_word("x = parse_config(y)", "parse_config"), Some(4));
        assert_eq!(find_word("reparse_config(y); parse_config", "parse_config"), Some(19));
        assert_eq!(find_word("parse_configs", "parse_config"), None);
        assert_eq!(find_word("é parse", "parse"), Some(3));
    }
}
