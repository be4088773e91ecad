//! The bottom layer: helpers with no knowledge of projects, indexes or protocols.

pub mod deadline;
pub mod hints;
pub mod memory;
pub mod metrics;
pub mod repo_file;
pub(crate) mod rng;
pub mod secret;
pub mod storage;
pub mod sync;
pub mod text;
pub mod threads;
pub mod time;
