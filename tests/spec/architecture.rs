//! The module map holds: no import cycle between the top-level modules of `src/`, so each
//! can be read (and changed) knowing only the ones below it. Read from the source itself —
//! every `crate::<module>` a module's non-test code names — so a new cycle fails here with
//! the path that closes it and where.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `module -> module it names -> first place it does`.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            // Test modules (`tests/`, `tests.rs`) may use anything.
            if path.file_name().unwrap() != "tests" {
                rust_files(&path, found);
            }
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().unwrap() != "tests.rs"
        {
            found.push(path);
        }
    }
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let top = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        // Everything after a `#[cfg(test)]` module is test code.
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        for (number, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (at, _) in line.match_indices("crate::") {
                let named: String = line[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_' || c.is_ascii_digit())
                    .collect();
                if !named.is_empty() && named != top {
                    graph
                        .entry(top.clone())
                        .or_default()
                        .entry(named)
                        .or_insert_with(|| format!("{}:{}", relative.display(), number + 1));
                }
            }
        }
    }
    graph
}

/// A cycle through `start`, as the modules on it.
fn cycle_from(graph: &Graph, start: &str) -> Option<Vec<String>> {
    fn walk(
        graph: &Graph,
        start: &str,
        at: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in graph.get(at).into_iter().flat_map(|e| e.keys()) {
            if next == start {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, start, next, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    walk(graph, start, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn no_top_level_module_depends_on_itself_through_others() {
    let graph = graph();
    assert!(
        graph.contains_key("engine") && graph.contains_key("cli"),
        "the source was read"
    );
    for module in graph.keys() {
        if let Some(cycle) = cycle_from(&graph, module) {
            let mut steps: Vec<String> = cycle
                .windows(2)
                .map(|pair| format!("{} -> {} ({})", pair[0], pair[1], graph[&pair[0]][&pair[1]]))
                .collect();
            let last = cycle.last().unwrap();
            steps.push(format!("{last} -> {module} ({})", graph[last][module]));
            panic!("an import cycle:\n  {}", steps.join("\n  "));
        }
    }
}

#[test]
fn the_check_finds_a_cycle_when_there_is_one() {
    let mut graph = Graph::new();
    for (from, to) in [
        ("engine", "spec"),
        ("spec", "records"),
        ("records", "engine"),
    ] {
        graph
            .entry(from.into())
            .or_default()
            .insert(to.into(), "here".into());
    }
    assert_eq!(
        cycle_from(&graph, "engine").unwrap(),
        ["engine", "spec", "records"]
    );
    graph.get_mut("records").unwrap().clear();
    assert_eq!(cycle_from(&graph, "engine"), None);
}
