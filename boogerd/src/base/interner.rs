//! Distinct strings numbered in the order they first come: their bytes end to end and a
//! table of ids found by hash. A large build meets a million distinct tokens; as map keys of
//! their own each cost a heap allocation and a 32-byte slot (about 90 bytes a token in all),
//! here their bytes and 9 bytes, and a lookup touches one small table and one run of bytes.

use std::hash::BuildHasher;

/// Strings end to end, with where each ends.
#[derive(Default)]
pub(crate) struct Strings {
    pub(crate) text: String,
    ends: Vec<u32>,
}

impl Strings {
    pub(crate) fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len().min(u32::MAX as usize) as u32);
    }

    pub(crate) fn get(&self, id: u32) -> &str {
        let end = self.ends[id as usize] as usize;
        let start = if id == 0 { 0 } else { self.ends[id as usize - 1] as usize };
        &self.text[start..end]
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }
}

#[derive(Default)]
pub(crate) struct Interner {
    pub(crate) strings: Strings,
    table: hashbrown::HashTable<u32>,
    hasher: hashbrown::DefaultHashBuilder,
}

impl Interner {
    pub(crate) fn find(&self, s: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(s);
        self.table.find(hash, |&id| self.strings.get(id) == s).copied()
    }

    /// `s`'s id, and whether it was new.
    pub(crate) fn intern(&mut self, s: &str) -> (u32, bool) {
        let Self { strings, table, hasher } = self;
        let hash = hasher.hash_one(s);
        match table.entry(hash, |&id| strings.get(id) == s, |&id| hasher.hash_one(strings.get(id))) {
            hashbrown::hash_table::Entry::Occupied(e) => (*e.get(), false),
            hashbrown::hash_table::Entry::Vacant(e) => {
                let id = strings.len() as u32;
                strings.push(s);
                e.insert(id);
                (id, true)
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.strings.len()
    }

    /// Forgets every string, keeping the room they took.
    pub(crate) fn clear(&mut self) {
        self.strings.text.clear();
        self.strings.ends.clear();
        self.table.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_numbered_as_they_first_come() {
        let mut i = Interner::default();
        assert_eq!(i.intern("retry"), (0, true));
        assert_eq!(i.intern("connect"), (1, true));
        assert_eq!(i.intern("retry"), (0, false));
        assert_eq!(i.find("connect"), Some(1));
        assert_eq!((i.strings.get(0), i.strings.get(1)), ("retry", "connect"));
        i.clear();
        assert_eq!((i.len(), i.find("retry")), (0, None));
    }
}
