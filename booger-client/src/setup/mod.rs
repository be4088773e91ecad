//! `booger setup`: connect booger to the MCP clients of this user (or of one project), and
//! undo it.
//!
//! - `booger setup` lists the clients it knows, whether each is installed, and what it would
//!   change; nothing is written.
//! - `booger setup CLIENT...` or `--all` (every installed client) writes; `--print` shows the
//!   exact change instead; `--project PATH` writes the project's configuration instead of the
//!   user's; `--skills` also writes the agent skill; `--hooks` also writes Claude Code's hooks
//!   (see [`hooks`]); `--remove` undoes.
//!
//! Edits keep everything else in the file (see [`edit`]); what was changed is recorded with
//! a copy of the original so `--remove` can restore it (see [`ledger`]).

mod clients;
mod edit;
mod hooks;
mod ledger;
mod skills;
mod target;

use std::path::{Path, PathBuf};

use booger_proto::paths;

use crate::output::{Exit, complain};
use clients::{CLIENTS, Client, Dirs};
use ledger::{Ledger, Undo};

/// A line on stdout; a reader that went away (`booger setup | head`) is not worth a panic.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

pub const USAGE: &str =
    "usage: booger setup [CLIENT...] [--all] [--project PATH] [--print] [--skills] [--hooks] [--remove]
       booger setup --remote URL --token-file FILE CLIENT... [--remove]

Connect booger to your MCP clients. Without CLIENT or --all, lists what it finds and changes
nothing.
  CLIENT          one or more of: claude-code, claude-desktop, cursor, vscode, codex, gemini,
                  windsurf, zed
  --all           every client installed for this user
  --project PATH  write the project's configuration (e.g. PATH/.mcp.json) instead of yours
  --print         show the exact change; write nothing
  --skills        also write the agent skill (Claude Code, Codex) that says when to use which
                  tool; alone, only the skill
  --hooks         also write the hooks of Claude Code and Gemini CLI: their grep answered
                  from booger's index in an indexed project (their own otherwise), and a new
                  session told that booger is there; alone, only the hooks
  --remove        undo: restore each file setup changed (or take booger's entry out of it);
                  alone, undoes everything, skills included
  --remote URL    a team server instead (`boogerd --serve-team`; URL ends in /mcp), as the
                  entry `booger-team` beside the local one, for the clients that take remote
                  servers: claude-code, cursor, vscode, codex, gemini, windsurf
  --token-file F  the file holding your token (`booger team token add`); it is written into
                  the client's configuration, which is then made private to you";

struct Options {
    clients: Vec<&'static Client>,
    all: bool,
    project: Option<PathBuf>,
    print: bool,
    skills: bool,
    hooks: bool,
    remove: bool,
    /// A team server's URL, and the file with the token for it.
    remote: Option<String>,
    token_file: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        clients: Vec::new(),
        all: false,
        project: None,
        print: false,
        skills: false,
        hooks: false,
        remove: false,
        remote: None,
        token_file: None,
    };
    let mut words = args.iter();
    while let Some(w) = words.next() {
        match w.as_str() {
            "--all" => o.all = true,
            "--print" | "--dry-run" => o.print = true,
            "--skills" => o.skills = true,
            "--hooks" => o.hooks = true,
            "--remove" | "--undo" => o.remove = true,
            "--remote" => {
                let url =
                    words.next().ok_or("--remote needs the team server's URL: --remote https://booger.example/mcp")?;
                if !(url.starts_with("https://") || url.starts_with("http://")) {
                    return Err(format!("--remote {url}: an http:// or https:// URL"));
                }
                o.remote = Some(url.clone());
            }
            "--token-file" => {
                let f = words.next().ok_or("--token-file needs the file holding your token")?;
                o.token_file = Some(crate::absolute(Path::new(f)));
            }
            "--project" => {
                let p = words.next().ok_or("--project needs a path: --project ~/src/myrepo")?;
                o.project = Some(crate::absolute(Path::new(p)));
            }
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}")),
            id => {
                let c = clients::find(id).ok_or_else(|| {
                    let ids: Vec<&str> = CLIENTS.iter().map(|c| c.id).collect();
                    format!("unknown client `{id}`; booger knows {}", ids.join(", "))
                })?;
                if !o.clients.iter().any(|k| k.id == c.id) {
                    o.clients.push(c);
                }
            }
        }
    }
    if o.all && !o.clients.is_empty() {
        return Err("name clients or give --all, not both".into());
    }
    if o.remote.is_some() && (o.skills || o.hooks || o.all || o.clients.is_empty()) {
        return Err("--remote: name the clients (no --all, --skills or --hooks)".into());
    }
    match (&o.remote, &o.token_file) {
        (Some(_), None) if !o.remove => {
            return Err("--remote needs --token-file FILE (the token `booger team token add` printed)".into());
        }
        (None, Some(_)) => return Err("--token-file goes with --remote URL".into()),
        _ => {}
    }
    Ok(o)
}

pub fn run(args: &[String]) -> Exit {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        say!("{USAGE}");
        return Exit::Ok;
    }
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            complain!("booger setup: {e}\n\n{USAGE}");
            return Exit::Usage;
        }
    };
    let Some(dirs) = Dirs::from_env() else {
        complain!("booger setup: HOME is not set, so the clients' configurations cannot be found");
        return Exit::Usage;
    };
    // One setup at a time: two at once lost each other's ledger records.
    let _lock = target::lock(&paths::data_dir().join("setup"));
    let name = if o.remote.is_some() { edit::REMOTE_NAME } else { edit::SERVER_NAME };
    let mut setup = Setup { dirs, ledger: Ledger::load(&paths::data_dir()), failed: false, changed: 0, name };
    let token = match (&o.token_file, o.remove) {
        (Some(f), false) => match read_token(f) {
            Ok(t) => Some(t),
            Err(e) => {
                complain!("booger setup: {e}");
                return Exit::Usage;
            }
        },
        _ => None,
    };
    let project = o.project.as_deref();
    let only_extras = (o.skills || o.hooks) && o.clients.is_empty() && !o.all && !o.remove;
    let listing = o.clients.is_empty() && !o.all && !o.skills && !o.hooks && !o.remove;
    // Which clients: the named ones; else with --all (or --print, --remove), every client that
    // applies; a listing shows them all.
    let chosen: Vec<&Client> = match (&o.clients[..], only_extras) {
        (_, true) => Vec::new(),
        ([], false) => CLIENTS
            .iter()
            .filter(|c| project.is_none() || c.has_project_config())
            .filter(|c| listing || o.remove || c.detected(&setup.dirs))
            .collect(),
        (named, false) => named.to_vec(),
    };
    if listing && !o.print {
        setup.list(project);
        return Exit::Ok;
    }
    if chosen.is_empty() && !only_extras {
        say!("No MCP client found for this user; name one: booger setup claude-code (`booger setup` lists them).");
        return Exit::Ok;
    }
    for c in chosen {
        setup.entry(c, &o, token.as_deref());
    }
    setup.extras(&o);
    if setup.changed > 0 && !o.remove && !o.print {
        say!("Restart the clients (or reload their MCP servers) to pick booger up. `booger setup --remove` undoes.");
        warn_if_build_dir(&booger_path());
    }
    if setup.failed { Exit::ToolError } else { Exit::Ok }
}

impl Setup {
    /// Adds (or with `--remove`, takes out) booger's server entry in client `c`'s file.
    fn entry(&mut self, c: &Client, o: &Options, token: Option<&str>) {
        let project = o.project.as_deref();
        let Some(path) = c.config_path(&self.dirs, project) else {
            say!("{}: no project-level configuration; run without --project to set it up for you", c.id);
            return;
        };
        // Where a configuration that is a link may lead: the project for a project's, the
        // home directory for the user's.
        let within = project.map_or_else(|| self.dirs.home.clone(), Path::to_path_buf);
        let real = match target::editable(&path, &within) {
            Ok(real) => real,
            Err(why) => return self.refuse(c, &path, &why),
        };
        // `--print` shows the change with the token held back: a terminal's scrollback and a
        // shared screen are no place for it.
        let shown = token.map(|t| if o.print { "<the token in --token-file>".to_owned() } else { t.to_owned() });
        let entry = match (&o.remote, &shown) {
            (Some(url), Some(t)) => match c.remote_entry(url, t) {
                Some(e) => e,
                None => return say!("{}: its configuration takes no remote MCP server; skipped", c.id),
            },
            _ => c.entry(&booger_path(), &carried_env()),
        };
        if o.remove {
            self.remove(c, &real, o.print);
        } else {
            self.add(c, &real, &entry, o.print);
            if token.is_some() && !o.print {
                self.make_private(c, &real);
            }
        }
    }

    /// The skill and the hooks: when asked, and all of them for `--remove` alone.
    fn extras(&mut self, o: &Options) {
        let project = o.project.as_deref();
        let undo_all = o.remove && o.clients.is_empty() && !o.all;
        // Each goes to the clients named, or to those installed that take it (or, for
        // --remove, to all of them).
        let targets = |takers: &[&'static str], asked: bool, dirs: &Dirs| -> Vec<&'static str> {
            match &o.clients[..] {
                [] => takers
                    .iter()
                    .copied()
                    .filter(|id| o.remove || asked || clients::find(id).is_some_and(|c| c.detected(dirs)))
                    .collect(),
                named => named.iter().map(|c| c.id).collect(),
            }
        };
        if o.skills || undo_all {
            let to = targets(&["claude-code", "codex"], false, &self.dirs);
            self.skills(project, &to, o.remove, o.print);
        }
        if o.hooks || undo_all {
            let takers: Vec<&'static str> = hooks::CLIENTS.iter().map(|c| c.id).collect();
            let to = targets(&takers, false, &self.dirs);
            self.hooks(project, &to, o.remove, o.print);
        }
    }
}

struct Setup {
    dirs: Dirs,
    ledger: Ledger,
    failed: bool,
    changed: usize,
    /// The entry's name: booger's, or a team server's.
    name: &'static str,
}

/// The token in `file`: its one line. Only a regular file is read (a FIFO would block the
/// read for ever), and at most a few KB of it.
fn read_token(file: &Path) -> Result<String, String> {
    use std::io::Read;
    let failed = |e: &dyn std::fmt::Display| format!("--token-file {}: {e}", file.display());
    let meta = std::fs::metadata(file).map_err(|e| failed(&e))?;
    if !meta.is_file() {
        return Err(failed(&"not a regular file; write the token into a file"));
    }
    let mut text = String::new();
    std::fs::File::open(file).and_then(|f| f.take(4096).read_to_string(&mut text)).map_err(|e| failed(&e))?;
    let token = text.trim();
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Err(format!(
            "--token-file {}: holds no token (one line, as `booger team token add` printed it)",
            file.display()
        ));
    }
    Ok(token.to_owned())
}

impl Setup {
    fn list(&self, project: Option<&Path>) {
        say!("booger setup: MCP clients for this {}:\n", if project.is_some() { "project" } else { "user" });
        let booger = booger_path();
        let env = carried_env();
        for c in CLIENTS {
            let Some(path) = c.config_path(&self.dirs, project) else { continue };
            let state = if !c.detected(&self.dirs) && !path.exists() {
                "not installed".to_owned()
            } else {
                let bytes = target::read(&path).ok().flatten().unwrap_or_default();
                let text = String::from_utf8_lossy(&bytes);
                match edit::current(c.format, c.key, edit::SERVER_NAME, &text) {
                    Err(e) => format!("cannot read it ({}); setup would leave it alone", e.0),
                    Ok(Some(v)) if v == c.entry(&booger, &env) => "booger is set up".to_owned(),
                    Ok(Some(_)) => "booger is set up with another command; setup would update it".to_owned(),
                    Ok(None) => "setup would add booger".to_owned(),
                }
            };
            say!("  {:<15} {:<24} {:<44} {state}", c.id, c.name, self.dirs.show(&path));
        }
        for (client, path) in skills::skill_paths(&self.dirs.home, &self.dirs.codex, project) {
            let state = match std::fs::read_to_string(&path) {
                Ok(t) if t == skills::skill_text() => "written",
                Ok(_) => "written by an older booger; --skills updates it",
                Err(_) => "not written (--skills)",
            };
            say!("  {:<15} {:<24} {:<44} {state}", client, "agent skill", self.dirs.show(&path));
        }
        for h in hooks::CLIENTS {
            let settings = h.settings_path(&self.dirs.home, project);
            let text = std::fs::read_to_string(&settings).unwrap_or_default();
            let state = if h.present(&text, &h.command(&booger, &env)) { "written" } else { "not written (--hooks)" };
            say!("  {:<15} {:<24} {:<44} {state}", h.id, "hooks (grep, session)", self.dirs.show(&settings));
        }
        say!(
            "\nbooger setup CLIENT... (or --all) writes; --print shows the change first; --remove undoes.\n\
             The entry runs {} mcp.",
            booger.display()
        );
        warn_if_build_dir(&booger);
    }

    /// `path` is the file itself (a link already followed, see [`target::editable`]).
    fn add(&mut self, c: &Client, path: &Path, entry: &serde_json::Value, print: bool) {
        let old = match target::read(path) {
            Ok(old) => old,
            Err(e) => return self.refuse(c, path, &format!("cannot read it: {e}")),
        };
        let text = match old.as_deref().map(std::str::from_utf8) {
            None => String::new(),
            Some(Ok(t)) => t.to_owned(),
            Some(Err(_)) => return self.refuse(c, path, "it is not UTF-8 text"),
        };
        let new = match edit::add(c.format, c.key, self.name, &text, entry) {
            Err(e) => return self.refuse(c, path, &e.0),
            Ok(None) => {
                say!("{}: {} already has {}; unchanged", c.id, self.dirs.show(path), self.name);
                return;
            }
            Ok(Some(new)) => new,
        };
        if print {
            say!("{}: would change {}:", c.id, self.dirs.show(path));
            print_diff(&text, &new);
            return;
        }
        match self.ledger.write(c.id, path, old.as_deref(), &new) {
            Ok(()) => {
                self.changed += 1;
                let verb = if old.is_some() { format!("added {} to", self.name) } else { "created".to_owned() };
                let backup = self.ledger.backup_of(path).map(|b| format!(" (original kept as {})", self.dirs.show(b)));
                say!("{}: {verb} {}{}", c.id, self.dirs.show(path), backup.unwrap_or_default());
            }
            Err(e) => {
                self.failed = true;
                complain!("{}: could not write {}: {e}", c.id, self.dirs.show(path));
            }
        }
    }

    /// The file now holds a token: only its user may read it.
    fn make_private(&mut self, c: &Client, path: &Path) {
        if let Err(e) = crate::platform::make_private(path) {
            self.failed = true;
            complain!("{}: {} holds your token but could not be made private: {e}", c.id, self.dirs.show(path));
        }
    }

    fn remove(&mut self, c: &Client, path: &Path, print: bool) {
        let Ok(Some(bytes)) = target::read(path) else { return };
        let Ok(text) = String::from_utf8(bytes) else { return };
        let new = match edit::remove(c.format, c.key, self.name, &text) {
            // A file setup never wrote and cannot read holds no booger entry of setup's.
            Err(_) if !self.ledger.knows(path) => return,
            Err(e) => return self.refuse(c, path, &e.0),
            Ok(None) => return,
            Ok(Some(new)) => new,
        };
        if print {
            say!("{}: would change {}:", c.id, self.dirs.show(path));
            print_diff(&text, &new);
            return;
        }
        // The other entry (local or team) stays: the file keeps it, and the ledger the copy
        // from before either.
        let other = if self.name == edit::SERVER_NAME { edit::REMOTE_NAME } else { edit::SERVER_NAME };
        if matches!(edit::current(c.format, c.key, other, &new), Ok(Some(_))) && self.ledger.knows(path) {
            match self.ledger.write(c.id, path, Some(text.as_bytes()), &new) {
                Ok(()) => say!("{}: took {} out of {}", c.id, self.name, self.dirs.show(path)),
                Err(e) => {
                    self.failed = true;
                    complain!("{}: could not write {}: {e}", c.id, self.dirs.show(path));
                }
            }
            return;
        }
        let done = match self.ledger.undo(path) {
            Ok(Undo::Restored) => Ok("restored as it was before setup"),
            Ok(Undo::EditOut) => ledger::replace_file(path, new.as_bytes())
                .and_then(|()| self.ledger.forget(path))
                .map(|()| "took booger's entry out"),
            Err(e) => Err(e),
        };
        match done {
            Ok(what) => {
                self.changed += 1;
                say!("{}: {what}: {}", c.id, self.dirs.show(path));
            }
            Err(e) => {
                self.failed = true;
                complain!("{}: could not write {}: {e}", c.id, self.dirs.show(path));
            }
        }
    }

    fn skills(&mut self, project: Option<&Path>, targets: &[&str], remove: bool, print: bool) {
        let text = skills::skill_text();
        let paths = skills::skill_paths(&self.dirs.home, &self.dirs.codex, project);
        for (client, path) in paths.into_iter().filter(|(client, _)| targets.contains(client)) {
            let now = std::fs::read_to_string(&path).ok();
            let shown = self.dirs.show(&path);
            let result = match (remove, now) {
                (true, Some(t)) if skills::is_ours(&t) => {
                    if print {
                        say!("{client}: would delete the skill {shown}");
                        continue;
                    }
                    match self.ledger.undo(&path) {
                        Ok(Undo::Restored) => Ok(format!("deleted the skill {shown}")),
                        Ok(Undo::EditOut) => std::fs::remove_file(&path).map(|()| {
                            let _ = path.parent().map(std::fs::remove_dir);
                            format!("deleted the skill {shown}")
                        }),
                        Err(e) => Err(e),
                    }
                }
                (true, Some(_)) => Ok(format!("left {shown} alone: booger did not write it")),
                (true, None) => continue,
                (false, Some(t)) if t == text => Ok(format!("the skill {shown} is up to date; unchanged")),
                (false, Some(t)) if !skills::is_ours(&t) => {
                    self.failed = true;
                    complain!("{client}: left {shown} alone: a skill booger did not write is there");
                    continue;
                }
                (false, _) if print => {
                    say!("{client}: would write the skill {shown}:\n{text}");
                    continue;
                }
                (false, now) => self
                    .ledger
                    .write(&format!("{client}-skill"), &path, now.as_deref().map(str::as_bytes), &text)
                    .map(|()| format!("wrote the skill {shown}")),
            };
            match result {
                Ok(line) => {
                    self.changed += usize::from(!line.contains("unchanged") && !line.contains("alone"));
                    say!("{client}: {line}");
                }
                Err(e) => {
                    self.failed = true;
                    complain!("{client}: could not write {shown}: {e}");
                }
            }
        }
    }

    fn refuse(&mut self, c: &Client, path: &Path, why: &str) {
        self.failed = true;
        complain!(
            "{}: left {} untouched: {why}. Fix the file (or move it away), then run `booger setup {}` again.",
            c.id,
            self.dirs.show(path),
            c.id
        );
    }
}

/// Clients keep the path they were given: one inside a cargo build directory breaks with the
/// next `cargo clean`.
fn warn_if_build_dir(booger: &Path) {
    if booger.components().any(|c| c.as_os_str() == "target") {
        say!(
            "Note: {} is inside a build directory; install booger (cargo install --path booger-client, and \
             boogerd likewise) and run setup again from the installed binary.",
            booger.display()
        );
    }
}

/// The installed `booger`, as an absolute path: clients start it without a shell or a PATH.
fn booger_path() -> PathBuf {
    std::env::current_exe().and_then(|e| booger_proto::paths::canonical(&e)).unwrap_or_else(|_| PathBuf::from("booger"))
}

/// The variables that choose booger's daemon and data directory, when this shell sets them:
/// MCP clients start servers with little of the user's environment, and booger started
/// without them would look for another daemon.
fn carried_env() -> Vec<(String, String)> {
    let set = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut env = Vec::new();
    if set(paths::HOME_ENV).is_some() || set("XDG_DATA_HOME").is_some() {
        env.push((paths::HOME_ENV.to_owned(), paths::data_dir().to_string_lossy().into_owned()));
    }
    if let Some(s) = set(paths::SOCKET_ENV) {
        env.push((paths::SOCKET_ENV.to_owned(), s));
    }
    env
}

/// The change from `old` to `new` as one hunk of a unified diff: the lines they share at both
/// ends are left out (an edit here is one contiguous change).
fn print_diff(old: &str, new: &str) {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let context = 2;
    let from = head.saturating_sub(context);
    let after = tail.min(context);
    say!("@@ -{},{} +{},{} @@", from + 1, a.len() - tail - from + after, from + 1, b.len() - tail - from + after);
    for l in &a[from..head] {
        say!(" {l}");
    }
    for l in &a[head..a.len() - tail] {
        say!("-{l}");
    }
    for l in &b[head..b.len() - tail] {
        say!("+{l}");
    }
    for l in a[a.len() - tail..].iter().take(context) {
        say!(" {l}");
    }
}
