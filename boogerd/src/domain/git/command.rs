//! Running git: a child process with explicit arguments (never through a shell), an
//! environment that keeps its output machine-readable and its hands off the user's locks,
//! and a deadline.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::GitError;

/// How long one git command may run before it is killed.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(20);

/// Settings a repository's own `.git/config` could use to run a program, off for every
/// command. A repository is untrusted, and its configuration can come with its files (a
/// tarball, a zip, a shared folder). Filters and diff drivers are named by the repository, so
/// those it configures are listed first and switched off by name ([`Git::new`]).
const NO_PROGRAMS: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=:",
    "sequence.editor=:",
    "log.showSignature=false",
    "credential.helper=",
    "core.askPass=",
    "core.sshCommand=ssh",
    "protocol.allow=never",
];

/// git, run in one directory.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
    timeout: Duration,
    /// `-c` pairs switching off the filters and diff drivers the repository configures.
    drivers_off: Vec<String>,
}

/// What a finished command printed, and whether it succeeded.
#[derive(Debug)]
pub(crate) struct Output {
    pub success: bool,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Git {
    pub(crate) fn new(dir: &Path) -> Self {
        let mut git = Self { dir: dir.to_owned(), timeout: TIMEOUT, drivers_off: Vec::new() };
        git.drivers_off = git.configured_drivers();
        git
    }

    /// `name=` for every program-running key of a filter or diff driver defined anywhere git
    /// reads configuration from here: the repository's `.git/config` and its worktree's, the
    /// user's and the system's, and every file those pull in through `[include]` and
    /// `[includeIf]` (a repository's configuration can include a file it ships). An empty
    /// command is no command to git; a driver `.gitattributes` names but nothing defines runs
    /// nothing. Reading configuration runs nothing.
    fn configured_drivers(&self) -> Vec<String> {
        let pattern = r"^(filter|diff|merge)\..+\.(clean|smudge|process|textconv|command|driver)$";
        let args = ["config", "--includes", "--null", "--name-only", "--get-regexp", pattern];
        let Ok(out) = self.output(&args, None) else {
            return Vec::new();
        };
        out.stdout
            .split(|&b| b == 0)
            .filter(|name| !name.is_empty())
            .filter_map(|name| std::str::from_utf8(name).ok())
            .map(|name| format!("{name}="))
            .collect()
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs `git args…` and returns its standard output; a non-zero exit is an error
    /// carrying git's own message.
    pub(crate) fn run(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        let out = self.output(args, None)?;
        if out.success { Ok(out.stdout) } else { Err(failed(args, out.stderr)) }
    }

    /// Like [`run`](Self::run), with `input` written to git's standard input.
    pub(crate) fn run_with_input(&self, args: &[&str], input: Vec<u8>) -> Result<Vec<u8>, GitError> {
        let out = self.output(args, Some(input))?;
        if out.success { Ok(out.stdout) } else { Err(failed(args, out.stderr)) }
    }

    /// Runs `git args…` where a non-zero exit is an answer (e.g. "no such ref"), not a failure.
    pub(crate) fn output(&self, args: &[&str], input: Option<Vec<u8>>) -> Result<Output, GitError> {
        let mut cmd = Command::new("git");
        cmd.args(["--no-pager", "-c", "core.quotepath=off", "-c", "color.ui=never"]);
        for setting in NO_PROGRAMS.iter().copied().chain(self.drivers_off.iter().map(String::as_str)) {
            cmd.args(["-c", setting]);
        }
        cmd.args(args)
            .current_dir(&self.dir)
            // Read-only commands must not take index.lock (the user's own git would fail).
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            // What git reads is what the objects' ids name: no replace refs, no grafts (a
            // repository's own `git replace` would hand another blob's bytes out under an id).
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            // (A path that cannot exist: git reads no grafts and says nothing of it.)
            .env("GIT_GRAFT_FILE", "/dev/null/grafts")
            .env_remove("GIT_REPLACE_REF_BASE")
            .env_remove("GIT_CONFIG_COUNT")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_EXTERNAL_DIFF")
            .env_remove("GIT_PAGER")
            .env_remove("GIT_CONFIG_PARAMETERS")
            .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound { GitError::NotInstalled } else { GitError::Io(e) }
        })?;

        // Standard output is read on its own thread: it reaches EOF when git exits, so the
        // deadline is a channel timeout rather than a polling loop.
        let (done, finished) = mpsc::channel();
        let mut stdout = child.stdout.take().expect("piped");
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let r = stdout.read_to_end(&mut buf).map(|_| buf);
            let _ = done.send(r);
        });
        let mut stderr = child.stderr.take().expect("piped");
        let errors = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).trim().to_owned()
        });
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            std::thread::spawn(move || {
                // git may exit before reading everything (an error): a broken pipe is fine.
                let _ = stdin.write_all(&input);
            });
        }

        let stdout = match finished.recv_timeout(self.timeout) {
            Ok(r) => r.map_err(GitError::Io)?,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(GitError::Timeout { args: args.join(" "), secs: self.timeout.as_secs() });
            }
        };
        let status = child.wait().map_err(GitError::Io)?;
        let stderr = errors.join().unwrap_or_default();
        Ok(Output { success: status.success(), stdout, stderr })
    }
}

fn failed(args: &[&str], stderr: String) -> GitError {
    GitError::Failed { args: args.join(" "), message: stderr }
}
