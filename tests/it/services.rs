//! The service files start the right binary with flags it accepts.

use std::path::{Path, PathBuf};

use booger_tests::{Env, bin, describe, stdout};

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

#[test]
fn systemd_unit_runs_boogerd() {
    let unit = std::fs::read_to_string(repo().join("systemd/boogerd.service")).unwrap();
    let exec = unit.lines().find_map(|l| l.strip_prefix("ExecStart=")).expect("ExecStart");
    let mut words = exec.split_whitespace();
    assert!(words.next().unwrap().ends_with("/boogerd"), "{exec}");
    assert_boogerd_accepts(&words.map(str::to_owned).collect::<Vec<_>>());
    assert!(unit.contains("Restart=on-failure"));
    assert!(unit.contains("WantedBy=default.target"));
    assert!(unit.contains("systemctl --user enable"), "install instructions in the header");
}

#[test]
fn launchd_plist_runs_boogerd() {
    let plist = std::fs::read_to_string(repo().join("launchd/dev.booger.boogerd.plist")).unwrap();
    let args_block = plist.split("<key>ProgramArguments</key>").nth(1).unwrap().split("</array>").next().unwrap();
    let args: Vec<String> =
        args_block.split("<string>").skip(1).map(|s| s.split("</string>").next().unwrap().to_owned()).collect();
    assert!(args[0].ends_with("/boogerd"), "{args:?}");
    assert_boogerd_accepts(&args[1..]);
    assert!(plist.contains("<key>RunAtLoad</key>\n    <true/>"));
    assert!(plist.contains("<key>KeepAlive</key>\n    <true/>"));
    assert!(plist.contains("launchctl load"), "install instructions in the header");
}

#[test]
fn install_print_shows_the_unit_with_the_real_binary() {
    let env = Env::new();
    let out = env.run(&["daemon", "install", "--print"]);
    assert!(out.status.success(), "{}", describe(&out));
    let text = stdout(&out);
    let daemon = std::fs::canonicalize(bin("boogerd")).unwrap();
    assert!(text.contains(&format!("ExecStart={}", daemon.display())), "{text}");
    assert!(text.contains(".config/systemd/user/boogerd.service"), "{text}");
    // --print writes nothing.
    assert!(!env.dir.path().join(".config/systemd/user/boogerd.service").exists());
}
