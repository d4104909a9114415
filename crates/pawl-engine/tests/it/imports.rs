//! Tidy: no import circle in any crate of the workspace.
//!
//! The rule, per crate: a module may use its ancestors (they declare it) and its own
//! descendants. Among siblings, uses must form no circle. A use between two subtrees counts
//! as a use between the two siblings that contain them: `daemon::grab` using `crate::sys`
//! is `daemon` using `sys`. Test code (`#[cfg(test)]` items) is not counted.
//!
//! The scanner reads `crate::` and `super::` paths, `use` trees included, after removing
//! comments, strings and character literals. Modules are the crate's files (`a.rs`,
//! `a/mod.rs`) and the inline `mod name { … }` blocks inside them. Each `src/bin/*.rs` is
//! its own crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::tidy::{rust_files, workspace_root};

/// A module's path inside its crate: `[]` is the crate root, `["daemon", "grab"]` is
/// `daemon::grab`.
type ModPath = Vec<String>;

/// One use of another module: where it is and what it names.
#[derive(Clone, Debug)]
struct Use {
    /// The module the use is written in.
    from: ModPath,
    /// The module the path resolves to (its longest prefix that is a known module).
    to: ModPath,
    /// 1-based line of the path's first token.
    line: usize,
    /// The path as written, `::`-joined (`super::mouse::Mouse`).
    text: String,
}

/// Tokens of Rust source that the scanner needs: identifiers and the punctuation paths and
/// items are made of. Comments, strings and literals are gone.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

/// `text` as (token, 1-based line) pairs.
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(b[i] == b'\n');
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(b, i) {
            line += b[i..end].iter().filter(|&&c| c == b'\n').count();
            i = end;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                line += usize::from(b.get(i) == Some(&b'\n'));
                i += 1;
            }
            i += 1;
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{1F}') or a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else if let Some(len) = text[i + 1..].chars().next().map(char::len_utf8)
                && b.get(i + 1 + len) == Some(&b'\'')
            {
                i += 2 + len;
            } else {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            // A byte string or a raw identifier's prefix is not a path segment.
            if i < b.len() && b[i] == b'"' && &text[start..i] == "b" {
                continue;
            }
            out.push((Tok::Ident(text[start..i].to_owned()), line));
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
        } else if b[i..].starts_with(b"::") {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            if c.is_ascii() {
                out.push((Tok::Punct(c as char), line));
            }
            i += 1;
        }
    }
    out
}

/// Where the raw string (`r"…"`, `r#"…"#`, `br"…"`) starting at `i` ends, if one does.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    while j < b.len() {
        if b[j] == b'"'
            && b[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == b'#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(b.len())
}

/// The paths a `use` tree at `toks[i..]` names, after the prefix `base`; returns them and
/// the index after the tree.
fn use_tree(toks: &[(Tok, usize)], mut i: usize, base: &[String]) -> (Vec<Vec<String>>, usize) {
    let mut path = base.to_vec();
    loop {
        match toks.get(i).map(|t| &t.0) {
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                i += 1;
                if toks.get(i).map(|t| &t.0) == Some(&Tok::PathSep) {
                    i += 1;
                    continue;
                }
                if toks.get(i).map(|t| &t.0) == Some(&Tok::Ident("as".to_owned())) {
                    i += 2;
                }
                return (vec![path], i);
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                let mut all = Vec::new();
                loop {
                    match toks.get(i).map(|t| &t.0) {
                        Some(Tok::Punct('}')) | None => return (all, i + 1),
                        Some(Tok::Punct(',')) => i += 1,
                        _ => {
                            let (mut more, next) = use_tree(toks, i, &path);
                            all.append(&mut more);
                            if next == i {
                                i += 1;
                            } else {
                                i = next;
                            }
                        }
                    }
                }
            }
            // `*`, or anything a use tree cannot hold: what was read so far.
            Some(Tok::Punct('*')) => return (vec![path], i + 1),
            _ => return (vec![path], i),
        }
    }
}

/// The index of the token after the item starting at `i`: through its matching `}` or to
/// its `;`, whichever ends it.
fn skip_item(toks: &[(Tok, usize)], mut i: usize) -> usize {
    while let Some((t, _)) = toks.get(i) {
        match t {
            Tok::Punct('{') => return skip_group(toks, i),
            Tok::Punct('(' | '[') => i = skip_group(toks, i),
            Tok::Punct(';') => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The index after the bracketed group that opens at `toks[i]`.
fn skip_group(toks: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0usize;
    while let Some((t, _)) = toks.get(i) {
        i += 1;
        match t {
            Tok::Punct('{' | '(' | '[') => depth += 1,
            Tok::Punct('}' | ')' | ']') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    i
}

/// Whether `toks[i..]` is `#[cfg(test)]`.
fn is_cfg_test(toks: &[(Tok, usize)], i: usize) -> bool {
    let want = [
        Tok::Punct('#'),
        Tok::Punct('['),
        Tok::Ident("cfg".to_owned()),
        Tok::Punct('('),
        Tok::Ident("test".to_owned()),
        Tok::Punct(')'),
        Tok::Punct(']'),
    ];
    toks.len() >= i + want.len() && toks[i..i + want.len()].iter().map(|t| &t.0).eq(want.iter())
}

/// A path as written: the module it is written in, its segments, its 1-based line.
type Written = (ModPath, Vec<String>, usize);

/// The uses of `crate::` and `super::` paths in the file of module `module`, each as the
/// written path resolved against the module (inline modules included) it appears in, and
/// the inline modules the file declares.
fn scan(module: &[String], text: &str) -> (Vec<Written>, Vec<ModPath>) {
    let toks = tokens(text);
    let mut uses = Vec::new();
    let mut inline = Vec::new();
    // The inline module stack: (name, brace depth at which its block opened).
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let here = |stack: &[(String, usize)]| {
            let mut m = module.to_vec();
            m.extend(stack.iter().map(|(n, _)| n.clone()));
            m
        };
        match &toks[i].0 {
            Tok::Punct('#') if is_cfg_test(&toks, i) => {
                // Skip the attribute, any further attributes, then the item.
                let mut j = i + 7;
                while toks.get(j).map(|t| &t.0) == Some(&Tok::Punct('#')) {
                    j = skip_group(&toks, j + 1);
                }
                i = skip_item(&toks, j);
                continue;
            }
            Tok::Ident(kw) if kw == "mod" => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Punct('{'), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    depth += 1;
                    stack.push((name.clone(), depth));
                    inline.push(here(&stack));
                    i += 3;
                    continue;
                }
            }
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                if stack.last().is_some_and(|(_, d)| *d == depth) {
                    stack.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(kw)
                if (kw == "crate" || kw == "super")
                    && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::PathSep)
                    // `$crate::` in a macro, or a path continuing another (`x::super::`).
                    && !(i > 0 && matches!(toks[i - 1].0, Tok::PathSep | Tok::Punct('$'))) =>
            {
                let line = toks[i].1;
                let (paths, next) = use_tree(&toks, i, &[]);
                let from = here(&stack);
                for p in paths {
                    uses.push((from.clone(), p, line));
                }
                i = next.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    (uses, inline)
}

/// `written` (starting with `crate` or `super`), resolved from module `from`.
fn resolve(from: &[String], written: &[String]) -> ModPath {
    let mut at: ModPath = from.to_vec();
    let mut rest = written;
    if rest.first().is_some_and(|s| s == "crate") {
        at.clear();
        rest = &rest[1..];
    }
    while let Some(s) = rest.first() {
        match s.as_str() {
            "super" => {
                at.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    at.extend(rest.iter().cloned());
    at
}

/// Every use between modules of one crate whose files are `files` (module path, source).
fn crate_uses(files: &[(ModPath, String)]) -> Vec<Use> {
    let mut known: BTreeSet<ModPath> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut raw = Vec::new();
    for (m, text) in files {
        let (uses, inline) = scan(m, text);
        known.extend(inline);
        raw.extend(uses);
    }
    let mut out = Vec::new();
    for (from, written, line) in raw {
        let full = resolve(&from, &written);
        let to = (0..=full.len())
            .rev()
            .map(|k| full[..k].to_vec())
            .find(|p| known.contains(p))
            .unwrap_or_default();
        out.push(Use {
            from,
            to,
            line,
            text: written.join("::"),
        });
    }
    out
}

/// The sibling edge a use stands for: `None` when one module contains the other.
fn sibling_edge(u: &Use) -> Option<(ModPath, ModPath)> {
    let common = u.from.iter().zip(&u.to).take_while(|(a, b)| a == b).count();
    if common == u.from.len() || common == u.to.len() {
        return None;
    }
    Some((u.from[..=common].to_vec(), u.to[..=common].to_vec()))
}

/// The circles among sibling modules, each as the modules in order with one use (the
/// first found) for each step: empty when the crate is layered.
fn circles(uses: &[Use]) -> Vec<Vec<(ModPath, Use)>> {
    let mut graph: BTreeMap<ModPath, BTreeMap<ModPath, Use>> = BTreeMap::new();
    for u in uses {
        if let Some((a, b)) = sibling_edge(u) {
            graph
                .entry(a)
                .or_default()
                .entry(b)
                .or_insert_with(|| u.clone());
        }
    }
    // Depth-first search; a back edge closes a circle, reported once per strongly
    // connected group through the first node that reaches it.
    let mut found = Vec::new();
    let mut done: BTreeSet<ModPath> = BTreeSet::new();
    let nodes: Vec<ModPath> = graph.keys().cloned().collect();
    for start in nodes {
        if done.contains(&start) {
            continue;
        }
        let mut path: Vec<ModPath> = vec![start.clone()];
        let mut on_path: BTreeSet<ModPath> = BTreeSet::from([start.clone()]);
        let mut next_child: Vec<usize> = vec![0];
        while let Some(top) = path.last().cloned() {
            let children: Vec<(&ModPath, &Use)> = graph
                .get(&top)
                .map(|m| m.iter().collect())
                .unwrap_or_default();
            let k = *next_child.last().unwrap();
            if k == children.len() {
                done.insert(top.clone());
                on_path.remove(&top);
                path.pop();
                next_child.pop();
                continue;
            }
            *next_child.last_mut().unwrap() += 1;
            let (child, _) = children[k];
            if on_path.contains(child) {
                let from = path.iter().position(|p| p == child).unwrap();
                let mut circle = Vec::new();
                for w in from..path.len() {
                    let a = &path[w];
                    let b = path.get(w + 1).unwrap_or(child);
                    circle.push((a.clone(), graph[a][b].clone()));
                }
                found.push(circle);
            } else if !done.contains(child) {
                path.push(child.clone());
                on_path.insert(child.clone());
                next_child.push(0);
            }
        }
    }
    found
}

/// The module path of `file` under the crate's `src` (`daemon/mod.rs` → `daemon`).
fn module_of(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts == ["lib"] || parts == ["main"] || parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Each crate of the workspace as (its name, its files as module path and source); every
/// `src/bin/*.rs` is a crate of one file.
fn workspace_crates() -> Vec<(String, Vec<(ModPath, String)>)> {
    let root = workspace_root();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.push(root.join("xtask"));
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        let src = dir.join("src");
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files.sort();
        let mut main = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            if f.parent() == Some(&src.join("bin")) {
                let bin = f.file_stem().unwrap().to_string_lossy().into_owned();
                out.push((format!("{name} (bin {bin})"), vec![(Vec::new(), text)]));
            } else {
                main.push((module_of(&src, &f), text));
            }
        }
        assert!(!main.is_empty(), "{} has no sources", src.display());
        out.push((name, main));
    }
    out
}

fn show(m: &[String]) -> String {
    if m.is_empty() {
        "crate".to_owned()
    } else {
        m.join("::")
    }
}

/// The circles that are still to be broken, as the crate and the circle's modules in the
/// order the search reports them. A circle not listed fails the test, and so does an entry
/// whose circle is gone: the list only shrinks.
const KNOWN_CIRCLES: &[(&str, &[&str])] = &[];

#[test]
fn no_crate_has_an_import_circle_among_sibling_modules() {
    let crates = workspace_crates();
    assert!(crates.len() >= 9, "found only {} crates", crates.len());
    let mut problems = Vec::new();
    let mut known_seen = vec![false; KNOWN_CIRCLES.len()];
    for (name, files) in &crates {
        for circle in circles(&crate_uses(files)) {
            let members: Vec<String> = circle.iter().map(|(m, _)| show(m)).collect();
            if let Some(k) = KNOWN_CIRCLES
                .iter()
                .position(|(c, ms)| c == name && ms.iter().eq(members.iter()))
            {
                known_seen[k] = true;
                continue;
            }
            let mut msg = format!("{name}: ");
            for (a, u) in &circle {
                msg += &format!(
                    "{} -> ({} at line {} of {}) ",
                    show(a),
                    u.text,
                    u.line,
                    show(&u.from)
                );
            }
            msg += &show(&circle[0].0);
            problems.push(msg);
        }
    }
    for (k, seen) in known_seen.iter().enumerate() {
        if !seen {
            problems.push(format!(
                "{:?} is in KNOWN_CIRCLES but is no longer a circle: remove it",
                KNOWN_CIRCLES[k]
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "import circles (see the rule in imports.rs):\n{}",
        problems.join("\n")
    );
}

fn files(list: &[(&str, &str)]) -> Vec<(ModPath, String)> {
    list.iter()
        .map(|(m, t)| {
            let path = if m.is_empty() {
                Vec::new()
            } else {
                m.split("::").map(str::to_owned).collect()
            };
            (path, (*t).to_owned())
        })
        .collect()
}

fn circle_names(list: &[(&str, &str)]) -> Vec<Vec<String>> {
    circles(&crate_uses(&files(list)))
        .into_iter()
        .map(|c| c.iter().map(|(m, _)| show(m)).collect())
        .collect()
}

#[test]
fn a_circle_between_siblings_is_found_and_named() {
    let found = circle_names(&[
        ("", "mod a; mod b;"),
        ("a", "use crate::b::B; pub struct A;"),
        ("b", "pub struct B; fn f() { let _ = super::a::A; }"),
    ]);
    assert_eq!(found, vec![vec!["a".to_owned(), "b".to_owned()]]);
}

#[test]
fn uses_of_ancestors_and_descendants_are_not_circles() {
    let found = circle_names(&[
        ("", "mod d; pub struct Root; use crate::d::x::X;"),
        ("d", "mod x; use super::Root; use self::x::X;"),
        (
            "d::x",
            "use super::super::Root; use crate::d::Y; pub struct X;",
        ),
    ]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_use_across_subtrees_counts_between_the_siblings_that_hold_them() {
    let found = circle_names(&[
        ("", ""),
        ("daemon", ""),
        ("daemon::grab", "use crate::sys::Fd;"),
        ("sys", "pub fn f() { crate::daemon::run(); }"),
    ]);
    assert_eq!(found, vec![vec!["daemon".to_owned(), "sys".to_owned()]]);
}

#[test]
fn use_trees_nested_and_renamed_resolve_each_path() {
    let uses = crate_uses(&files(&[
        ("", ""),
        ("a", "use crate::{b::{self, B as Bee}, c::*};"),
        ("b", ""),
        ("c", ""),
    ]));
    let to: BTreeSet<String> = uses.iter().map(|u| show(&u.to)).collect();
    assert_eq!(to, BTreeSet::from(["b".to_owned(), "c".to_owned()]));
}

#[test]
fn comments_strings_and_test_code_do_not_count() {
    let found = circle_names(&[
        ("", ""),
        (
            "a",
            r###"
            // use crate::b;
            /* crate::b::X /* nested */ crate::b::Y */
            const S: &str = "crate::b::Z";
            const R: &str = r#"crate::b::W "quoted""#;
            const C: char = '"';
            fn f<'a>(x: &'a str) -> &'a str { x }
            #[cfg(test)]
            mod tests { use crate::b::T; }
            "###,
        ),
        ("b", "use crate::a::A;"),
    ]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn an_inline_module_resolves_super_from_itself() {
    let uses = crate_uses(&files(&[
        ("", ""),
        ("a", "mod inner { use super::super::b::B; } fn g() {}"),
        ("b", ""),
    ]));
    assert_eq!(uses.len(), 1);
    assert_eq!(show(&uses[0].from), "a::inner");
    assert_eq!(show(&uses[0].to), "b");
}
