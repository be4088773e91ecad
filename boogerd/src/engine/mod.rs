//! What runs: the daemon's shared state ([`Daemon`]), the project registry, each project's
//! open index and background work ([`project`]), indexing runs ([`index`]), the change
//! state of every project ([`live`]) and the watcher that fills it ([`watch`]).

pub mod config;
pub mod daemon;
pub mod index;
pub mod live;
pub mod prebuilt;
pub mod project;
pub mod publish;
pub mod registration;
pub mod registry;
pub mod seed;
pub mod team;
pub mod team_pool;
pub mod watch;

pub use config::Config;
pub use daemon::Daemon;
