//! The team server (`boogerd --serve-team`) on a real PostgreSQL: remote agents with tokens of
//! their own, each reading only the repositories its token names.

//!
//! One fixture (two published repositories and a token for each) is shared by the tests of
//! [`access`] (what a token may read) and [`serving`] (how the server holds up).

mod access;
mod serving;

use std::sync::{Arc, Mutex};

use booger_tests::postgres::Postgres;
use booger_tests::team_server::{TeamServer, add_token};
use booger_tests::{DaemonProc, Env, commit_all, describe, git, write};

/// Two published repositories, two commits each, and a token for each.
struct Fixture {
    server: TeamServer,
    _daemon: DaemonProc,
    pg: Postgres,
    env: Env,
    /// Reads `alpha` only.
    alpha: String,
    /// Reads `beta` only.
    beta: String,
    /// beta's commits, first and second: what no alpha token may learn.
    beta_commits: [String; 2],
    alpha_commits: [String; 2],
}

impl Fixture {
    fn new() -> Fixture {
        let env = Env::new();
        let pg = booger_tests::postgres::start(env.dir.path());
        let daemon = env.start_daemon_with(&["--team-url", &pg.url]);
        let publish = |name: &str, word: &str, class: &str| {
            let repo = env.git_project(name);
            write(
                &repo,
                &format!("src/{word}.py"),
                format!(
                    "def {word}_swim(depth):\n    return depth * 2\n\nclass {class}:\n    def hold(self):\n        return {word}_swim(3)\n"
                ),
            );
            write(&repo, "README.md", format!("# {name}\n\nNotes about the {word}.\n"));
            write(
                &repo,
                &format!("tests/test_{word}.py"),
                format!("def test_{word}_swims():\n    assert {word}_swim(2, 1) == 2\n"),
            );
            // Enough files that the second commit is kept as what it changed.
            for i in 0..8 {
                write(&repo, &format!("src/{word}_part_{i}.py"), format!("def part_{i}():\n    return {i}\n"));
            }
            commit_all(&repo, "first");
            assert!(env.run(&["projects", "add", repo.to_str().unwrap()]).status.success());
            let out = env.run_in(Some(&repo), &["publish"]);
            assert!(out.status.success(), "{}", describe(&out));
            let first = git(&repo, &["rev-parse", "HEAD"]).trim().to_owned();
            write(
                &repo,
                &format!("src/{word}.py"),
                format!(
                    "def {word}_swim(depth, speed):\n    return depth * speed\n\ndef {word}_rest():\n    return 0\n\nclass {class}:\n    def hold(self):\n        return {word}_swim(3, 1)\n"
                ),
            );
            commit_all(&repo, "second");
            let out = env.run_in(Some(&repo), &["publish"]);
            assert!(out.status.success(), "{}", describe(&out));
            [first, git(&repo, &["rev-parse", "HEAD"]).trim().to_owned()]
        };
        let alpha_commits = publish("alpha", "aardvark", "Burrow");
        let beta_commits = publish("beta", "zebrafish", "Reef");
        let alpha = add_token(&env, &pg.url, "alice", &["alpha"], None);
        let beta = add_token(&env, &pg.url, "bob", &["be?a"], None);
        let server = TeamServer::start(&env, &pg.url, &[]);
        Fixture { server, _daemon: daemon, pg, env, alpha, beta, beta_commits, alpha_commits }
    }
}

/// How many tests use the shared fixture: the last one to finish stops it.
const USERS: usize = 19;
static SHARED: Mutex<(Option<Arc<Fixture>>, usize)> = Mutex::new((None, 0));

struct Lease(Arc<Fixture>);

impl std::ops::Deref for Lease {
    type Target = Fixture;
    fn deref(&self) -> &Fixture {
        &self.0
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        shared.1 += 1;
        if shared.1 == USERS {
            shared.0 = None;
        }
    }
}

fn fixture() -> Lease {
    let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    let f = shared.0.get_or_insert_with(|| {
        // When only some of these tests run, the last user never comes: the fixture is
        // stopped as the test process exits.
        // SAFETY: registers a function with no arguments that only drops the fixture.
        unsafe { libc::atexit(stop_shared) };
        Arc::new(Fixture::new())
    });
    Lease(f.clone())
}

extern "C" fn stop_shared() {
    if let Ok(mut shared) = SHARED.try_lock() {
        shared.0 = None;
    }
}
