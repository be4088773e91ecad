//! What a daemon built without the team index (`--no-default-features`) answers where a call
//! asks for it: a refusal that says so, never an empty answer.

use booger_proto::tools::args;

use super::call::{Call, Outcome, ToolError};

pub fn refused(tool: &str) -> ToolError {
    ToolError::Refused(format!(
        "{tool}: this boogerd was built without the team index (cargo feature `team`); rebuild it with the \
         default features"
    ))
}

pub mod publish {
    use super::*;

    pub fn run(_: &Call, _: args::Publish) -> Outcome {
        Err(refused("publish"))
    }
}

pub mod team_status {
    use super::*;

    pub fn run(_: &Call, _: args::TeamStatus) -> Outcome {
        Err(refused("team-status"))
    }
}
