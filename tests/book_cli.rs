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
    assert!(stdout(&bin(&root, &["list"])).lines().any(|l| l.contains("Map ") && l.contains("edited, not checked")));
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
    assert!(stdout(&o).contains("Hint 1 of 2:"));
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

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn bin_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_metal-puzzles"));
    c.current_dir(dir).args(args).env_remove("VERBOSE").env_remove("NO_COLOR");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("runs")
}

#[test]
fn colour_follows_the_flag_no_color_and_pipes() {
    let root = temp("colour");
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    // A pipe: no colour, unless asked for.
    let plain = bin_env(&root, &["check", "1"], &[]);
    assert!(stdout(&plain).starts_with("Failed Tests.") && !stdout(&plain).contains('\x1b'), "{}", stdout(&plain));
    let forced = bin_env(&root, &["check", "1", "--color", "always"], &[]);
    assert!(stdout(&forced).starts_with("\x1b[1;31mFailed Tests.\x1b[0m"), "{:?}", stdout(&forced));
    // --color always wins over NO_COLOR; never and NO_COLOR turn it off.
    assert!(stdout(&bin_env(&root, &["list", "--color", "always"], &[("NO_COLOR", "1")])).contains('\x1b'));
    assert!(!stdout(&bin_env(&root, &["list", "--color", "never"], &[])).contains('\x1b'));
    assert!(!stdout(&bin_env(&root, &["list"], &[("NO_COLOR", "1")])).contains('\x1b'));
    // A solved puzzle is green.
    std::fs::write(root.join("metal-puzzles/01_map.metal"), common::file_with("map", common::SOLUTIONS[0].1)).unwrap();
    let o = bin_env(&root, &["check", "1", "--color", "always"], &[]);
    assert!(stdout(&o).starts_with("\x1b[1;32mPassed Tests!\x1b[0m"), "{:?}", stdout(&o));
    let o = bin_env(&root, &["check", "1", "--color", "sometimes"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn check_all_says_not_started_in_one_line_and_list_marks_edits() {
    let root = temp("fresh");
    let ws = root.join("metal-puzzles");
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    std::fs::write(ws.join("01_map.metal"), common::file_with("map", common::SOLUTIONS[0].1)).unwrap();
    let o = bin(&root, &["check", "--all"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(out.contains("━━ Puzzle 2: Zip (02_zip.metal) ━━ not started (the starter file is unchanged)\n"), "{out}");
    assert_eq!(out.matches("Failed Tests.").count(), 0, "{out}");
    assert!(out.contains("1/29 puzzles solved (1 pass their tests, 28 not started)."), "{out}");
    // An edit after the check: marked, not a stale verdict.
    std::fs::write(ws.join("01_map.metal"), common::file_with("map", "uint i = thread_position_in_grid.x;\nout[i] = a[i] + 11;\n"))
        .unwrap();
    let out = stdout(&bin(&root, &["list"]));
    assert!(out.lines().any(|l| l.contains("Map") && l.contains("edited, not checked")), "{out}");
    assert!(out.contains("0/29 solved") && out.contains("[░░░"), "{out}");
    // Comments only: still not started.
    std::fs::write(ws.join("02_zip.metal"), format!("// my notes\n{}", puzzles::find("zip").unwrap().starter_file())).unwrap();
    assert!(stdout(&bin(&root, &["list"])).lines().any(|l| l.contains("Zip") && l.contains("not started")));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn hints_come_one_at_a_time_with_size_and_goal() {
    let root = temp("hints");
    let o = bin(&root, &["hint", "16"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0));
    assert!(out.contains("Hint 1 of 3:") && !out.contains("Hint 2 of 3:"), "{out}");
    assert!(out.contains("hint simd_scan --level 2") && out.contains("hint simd_scan --all"), "{out}");
    assert!(out.contains("Size: roughly 5 lines"), "{out}");
    assert!(out.contains("Goal of test \"SIMD Scan (Simple)\"") && out.contains("out[2] ← a[0] to a[2]"), "{out}");
    assert!(out.contains("3 more times on random inputs"), "{out}");
    let out = stdout(&bin(&root, &["hint", "16", "--all"]));
    assert!(out.contains("Hint 3 of 3:"), "{out}");
    let out = stdout(&bin(&root, &["hint", "16", "--level", "2"]));
    assert!(out.contains("Hint 2 of 3:") && !out.contains("Hint 3 of 3:"), "{out}");
    assert!(stdout(&bin(&root, &["hint", "histogram"])).contains("Outputs must match the spec exactly."));
    // Without a puzzle: the current one, as `check` picks it.
    assert!(stdout(&bin(&root, &["hint"])).starts_with("Puzzle 1: Map"));
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    std::fs::write(root.join("metal-puzzles/01_map.metal"), common::file_with("map", common::SOLUTIONS[0].1)).unwrap();
    assert_eq!(bin(&root, &["check", "1"]).status.code(), Some(0));
    assert!(stdout(&bin(&root, &["hint"])).starts_with("Puzzle 2: Zip"));
    // Every puzzle has a size hint, a goal and hints.
    for p in puzzles::PUZZLES.iter() {
        let out = stdout(&bin(&root, &["hint", p.slug]));
        assert!(out.contains("Size: roughly") && out.contains("Goal of test") && out.contains("Hint 1 of"), "{}: {out}", p.slug);
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn files_that_cannot_be_read_say_why() {
    let root = temp("unreadable");
    let ws = root.join("metal-puzzles");
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    std::fs::write(ws.join("01_map.metal"), b"uint i = 0;\nout[i] = a[i] \xe9 2;\n").unwrap();
    let o = bin(&root, &["check", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is not UTF-8 text: byte 0xe9 at line 2, column 15"), "{}", stderr(&o));
    assert!(stderr(&o).contains("help: save the file as UTF-8") && !stderr(&o).contains("restores missing"), "{}", stderr(&o));
    std::fs::remove_file(ws.join("02_zip.metal")).unwrap();
    let o = bin(&root, &["check", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the file is missing") && stderr(&o).contains("restores missing starter files"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn beginner_mistakes_get_beginner_messages() {
    let root = temp("beginner");
    let ws = root.join("metal-puzzles");
    assert_eq!(bin(&root, &["init"]).status.code(), Some(0));
    std::fs::write(ws.join("02_zip.metal"), "uint i = thread_position_in_grid.x;\nprintf(\"%d\", i);\nout[i] = a[i] + b[i];\n").unwrap();
    let o = bin(&root, &["check", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("error[B0002]: Metal has no `printf`"), "{}", stdout(&o));
    assert!(stdout(&o).contains("debug 2 --thread 0 --print '2: i'"), "{}", stdout(&o));
    // `lint` on a puzzle file compiles it as the book does.
    std::fs::write(ws.join("01_map.metal"), common::file_with("map", common::SOLUTIONS[0].1)).unwrap();
    let o = bin(&root, &["lint", "metal-puzzles/01_map.metal"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("is puzzle 1's file: it holds a kernel body"), "{}", stderr(&o));
    std::fs::write(ws.join("01_map.metal"), "uint i = thread_position_in_grid.x;\nout[i] = a[i] +;\n").unwrap();
    let o = bin(&root, &["lint", "metal-puzzles/01_map.metal", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["diagnostics"][0]["line"], 2);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn show_refuses_an_image_name_of_another_format_and_quotes_commands() {
    let root = temp("show-png");
    assert_eq!(bin(&root, &["init", "my ws"]).status.code(), Some(0));
    let o = bin(&root, &["show", "1", "--dir", "my ws", "--png", "x.jpg"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--png writes a PNG file, but `x.jpg` ends in `.jpg`") && stderr(&o).contains("name it `x.png`"),
        "{}",
        stderr(&o)
    );
    assert!(!root.join("x.jpg").exists());
    // Suggested commands are shell-quoted.
    let out = stdout(&bin(&root, &["list", "--dir", "my ws"]));
    assert!(out.contains("--dir 'my ws'"), "{out}");
    // Piped diagrams never print `#` for thread numbers: matvec's 32 threads.
    let o = bin(&root, &["show", "simd_sum", "--dir", "my ws"]);
    let out = stdout(&o);
    let diagram = &out[out.find("Puzzle 15: SIMD Sum").expect("the diagram's title")..];
    assert!(diagram.contains("Legend:") && !diagram.contains('#'), "{out}");
    let _ = std::fs::remove_dir_all(&root);
}
