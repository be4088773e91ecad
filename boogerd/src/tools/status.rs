//! `status`: the daemon, the session's project, and every registered project.

use serde_json::{Value, json};

use super::{Session, resolve_project};
use crate::Daemon;
use crate::time::human_duration;

pub fn run(daemon: &Daemon, session: &Session, args: &Value) -> booger_proto::wire::ToolReply {
    let facts = daemon.facts();
    let project = resolve_project(daemon, session, args);
    let mut text = format!(
        "boogerd {} (pid {}, up {}, protocol {})\nsocket: {}\ndata:   {}\n",
        facts["version"].as_str().unwrap_or("?"),
        facts["pid"],
        human_duration(facts["uptime_s"].as_u64().unwrap_or(0)),
        facts["protocol"],
        daemon.config.socket.display(),
        daemon.config.data_dir.display(),
    );
    let project_json = match &project {
        Ok(p) => {
            text.push_str(&format!("project: {} ({})\n", p.name, p.root.display()));
            json!({ "name": p.name, "root": p.root, "registered": true })
        }
        Err(why) => {
            text.push_str(&format!("project: none. {why}\n"));
            json!({ "registered": false, "hint": why })
        }
    };
    let projects = facts["projects"].as_array().cloned().unwrap_or_default();
    text.push_str(&format!("projects: {}\n", projects.len()));
    for p in &projects {
        text.push_str(&format!("  {:<20} {}\n", p["name"].as_str().unwrap_or(""), p["root"].as_str().unwrap_or("")));
    }
    let mut data = facts;
    data["session"] = json!(session.id);
    data["project"] = project_json;
    booger_proto::wire::ToolReply::ok(text.trim_end(), data)
}
