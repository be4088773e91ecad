//! What runs: the daemon's shared state ([`Daemon`]), the project registry, each project's
//! open index and background work ([`project`]), indexing runs ([`index`]), the change
//! state of every project ([`live`]) and the watcher that fills it ([`watch`]).

pub mod config;
pub(crate) mod daemon;
pub mod index;
pub(crate) mod live;
#[cfg(feature = "team")]
pub(crate) mod prebuilt;
pub(crate) mod project;
#[cfg(feature = "team")]
pub(crate) mod publish;
pub(crate) mod registration;
pub(crate) mod registry;
#[cfg(feature = "team")]
pub(crate) mod seed;
#[cfg(feature = "team")]
pub(crate) mod team;
#[cfg(feature = "team")]
pub(crate) mod team_pool;
pub(crate) mod watch;

pub use config::Config;
pub use daemon::Daemon;
