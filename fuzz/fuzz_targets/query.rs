//! The query sanitiser: whatever an agent types (as a query or as a path filter), the
//! expressions booger hands to a real index's FTS5 never raise an error.
#![no_main]

use std::sync::OnceLock;

use boogerd::domain::search::query::Query;
use boogerd::store::Store;
use boogerd::store::search::Filters;
use libfuzzer_sys::fuzz_target;

fn store() -> &'static Store {
    static STORE: OnceLock<(tempfile::TempDir, Store)> = OnceLock::new();
    &STORE
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let store = Store::open(dir.path(), dir.path()).expect("open store");
            (dir, store)
        })
        .1
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let q = Query::parse(text);
    if q.is_empty() {
        return;
    }
    let store = store();
    for expr in [q.and(), q.or()] {
        if let Err(e) = store.fts_candidates(&expr, &Filters::default(), 10) {
            panic!("{text:?} became {expr:?}: {e}");
        }
    }
    let by_path = Filters { path: Some(text.to_owned()), ..Filters::default() };
    if let Err(e) = store.fts_candidates(&q.or(), &by_path, 10) {
        panic!("path filter {text:?}: {e}");
    }
});
