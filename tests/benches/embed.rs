//! Embeddings, static tier: how fast the table embeds the Python standard library, and how
//! well its vectors alone retrieve on ../shared/eval's queries.
//!
//! `cargo bench -p booger-tests --bench embed` (needs python3). In process: every .py file of
//! the standard library (site-packages excluded) is chunked with the indexer's chunker; each
//! non-import chunk is embedded as text of two kinds: its content, and its path words, parent,
//! name, signature and doc ("signature + doc"); each of the 120 queries is embedded and the
//! top 10 chunks by cosine (exact scan) are scored as the eval's scorer does (R@k over distinct
//! files, SymHit@10 over line ranges).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use boogerd::domain::embed::Embedder;
use boogerd::domain::embed::static_table::StaticEmbedder;
use boogerd::source::chunk::{Chunk, chunk_file};
use serde_json::Value;

struct Item {
    path: String,
    chunk: Chunk,
}

fn main() {
    let root = booger_tests::python_stdlib();
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    let mut items = Vec::new();
    for rel in &files {
        let bytes = std::fs::read(root.join(rel)).unwrap_or_default();
        for chunk in chunk_file(rel, &bytes, bytes.len() > 1 << 20).chunks {
            if chunk.kind != booger_proto::tools::ChunkKind::Import {
                items.push(Item { path: rel.to_string_lossy().into_owned(), chunk });
            }
        }
    }
    let t = Instant::now();
    let e = StaticEmbedder::builtin().unwrap();
    let load = t.elapsed();
    println!("# booger embedding benchmark (static tier)\n");
    println!("{} files, {} chunks (imports left out); table load {:.0} ms\n", files.len(), items.len(), ms(load));

    let queries = booger_tests::stdlib_queries();

    println!("| text embedded | chunks/s (one thread) | all | nl |");
    println!("|---|---|---|---|");
    for (label, text) in [("content", content as fn(&Item) -> String), ("signature + doc", signature_doc)] {
        let texts: Vec<String> = items.iter().map(text).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = Instant::now();
        let vectors = e.embed(&refs).unwrap();
        let rate = items.len() as f64 / t.elapsed().as_secs_f64();
        let (all, nl) = quality(&e, &items, &vectors, &queries);
        println!("| {label} | {rate:.0} | {all} | {nl} |");
    }
}

fn content(i: &Item) -> String {
    i.chunk.content.clone()
}

fn signature_doc(i: &Item) -> String {
    let c = &i.chunk;
    format!(
        "{} {} {} {} {}",
        i.path.trim_end_matches(".py").replace('/', " "),
        c.parent.as_deref().unwrap_or_default(),
        c.name,
        c.signature,
        c.doc.as_deref().unwrap_or_default()
    )
}

/// R@1/5/10, MRR@10 and SymHit@10 over all queries and over kind=nl.
fn quality(e: &StaticEmbedder, items: &[Item], vectors: &[Vec<f32>], queries: &[Value]) -> (String, String) {
    let mut all = Vec::new();
    let mut nl = Vec::new();
    for q in queries {
        let v = &e.embed(&[q["query"].as_str().unwrap()]).unwrap()[0];
        let mut scored: Vec<(f32, usize)> =
            vectors.iter().enumerate().map(|(i, x)| (boogerd::domain::embed::cosine(v, x), i)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let top: Vec<&Item> = scored.iter().take(10).map(|(_, i)| &items[*i]).collect();
        let s = score(q, &top);
        if q["kind"] == "nl" {
            nl.push(s);
        }
        all.push(s);
    }
    (summary(&all), summary(&nl))
}

fn score(q: &Value, top: &[&Item]) -> [f64; 5] {
    let golds = q["gold"].as_array().unwrap();
    let is_gold = |p: &str| golds.iter().any(|g| g["path"] == p);
    let mut files: Vec<&str> = Vec::new();
    for i in top {
        if !files.contains(&i.path.as_str()) {
            files.push(&i.path);
        }
    }
    let rank = files.iter().position(|p| is_gold(p)).map(|r| r + 1);
    let hit = |n: usize| rank.is_some_and(|r| r <= n) as u8 as f64;
    let sym = top.iter().any(|i| {
        golds.iter().any(|g| {
            g["path"] == i.path.as_str()
                && i.chunk.start_line as u64 <= g["end_line"].as_u64().unwrap()
                && i.chunk.end_line as u64 >= g["start_line"].as_u64().unwrap()
        })
    });
    [hit(1), hit(5), hit(10), rank.map_or(0.0, |r| 1.0 / r as f64), sym as u8 as f64]
}

fn summary(s: &[[f64; 5]]) -> String {
    let mean = |k: usize| s.iter().map(|x| x[k]).sum::<f64>() / s.len() as f64;
    format!(
        "n={} R@1={:.3} R@5={:.3} R@10={:.3} MRR@10={:.3} SymHit@10={:.3}",
        s.len(),
        mean(0),
        mean(1),
        mean(2),
        mean(3),
        mean(4)
    )
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "site-packages" && n != "__pycache__") {
                collect(root, &p, out);
            }
        } else if p.extension().is_some_and(|x| x == "py") {
            out.push(p.strip_prefix(root).unwrap().to_owned());
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
