//! The building blocks of argument declarations, shared by the local catalogue and the
//! team's tools.

use super::{CHUNK_KINDS, Kind, LANGUAGES, Param};

pub(crate) const fn param(name: &'static str, kind: Kind, description: &'static str) -> Param {
    Param { name, kind, required: false, positional: false, description }
}

pub(crate) const fn positional(name: &'static str, kind: Kind, description: &'static str) -> Param {
    Param { name, kind, required: false, positional: true, description }
}

pub(crate) const fn required(name: &'static str, kind: Kind, description: &'static str) -> Param {
    Param { name, kind, required: true, positional: true, description }
}

pub(crate) const PROJECT: Param = param("project", Kind::String, "Project name or path.");
pub(crate) const KIND: Param = param("kind", Kind::Enum(CHUNK_KINDS), "Only this kind of chunk.");
pub(crate) const LANGUAGE: Param = param("language", Kind::Enum(LANGUAGES), "Only this language.");
