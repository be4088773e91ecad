//! The full-text table's ranking, and refilling the table after a change of its layout.
//!
//! `chunks_fts` keeps which columns of which chunks hold a word, not where (`detail=column`,
//! migration 20): positions were half of its rows (/usr/include: 73 -> 39 MB) and a fifth of
//! the writer's time on the standard library, and nothing booger asks needs them: a query's
//! words joined by punctuation are all of its words (as in the ranking index), and a quoted
//! phrase is checked against the chunk's text. FTS5's own `bm25()` counts a word's
//! occurrences from their positions, so without them it scores every row 0; `booger_bm25` is
//! the same formula with a word counted once per column that holds it: the sum over the
//! query's words of idf × f × (k1 + 1) / (f + k1 × (1 - b + b × len / avglen)), where f is
//! the sum of the weights of the columns holding the word and len the row's tokens (its
//! text's distinct words: the row is written from the chunk's [`super::bag::Bag`]), negated
//! (lower is better, as `bm25()`). Registered on every connection of a store, as
//! `booger_text` is.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;

use rusqlite::Connection;
use rusqlite::ffi;

use super::dictionaries::Dictionaries;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The FTS5 expression for the chunks holding every word of `text` (each word quoted, so
/// FTS5's syntax never sees the text's own punctuation; several joined by AND, as words
/// written together are asked for in this layout); empty when `text` has no word.
pub(crate) fn every_word(text: &str) -> String {
    let words: Vec<String> =
        text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| format!("\"{w}\"")).collect();
    match words.len() {
        0 => String::new(),
        1 => words.into_iter().next().unwrap_or_default(),
        _ => format!("({})", words.join(" AND ")),
    }
}

/// Registers `booger_bm25(chunks_fts, weight...)` and the tokenizer `booger` with `c`'s FTS5:
/// on every connection that may read or make the full-text table.
pub(crate) fn register(c: &Connection) -> rusqlite::Result<()> {
    // SAFETY: `api` is the FTS5 API object of this connection (FTS5 hands it out for as long
    // as the connection lives); the function and tokenizer registered take no user data, and
    // FTS5 copies the tokenizer's table of functions.
    unsafe {
        let api = fts5_api(c)?;
        let create = (*api).xCreateFunction.ok_or_else(|| failure("FTS5 has no xCreateFunction"))?;
        let rc = create(api, c"booger_bm25".as_ptr(), ptr::null_mut(), Some(bm25), None);
        if rc != ffi::SQLITE_OK {
            return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), Some("registering booger_bm25".into())));
        }
        let create = (*api).xCreateTokenizer.ok_or_else(|| failure("FTS5 has no xCreateTokenizer"))?;
        let mut tokenizer = ffi::fts5_tokenizer {
            xCreate: Some(tokenizer_create),
            xDelete: Some(tokenizer_delete),
            xTokenize: Some(tokenize),
        };
        let rc = create(api, c"booger".as_ptr(), ptr::null_mut(), &mut tokenizer, None);
        if rc != ffi::SQLITE_OK {
            return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), Some("registering its tokenizer".into())));
        }
    }
    Ok(())
}

/// The tokenizer has no state: any pointer FTS5 can hand back will do.
unsafe extern "C" fn tokenizer_create(
    _: *mut c_void,
    _: *mut *const c_char,
    _: c_int,
    out: *mut *mut ffi::Fts5Tokenizer,
) -> c_int {
    // SAFETY: FTS5 passes where the new tokenizer goes.
    unsafe { *out = ptr::NonNull::<ffi::Fts5Tokenizer>::dangling().as_ptr() };
    ffi::SQLITE_OK
}

unsafe extern "C" fn tokenizer_delete(_: *mut ffi::Fts5Tokenizer) {}

/// FTS5's callback for each token.
type TokenFn = unsafe extern "C" fn(*mut c_void, c_int, *const c_char, c_int, c_int, c_int) -> c_int;

/// A row's column is already terms, each followed by a space (written from
/// [`super::words::ChunkWords`], made where the chunk was): handed on as they are. A query's
/// text (and anything else FTS5 asks) is split and stemmed as a chunk's text was
/// ([`crate::base::terms`]).
unsafe extern "C" fn tokenize(
    _: *mut ffi::Fts5Tokenizer,
    ctx: *mut c_void,
    flags: c_int,
    text: *const c_char,
    len: c_int,
    token: Option<TokenFn>,
) -> c_int {
    let Some(token) = token else { return ffi::SQLITE_MISUSE };
    let bytes: &[u8] = match usize::try_from(len) {
        // SAFETY: FTS5 passes `len` bytes at `text`.
        Ok(n) if n > 0 && !text.is_null() => unsafe { std::slice::from_raw_parts(text.cast::<u8>(), n) },
        _ => return ffi::SQLITE_OK,
    };
    let emit = |term: &[u8], start: usize| -> c_int {
        let (at, end) = (c_int::try_from(start).unwrap_or(c_int::MAX), c_int::try_from(start + term.len()));
        // SAFETY: FTS5's own callback with its own context; it copies the token.
        unsafe { token(ctx, 0, term.as_ptr().cast(), term.len() as c_int, at, end.unwrap_or(c_int::MAX)) }
    };
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut rc = ffi::SQLITE_OK;
        if flags & ffi::FTS5_TOKENIZE_DOCUMENT != 0 {
            let mut start = 0;
            for term in bytes.split(|&b| b == b' ') {
                if !term.is_empty() && rc == ffi::SQLITE_OK {
                    rc = emit(term, start);
                }
                start += term.len() + 1;
            }
        } else {
            let text = String::from_utf8_lossy(bytes);
            crate::base::terms::each_term(&text, |term| {
                if rc == ffi::SQLITE_OK {
                    rc = emit(term.as_bytes(), 0);
                }
            });
        }
        rc
    }));
    run.unwrap_or(ffi::SQLITE_ERROR)
}

fn failure(what: &str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_ERROR), Some(what.to_owned()))
}

/// The connection's `fts5_api`, as FTS5 documents obtaining it: `SELECT fts5(?1)` with a
/// pointer bound to receive it.
unsafe fn fts5_api(c: &Connection) -> rusqlite::Result<*mut ffi::fts5_api> {
    // SAFETY: a statement prepared, stepped and finalized on this connection's own handle;
    // the pointer bound outlives the step that writes through it.
    unsafe {
        let db = c.handle();
        let mut stmt = ptr::null_mut();
        let rc = ffi::sqlite3_prepare_v2(db, c"SELECT fts5(?1)".as_ptr(), -1, &mut stmt, ptr::null_mut());
        if rc != ffi::SQLITE_OK {
            return Err(failure("FTS5 is not compiled in"));
        }
        let mut api: *mut ffi::fts5_api = ptr::null_mut();
        ffi::sqlite3_bind_pointer(stmt, 1, (&raw mut api).cast::<c_void>(), c"fts5_api_ptr".as_ptr(), None);
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
        if api.is_null() { Err(failure("FTS5 gave no API object")) } else { Ok(api) }
    }
}

/// What a query's rows share: each word's idf and the rows' mean length.
struct Shared {
    idf: Vec<f64>,
    mean_len: f64,
}

unsafe extern "C" fn drop_shared(p: *mut c_void) {
    // SAFETY: `p` is the `Box<Shared>` `shared` leaked into FTS5's auxiliary data.
    drop(unsafe { Box::from_raw(p.cast::<Shared>()) });
}

unsafe extern "C" fn count_row(_: *const ffi::Fts5ExtensionApi, _: *mut ffi::Fts5Context, n: *mut c_void) -> c_int {
    // SAFETY: `n` is the `i64` `shared` passes to `xQueryPhrase`.
    unsafe { *n.cast::<i64>() += 1 };
    ffi::SQLITE_OK
}

/// The query's [`Shared`], computed for its first row and kept with the query.
unsafe fn shared(api: &ffi::Fts5ExtensionApi, fts: *mut ffi::Fts5Context) -> Option<&Shared> {
    // SAFETY: the calls are FTS5's own on the context it passed to `bm25`; the auxiliary
    // data is ours (set below, freed by `drop_shared`).
    unsafe {
        let got = (api.xGetAuxdata?)(fts, 0).cast::<Shared>();
        if !got.is_null() {
            return Some(&*got);
        }
        let (mut rows, mut tokens) = (0i64, 0i64);
        (api.xRowCount?)(fts, &mut rows);
        (api.xColumnTotalSize?)(fts, -1, &mut tokens);
        let n = rows.max(1) as f64;
        let mut idf = Vec::new();
        for phrase in 0..(api.xPhraseCount?)(fts) {
            let mut holding = 0i64;
            (api.xQueryPhrase?)(fts, phrase, (&raw mut holding).cast::<c_void>(), Some(count_row));
            let h = holding as f64;
            // As FTS5's bm25: a word in more than half the rows still counts a little.
            idf.push((((n - h + 0.5) / (h + 0.5)).ln()).max(1e-6));
        }
        let boxed = Box::into_raw(Box::new(Shared { idf, mean_len: (tokens as f64 / n).max(1.0) }));
        if (api.xSetAuxdata?)(fts, boxed.cast::<c_void>(), Some(drop_shared)) != ffi::SQLITE_OK {
            // FTS5 freed it already.
            return None;
        }
        Some(&*boxed)
    }
}

/// The row's score; see the module's doc.
unsafe fn score(api: &ffi::Fts5ExtensionApi, fts: *mut ffi::Fts5Context, weights: &[f64]) -> Option<f64> {
    // SAFETY: FTS5's calls on the context it passed to `bm25`, for the row it is on.
    unsafe {
        let shared = shared(api, fts)?;
        let mut len: c_int = 0;
        (api.xColumnSize?)(fts, -1, &mut len);
        let norm = K1 * (1.0 - B + B * f64::from(len) / shared.mean_len);
        let (first, next) = (api.xPhraseFirstColumn?, api.xPhraseNextColumn?);
        let mut total = 0.0;
        for (phrase, idf) in shared.idf.iter().enumerate() {
            let mut iter = ffi::Fts5PhraseIter { a: ptr::null(), b: ptr::null() };
            let mut col: c_int = -1;
            if first(fts, phrase as c_int, &mut iter, &mut col) != ffi::SQLITE_OK {
                return None;
            }
            let mut f = 0.0;
            while col >= 0 {
                f += weights.get(col as usize).copied().unwrap_or(1.0);
                next(fts, &mut iter, &mut col);
            }
            total += idf * f * (K1 + 1.0) / (f + norm);
        }
        Some(-total)
    }
}

unsafe extern "C" fn bm25(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its API, the row's context, the SQL function's context and
    // `n_val` argument values.
    unsafe {
        // Called for every matching row: the weights (one a column, three here) on the stack.
        let mut weights = [1.0f64; 8];
        let n = (n_val.max(0) as usize).min(weights.len());
        for (i, w) in weights.iter_mut().enumerate().take(n) {
            *w = ffi::sqlite3_value_double(*vals.add(i));
        }
        match api.as_ref().and_then(|api| score(api, fts, &weights[..n])) {
            Some(s) => ffi::sqlite3_result_double(ctx, s),
            None => ffi::sqlite3_result_error(ctx, c"booger_bm25 failed".as_ptr(), -1),
        }
    }
}

/// Writes the full-text rows again from the chunks, if a migration left the table empty for
/// it (migration 20 recreated it with another layout). One transaction: an interrupted refill
/// is done again at the next open.
pub(super) fn refill_if_asked(c: &mut Connection, texts: &Dictionaries) -> rusqlite::Result<()> {
    use rusqlite::OptionalExtension;
    let asked = c.query_row("SELECT 1 FROM meta WHERE key = 'fulltext_refill'", [], |_| Ok(())).optional()?;
    if asked.is_none() {
        return Ok(());
    }
    let started = std::time::Instant::now();
    tracing::info!("writing the full-text rows again in their new layout (once, after an upgrade)");
    let tx = c.transaction()?;
    let mut rows = 0u64;
    {
        let mut read = tx.prepare("SELECT id, name, content FROM chunks ORDER BY id")?;
        let mut insert = tx.prepare("INSERT INTO chunks_fts(rowid, name, content, words) VALUES (?1, ?2, ?3, ?4)")?;
        let mut it = read.query([])?;
        while let Some(r) = it.next()? {
            let (id, name): (i64, String) = (r.get(0)?, r.get(1)?);
            let content = super::text::decoded(r, 2, texts)?;
            let words = super::words::ChunkWords::of(&name, &content);
            insert.execute(rusqlite::params![id, words.name, words.bag.text(), words.split])?;
            rows += 1;
        }
    }
    tx.execute("DELETE FROM meta WHERE key = 'fulltext_refill'", [])?;
    tx.commit()?;
    tracing::info!(rows, ms = started.elapsed().as_millis() as u64, "full-text rows written in their new layout");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use crate::store::search::Filters;

    fn table() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        register(&c).unwrap();
        c.execute_batch(
            "CREATE VIRTUAL TABLE chunks_fts USING fts5(name, content, words, content = '',
                 contentless_delete = 1, detail = 'column', tokenize = 'booger');",
        )
        .unwrap();
        c
    }

    fn ranked(c: &Connection, expr: &str) -> Vec<(i64, f64)> {
        c.prepare("SELECT rowid, booger_bm25(chunks_fts, 8.0, 1.0, 2.0) AS r FROM chunks_fts WHERE chunks_fts MATCH ?1 ORDER BY r")
            .unwrap()
            .query_map([expr], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    /// A word counts once per column that holds it, by that column's weight; a rare word
    /// more than a common one; a short row more than a long one.
    #[test]
    fn ranks_by_the_columns_holding_each_word_and_how_rare_it_is() {
        let c = table();
        let rows = [
            (1, "", "parse parse parse the config"),
            (2, "parse", "def parse(): pass"),
            (3, "", "config config"),
            (4, "", "config file loaded at start with many more words after it"),
            (5, "", "nothing"),
            (6, "", "config"),
        ];
        for (id, name, content) in rows {
            // Written as the store writes a row: its terms.
            let (name, content) = (crate::base::terms::terms_text(name), crate::base::terms::terms_text(content));
            c.execute(
                "INSERT INTO chunks_fts(rowid, name, content, words) VALUES (?1, ?2, ?3, '')",
                (id, name, content),
            )
            .unwrap();
        }
        let parse = ranked(&c, "\"parse\"");
        assert_eq!(parse.iter().map(|r| r.0).collect::<Vec<_>>(), [2, 1], "in the name first: {parse:?}");
        assert!(parse.iter().all(|r| r.1 < 0.0), "scores are negated, as bm25()'s: {parse:?}");
        let config = ranked(&c, "\"config\"");
        assert_eq!(config.last().map(|r| r.0), Some(4), "the longest row last: {config:?}");
        let either = ranked(&c, "\"parse\" OR \"config\"");
        assert!(either.iter().position(|r| r.0 == 1) < either.iter().position(|r| r.0 == 6), "both words first");
        // Words written together are asked for together: a phrase is refused in this layout.
        assert!(
            c.prepare("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH '\"parse config\"'")
                .unwrap()
                .exists([])
                .is_err()
        );
    }

    /// A row is written from the chunk's terms, made where it was chunked, and found by a
    /// query of any form of its words: split and stemmed as the ranking index does.
    #[test]
    fn a_row_is_found_by_any_form_of_its_words() {
        let c = table();
        let text = "def retryConnection(attempts):\n    for attempt in range(attempts):\n        connect()\n";
        let w = super::super::words::ChunkWords::of("retryConnection", text);
        c.execute(
            "INSERT INTO chunks_fts(rowid, name, content, words) VALUES (1, ?1, ?2, ?3)",
            (&w.name, w.bag.text(), &w.split),
        )
        .unwrap();
        for q in ["\"retrying\"", "\"Attempt\"", "(\"retry\" AND \"connections\")", "\"RetryConnection\""] {
            assert_eq!(ranked(&c, q).len(), 1, "{q}");
        }
        assert!(ranked(&c, "\"socket\"").is_empty());
    }

    /// An index whose full-text rows were dropped for a new layout gets them back from its
    /// chunks when it is opened.
    #[test]
    fn an_index_asked_to_refill_its_full_text_rows_does_so_when_opened() {
        let (_dir, root, index) = crate::store::testing::project(&[]);
        let store = Store::open(&index, &root).unwrap();
        let text = "def parse_config(path):\n    return open(path).read()\n";
        store.write_batch(&[crate::store::testing::file_write("a.py", text, true)], &[], "now").unwrap();
        assert_eq!(store.fts_count("config").unwrap(), 1);
        store
            .write(|c| {
                c.execute_batch(
                    "INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all');
                     INSERT INTO meta(key, value) VALUES ('fulltext_refill', '1');",
                )
            })
            .unwrap();
        assert_eq!(store.fts_count("config").unwrap(), 0);
        drop(store);
        let store = Store::open(&index, &root).unwrap();
        assert_eq!(store.fts_count("config").unwrap(), 1);
        assert_eq!(store.fts_count("parse config").unwrap(), 1, "split names too");
        let hits = store.fts_candidates("\"config\"", &Filters::default(), 10).unwrap();
        assert_eq!(hits.len(), 1);
        assert!(hits[0].bm25 < 0.0);
        let asked = store.read(|c| {
            c.query_row("SELECT count(*) FROM meta WHERE key = 'fulltext_refill'", [], |r| r.get::<_, i64>(0))
        });
        assert_eq!(asked.unwrap(), 0);
    }
}
