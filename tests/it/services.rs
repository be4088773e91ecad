//! The service files: accepted by their managers' checkers, filled with this user's paths,
//! installed where the manager reads them and removed again.

use std::path::{Path, PathBuf};
use std::process::Command;

use booger_tests::{Env, bin, describe, stderr, stdout};
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// `boogerd` must accept `args`: `--print-config` parses them and exits without starting.
fn assert_boogerd_accepts(args: &[String]) {
    let env = Env::new();
    let mut cmd = env.boogerd();
    cmd.args(args).arg("--print-config");
    let out = booger_tests::output_within(cmd, booger_tests::TIMEOUT);
    assert!(out.status.success(), "boogerd rejects {args:?}: {}", describe(&out));
}

/// What `booger daemon install --print [flag]` would write, without its `#` framing lines.
fn printed_service(env: &Env, flag: &str) -> String {
    let out = env.run(&["daemon", "install", "--print", flag]);
    assert!(out.status.success(), "{}", describe(&out));
    let text = stdout(&out);
    let mut lines: Vec<&str> = text.lines().collect();
    assert!(lines.first().unwrap().starts_with("# would write "), "{text}");
    assert!(lines.last().unwrap().starts_with("# then run: "), "{text}");
    lines.remove(0);
    lines.pop();
    lines.join("\n") + "\n"
}

/// A plist parsed by Python's plistlib, as JSON.
fn parse_plist(text: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("service.plist");
    std::fs::write(&file, text).unwrap();
    let out = Command::new("python3")
        .arg("-c")
        .arg("import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'))))")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "plistlib rejects the plist: {}\n{text}", describe(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn systemd_template_runs_boogerd_without_invented_links() {
    let unit = std::fs::read_to_string(repo().join("systemd/boogerd.service")).unwrap();
    let exec = unit.lines().find_map(|l| l.strip_prefix("ExecStart=")).expect("ExecStart");
    let mut words = exec.split_whitespace();
    assert!(words.next().unwrap().ends_with("/boogerd"), "{exec}");
    assert_boogerd_accepts(&words.map(str::to_owned).collect::<Vec<_>>());
    for line in ["Restart=on-failure", "WantedBy=default.target", "Nice=10", "IOSchedulingClass=best-effort"] {
        assert!(unit.lines().any(|l| l == line), "{line} missing:\n{unit}");
    }
    assert!(!unit.contains("http"), "no invented documentation links:\n{unit}");
    assert!(!unit.contains("edit the path"), "no stale instructions:\n{unit}");
}

#[test]
fn launchd_template_parses_and_lets_a_clean_exit_stop_it() {
    let text = std::fs::read_to_string(repo().join("launchd/dev.booger.boogerd.plist")).unwrap();
    assert!(!text.contains('~'), "launchd expands no ~:\n{text}");
    let plist = parse_plist(&text);
    let args: Vec<String> =
        plist["ProgramArguments"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_owned()).collect();
    assert!(args[0].starts_with('/') && args[0].ends_with("/boogerd"), "{args:?}");
    assert_boogerd_accepts(&args[1..]);
    assert_eq!(plist["RunAtLoad"], true);
    // Restarted only after an unsuccessful exit: `booger daemon stop` stops it for good.
    assert_eq!(plist["KeepAlive"], serde_json::json!({ "SuccessfulExit": false }));
    assert_eq!(plist["ProcessType"], "Background");
}

#[test]
fn installed_plist_carries_this_users_absolute_paths() {
    let env = Env::new();
    let text = printed_service(&env, "--launchd");
    assert!(!text.contains('~'), "{text}");
    let plist = parse_plist(&text);
    let daemon = std::fs::canonicalize(bin("boogerd")).unwrap();
    assert_eq!(plist["ProgramArguments"][0], daemon.display().to_string());
    assert_eq!(plist["EnvironmentVariables"]["BOOGER_SOCKET"], env.socket.display().to_string());
    assert_eq!(plist["EnvironmentVariables"]["BOOGER_HOME"], env.home.display().to_string());
    assert_eq!(plist["StandardErrorPath"], env.home.join("boogerd.log").display().to_string());
}

/// `systemd-analyze verify` on the unit `install` writes. Debian's package `systemd` has it;
/// without it the test says so and passes, unless BOOGER_REQUIRE_SYSTEMD=1 (CI sets it).
#[test]
fn installed_unit_passes_systemd_analyze_verify() {
    let env = Env::new();
    let unit = printed_service(&env, "--systemd");
    let daemon = std::fs::canonicalize(bin("boogerd")).unwrap();
    assert!(unit.contains(&format!("ExecStart={}\n", daemon.display())), "{unit}");
    assert!(unit.contains(&format!("Environment=\"BOOGER_SOCKET={}\"", env.socket.display())), "{unit}");
    assert!(unit.contains(&format!("Environment=\"BOOGER_HOME={}\"", env.home.display())), "{unit}");
    if Command::new("systemd-analyze").arg("--version").output().is_err() {
        booger_tests::missing_optional(
            "systemd-analyze verify on the service file",
            "systemd",
            "BOOGER_REQUIRE_SYSTEMD",
        );
        return;
    }
    let file = env.dir.path().join("boogerd.service");
    std::fs::write(&file, &unit).unwrap();
    let out = Command::new("systemd-analyze").arg("verify").arg(&file).env("SYSTEMD_LOG_COLOR", "0").output().unwrap();
    // verify exits 0 on unknown keys and only warns: any word from it is a finding.
    assert!(out.status.success() && out.stderr.is_empty() && out.stdout.is_empty(), "{}\n{unit}", describe(&out));
}

#[test]
fn install_writes_where_systemd_reads_and_uninstall_removes_it() {
    let env = Env::new();
    let config = env.dir.path().join("xdg-config");
    let unit = config.join("systemd/user/boogerd.service");
    let run = |args: &[&str]| {
        let mut cmd = env.booger(None);
        cmd.args(args).env("XDG_CONFIG_HOME", &config);
        booger_tests::output_within(cmd, booger_tests::TIMEOUT)
    };

    let out = run(&["daemon", "install", "--print"]);
    assert!(stdout(&out).starts_with(&format!("# would write {}\n", unit.display())), "{}", describe(&out));
    assert!(!unit.exists(), "--print writes nothing");

    let out = run(&["daemon", "install"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(stdout(&out).contains("systemctl --user enable --now boogerd.service"), "{}", describe(&out));
    assert!(std::fs::read_to_string(&unit).unwrap().contains("ExecStart=/"));
    // The shell's team index goes to the service's daemon through the data directory (a
    // private file), not through the service file.
    let url = "postgresql://booger@db.example/booger";
    let mut cmd = env.booger(None);
    cmd.args(["daemon", "install"]).env("XDG_CONFIG_HOME", &config).env("BOOGER_TEAM_URL", url);
    let out = booger_tests::output_within(cmd, booger_tests::TIMEOUT);
    assert!(out.status.success(), "{}", describe(&out));
    let kept = env.home.join("team-url");
    assert_eq!(std::fs::read_to_string(&kept).unwrap().trim(), url);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(!std::fs::read_to_string(&unit).unwrap().contains("db.example"));
    // What `systemctl --user enable` would add; uninstall takes it away too.
    let wants = config.join("systemd/user/default.target.wants");
    std::fs::create_dir_all(&wants).unwrap();
    std::os::unix::fs::symlink(&unit, wants.join("boogerd.service")).unwrap();

    let out = run(&["daemon", "uninstall"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(!unit.exists() && wants.join("boogerd.service").symlink_metadata().is_err(), "{}", describe(&out));
    let out = run(&["daemon", "uninstall"]);
    assert!(out.status.success() && stdout(&out).contains("no booger service is installed"), "{}", describe(&out));
}

#[test]
fn daemon_logs_shows_the_last_lines() {
    let env = Env::new();
    let out = env.run(&["daemon", "logs"]);
    assert!(!out.status.success() && stderr(&out).contains("no log at"), "{}", describe(&out));
    // A daemon the client starts logs to the data directory.
    assert!(env.run(&["daemon", "start"]).status.success());
    let out = env.run(&["daemon", "logs", "-n", "3"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(stdout(&out).lines().count(), 3, "{}", describe(&out));
    assert!(stderr(&out).contains("boogerd.log"), "{}", describe(&out));
    let out = env.run(&["daemon", "logs", "-n", "many"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(env.run(&["daemon", "stop"]).status.success());
}
