//! What booger reads from git: `diff --raw -z` entries and `cat-file --batch` blobs, then the
//! symbol comparison of two versions of a file. No panic on any bytes; blobs lie inside the
//! answer; changed symbols lie inside their version.
#![no_main]

use std::path::Path;

use boogerd::domain::git::diff::{parse_batch, parse_raw};
use boogerd::domain::git::symbols::compare;
use boogerd::source::chunk::chunk_file;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else { return };
    let (raw, batch) = rest.split_at(cut as usize * rest.len() / 256);
    let entries = parse_raw(raw);
    let blobs = parse_batch(batch);
    assert!(blobs.values().map(Vec::len).sum::<usize>() <= batch.len());

    // Two versions of the file the first entry names: its blobs, or the answer cut in two.
    let path = entries.first().map_or("a.rs", |e| e.path.as_str());
    let (base, head) = match (
        entries.first().and_then(|e| blobs.get(&e.old_id)),
        entries.first().and_then(|e| blobs.get(&e.new_id)),
    ) {
        (Some(b), Some(h)) => (b.as_slice(), h.as_slice()),
        _ => batch.split_at(batch.len() / 2),
    };
    let (base, head) = (chunk_file(Path::new(path), base, false), chunk_file(Path::new(path), head, false));
    let changes = compare(&base.chunks, &head.chunks);
    let lines = |b: &[boogerd::source::chunk::Chunk]| b.iter().map(|c| c.end_line).max().unwrap_or(0);
    for s in changes.added.iter().chain(changes.modified.iter().map(|m| &m.symbol)) {
        assert!(s.lines[0] <= s.lines[1] && s.lines[1] <= lines(&head.chunks), "{s:?}");
    }
    for s in &changes.removed {
        assert!(s.lines[0] <= s.lines[1] && s.lines[1] <= lines(&base.chunks), "{s:?}");
    }
});
