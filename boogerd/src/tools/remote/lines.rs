//! `grep` and `references` on the team index: the chunks the trigram index (grep) or the
//! words index (references) leave, read line by line as the local tools read theirs.

use std::time::{Duration, Instant};

use booger_proto::answers;
use booger_proto::remote::Selected;
use booger_proto::tools::args;

use super::{Ask, Outcome};
use crate::domain::search::{Query, grams, lexemes};
use crate::store::search::{Candidate, Filters};
use crate::store::team::Matched;
use crate::tools::call::{answer, filters, quoted};
use crate::tools::grep::{matcher, paging};
use crate::tools::references::mentioned;
use crate::tools::team::{candidate, label};

/// Reading stops after this long; the answer then says it is incomplete.
const DEADLINE: Duration = Duration::from_secs(5);

pub(super) fn grep(ask: &mut Ask, sel: &Selected, a: &args::Grep) -> Outcome {
    let (source, matcher) = matcher(a)?;
    let narrow = grams::required_in_team(&source, a.case_insensitive);
    let local = filters(&a.filters);
    let f = ask.scope(sel, &local);
    let mut lines = paging(a)?;
    let all = ask.store.grep_chunks(narrow.as_ref(), &f, Instant::now() + DEADLINE, |row| {
        lines.take_team(&row, &matcher);
        true
    })?;
    let stopped = (!all).then(|| {
        format!("[stopped after {} s: narrow with repository, path_prefix or a longer literal]\n", DEADLINE.as_secs())
    });
    if lines.total == 0 {
        ask.check_selected(sel)?;
        let why = format!("{}No lines match {}.", stopped.as_deref().unwrap_or(""), quoted(&a.pattern));
        let data =
            answers::Grep { results: Some(Vec::new()), reason: Some(why.clone()), complete: all, ..Default::default() };
        return Ok(answer(why, &data));
    }
    Ok(lines.answer(None, stopped, all))
}

/// Chunks holding the name's words that `references` reads.
const CANDIDATES: i64 = 5_000;

pub(super) fn references(ask: &mut Ask, sel: &Selected, a: &args::References) -> Outcome {
    let name = crate::tools::references::name_of(&a.symbol)?;
    let stems = lexemes::of_query(&Query::parse(name));
    if stems.is_empty() {
        return Err(ask.refuse("symbol has no word to look up: give an identifier"));
    }
    let local = Filters { language: a.language, kind: None, path: a.path_prefix.clone() };
    let f = ask.scope(sel, &local);
    let found = ask.store.search(&lexemes::tsquery(&stems, "&"), Matched::Words, &f, CANDIDATES)?;
    let candidates: Vec<(Candidate, String)> =
        found.into_iter().enumerate().map(|(i, h)| (candidate(&h, label(&h), i as i64), h.chunk.content)).collect();
    match mentioned(&candidates, a)? {
        Some(reply) => Ok(reply),
        None => {
            ask.check_selected(sel)?;
            let why = format!("No matches for symbol {}.", quoted(&a.symbol));
            let data =
                answers::References { results: Some(Vec::new()), reason: Some(why.clone()), ..Default::default() };
            Ok(answer(why, &data))
        }
    }
}
