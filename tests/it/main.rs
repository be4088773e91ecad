//! End-to-end tests: a real boogerd on a temp socket, the real booger binary over real pipes.

mod catalogue;
mod cli;
mod embedders;
mod eval;
mod git;
mod grep;
mod hooks;
mod http;
mod index;
mod languages;
mod layers;
mod lifecycle;
mod mcp;
mod python_sdk;
mod rpc;
mod search;
mod semantic;
mod services;
mod setup;
mod storage;
mod team;
mod team_server;
mod team_trust;
mod tidy;
mod watch;
mod windows;
