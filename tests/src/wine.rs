//! booger's Windows build, run under Wine: the cross-built `booger.exe` and `boogerd.exe`
//! (target `x86_64-pc-windows-gnu`), a Wine prefix of the test's own, and the daemon on a
//! named pipe of its own.
//!
//! Needs Debian's `wine64` and `gcc-mingw-w64-x86-64` (the README's optional step) and Rust's
//! Windows target, which [`windows_build`] adds with rustup when it is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::describe;

pub const TARGET: &str = "x86_64-pc-windows-gnu";
/// What the README names for these tests.
pub const PACKAGES: &str = "wine64 gcc-mingw-w64-x86-64";
/// Set (by CI) to fail instead of skipping when Wine or mingw is missing.
pub const REQUIRE: &str = "BOOGER_REQUIRE_WINE";
/// Wine's first start in a new prefix takes seconds; a command under it gets this long.
pub const LIMIT: Duration = Duration::from_secs(120);

/// The folder holding `booger.exe`, `boogerd.exe` and the ProcessPrng stand-in Wine 8 lacks,
/// built once per test run; `None` when Wine or mingw is not installed or rustup cannot add
/// the target.
pub fn windows_build() -> Option<PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

fn has(program: &str) -> bool {
    Command::new(program).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

fn build() -> Option<PathBuf> {
    if !has("wine") || !has("x86_64-w64-mingw32-gcc") {
        return None;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output().expect("run rustup");
    if !String::from_utf8_lossy(&installed.stdout).lines().any(|t| t.trim() == TARGET) {
        // Without the target (rustup could not fetch it) there is nothing to build: skipped,
        // or failed where BOOGER_REQUIRE_WINE asks for it.
        let added = Command::new("rustup").args(["target", "add", TARGET]).status();
        if !added.is_ok_and(|s| s.success()) {
            crate::skipped("the Windows build", &format!("`rustup target add {TARGET}` failed"));
            return None;
        }
    }
    // The test binary lives in target/<profile>/deps/; the Windows build goes to
    // target/x86_64-pc-windows-gnu/release/: the release build is the one users get (and
    // the one CI must see build), and it runs faster under Wine.
    let exe = std::env::current_exe().expect("current_exe");
    let target_dir = exe.parent().and_then(Path::parent).and_then(Path::parent).expect("target");
    let status = Command::new(cargo)
        .args(["build", "--quiet", "--release", "--locked", "--target", TARGET, "-p", "boogerd", "-p", "booger-client"])
        .arg("--bins")
        .status()
        .expect("run cargo build");
    assert!(
        status.success(),
        "the Windows build failed: cargo build --release --target {TARGET} -p boogerd -p booger-client"
    );
    let bin = target_dir.join(TARGET).join("release");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/wine");
    let dll = Command::new("x86_64-w64-mingw32-gcc")
        .args(["-shared", "-O2", "-o"])
        .arg(bin.join("bcryptprimitives.dll"))
        .arg(data.join("bcryptprimitives.c"))
        .arg(data.join("bcryptprimitives.def"))
        .arg("-ladvapi32")
        .output()
        .expect("run mingw gcc");
    assert!(dll.status.success(), "building the ProcessPrng stand-in: {}", describe(&dll));
    Some(bin)
}

/// `path` as Wine's Windows programs see it: the Unix root is drive `Z:`.
pub fn windows_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// A Wine prefix and a named pipe of this test's own. Dropping it ends every process of the
/// prefix (the daemon included).
pub struct Wine {
    pub dir: tempfile::TempDir,
    bin: PathBuf,
    pub pipe: String,
}

impl Wine {
    pub fn new(bin: PathBuf) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = tempfile::Builder::new().prefix("bw").tempdir_in("/tmp").expect("tempdir");
        let pipe = format!(r"\\.\pipe\booger-test-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let wine = Self { dir, bin, pipe };
        // Bring the prefix up with no pipes of ours: the wineserver and Wine's services it
        // starts outlive the command and would hold a captured stdout open. The server stays
        // (`--persistent`) so no later command starts another with its pipes.
        std::fs::create_dir_all(wine.dir.path().join("prefix")).expect("make the prefix folder");
        let mut server = wine.wine_command("wineserver");
        server.arg("--persistent").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        assert!(server.status().expect("run wineserver").success(), "wineserver --persistent failed");
        let mut boot = wine.wine_command("wineboot");
        boot.arg("--init").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        let booted = boot.status().expect("run wineboot");
        assert!(booted.success(), "wineboot --init failed");
        wine
    }

    /// `program` (`wine`, `wineserver`, …) with this prefix and this test's pipe and data
    /// directory.
    pub fn wine_command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("BOOGER_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("WINEPREFIX", self.dir.path().join("prefix"))
            .env("WINEDEBUG", "-all")
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
            .env("BOOGER_SOCKET", &self.pipe)
            .env("BOOGER_HOME", windows_path(&self.home()))
            .env("BOOGER_HTTP", "127.0.0.1:0")
            .env("BOOGER_LOG", "debug");
        cmd
    }

    /// The daemon's data directory, on the Unix side.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `booger.exe args…` under Wine, run in `cwd` (a Unix path; Wine maps it to `Z:`).
    pub fn booger(&self, cwd: &Path) -> Command {
        self.exe("booger.exe", cwd)
    }

    /// One of the built programs (`booger.exe`, `boogerd.exe`) under Wine, run in `cwd`.
    pub fn exe(&self, name: &str, cwd: &Path) -> Command {
        let mut cmd = self.wine_command("wine");
        cmd.arg(self.bin.join(name)).current_dir(cwd).stdin(Stdio::null());
        cmd
    }

    /// Runs `booger.exe args…` to completion.
    pub fn run(&self, cwd: &Path, args: &[&str]) -> Output {
        let mut cmd = self.booger(cwd);
        cmd.args(args);
        self.output(cmd)
    }

    /// Runs `cmd` (a Windows program under Wine) to completion. Its output goes through files,
    /// not pipes: a daemon it starts inherits Wine's Unix descriptors, and a pipe would stay
    /// open until the daemon ends.
    pub fn output(&self, mut cmd: Command) -> Output {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let (out, err) = (self.dir.path().join(format!("out-{n}")), self.dir.path().join(format!("err-{n}")));
        cmd.stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).expect("stdout file"))
            .stderr(std::fs::File::create(&err).expect("stderr file"));
        let mut child = cmd.spawn().expect("run wine");
        let deadline = Instant::now() + LIMIT;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for wine") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("{cmd:?} did not finish within {LIMIT:?}\nlog:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let read = |p: &Path| std::fs::read(p).unwrap_or_default();
        Output { status, stdout: read(&out), stderr: read(&err) }
    }

    /// The daemon's log, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.home().join(booger_proto::paths::LOG_FILE)).unwrap_or_default()
    }
}

impl Drop for Wine {
    fn drop(&mut self) {
        let mut kill = self.wine_command("wineserver");
        kill.arg("--kill").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        let _ = kill.status();
    }
}
