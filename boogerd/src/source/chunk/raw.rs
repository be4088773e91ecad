//! Line windows: for text without a grammar, oversized files, and files that failed to parse.

use booger_proto::tools::ChunkKind;

use super::{Chunk, Lines, text};

/// Window size for ordinary text.
const WINDOW_LINES: u32 = 60;
const WINDOW_BYTES: usize = 4_000;
/// Block size for files over the size limit: fixed intervals, no parsing.
pub(crate) const LARGE_FILE_BLOCK: usize = 16 * 1024;

/// Windows of up to 60 lines / 4 KB, cut at line ends; whitespace-only windows are dropped.
pub(crate) fn windows(bytes: &[u8]) -> Vec<Chunk> {
    cut(bytes, WINDOW_BYTES, WINDOW_LINES)
}

/// Fixed-size blocks of about `size` bytes, cut at line ends when a line end is near.
pub(crate) fn blocks(bytes: &[u8], size: usize) -> Vec<Chunk> {
    cut(bytes, size, u32::MAX)
}

fn cut(bytes: &[u8], max_bytes: usize, max_lines: u32) -> Vec<Chunk> {
    let lines = Lines::new(bytes);
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let mut end = start;
        let mut n = 0;
        while end < bytes.len() && n < max_lines {
            let next = bytes[end..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| end + i + 1);
            if next - start > max_bytes {
                if end == start {
                    // One line longer than the window: cut it (at a character boundary).
                    end = floor_boundary(bytes, start + max_bytes).max(start + 1);
                }
                break;
            }
            end = next;
            n += 1;
        }
        let content = text(bytes, start, end);
        if !content.trim().is_empty() {
            out.push(Chunk {
                kind: ChunkKind::Raw,
                name: String::new(),
                signature: String::new(),
                parent: None,
                doc: None,
                content,
                start_line: lines.line_of(start),
                end_line: lines.line_of(end - 1),
                start_byte: start,
                end_byte: end,
            });
        }
        start = end;
    }
    out
}

fn floor_boundary(bytes: &[u8], mut i: usize) -> usize {
    while i > 0 && i < bytes.len() && (bytes[i] & 0xC0) == 0x80 {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cover_every_line_once() {
        let src: String = (1..=150).map(|i| format!("line {i}\n")).collect();
        let w = windows(src.as_bytes());
        assert_eq!(w.len(), 3);
        assert_eq!((w[0].start_line, w[0].end_line), (1, 60));
        assert_eq!((w[2].start_line, w[2].end_line), (121, 150));
        assert_eq!(w.iter().map(|c| c.content.as_str()).collect::<String>(), src);
    }

    #[test]
    fn long_lines_are_cut_by_bytes() {
        let src = "x".repeat(10_000);
        let w = windows(src.as_bytes());
        assert_eq!(w.len(), 3);
        assert!(w.iter().all(|c| c.content.len() <= 4_000));
        assert_eq!(w.iter().map(|c| c.content.len()).sum::<usize>(), 10_000);
    }

    #[test]
    fn large_file_blocks_are_fixed_size() {
        let src: String = (0..20_000).map(|i| format!("{i:08}\n")).collect(); // 180 KB
        let b = blocks(src.as_bytes(), LARGE_FILE_BLOCK);
        assert!(b.len() >= 10 && b.len() <= 12, "{}", b.len());
        assert_eq!(b.iter().map(|c| c.content.as_str()).collect::<String>(), src);
    }
}
