//! The daemon's layers, held by tests: a module uses only the layers below its own (and the
//! exceptions named in ARCHITECTURE.md), no two modules or sibling files use each other (here
//! and in the protocol and client crates), and
//! ARCHITECTURE.md's codemap names every module.
//!
//! The import graph is read from the sources (`crate::…` and `super::…` paths, test code
//! left out), so a new upward import fails here before anyone reviews it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom first. The crate root (`lib.rs`, `main.rs`) counts as `serve`.
const LAYERS: &[&str] = &["base", "source", "store", "domain", "engine", "tools", "fronts", "serve"];

/// Folders that only group one layer's modules: a module there is `layer/name`.
const GROUPS: &[&str] = &["base", "domain", "engine", "fronts"];

/// What the crate root re-exports, by the module that defines it.
const REEXPORTS: &[(&str, &str)] =
    &[("Daemon", "engine/daemon"), ("Config", "engine/config"), ("Endpoint", "fronts/endpoint"), ("run", "serve")];

/// Imports that run up a layer on purpose, as (file, module it uses). ARCHITECTURE.md names
/// each with its reason; there may be at most two.
const UPWARD: &[(&str, &str)] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("boogerd/src")
}

/// One source file of the daemon: its path under `src/`, its module path, and its code
/// without tests and comments.
struct SourceFile {
    rel: String,
    module: Vec<String>,
    code: String,
}

fn sources() -> Vec<SourceFile> {
    sources_in(&src())
}

/// The source files of the crate whose sources are under `root`.
fn sources_in(root: &Path) -> Vec<SourceFile> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "fixtures") {
                    dirs.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let module = module_of(&rel);
            if module.last().is_some_and(|m| m == "tests" || m == "testing") {
                continue;
            }
            out.push(SourceFile { code: code_of(&std::fs::read_to_string(&path).unwrap()), module, rel });
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// `domain/search/mod.rs` → `[domain, search]`; `lib.rs` and `main.rs` → `[]`.
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The code of a file without its unit tests (a trailing `#[cfg(test)] mod tests`) and its
/// comment lines, where paths are prose, not imports.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") && lines.peek().is_some_and(|n| n.trim_start().starts_with("mod tests")) {
            break;
        }
        if !t.starts_with("//") {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}

/// Every module path `code` names from `module`: `crate::a::b`, `super::c`, and each item of
/// a `{…}` group after either, as absolute segments.
fn paths_named(module: &[String], code: &str) -> Vec<Vec<String>> {
    let path = regex::Regex::new(r"\b(crate|super)((?:::\w+)*)(::\{)?").unwrap();
    let mut out = Vec::new();
    for m in path.captures_iter(code) {
        // `super` of `a/b.rs` and of `a/b/mod.rs` alike is `a`.
        let mut base: Vec<String> =
            if &m[1] == "crate" { Vec::new() } else { module[..module.len().saturating_sub(1)].to_vec() };
        for seg in m[2].split("::").filter(|s| !s.is_empty()) {
            if seg == "super" {
                base.pop();
            } else {
                base.push(seg.to_owned());
            }
        }
        match m.get(3) {
            None => out.push(base),
            Some(open) => {
                for item in group_items(&code[open.end()..]) {
                    let mut p = base.clone();
                    p.extend(item.split("::").map(|s| s.trim().to_owned()).filter(|s| !s.is_empty() && s != "self"));
                    out.push(p);
                }
            }
        }
    }
    out
}

/// The top-level items of a `{…}` group whose text starts right after the `{`.
fn group_items(rest: &str) -> Vec<String> {
    let (mut depth, mut item, mut items) = (1, String::new(), Vec::new());
    for c in rest.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if depth == 0 || (c == ',' && depth == 1) {
            items.push(std::mem::take(&mut item));
            if depth == 0 {
                break;
            }
        } else if depth == 1 {
            item.push(c);
        }
    }
    items.into_iter().map(|i| i.trim().to_owned()).filter(|i| !i.is_empty()).collect()
}

/// The module a path lands in: the longest prefix that is a file of the crate (a root
/// re-export counts as its defining module).
fn resolve(files: &BTreeSet<Vec<String>>, path: &[String]) -> Option<Vec<String>> {
    if let [first, ..] = path
        && let Some((_, m)) = REEXPORTS.iter().find(|(name, _)| name == first)
    {
        return Some(m.split('/').map(str::to_owned).collect());
    }
    (1..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| files.contains(p))
}

/// The unit the layering is judged on: `domain/search` for anything under it, `store` for
/// anything in store/, `serve` for the crate root.
fn unit(module: &[String]) -> String {
    match module {
        [] => "serve".to_owned(),
        [group, name, ..] if GROUPS.contains(&group.as_str()) => format!("{group}/{name}"),
        [first, ..] => first.clone(),
    }
}

fn layer(unit: &str) -> usize {
    let name = unit.split('/').next().unwrap();
    LAYERS.iter().position(|l| *l == name).unwrap_or_else(|| panic!("{unit} is in no layer; add it to LAYERS"))
}

/// (file, the module it uses) for every use of another module by a file's code.
fn imports() -> Vec<(String, Vec<String>, Vec<String>)> {
    imports_in(&src())
}

/// [`imports`] of the crate whose sources are under `root`.
fn imports_in(root: &Path) -> Vec<(String, Vec<String>, Vec<String>)> {
    let files = sources_in(root);
    let known: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let mut out = Vec::new();
    for f in &files {
        for p in paths_named(&f.module, &f.code) {
            if let Some(target) = resolve(&known, &p)
                && target != f.module
            {
                out.push((f.rel.clone(), f.module.clone(), target));
            }
        }
    }
    out
}

/// The upward imports in `imports`, as (file, unit it uses), less the named exceptions.
fn upward(imports: &[(String, Vec<String>, Vec<String>)]) -> BTreeSet<(String, String)> {
    imports
        .iter()
        .filter(|(_, from, to)| layer(&unit(to)) > layer(&unit(from)))
        .map(|(rel, _, to)| (rel.clone(), unit(to)))
        .filter(|(rel, to)| !UPWARD.contains(&(rel.as_str(), to.as_str())))
        .collect()
}

/// The circles of a graph, each as its members (Tarjan's strongly connected components).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let lw = self.low[w.as_str()];
                    self.low.entry(v).and_modify(|l| *l = (*l).min(lw));
                } else if self.stack.contains(&w.as_str()) {
                    let iw = self.index[w.as_str()];
                    self.low.entry(v).and_modify(|l| *l = (*l).min(iw));
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().position(|s| *s == v).unwrap();
                let members: Vec<String> = self.stack.drain(at..).map(str::to_owned).collect();
                if members.len() > 1 {
                    self.found.push(members);
                }
            }
        }
    }
    let mut walk = Walk { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for v in edges.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_import_runs_up_a_layer_but_the_named_ones() {
    assert!(UPWARD.len() <= 2, "at most two imports may run up a layer");
    let arch = std::fs::read_to_string(src().join("../../ARCHITECTURE.md")).unwrap();
    for (file, to) in UPWARD {
        assert!(
            arch.contains(file) && arch.contains(to),
            "ARCHITECTURE.md does not name the upward import {file} → {to}"
        );
    }
    let found = upward(&imports());
    let list: Vec<String> = found.iter().map(|(f, t)| format!("{f} uses {t}")).collect();
    assert!(
        found.is_empty(),
        "imports that run up a layer ({}); move the code down or the import up:\n{}",
        LAYERS.join(" < "),
        list.join("\n")
    );
}

#[test]
fn no_two_modules_or_sibling_files_use_each_other() {
    // The daemon, and the protocol and client crates beside it.
    for root in [src(), src().join("../../booger-proto/src"), src().join("../../booger-client/src")] {
        let found = circles_in(&imports_in(&root));
        assert!(found.is_empty(), "modules of {} that use each other: {found:?}", root.display());
    }
}

fn circles_in(imports: &[(String, Vec<String>, Vec<String>)]) -> Vec<Vec<String>> {
    let mut units: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut siblings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, from, to) in imports {
        let (a, b) = (unit(from), unit(to));
        if a != b {
            units.entry(a).or_default().insert(b);
        }
        // A module and its own submodules are one piece of code (a type and its impl blocks
        // split by concern); files side by side in one folder are not.
        if from.len() == to.len() && from[..from.len() - 1] == to[..to.len() - 1] {
            siblings.entry(from.join("/")).or_default().insert(to.join("/"));
        }
    }
    circles(&units).into_iter().chain(circles(&siblings)).collect()
}

#[test]
fn the_codemap_names_every_module() {
    let arch = std::fs::read_to_string(src().join("../../ARCHITECTURE.md")).unwrap();
    let lines: Vec<&str> = arch.lines().collect();
    // The bullet that opens with `folder/` (its path under boogerd/src), up to the next bullet
    // at its level or above.
    let block = |folder: &str| -> Option<String> {
        let key = format!("`{folder}`");
        let start = lines.iter().position(|l| l.trim_start().starts_with("- ") && l.contains(&key))?;
        let indent = lines[start].len() - lines[start].trim_start().len();
        let end = lines[start + 1..]
            .iter()
            .position(|l| l.trim_start().starts_with("- ") && l.len() - l.trim_start().len() <= indent)
            .map_or(lines.len(), |n| start + 1 + n);
        Some(lines[start..end].join("\n"))
    };
    let mut missing = Vec::new();
    for f in sources() {
        let parts: Vec<&str> = f.rel.split('/').collect();
        let name = match parts.as_slice() {
            [.., dir, "mod.rs"] => format!("`{dir}/`"),
            [.., file] => format!("`{file}`"),
            [] => unreachable!(),
        };
        // The nearest folder above the module that has a bullet of its own.
        let folders = &parts[..parts.len() - 1 - usize::from(f.rel.ends_with("mod.rs"))];
        let nearest = (0..=folders.len()).rev().find_map(|n| {
            block(&if n == 0 { "boogerd/src/".to_owned() } else { format!("{}/", folders[..n].join("/")) })
        });
        // A folder with a bullet of its own is named by it.
        let own = f.rel.strip_suffix("mod.rs").is_some_and(|dir| block(dir).is_some());
        let named = own || nearest.is_some_and(|b| b.contains(&name) || b.contains(&format!("`{}`", f.rel)));
        if !named {
            missing.push(f.rel);
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md's codemap does not name: {}", missing.join(", "));
}
