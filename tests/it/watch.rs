//! The live index: the daemon follows file changes without being asked, answers never come
//! silently from a stale index, and every way a change can reach the disk (edits, deletes,
//! renames, directory moves, bursts, changes while stopped) ends in the index a fresh full
//! run would build.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use booger_tests::{Env, write};
use serde_json::{Value, json};

/// A registered, indexed project with a few files.
fn project(env: &Env, name: &str) -> std::path::PathBuf {
    let root = env.project(name);
    write(&root, "src/app.py", "def start_app():\n    return 1\n");
    write(&root, "src/util/strings.py", "def shout(s):\n    return s.upper()\n");
    write(&root, "lib/core.rs", "pub fn core_entry() -> u32 { 7 }\n");
    write(&root, ".gitignore", "*.log\nbuild/\n");
    let out = env.json(&["index", root.to_str().unwrap()]);
    assert!(out["report"]["files"].as_u64().unwrap() >= 3, "{out}");
    root
}

/// Paths of the chunks named `name` that `search` finds.
fn paths_defining(env: &Env, root: &Path, name: &str) -> Vec<String> {
    let (text, data, err) = env.call(root, "w", "search", json!({ "query": name }));
    assert!(!err, "{text}");
    let mut paths: Vec<String> = data["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["name"] == name)
        .filter_map(|r| r["path"].as_str().map(str::to_owned))
        .collect();
    paths.sort();
    paths
}

/// Polls until `f` holds (the watcher applies changes on its own; tests do not sleep blindly).
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The project's watch as `status` reports it.
fn watch_status(env: &Env, root: &Path) -> Value {
    let (_, data, _) = env.call(root, "w", "status", json!({}));
    data["project"]["index"]["watch"].clone()
}

/// Waits until the watcher has nothing queued or running and the project is in `state`.
fn settled(env: &Env, root: &Path, state: &str) {
    let mut quiet = 0;
    eventually(&format!("watch of {} settled in {state}", root.display()), || {
        let w = watch_status(env, root);
        let idle = w["state"] == state && w["queue"] == 0 && w["applying"] == false;
        quiet = if idle { quiet + 1 } else { 0 };
        quiet >= 3
    });
}

/// Every chunk of an index as comparable rows.
fn chunk_set(index_dir: &Path) -> BTreeSet<(String, String, String, u32, u32, String)> {
    let store = boogerd::store::Store::open_existing(index_dir).unwrap().expect("index exists");
    let mut set = BTreeSet::new();
    for (path, _) in store.hashes().unwrap() {
        for c in store.chunks_of(&path).unwrap() {
            set.insert((path.clone(), c.kind.to_string(), c.name, c.start_line, c.end_line, c.content));
        }
    }
    set
}

/// The chunks a fresh full index of a copy of `root` holds.
fn fresh_chunk_set(root: &Path) -> BTreeSet<(String, String, String, u32, u32, String)> {
    let copy = tempfile::tempdir().unwrap();
    booger_tests::copy_tree(root, copy.path(), &[], &[".booger"]);
    let index = tempfile::tempdir().unwrap();
    let store = boogerd::store::Store::open(index.path(), copy.path()).unwrap();
    boogerd::engine::index::run(copy.path(), &store, Default::default(), &Default::default()).unwrap();
    chunk_set(index.path())
}

#[test]
fn edits_deletes_renames_and_moved_directories_are_followed() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "live");
    settled(&env, &root, "watching");

    // Read-your-writes: straight after the write, the answer has the edit, or names the file
    // as still pending (never a silent stale answer).
    write(&root, "src/app.py", "def start_app():\n    return 1\n\ndef freshly_saved():\n    return 2\n");
    let (text, data, _) = env.call(&root, "w", "search", json!({ "query": "freshly_saved" }));
    let found = data["results"].as_array().is_some_and(|r| r.iter().any(|x| x["name"] == "freshly_saved"));
    let pending = data["index"]["pending"].as_array().is_some_and(|p| p.iter().any(|x| x == "src/app.py"));
    assert!(found || pending, "neither found nor pending: {text} {data}");
    assert!(data["index"]["generation"].as_u64().is_some(), "{data}");
    eventually("edit indexed", || paths_defining(&env, &root, "freshly_saved") == ["src/app.py"]);

    // Delete.
    std::fs::remove_file(root.join("lib/core.rs")).unwrap();
    eventually("delete followed", || paths_defining(&env, &root, "core_entry").is_empty());

    // Rename: the old path goes, the new one comes.
    std::fs::rename(root.join("src/util/strings.py"), root.join("src/util/text.py")).unwrap();
    eventually("rename followed", || paths_defining(&env, &root, "shout") == ["src/util/text.py"]);

    // A directory created with files in it at once (the files can land before its watch).
    std::fs::create_dir_all(root.join("pkg/a/b")).unwrap();
    write(&root, "pkg/a/b/deep.py", "def deep_inside():\n    pass\n");
    write(&root, "pkg/top.py", "def pkg_top():\n    pass\n");
    eventually("new directory tree indexed", || {
        paths_defining(&env, &root, "deep_inside") == ["pkg/a/b/deep.py"]
            && paths_defining(&env, &root, "pkg_top") == ["pkg/top.py"]
    });

    // A directory moved out of the project, then back in under another name.
    let outside = env.project("outside");
    std::fs::remove_dir_all(&outside).ok();
    std::fs::rename(root.join("pkg"), &outside).unwrap();
    eventually("moved-out directory dropped", || paths_defining(&env, &root, "deep_inside").is_empty());
    std::fs::rename(&outside, root.join("vendored")).unwrap();
    eventually("moved-in directory indexed", || paths_defining(&env, &root, "deep_inside") == ["vendored/a/b/deep.py"]);
    // And still followed inside its new place.
    write(&root, "vendored/a/b/later.py", "def written_later():\n    pass\n");
    eventually("file in moved-in directory", || {
        paths_defining(&env, &root, "written_later") == ["vendored/a/b/later.py"]
    });

    // Gitignored files are never indexed, whenever they appear; a later ordinary write marks
    // the point by which the ignored ones would have been seen.
    write(&root, "debug.log", "def ignored_log():\n    pass\n");
    write(&root, "build/gen.py", "def ignored_build():\n    pass\n");
    write(&root, "src/marker.py", "def marker_fn():\n    pass\n");
    eventually("marker indexed", || paths_defining(&env, &root, "marker_fn") == ["src/marker.py"]);
    settled(&env, &root, "watching");
    let (text, _, _) = env.call(&root, "w", "grep", json!({ "pattern": "ignored_" }));
    assert!(!text.contains("ignored_log") && !text.contains("ignored_build"), "{text}");

    // Vendored files are set aside as they appear; attributes written later set aside what
    // they name, and the file is back once they no longer do.
    write(&root, "third_party/dep/lib.py", "def theirs_vendored():\n    pass\n");
    write(&root, "src/marker2.py", "def marker_two():\n    pass\n");
    eventually("second marker indexed", || paths_defining(&env, &root, "marker_two") == ["src/marker2.py"]);
    assert!(paths_defining(&env, &root, "theirs_vendored").is_empty());
    write(&root, ".gitattributes", "src/app.py linguist-generated\n");
    eventually("attributes followed", || paths_defining(&env, &root, "freshly_saved").is_empty());
    write(&root, ".gitattributes", "# nothing set aside here\n");
    eventually("attributes undone", || paths_defining(&env, &root, "freshly_saved") == ["src/app.py"]);

    settled(&env, &root, "watching");
    assert_eq!(chunk_set(&env.index_dir(&root)), fresh_chunk_set(&root), "the live index differs from a fresh one");
    let w = watch_status(&env, &root);
    assert!(w["batches_applied"].as_u64().unwrap() >= 6, "{w}");
    assert!(w["last_change_applied"]["at"].is_string(), "{w}");
}

#[test]
fn a_burst_of_2000_writes_converges_to_a_fresh_full_index() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "burst");
    for i in 0..200 {
        write(&root, &format!("old/m{}/f{i}.py", i % 10), format!("def old_{i}():\n    return {i}\n"));
    }
    env.json(&["index", root.to_str().unwrap()]);
    settled(&env, &root, "watching");
    let before = watch_status(&env, &root)["batches_applied"].as_u64().unwrap();

    // Like a branch switch: rewrite existing files, delete some, create 2,000 in new
    // directories, rename a directory.
    for i in 0..200 {
        let p = format!("old/m{}/f{i}.py", i % 10);
        if i % 4 == 0 {
            std::fs::remove_file(root.join(p)).unwrap();
        } else {
            write(&root, &p, format!("def changed_{i}():\n    return -{i}\n"));
        }
    }
    for i in 0..2000 {
        write(&root, &format!("new/d{}/e{}/g{i}.py", i % 20, i % 7), format!("def gen_{i}(x):\n    return x * {i}\n"));
    }
    std::fs::rename(root.join("old/m3"), root.join("old/renamed3")).unwrap();

    eventually("burst indexed", || paths_defining(&env, &root, "gen_1999").len() == 1);
    settled(&env, &root, "watching");
    let live = chunk_set(&env.index_dir(&root));
    let fresh = fresh_chunk_set(&root);
    assert_eq!(live.len(), fresh.len());
    assert!(live == fresh, "differs: {:?}", live.symmetric_difference(&fresh).take(5).collect::<Vec<_>>());
    // A handful of batches, not thousands of transactions.
    let batches = watch_status(&env, &root)["batches_applied"].as_u64().unwrap() - before;
    assert!(batches <= 40, "{batches} batches for one burst");
}

#[test]
fn changes_made_while_the_daemon_is_down_are_picked_up_at_start() {
    let env = Env::new();
    let root;
    {
        let mut d = env.start_daemon();
        root = project(&env, "offline");
        settled(&env, &root, "watching");
        d.signal(libc::SIGTERM);
        d.wait();
    }
    write(&root, "src/app.py", "def start_app_v2():\n    return 2\n");
    std::fs::remove_file(root.join("lib/core.rs")).unwrap();
    write(&root, "added/while_down.py", "def added_while_down():\n    pass\n");

    let _d = env.start_daemon();
    eventually("reconciled at start", || {
        paths_defining(&env, &root, "added_while_down") == ["added/while_down.py"]
            && paths_defining(&env, &root, "start_app_v2") == ["src/app.py"]
            && paths_defining(&env, &root, "core_entry").is_empty()
    });
    settled(&env, &root, "watching");
    // And followed from then on.
    write(&root, "added/after_start.py", "def after_start():\n    pass\n");
    eventually("followed after start", || paths_defining(&env, &root, "after_start") == ["added/after_start.py"]);
    assert_eq!(chunk_set(&env.index_dir(&root)), fresh_chunk_set(&root));
}

#[test]
fn a_missing_project_is_marked_and_resumes_when_it_returns() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "comes-and-goes");
    settled(&env, &root, "watching");
    let away = root.with_file_name("comes-and-goes-away");
    std::fs::rename(&root, &away).unwrap();
    eventually("marked missing", || watch_status(&env, &root)["state"] == "missing");
    let (text, _, _) = env.call(&root, "w", "status", json!({}));
    assert!(text.contains("missing"), "{text}");
    // The daemon is fine meanwhile.
    let other = project(&env, "other");
    assert_eq!(paths_defining(&env, &other, "start_app"), ["src/app.py"]);

    write(&away, "src/while_away.py", "def while_away():\n    pass\n");
    std::fs::rename(&away, &root).unwrap();
    settled(&env, &root, "watching");
    assert_eq!(paths_defining(&env, &root, "while_away"), ["src/while_away.py"]);
    write(&root, "src/back.py", "def back_again():\n    pass\n");
    eventually("followed again", || paths_defining(&env, &root, "back_again") == ["src/back.py"]);
}

#[test]
fn past_the_watch_limit_a_project_is_rescanned_and_says_so() {
    let env = Env::new();
    let _d = env.start_daemon_with(&["--max-watches", "2", "--rescan-secs", "1"]);
    let root = project(&env, "limited");
    settled(&env, &root, "rescanning");
    let w = watch_status(&env, &root);
    assert!(w["reason"].as_str().unwrap().contains("watch limit"), "{w}");
    let (text, _, _) = env.call(&root, "w", "status", json!({}));
    assert!(text.contains("watch limit"), "{text}");
    // A change in a directory that has no watch still arrives, by the periodic re-walk.
    write(&root, "src/util/unwatched.py", "def found_by_rescan():\n    pass\n");
    eventually("found by a re-walk", || paths_defining(&env, &root, "found_by_rescan") == ["src/util/unwatched.py"]);
}

/// The daemon's event count and the project's work counters.
fn counters(env: &Env, root: &Path) -> (u64, u64, u64, u64) {
    let (_, data, _) = env.call(root, "w", "status", json!({}));
    let w = &data["project"]["index"]["watch"];
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    (n(&data["watches"]["events"]), n(&w["batches_applied"]), n(&w["whole_walks"]), n(&w["resurveys"]))
}

#[test]
fn reading_every_file_causes_no_events_and_no_work() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "reads");
    for i in 0..200 {
        write(&root, &format!("many/m{}/f{i}.py", i % 10), format!("def many_{i}():\n    return {i}\n"));
    }
    eventually("new files indexed", || paths_defining(&env, &root, "many_199") == ["many/m9/f199.py"]);
    settled(&env, &root, "watching");
    let before = counters(&env, &root);
    // What builds, editors, `git status`, `rg` and agents do all day: open, read, close.
    for _ in 0..3 {
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().filter_map(Result::ok) {
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                } else {
                    std::fs::read(e.path()).unwrap();
                }
            }
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(counters(&env, &root), before, "(events, batches, whole walks, re-surveys) moved on reads alone");
}

#[test]
fn lost_events_are_found_by_a_resurvey_not_a_walk() {
    let queue: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16_384);
    if queue > 1_000_000 {
        eprintln!("skipped: the inotify queue holds {queue} events; overflowing it would take too long");
        return;
    }
    let env = Env::new();
    let d = env.start_daemon();
    let root = env.project("lost");
    write(&root, "src/app.py", "def start_app():\n    return 1\n");
    write(&root, "lib/core.rs", "pub fn core_entry() -> u32 { 7 }\n");
    write(&root, "flood/a.txt", "a\n");
    write(&root, "flood/b.txt", "b\n");
    env.json(&["index", root.to_str().unwrap()]);
    settled(&env, &root, "watching");
    let (_, _, walks_before, _) = counters(&env, &root);

    // The daemon cannot read events while stopped: the kernel's queue overflows.
    d.stop();
    // Written in place (its directory's mtime does not move), created in a new directory,
    // deleted.
    write(&root, "src/app.py", "def start_app():\n    return 1\n\ndef edited_in_place():\n    return 2\n");
    write(&root, "pkg/new.py", "def created_while_lost():\n    pass\n");
    std::fs::remove_file(root.join("lib/core.rs")).unwrap();
    // Then more events than the queue holds (two files in turn, so the kernel cannot merge them).
    let files = [
        std::fs::File::open(root.join("flood/a.txt")).unwrap(),
        std::fs::File::open(root.join("flood/b.txt")).unwrap(),
    ];
    let t0 = std::time::SystemTime::now();
    for i in 0..queue + 100 {
        files[i % 2].set_modified(t0 + Duration::from_millis(i as u64)).unwrap();
    }
    d.signal(libc::SIGCONT);

    eventually("changes made while events were lost are indexed", || {
        paths_defining(&env, &root, "edited_in_place") == ["src/app.py"]
            && paths_defining(&env, &root, "created_while_lost") == ["pkg/new.py"]
            && paths_defining(&env, &root, "core_entry").is_empty()
    });
    settled(&env, &root, "watching");
    let w = watch_status(&env, &root);
    let (_, all, _) = env.call(&root, "w", "status", json!({}));
    assert!(w["overflows"].as_u64().unwrap() >= 1, "{w} {}", all["watches"]);
    assert!(w["resurveys"].as_u64().unwrap() >= 1, "{w}");
    assert_eq!(w["whole_walks"].as_u64().unwrap(), walks_before, "a lost event cost a whole walk: {w}");
    assert_eq!(chunk_set(&env.index_dir(&root)), fresh_chunk_set(&root), "the live index differs from a fresh one");
}

/// A file swapped for a FIFO (or a symlink) between the walk and the read never stalls the
/// project: the read does not block, the FIFO is skipped, later edits are followed and
/// `booger index` finishes.
#[cfg(unix)]
#[test]
fn a_fifo_swapped_in_while_indexing_never_stalls_the_project() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = project(&env, "racy");
    settled(&env, &root, "watching");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, root) = (stop.clone(), root.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Each name is a regular file, then a FIFO nobody writes, then a symlink.
                for k in 0..20 {
                    let (tmp, name) = (root.join(format!("swap{k}.tmp")), root.join(format!("src/racy{k}.py")));
                    let _ = std::fs::remove_file(&tmp);
                    let made = match i % 3 {
                        0 => std::fs::write(&tmp, format!("def racy_{i}():\n    pass\n")).is_ok(),
                        1 => {
                            let c = std::ffi::CString::new(tmp.to_str().unwrap()).unwrap();
                            unsafe { libc::mkfifo(c.as_ptr(), 0o600) == 0 }
                        }
                        _ => std::os::unix::fs::symlink("/etc/passwd", &tmp).is_ok(),
                    };
                    if made {
                        let _ = std::fs::rename(&tmp, &name);
                    }
                }
                i += 1;
            }
        })
    };
    for _ in 0..10 {
        let out = env.run_within(None, &["index", root.to_str().unwrap()], Duration::from_secs(20));
        assert!(out.status.success(), "{}", booger_tests::describe(&out));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    let out = env.run_within(None, &["index", root.to_str().unwrap()], Duration::from_secs(20));
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    write(&root, "src/after.py", "def after_the_race():\n    pass\n");
    eventually("an edit after the race", || paths_defining(&env, &root, "after_the_race") == ["src/after.py"]);
    let (text, _, _) = env.call(&root, "w", "grep", json!({ "pattern": "root:x:0" }));
    assert!(!text.contains("racy"), "a symlink's target was read: {text}");
}
