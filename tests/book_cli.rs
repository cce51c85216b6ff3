//! The puzzle-book sub-commands end to end (init, check, list, hint, reset).

#[path = "../crates/puzzles/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_metal-puzzles")).current_dir(dir).args(args).env_remove("VERBOSE").output().expect("runs")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mp-book-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn init_check_list_reset() {
    let root = temp("flow");
    let ws = root.join("metal-puzzles");
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    for p in puzzles::PUZZLES.iter() {
        let text = std::fs::read_to_string(ws.join(p.file_name())).unwrap();
        assert_eq!(text, p.starter_file());
        assert_eq!(text.contains(puzzles::BODY_MARKER), !p.header.is_empty(), "{}", p.slug);
    }

    // Starters fail; JSON per the contract.
    let o = bin(&root, &["check", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let list = v["puzzles"].as_array().unwrap();
    assert_eq!(list.len(), puzzles::PUZZLES.len());
    for (k, e) in list.iter().enumerate() {
        assert_eq!(e["number"], k as u64 + 1);
        assert_eq!(e["passed"], false);
        assert!(e["tests"].as_array().unwrap().iter().all(|t| t["name"].is_string()));
        for key in ["global_reads", "global_writes", "shared_reads", "shared_writes"] {
            assert!(e["score"][key].is_u64());
        }
        assert!(e["findings"].is_array());
    }

    // init never overwrites.
    std::fs::write(ws.join("01_map.metal"), "// mine\n").unwrap();
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(ws.join("01_map.metal")).unwrap(), "// mine\n");

    // Solve everything.
    for (slug, body) in common::SOLUTIONS {
        let p = puzzles::find(slug).unwrap();
        std::fs::write(ws.join(p.file_name()), common::file_with(slug, body)).unwrap();
    }
    let o = bin(&root, &["check", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(stdout(&o).matches("Passed Tests!").count(), puzzles::PUZZLES.len());
    let o = bin(&root, &["check", "14", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["puzzles"][0]["puzzle"], "matmul");
    assert_eq!(v["puzzles"][0]["score"]["global_reads"], 6);
    let o = bin(&root, &["list"]);
    let n = puzzles::PUZZLES.len();
    assert!(stdout(&o).contains(&format!("{n}/{n} solved")), "{}", stdout(&o));
    assert!(stdout(&o).contains("Foundations (14/14)\n") && stdout(&o).contains("\nSIMD-groups (3/3)\n"), "{}", stdout(&o));
    assert!(root.join("metal-puzzles/.progress.json").exists());

    // reset keeps a backup and restores the starter.
    let mine = std::fs::read_to_string(ws.join("09_pooling.metal")).unwrap();
    assert_eq!(bin(&root, &["reset", "pooling"]).status.code(), Some(0));
    let p = puzzles::find("pooling").unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("09_pooling.metal")).unwrap(), p.starter_file());
    let backups: Vec<_> = std::fs::read_dir(ws.join(".backup")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(backups.len(), 1);
    let name = backups[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.starts_with("09_pooling.") && name.ends_with(".metal"), "{name}");
    assert_eq!(std::fs::read_to_string(&backups[0]).unwrap(), mine);
    let o = bin(&root, &["list"]);
    assert!(stdout(&o).contains(&format!("{}/{n} solved", n - 1)), "{}", stdout(&o));
    assert!(stdout(&o).contains("Foundations (13/14)"), "{}", stdout(&o));
    assert!(stdout(&o).lines().any(|l| l.contains("Pooling") && l.contains("not started")));

    // An edited file is no longer "solved" until checked again.
    std::fs::write(ws.join("01_map.metal"), "// changed\n").unwrap();
    assert!(stdout(&bin(&root, &["list"])).lines().any(|l| l.contains("Map ") && l.contains("unsolved")));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn bad_arguments_exit_2() {
    let root = temp("args");
    assert_eq!(bin(&root, &["check", "1"]).status.code(), Some(2), "no workspace");
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    assert_eq!(bin(&root, &["check", "999"]).status.code(), Some(2));
    assert_eq!(bin(&root, &["check", "nope"]).status.code(), Some(2));
    assert_eq!(bin(&root, &["hint", "nope"]).status.code(), Some(2));
    assert_eq!(bin(&root, &["reset", "0"]).status.code(), Some(2));
    let o = bin(&root, &["hint", "1d_conv"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Hint 1:"));
    // By number and slug alike; a failing check exits 1 with the book's format.
    let o = bin(&root, &["check", "map_2d"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).starts_with("Failed Tests."));
    assert!(stdout(&o).contains("Yours: array([[?, ?],"), "{}", stdout(&o));
    assert!(stdout(&o).contains("# Map 2D"));
    // `show --test N` counts from 1 and says which tests exist.
    for n in ["0", "2"] {
        let o = bin(&root, &["show", "3", "--test", n]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("puzzle 3 has no test {n}; its tests are: 1 (Guard)")), "{err}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_output_quietly() {
    let root = temp("pipe");
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    let exe = env!("CARGO_BIN_EXE_metal-puzzles");
    for cmd in ["show 14", "hint matmul", "check --all"] {
        let o =
            Command::new("sh").current_dir(&root).arg("-c").arg(format!("'{exe}' {cmd} | head -1 >/dev/null")).output().expect("sh runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{cmd}: {err}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn no_arguments_creates_the_workspace_and_shows_progress() {
    let root = temp("default");
    let o = bin(&root, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(root.join("metal-puzzles/01_map.metal").exists());
    assert!(stdout(&o).contains(&format!("0/{} solved", puzzles::PUZZLES.len())));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn verbose_prints_the_generated_source() {
    let root = temp("verbose");
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    let o = bin(&root, &["check", "1", "--verbose"]);
    assert!(stdout(&o).contains("[[kernel]] void custom_kernel_map"), "{}", stdout(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_metal-puzzles"))
        .current_dir(&root)
        .args(["check", "1", "--json"])
        .env("VERBOSE", "1")
        .output()
        .unwrap();
    serde_json::from_str::<serde_json::Value>(&stdout(&o)).expect("VERBOSE does not break --json");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn init_adds_new_puzzles_to_an_existing_workspace() {
    // A workspace from before book two: only book one's files, one edited.
    let root = temp("grow");
    let ws = root.join("metal-puzzles");
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    for p in puzzles::PUZZLES.iter().filter(|p| p.number > 14) {
        std::fs::remove_file(ws.join(p.file_name())).unwrap();
    }
    std::fs::write(ws.join("03_guard.metal"), "// my guard\n").unwrap();
    let o = bin(&root, &["init"]);
    assert_eq!(o.status.code(), Some(0));
    let added = puzzles::PUZZLES.len() - 14;
    assert!(stdout(&o).contains(&format!("{added} starter files written, 14 files already there left untouched")), "{}", stdout(&o));
    assert_eq!(std::fs::read_to_string(ws.join("03_guard.metal")).unwrap(), "// my guard\n");
    let p = puzzles::find("simd_sum").unwrap();
    assert_eq!(std::fs::read_to_string(ws.join(p.file_name())).unwrap(), p.starter_file());
    // Book two is checked by number and slug like book one, and its JSON
    // extends book one's (extra score keys only).
    std::fs::write(ws.join(p.file_name()), common::file_with("simd_sum", common::solution("simd_sum"))).unwrap();
    let o = bin(&root, &["check", "15", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let e = &v["puzzles"][0];
    assert_eq!((e["puzzle"].as_str(), e["number"].as_u64(), e["passed"].as_bool()), (Some("simd_sum"), Some(15), Some(true)));
    assert_eq!(e["score"]["global_reads"], 1);
    assert_eq!(e["score"]["simd_ops"], 1);
    let o = bin(&root, &["hint", "histogram"]);
    assert!(stdout(&o).contains("Output: out (int32, atomic)"), "{}", stdout(&o));
    assert!(stdout(&o).contains("dev atomics ≤ 1"), "{}", stdout(&o));
    let o = bin(&root, &["hint", "softmax"]);
    assert!(stdout(&o).contains("Outputs match when |yours - spec| <= 0.000001 + 0.0001 * |spec|"), "{}", stdout(&o));
    assert!(!stdout(&bin(&root, &["hint", "map"])).contains("Outputs match"));
    let _ = std::fs::remove_dir_all(&root);
}
