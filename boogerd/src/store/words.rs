//! A chunk's words as both lexical indexes take them, and identifier splitting.
//!
//! Terms ([`crate::base::terms`]) split `parse_config` at the underscore, but keep
//! `parseConfig` and `HTTPServer` whole. The split identifiers (the `words` column of
//! `chunks_fts`, the third of the ranking index's) therefore hold the split form of every
//! mixed-case identifier in a chunk (`parse config`, `http server`), so a query in plain words
//! finds code names.

use std::collections::HashSet;

use super::bag::Bag;

/// What a chunk's full-text row and ranking postings are made from beside its path, as
/// terms ([`crate::base::terms`]): its name's, its text's distinct ones with their counts
/// ([`Bag`]) and its split identifiers' ([`words_for`]). Made on the worker that chunked it:
/// the writer and the ranking builder are one thread each.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChunkWords {
    /// The name's terms, each followed by a space.
    pub name: String,
    pub bag: Bag,
    /// The split identifiers' terms, each followed by a space.
    pub split: String,
}

impl ChunkWords {
    pub(crate) fn of(name: &str, content: &str) -> ChunkWords {
        let split = crate::base::terms::terms_text(&words_for(name, content));
        ChunkWords { name: crate::base::terms::terms_text(name), bag: Bag::of(content), split }
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.name.len() + self.bag.bytes() + self.split.len()
    }
}

/// The words of `ident`: `parseConfig` → [parse, config], `HTTPServer2` → [http, server2].
pub(crate) fn split_identifier(ident: &str) -> Vec<String> {
    let chars: Vec<char> = ident.chars().collect();
    let mut words = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' || c == '-' {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1);
        let boundary = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if boundary && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Split forms of the mixed-case identifiers in `name` and `content`, each once.
pub(crate) fn words_for(name: &str, content: &str) -> String {
    let mut seen = HashSet::new();
    let mut out = String::new();
    for text in [name, content] {
        each_identifier(text, |ident| {
            if is_mixed_case(ident) && seen.insert(ident) {
                let parts = split_identifier(ident);
                if parts.len() > 1 {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    out.push_str(&parts.join(" "));
                }
            }
        });
    }
    out
}

/// Calls `f` with each identifier of `text`: each run of letters, digits and underscores.
fn each_identifier<'t>(text: &'t str, mut f: impl FnMut(&'t str)) {
    crate::base::text::each_run(text, |c| c.is_alphanumeric() || c == '_', |ident, _| f(ident));
}

fn is_mixed_case(ident: &str) -> bool {
    if ident.is_ascii() {
        mixed(ident.bytes().map(|b| (b.is_ascii_lowercase(), b.is_ascii_uppercase())))
    } else {
        mixed(ident.chars().map(|c| (c.is_lowercase(), c.is_uppercase())))
    }
}

/// Whether letters given as (lowercase, uppercase) make a mixed-case name.
fn mixed(letters: impl Iterator<Item = (bool, bool)>) -> bool {
    let mut lower = false;
    let mut upper_after = false;
    let mut upper = 0;
    for (is_lower, is_upper) in letters {
        if is_lower {
            lower = true;
        } else if is_upper {
            upper += 1;
            upper_after |= lower;
        }
    }
    // camelCase / PascalCase with a hump, or an acronym prefix (HTTPServer).
    upper_after || (lower && upper > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_the_usual_shapes() {
        assert_eq!(split_identifier("parseConfig"), ["parse", "config"]);
        assert_eq!(split_identifier("HTTPServer"), ["http", "server"]);
        assert_eq!(split_identifier("parse_config"), ["parse", "config"]);
        assert_eq!(split_identifier("getHTTPResponseCode"), ["get", "http", "response", "code"]);
        assert_eq!(split_identifier("Vec"), ["vec"]);
        // Every language's names split alike: Java's and C#'s getters, Ruby's and PHP's
        // snake case (a PHP `$` is no part of the identifier).
        assert_eq!(split_identifier("getHttpClient"), ["get", "http", "client"]);
        assert_eq!(split_identifier("HTTParty"), ["htt", "party"]);
        let w = words_for("", "$php_vars = $this->getHttpClient();");
        assert_eq!(w, "get http client");
    }

    #[test]
    fn words_cover_mixed_case_identifiers_once() {
        let w = words_for("parseConfig", "let s = HTTPServer::new(parseConfig(x)); plain_name; ALLCAPS");
        assert_eq!(w, "parse config http server");
        // Identifiers are runs of letters, digits and underscores of any script, the last
        // one ending the text; each mixed-case one once, whichever field it is in.
        let w = words_for("ÉcoleNormale", "x = größeWert+ÉcoleNormale;getHTTPCode");
        assert_eq!(w, "école normale größe wert get http code");
        assert_eq!(words_for("", "naïve_café aB"), "a b");
    }
}
