//! What a daemon built without the team index (`--no-default-features`) answers where a call
//! asks for it: a refusal that says so, never an empty answer.

use booger_proto::tools::args;

use super::call::{Call, Outcome, ToolError};

pub(super) fn refused(tool: &str) -> ToolError {
    ToolError::Refused(format!(
        "{tool}: this boogerd was built without the team index (cargo feature `team`); rebuild it with the \
         default features"
    ))
}

pub(super) mod publish {
    use super::*;

    pub(crate) fn run(_: &Call, _: args::Publish) -> Outcome {
        Err(refused("publish"))
    }
}

pub(super) mod team_status {
    use super::*;

    pub(crate) fn run(_: &Call, _: args::TeamStatus) -> Outcome {
        Err(refused("team-status"))
    }
}
