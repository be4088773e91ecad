//! The bottom layer: helpers with no knowledge of projects, indexes or protocols.

pub(crate) mod deadline;
pub(crate) mod hints;
pub(crate) mod interner;
pub mod memory;
pub(crate) mod metrics;
pub(crate) mod repo_file;
pub(crate) mod rng;
pub mod secret;
pub mod storage;
pub(crate) mod sync;
pub(crate) mod terms;
pub(crate) mod text;
pub(crate) mod threads;
pub mod time;
