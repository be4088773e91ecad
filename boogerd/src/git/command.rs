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
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// git, run in one directory.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
    timeout: Duration,
}

/// What a finished command printed, and whether it succeeded.
#[derive(Debug)]
pub struct Output {
    pub success: bool,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Git {
    pub fn new(dir: &Path) -> Self {
        Self { dir: dir.to_owned(), timeout: TIMEOUT }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs `git args…` and returns its standard output; a non-zero exit is an error
    /// carrying git's own message.
    pub fn run(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        let out = self.output(args, None)?;
        if out.success { Ok(out.stdout) } else { Err(failed(args, out.stderr)) }
    }

    /// Like [`run`](Self::run), with `input` written to git's standard input.
    pub fn run_with_input(&self, args: &[&str], input: Vec<u8>) -> Result<Vec<u8>, GitError> {
        let out = self.output(args, Some(input))?;
        if out.success { Ok(out.stdout) } else { Err(failed(args, out.stderr)) }
    }

    /// Runs `git args…` where a non-zero exit is an answer (e.g. "no such ref"), not a failure.
    pub fn output(&self, args: &[&str], input: Option<Vec<u8>>) -> Result<Output, GitError> {
        let mut cmd = Command::new("git");
        cmd.args(["--no-pager", "-c", "core.quotepath=off", "-c", "color.ui=never"])
            .args(args)
            .current_dir(&self.dir)
            // Read-only commands must not take index.lock (the user's own git would fail).
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
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
