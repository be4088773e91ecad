//! What booger knows how to do with an index: rank and format answers ([`search`]), compare
//! git snapshots structurally ([`git`]), and turn text into vectors ([`embed`]). Nothing
//! here runs on its own: the engine and the tools call it.

pub mod embed;
pub mod git;
pub mod search;
