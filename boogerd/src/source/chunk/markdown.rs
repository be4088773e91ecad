//! Markdown: one chunk per section (ATX headers outside code fences); a section larger than
//! [`TARGET`] is split at paragraphs, then sentences, each piece starting with up to
//! [`OVERLAP`] bytes of the one before, and every piece keeps its section's title as `name`
//! and the outer titles as `parent`.

use booger_proto::tools::ChunkKind;

use super::{Chunk, Lines, text};

pub(crate) const TARGET: usize = 1_500;
pub(crate) const OVERLAP: usize = 200;

struct Section {
    title: String,
    parents: Vec<String>,
    start: usize,
    end: usize,
}

pub(crate) fn chunk(bytes: &[u8]) -> Vec<Chunk> {
    let lines = Lines::new(bytes);
    let mut out = Vec::new();
    for s in sections(bytes) {
        let parent = (!s.parents.is_empty()).then(|| s.parents.join(" > "));
        for (piece_start, start, end) in pieces(bytes, s.start, s.end) {
            let content = text(bytes, start, end);
            if content.trim().is_empty() {
                continue;
            }
            out.push(Chunk {
                kind: ChunkKind::Section,
                name: s.title.clone(),
                signature: s.title.clone(),
                parent: parent.clone(),
                doc: None,
                content,
                start_line: lines.line_of(piece_start),
                end_line: lines.line_of(end.saturating_sub(1).max(piece_start)),
                start_byte: piece_start,
                end_byte: end,
            });
        }
    }
    out
}

fn sections(bytes: &[u8]) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut stack: Vec<(usize, String)> = Vec::new(); // (level, title)
    let mut fence: Option<&[u8]> = None;
    let mut start = 0;
    let mut pos = 0;
    let mut current = (String::new(), Vec::new());
    while pos < bytes.len() {
        let end = bytes[pos..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| pos + i + 1);
        let line = &bytes[pos..end];
        let trimmed = trim_ascii(line);
        if trimmed.starts_with(b"```") || trimmed.starts_with(b"~~~") {
            let marker = &trimmed[..3];
            fence = match fence {
                Some(m) if m == marker => None,
                Some(m) => Some(m),
                None => Some(marker),
            };
        } else if fence.is_none()
            && let Some((level, title)) = heading(line)
        {
            if pos > start {
                out.push(Section { title: current.0.clone(), parents: current.1.clone(), start, end: pos });
            }
            while stack.last().is_some_and(|(l, _)| *l >= level) {
                stack.pop();
            }
            current = (title.clone(), stack.iter().map(|(_, t)| t.clone()).collect());
            stack.push((level, title));
            start = pos;
        }
        pos = end;
    }
    if bytes.len() > start {
        out.push(Section { title: current.0, parents: current.1, start, end: bytes.len() });
    }
    out
}

/// `## Title ##` → (2, "Title").
fn heading(line: &[u8]) -> Option<(usize, String)> {
    let s = std::str::from_utf8(line).ok()?.trim_end();
    let s = s.strip_prefix("   ").or_else(|| s.strip_prefix("  ")).or_else(|| s.strip_prefix(' ')).unwrap_or(s);
    let level = s.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &s[level..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    Some((level, rest.trim().trim_end_matches('#').trim().to_owned()))
}

fn trim_ascii(s: &[u8]) -> &[u8] {
    let a = s.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(s.len());
    let b = s.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(a, |i| i + 1);
    &s[a..b]
}

/// Pieces of `[start, end)`: (piece start, content start including overlap, end).
fn pieces(bytes: &[u8], start: usize, end: usize) -> Vec<(usize, usize, usize)> {
    if end - start <= TARGET {
        return vec![(start, start, end)];
    }
    // Units: paragraphs, and sentences of paragraphs that are too long alone.
    let mut units = Vec::new();
    for (a, b) in split_at(bytes, start, end, paragraph_break) {
        if b - a <= TARGET {
            units.push((a, b));
            continue;
        }
        for (sa, sb) in split_at(bytes, a, b, sentence_break) {
            // A "sentence" longer than the target (code, a table) is cut at line ends or bytes.
            let mut s = sa;
            while sb - s > TARGET {
                let window = &bytes[s..s + TARGET];
                let cut =
                    window.iter().rposition(|&c| c == b'\n').filter(|&i| i > TARGET / 2).map_or(TARGET, |i| i + 1);
                let cut = floor_boundary(bytes, s + cut);
                units.push((s, cut));
                s = cut;
            }
            units.push((s, sb));
        }
    }
    // Pack units up to the target.
    let mut out = Vec::new();
    let mut cur: Option<(usize, usize)> = None;
    for (a, b) in units {
        cur = match cur {
            Some((ca, _)) if b - ca <= TARGET => Some((ca, b)),
            Some(done) => {
                out.push(done);
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    out.extend(cur);
    out.into_iter()
        .enumerate()
        .map(|(i, (a, b))| {
            if i == 0 {
                return (a, a, b);
            }
            // Overlap: back up to OVERLAP bytes, starting at a word boundary.
            let mut o = floor_boundary(bytes, a.saturating_sub(OVERLAP).max(start));
            while o < a && !bytes[o].is_ascii_whitespace() {
                o += 1;
            }
            (a, o, b)
        })
        .collect()
}

/// `i`, moved back to the first byte of the character it is in.
pub(super) fn floor_boundary(bytes: &[u8], mut i: usize) -> usize {
    while i > 0 && i < bytes.len() && (bytes[i] & 0xC0) == 0x80 {
        i -= 1;
    }
    i
}

/// Splits `[start, end)` after each break position the predicate finds.
fn split_at(bytes: &[u8], start: usize, end: usize, is_break: fn(&[u8], usize) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut a = start;
    for i in start..end {
        if i + 1 < end && is_break(bytes, i) {
            out.push((a, i + 1));
            a = i + 1;
        }
    }
    if a < end {
        out.push((a, end));
    }
    out
}

/// A blank line ends at `i` (the newline of an empty line).
fn paragraph_break(bytes: &[u8], i: usize) -> bool {
    bytes[i] == b'\n' && i > 0 && bytes[i - 1] == b'\n'
}

/// `.`, `!` or `?` followed by whitespace.
fn sentence_break(bytes: &[u8], i: usize) -> bool {
    matches!(bytes[i], b' ' | b'\n') && i > 0 && matches!(bytes[i - 1], b'.' | b'!' | b'?')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_by_headers_and_keeps_titles() {
        let md =
            "intro text\n\n# Guide\nhello\n## Install\nrun it\n```\n# not a header\n```\n## Use\nuse it\n# Other\nx\n";
        let c = chunk(md.as_bytes());
        let names: Vec<(&str, Option<&str>)> = c.iter().map(|c| (c.name.as_str(), c.parent.as_deref())).collect();
        assert_eq!(
            names,
            [("", None), ("Guide", None), ("Install", Some("Guide")), ("Use", Some("Guide")), ("Other", None)]
        );
        assert!(c[2].content.contains("# not a header"));
        assert_eq!((c[2].start_line, c[2].end_line), (5, 9));
    }

    #[test]
    fn long_sections_split_at_paragraphs_with_overlap() {
        let para = |i: usize| format!("Paragraph {i} says something. {}\n\n", "word ".repeat(100));
        let body: String = (0..8).map(para).collect();
        let md = format!("# Big\n{body}");
        let c = chunk(md.as_bytes());
        assert!(c.len() >= 3, "{}", c.len());
        for w in c.windows(2) {
            assert_eq!(w[1].name, "Big");
            assert!(w[1].content.len() <= TARGET + OVERLAP + 1, "{}", w[1].content.len());
            // Each later piece begins with the tail of the one before.
            let head: String = w[1].content.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
            assert!(w[0].content.contains(&head), "no overlap: {head:?}");
        }
        // Pieces (without overlap) tile the section.
        assert_eq!(c.last().unwrap().end_byte, md.len());
    }

    #[test]
    fn a_giant_sentence_is_cut_by_size() {
        let md = format!("# T\n{}", "x".repeat(5_000));
        let c = chunk(md.as_bytes());
        assert!(
            c.len() >= 4 && c.iter().all(|c| c.content.len() <= TARGET + OVERLAP),
            "{:?}",
            c.iter().map(|c| c.content.len()).collect::<Vec<_>>()
        );
    }
}
