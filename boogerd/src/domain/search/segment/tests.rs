//! Segments written and read back; damaged ones refused.
use super::*;
use crate::store::search::Candidate;

fn chunk(id: i64, path: &str, name: &str, parent: Option<&str>) -> Candidate {
    Candidate {
        id,
        path: path.to_owned(),
        language: "python".to_owned(),
        kind: booger_proto::tools::ChunkKind::Function,
        name: name.to_owned(),
        signature: String::new(),
        parent: parent.map(str::to_owned),
        start_line: id as u32,
        end_line: id as u32 + 3,
        bytes: 40,
        bm25: 0.0,
    }
}

#[test]
fn a_segment_reads_back_what_was_written() {
    let mut b = Builder::default();
    // A word four times: its count does not fit two bits.
    b.add(&chunk(7, "a.py", "retry", None), "retry retry retry retry upload", "h1");
    b.add(&chunk(9, "a.py", "upload", Some("Client")), "upload blob", "h1");
    for i in 0..300 {
        b.add(&chunk(100 + i, &format!("m/{i:03}.py"), "other", None), "upload", "h2");
    }
    let mut bytes = Vec::new();
    b.write(42, &mut bytes).unwrap();
    let seg = Segment::from_vec(bytes).unwrap();
    assert_eq!((seg.generation, seg.docs, seg.files), (42, 302, 301));
    let retry: Vec<_> = seg.postings("retri").collect();
    assert_eq!(retry, [(0, [1, 4, 0, 0])]);
    let upload: Vec<u32> = seg.postings("upload").map(|(d, _)| d).collect();
    assert_eq!(upload, (0..302).collect::<Vec<u32>>());
    assert_eq!(seg.postings("upload").len(), 302);
    assert_eq!(seg.postings("nothing").len(), 0);
    let c = seg.candidate(1, 2.0);
    assert_eq!((c.id, c.name.as_str(), c.parent.as_deref(), c.path.as_str()), (9, "upload", Some("Client"), "a.py"));
    assert_eq!((seg.candidate(0, 1.0).parent, seg.candidate(301, 1.0).name.as_str()), (None, "other"));
    // Each distinct name or parent once: the 300 chunks named "other" share one.
    assert_eq!(seg.sec(Sec::LabelBytes), b"retryuploadClientother");
    assert_eq!(seg.find_file("m/150.py"), Some(151));
    assert_eq!(seg.file_docs(151), 152..153);
    assert_eq!(seg.key(0), "h1:7:2");
    assert_eq!(seg.language(0), "python");
}

/// A word of a file's path is held by every chunk of the file, once each, beside what the
/// chunk's own text holds: the list reads as if every chunk had its own posting.
#[test]
fn a_path_word_is_held_by_every_chunk_of_its_file() {
    let mut b = Builder::default();
    b.add(&chunk(1, "b.py", "one", None), "retry retry retry retry retry", "h");
    b.add(&chunk(2, "retry/a.py", "two", None), "retry now", "h");
    b.add(&chunk(3, "retry/a.py", "three", None), "other", "h");
    b.add(&chunk(4, "retry/a.py", "four", None), "more", "h");
    b.add(&chunk(5, "retry/c.py", "five", None), "nothing", "h");
    b.add(&chunk(6, "z.py", "six", None), "retry", "h");
    let mut bytes = Vec::new();
    b.write(1, &mut bytes).unwrap();
    let seg = Segment::from_vec(bytes).unwrap();
    let retry: Vec<_> = seg.postings("retri").collect();
    let path = [0, 0, 0, 1];
    assert_eq!(retry, [(0, [0, 5, 0, 0]), (1, [0, 1, 0, 1]), (2, path), (3, path), (4, path), (5, [0, 1, 0, 0])]);
    assert_eq!(seg.postings("retri").len(), 6);
    assert_eq!(seg.postings("py").collect::<Vec<_>>(), (0..6).map(|d| (d, path)).collect::<Vec<_>>());
    assert_eq!(seg.postings("now").collect::<Vec<_>>(), [(1, [0, 1, 0, 0])]);
    // Read whole (`fold`) or one by one, from the start or after a few: the same postings.
    for term in ["retri", "py", "now", "nothing"] {
        let mut one_by_one = Vec::new();
        // A `for` loop reads with `next`.
        for p in seg.postings(term) {
            one_by_one.push(p);
        }
        for after in 0..4 {
            let mut list = seg.postings(term);
            let mut read: Vec<_> = list.by_ref().take(after).collect();
            list.for_each(|p| read.push(p));
            assert_eq!(read, one_by_one, "{term} after {after}");
        }
    }
}

/// A segment whose lists are damaged reads short lists, never a chunk past its own.
#[test]
fn damaged_lists_never_name_a_chunk_past_the_segment() {
    let mut b = Builder::default();
    for i in 0..200 {
        b.add(&chunk(i, &format!("retry/f{:03}.py", i / 4), "retry", None), "retry upload upload", "h");
    }
    let mut clean = Vec::new();
    b.write(1, &mut clean).unwrap();
    let (off, len) = Segment::from_vec(clean.clone()).unwrap().sections[Sec::Postings as usize];
    let mut rng = crate::base::rng::Rng::new(11);
    for _ in 0..300 {
        let mut bytes = clean.clone();
        for _ in 0..1 + rng.below(4) {
            bytes[off + rng.below(len)] = rng.below(256) as u8;
        }
        let seg = Segment::from_vec(bytes).unwrap();
        for term in ["retri", "upload", "py", "f001"] {
            assert!(seg.postings(term).all(|(d, _)| d < seg.docs), "{term}");
        }
    }
}

/// Any bytes of a segment damaged, anywhere past its magic: it is refused at open, or every
/// read answers something, never a panic.
#[test]
fn a_damaged_segment_is_refused_or_read_without_a_panic() {
    let mut b = Builder::default();
    for i in 0..120 {
        // Some files' ids one after another, some not (listed).
        let id = if i % 9 == 0 { 1000 - i } else { i };
        let parent = (i % 4 == 0).then_some("Owner");
        b.add(
            &chunk(id, &format!("src/m{:02}.py", i / 5), ["retry", "upload", ""][(i % 3) as usize], parent),
            "retry upload parse",
            "h",
        );
    }
    let mut clean = Vec::new();
    b.write(1, &mut clean).unwrap();
    let mut rng = crate::base::rng::Rng::new(13);
    for _ in 0..500 {
        let mut bytes = clean.clone();
        for _ in 0..1 + rng.below(8) {
            let at = 8 + rng.below(bytes.len() - 8);
            bytes[at] = rng.below(256) as u8;
        }
        let Ok(seg) = Segment::from_vec(bytes) else { continue };
        for term in ["retri", "upload", "pars", "py", "m03", "nothing"] {
            let _ = seg.postings(term).count();
        }
        for d in 0..seg.docs.min(200) {
            let _ = (seg.doc_id(d), seg.doc_len(d), seg.candidate(d, 1.0));
        }
        for f in 0..(seg.files as usize).min(50) {
            let _ = (seg.file_docs(f), seg.key(f), seg.language(f), seg.find_file(seg.path(f)));
        }
    }
}

/// A build that sets its postings and columns down on disk writes the very bytes of one
/// held in memory.
#[test]
fn a_spilling_build_writes_the_same_segment_as_one_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = crate::base::rng::Rng::new(7);
    let words = ["retry", "upload", "parse", "config", "socket", "buffer", "stream", "handler", "zeta", "alpha"];
    let chunks: Vec<(Candidate, String)> = (0..60_000)
        .map(|i| {
            let text: Vec<String> =
                (0..1 + rng.below(12)).map(|_| format!("{}{}", rng.pick(&words), rng.below(3000))).collect();
            let parent = (i % 3 == 0).then_some("Owner");
            (chunk(i, &format!("d/{:05}.py", i / 7), &format!("f{i}"), parent), text.join(" ") + " upload")
        })
        .collect();
    let build = |mut b: Builder| {
        for (c, text) in &chunks {
            b.add(c, text, "h");
        }
        let runs = b.held()[4];
        let mut bytes = Vec::new();
        b.write(3, &mut bytes).unwrap();
        (bytes, runs)
    };
    let (in_memory, none) = build(Builder::default());
    let (spilled, runs) = build(Builder::spilling_past(dir.path(), 256 << 10));
    assert_eq!(none, 0);
    assert!(runs >= 3, "the build spilled {runs} runs");
    assert!(in_memory == spilled, "the segments differ");
    let seg = Segment::from_vec(spilled).unwrap();
    assert_eq!(seg.docs, 60_000);
    assert_eq!(seg.postings("upload").len(), 60_000);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no scratch file is left");
}

/// A real index's chunks read on another thread and handed over in batches (`prepared`)
/// build the very segment they build read and added on one thread.
#[test]
fn a_scan_on_its_own_thread_builds_the_same_segment() {
    let texts: Vec<(String, String)> = (0..400)
        .map(|i| {
            let body =
                format!("def parseConfig{i}(path):\n    return load(path, {i})\n\n\nclass Retry{i}:\n    pass\n");
            (format!("pkg{}/mod_{i:03}.py", i % 7), body)
        })
        .collect();
    let files: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let (_dir, root, index) = crate::store::testing::project(&files);
    let store = crate::store::Store::open(&index, &root).unwrap();
    let progress = crate::engine::index::Progress::default();
    crate::engine::index::run(&root, &store, crate::engine::index::Options::default(), &progress).unwrap();

    let mut one = Builder::default();
    let at = store.scan_snapshot(&mut one).unwrap();
    let mut two = Builder::default();
    assert_eq!(prepared::scan_into(&mut two, |sink| store.scan_snapshot(sink)).unwrap(), at);
    assert!(two.held()[5] > 2 * 256, "several batches: {} chunks", two.held()[5]);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    one.write(at, &mut a).unwrap();
    two.write(at, &mut b).unwrap();
    assert!(a == b, "the segments differ");
}

/// Ids are stored over the lowest, in four bytes: every chunk reads back its own, whatever
/// order the ids come in and however large they are.
#[test]
fn ids_over_the_lowest_read_back_whole() {
    let mut b = Builder::default();
    let base = 5_000_000_000i64;
    let names = ["new", "parse", "new", "", "parse", "new"];
    for (i, name) in names.iter().enumerate() {
        // Ids out of order within a file, as a re-index that kept some rows leaves them.
        let id = base + [40, 3, 17, 0, 2_000_000, 9][i];
        b.add(&chunk(id, &format!("f{}.rs", i / 2), name, None), "fn body", "h");
    }
    let mut bytes = Vec::new();
    b.write(1, &mut bytes).unwrap();
    let seg = Segment::from_vec(bytes).unwrap();
    let read: Vec<(i64, String)> = (0..6).map(|d| (seg.doc_id(d), seg.candidate(d, 1.0).name)).collect();
    let ids = [40, 3, 17, 0, 2_000_000, 9].map(|o| base + o);
    assert_eq!(read, ids.iter().zip(names).map(|(&id, n)| (id, n.to_owned())).collect::<Vec<_>>());
}

/// A file whose chunks are numbered one after another stores its first id alone; one whose
/// ids are not has them listed. Every chunk reads back its own either way.
#[test]
fn consecutive_ids_are_counted_from_the_files_first() {
    let mut b = Builder::default();
    let files = [("a.py", [10, 11, 12]), ("b.py", [20, 22, 21]), ("c.py", [13, 14, 15]), ("d.py", [30, 31, 30])];
    for (path, ids) in files {
        for id in ids {
            b.add(&chunk(id, path, "f", None), "body", "h");
        }
    }
    let mut bytes = Vec::new();
    b.write(1, &mut bytes).unwrap();
    let seg = Segment::from_vec(bytes).unwrap();
    let read: Vec<i64> = (0..12).map(|d| seg.doc_id(d)).collect();
    assert_eq!(read, [10, 11, 12, 20, 22, 21, 13, 14, 15, 30, 31, 30]);
    assert_eq!(seg.sec(Sec::ListedIds).len(), 4 * 6, "b.py's and d.py's ids alone are listed");
    assert_eq!(seg.candidate(4, 1.0).id, 22);
}

/// A segment of the format before is refused, saying so: the index builds it again.
#[test]
fn a_segment_of_the_format_before_is_refused_as_such() {
    let mut bytes = Vec::new();
    Builder::default().write(1, &mut bytes).unwrap();
    bytes[..8].copy_from_slice(b"BGRANK02");
    let refused = Segment::from_vec(bytes).err().expect("refused");
    assert!(refused.to_string().contains("another format"), "{refused}");
}

#[test]
fn a_damaged_segment_is_refused_not_trusted() {
    let mut bytes = Vec::new();
    Builder::default().write(1, &mut bytes).unwrap();
    assert!(Segment::from_vec(bytes[..10].to_vec()).is_err());
    let mut bad = bytes.clone();
    bad[HEADER] = 0xFF; // the first section's offset points far past the end
    bad[HEADER + 7] = 0x7F;
    assert!(Segment::from_vec(bad).is_err());
}

/// The reused-buffer tokenizer gives exactly the tokens `tokens` gives.
#[test]
fn each_token_lends_the_same_tokens() {
    for text in ["fn parse_Config(x: u32) -> Σίσυφος ΟΔΟΣ", "HTTPServer2 ÉCOLE  _a_b__c", "", "!!!", "İstanbul ǅemal"]
    {
        let mut lent = Vec::new();
        let mut buf = String::new();
        super::each_token(text, &mut buf, |t| lent.push(t.to_owned()));
        assert_eq!(lent, super::tokens(text).collect::<Vec<_>>(), "{text:?}");
    }
}

/// The same on random text of every kind of character the tokenizer meets (ASCII, other
/// scripts' letters and digits, marks, symbols, a final sigma).
#[test]
fn each_token_lends_the_same_tokens_on_any_text() {
    let pieces = ["a", "Z", "9", "_", " ", "-", "\n", "é", "Σ", "ς", "İ", "٣", "\u{301}", "😀", "ǅ", "ß", "ﬁ", "x1"];
    let mut rng = crate::base::rng::Rng::new(45);
    let mut buf = String::new();
    for _ in 0..2_000 {
        let text: String = (0..rng.below(24)).map(|_| *rng.pick(&pieces)).collect();
        let mut lent = Vec::new();
        super::each_token(&text, &mut buf, |t| lent.push(t.to_owned()));
        assert_eq!(lent, super::tokens(&text).collect::<Vec<_>>(), "{text:?}");
    }
}
