//! `team-status`: what the team index holds (see [`crate::store::team`]).

use booger_proto::answers;
use booger_proto::tools::args;

use super::call::{Call, Outcome, answer, failed};
use crate::store::team::{Reader, TeamError, TeamStore, server_of};

pub(super) fn run(call: &Call, _: args::TeamStatus) -> Outcome {
    let url = super::team::url_of(call, "team-status")?;
    let server = server_of(&url);
    let mut team = match TeamStore::connect_to_read(&url) {
        Ok(team) => team,
        // A database nothing was published to: said as it is (reading makes no schema there).
        Err(TeamError::NotReady { found: 0, .. }) => {
            let text = format!("team index {server}: nothing published yet (the first publish makes its schema)");
            return Ok(answer(text, &answers::TeamStatus { server, ..Default::default() }));
        }
        Err(e) => return Err(failed("team-status", e)),
    };
    let repos = team.repositories(Reader::Everyone).map_err(|e| failed("team-status", e))?;
    let (blobs, chunks, size, schema) = team.totals().map_err(|e| failed("team-status", e))?;
    let mut text = format!(
        "team index {server} (schema {schema}): {} repositories, ~{blobs} blobs, ~{chunks} chunks, {} MB\n",
        repos.len(),
        size >> 20
    );
    for r in &repos {
        let prebuilt = r
            .prebuilt
            .as_deref()
            .map_or_else(String::new, |p| format!(", prebuilt index at {}", &p[..p.len().min(12)]));
        text.push_str(&format!(
            "{}  head {}  {} files  {} commit(s), last published {}{prebuilt}\n",
            r.name,
            &r.head[..r.head.len().min(12)],
            r.files,
            r.commits,
            r.last_publish
        ));
    }
    let data = answers::TeamStatus {
        server,
        schema,
        repositories: repos
            .into_iter()
            .map(|r| answers::TeamRepository {
                name: r.name,
                head: r.head,
                files: r.files,
                commits: r.commits,
                last_publish: r.last_publish,
                prebuilt_index: r.prebuilt,
            })
            .collect(),
        blobs,
        chunks,
        size_bytes: size,
    };
    Ok(answer(text.trim_end(), &data))
}
