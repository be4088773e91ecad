//! Python packages the tests drive booger with (the official MCP SDK, Prometheus' parser),
//! installed by pip into `target/` on first use.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use crate::{Env, describe};

/// The official MCP Python SDK's version the tests use, and Prometheus' own Python client,
/// whose parser reads `/metrics`.
pub const MCP_SDK: &str = "mcp==2.3.0 prometheus-client==0.21.1";

/// `python3` that can `import mcp` and `prometheus_client`: pinned, installed by pip on first
/// use into `target/py-mcp` (once; later runs reuse it), so the test command needs nothing
/// installed beforehand. Panics, saying what failed, when pip cannot install them.
pub fn python_with_mcp(env: &Env) -> Command {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    let site = SITE.get_or_init(|| pip_site("py-mcp", MCP_SDK, &[]));
    let mut py = env.command("python3");
    py.env("PYTHONPATH", site).env("PYTHONNOUSERSITE", "1");
    py
}

/// `target/<dir>`, with the pip packages `spec` (space-separated) installed into it on first
/// use and reused after (a marker holds the spec it was made for). Another test process
/// installing at the same time is harmless: each builds its own copy and the first to finish
/// wins. Panics, saying what failed, when pip cannot install them.
pub fn pip_site(dir: &str, spec: &str, pip_args: &[&str]) -> PathBuf {
    // The test binary lives in target/<profile>/deps/.
    let exe = std::env::current_exe().expect("current_exe");
    let target = exe.ancestors().nth(3).expect("target dir").to_owned();
    let site = target.join(dir);
    if std::fs::read_to_string(site.join(".installed")).is_ok_and(|v| v == spec) {
        return site;
    }
    let staging = target.join(format!("{dir}.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let out = Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input"])
        .args(pip_args)
        .arg("--target")
        .arg(&staging)
        .args(spec.split(' '))
        .output()
        .expect("run python3 -m pip");
    assert!(out.status.success(), "installing {spec} with pip failed: {}", describe(&out));
    std::fs::write(staging.join(".installed"), spec).expect("write marker");
    let _ = std::fs::remove_dir_all(&site);
    if std::fs::rename(&staging, &site).is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    site
}
