//! The debugger model against real kernels: each test records a thread
//! through the same path as the screen (`record` on a `Target`) and drives
//! the `Debugger` with commands.

use super::*;
use crate::debug::Target;

/// A loop, a helper call, an unbraced if/else (divergence), a barrier and
/// threadgroup memory.
const SCAN: &str = include_str!("../../tests/fixtures/debug_scan.metal");

struct Fixture {
    _dir: tempfile::TempDir,
    target: Target,
}

fn fixture(src: &str) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("scan.metal");
    std::fs::write(&file, src).expect("write");
    let argv = [file.to_str().expect("utf-8 path"), "--kernel", "scan", "--grid", "8", "--threadgroup", "4"]
        .into_iter()
        .chain(["--arg", "a=arange(8):f32", "--arg", "out=zeros(8):f32"])
        .map(String::from)
        .collect();
    Fixture { _dir: dir, target: Target { argv, test: None } }
}

/// A debugger on `thread`, after its first recording.
fn start(fx: &Fixture, thread: [u32; 3]) -> Debugger {
    let mut d = Debugger::new(thread);
    d.load(record(&fx.target, thread, &[], 10_000, false).expect("records"));
    d
}

/// Apply a command, re-recording when it asks to.
fn apply(fx: &Fixture, d: &mut Debugger, c: Command) {
    if d.apply(c) == Effect::Rerun {
        let rec = record(&fx.target, d.thread, &d.probes(), 10_000, d.break_nan).expect("records");
        d.load(rec);
    }
}

fn var<'a>(d: &'a Debugger, name: &str) -> Option<&'a str> {
    d.stop()?.vars.iter().find(|v| v.0 == name).map(|v| v.1.as_str())
}

fn line(d: &Debugger) -> Option<u32> {
    d.stop().map(|s| s.line)
}

#[test]
fn steps_through_a_loop_line_by_line() {
    let fx = fixture(SCAN);
    let mut d = start(&fx, [5, 0, 0]);
    assert_eq!(d.rec.thread_text(), "thread (5, 0, 0) in the grid, (1, 0, 0) in threadgroup (1, 0, 0)");
    let mut seen = vec![line(&d).unwrap()];
    while !d.finished() {
        d.apply(Command::Step);
        if let Some(l) = line(&d) {
            seen.push(l);
        }
    }
    // Thread 5 is odd, local 1: two iterations, then the else branch.
    assert_eq!(seen, [11, 12, 13, 14, 15, 16, 15, 16, 15, 18, 21]);
    assert_eq!(d.message, "the thread finished the kernel");
}

#[test]
fn locals_are_those_in_scope_with_their_values() {
    let fx = fixture(SCAN);
    let mut d = start(&fx, [5, 0, 0]);
    assert_eq!(var(&d, "i"), Some("5"));
    assert_eq!(var(&d, "tile"), None, "declared on this line: not yet in scope");
    d.apply(Command::RunTo(None, 16));
    assert_eq!((var(&d, "k"), var(&d, "acc")), (Some("0"), Some("0")));
    d.apply(Command::RunTo(None, 16));
    assert_eq!((var(&d, "k"), var(&d, "acc")), (Some("1"), Some("4")));
    // The statement's memory: tile[1] read, with its neighbours.
    let a = &d.stop().unwrap().accesses[0];
    assert_eq!((a.write, a.name.as_str(), a.index, a.value.as_str()), (false, "tile", 1, "5"));
    assert_eq!(a.around.len(), 4);
    d.apply(Command::RunTo(None, 18));
    assert_eq!(var(&d, "k"), None, "the loop's variable is out of scope after it");
}

#[test]
fn threadgroup_memory_before_and_after_the_barrier() {
    let fx = fixture(SCAN);
    let mut d = start(&fx, [5, 0, 0]);
    d.apply(Command::RunTo(None, 12));
    // Threadgroup memory starts as garbage: unknown, never a plausible 0.
    assert_eq!(var(&d, "tile"), Some("[?, ?, ?, ?]"));
    let acc: Vec<(bool, &str, i64)> = d.stop().unwrap().accesses.iter().map(|a| (a.write, a.name.as_str(), a.index)).collect();
    assert_eq!(acc, [(false, "a", 5), (true, "tile", 1)]);
    d.apply(Command::Step);
    assert_eq!(line(&d), Some(13));
    // The threadgroup stores in lockstep: every lane's cell is written.
    assert_eq!(var(&d, "tile"), Some("[4, 5, 6, 7]"));
}

#[test]
fn the_active_mask_shows_divergence() {
    let fx = fixture(SCAN);
    let mut d = start(&fx, [5, 0, 0]);
    assert_eq!(d.stop().unwrap().simd_active, 0b1111);
    assert_eq!(d.stop().unwrap().simd_width, 4);
    d.apply(Command::RunTo(None, 21));
    // Only the odd threads of the group take the else branch.
    assert_eq!(d.stop().unwrap().simd_active, 0b1010);
    d.apply(Command::Thread([4, 0, 0]));
    let rec = record(&fx.target, d.thread, &[], 10_000, false).unwrap();
    d.load(rec);
    d.apply(Command::RunTo(None, 19));
    assert_eq!(d.stop().unwrap().simd_active, 0b0101);
}

#[test]
fn step_enters_a_helper_next_steps_over_it_finish_leaves_it() {
    let fx = fixture(SCAN);
    let mut d = start(&fx, [4, 0, 0]);
    d.apply(Command::RunTo(None, 19));
    let at_call = d.pos;
    d.apply(Command::Step);
    let s = d.stop().unwrap();
    assert_eq!((s.line, s.depth, s.func.as_str()), (5, 2, "twice"));
    assert_eq!(var(&d, "x"), Some("4"));
    assert_eq!(var(&d, "i"), None, "the caller's locals are not the helper's");
    d.apply(Command::Step);
    assert_eq!((line(&d), var(&d, "y")), (Some(6), Some("8")));
    d.apply(Command::Finish);
    assert!(d.finished(), "the call was the kernel's last statement");
    assert!(d.message.starts_with("`twice` returned 8; "), "{}", d.message);
    d.pos = at_call;
    d.apply(Command::Next);
    assert!(d.finished(), "next steps over the call");
    d.pos = 0;
    d.apply(Command::Finish);
    assert!(d.message.contains("already in the kernel"), "{}", d.message);
}

#[test]
fn step_back_and_reverse_continue_replay_earlier_stops() {
    let fx = fixture(SCAN);
    let mut d = start(&fx, [5, 0, 0]);
    d.apply(Command::RunTo(None, 16));
    d.apply(Command::RunTo(None, 16));
    let second = d.pos;
    d.apply(Command::Step);
    assert_eq!(line(&d), Some(15));
    d.apply(Command::Back);
    assert_eq!((d.pos, var(&d, "k")), (second, Some("1")));
    d.apply(Command::Break { file: None, line: 14, thread: None, condition: None });
    d.apply(Command::ReverseContinue);
    assert_eq!(line(&d), Some(14));
    d.apply(Command::Back);
    d.apply(Command::Back);
    d.apply(Command::Back);
    d.apply(Command::Back);
    assert_eq!((d.pos, d.message.as_str()), (0, "at the first stop already"));
}

#[test]
fn breakpoints_stop_continue_including_conditions_on_values_and_threads() {
    let fx = fixture(SCAN);
    let mut d = start(&fx, [7, 0, 0]);
    d.apply(Command::Break { file: None, line: 16, thread: None, condition: None });
    d.apply(Command::Continue);
    assert_eq!((line(&d), var(&d, "k")), (Some(16), Some("0")));
    d.apply(Command::Continue);
    assert_eq!(var(&d, "k"), Some("1"));
    // A condition on a value: an MSL expression evaluated at the line.
    apply(&fx, &mut d, Command::Break { file: None, line: 16, thread: None, condition: Some("k == 2 && acc > 8".into()) });
    assert_eq!(var(&d, "k"), Some("1"), "a rerun keeps the place");
    d.pos = 0;
    d.apply(Command::Continue);
    assert_eq!((var(&d, "k"), var(&d, "acc")), (Some("2"), Some("9")));
    d.apply(Command::Continue);
    assert!(d.finished() && d.message.contains("no breakpoint or finding on the way"), "{}", d.message);
    // A condition on the thread: ignored while watching another.
    d.apply(Command::Break { file: None, line: 16, thread: Some([6, 0, 0]), condition: None });
    d.pos = 0;
    d.apply(Command::Continue);
    assert!(d.finished());
    apply(&fx, &mut d, Command::Thread([6, 0, 0]));
    d.pos = 0;
    d.apply(Command::Continue);
    assert_eq!((d.rec.thread, line(&d)), ([6, 0, 0], Some(16)));
    d.apply(Command::Clear(None, 16));
    d.apply(Command::Continue);
    assert!(d.finished());
}

#[test]
fn a_condition_that_does_not_compile_is_ignored_with_a_note() {
    let fx = fixture(SCAN);
    let mut d = start(&fx, [5, 0, 0]);
    apply(&fx, &mut d, Command::Break { file: None, line: 16, thread: None, condition: Some("nope == 1".into()) });
    assert!(d.rec.notes.iter().any(|n| n.contains("`nope == 1`") && n.contains("ignored")), "{:?}", d.rec.notes);
    d.apply(Command::Continue);
    assert!(d.finished(), "never true");
}

#[test]
fn watches_are_evaluated_where_they_compile() {
    let fx = fixture(SCAN);
    let mut d = start(&fx, [6, 0, 0]);
    apply(&fx, &mut d, Command::Watch("tile[k] * 10".into()));
    apply(&fx, &mut d, Command::Watch("i + 1".into()));
    assert_eq!(d.watch_value("tile[k] * 10"), None, "k is not in scope on the first line");
    assert_eq!(d.watch_value("i + 1"), Some("7"));
    d.apply(Command::RunTo(None, 16));
    d.apply(Command::RunTo(None, 16));
    assert_eq!(d.watch_value("tile[k] * 10"), Some("50"));
    // The loop's own line sees `k` at each iteration start.
    d.apply(Command::Step);
    assert_eq!((line(&d), d.watch_value("tile[k] * 10")), (Some(15), Some("60")));
    assert!(d.rec.notes.iter().any(|n| n.starts_with("watch `tile[k] * 10` skips lines")), "{:?}", d.rec.notes);
    assert!(!d.rec.notes.iter().any(|n| n.contains("15")), "line 15 shows `k` on each pass: {:?}", d.rec.notes);
    // Where the thread first arrives at the loop, before `k` exists.
    d.pos = 0;
    d.apply(Command::RunTo(None, 15));
    assert_eq!((line(&d), d.watch_value("i + 1"), d.watch_value("tile[k] * 10")), (Some(15), Some("7"), None));
    d.apply(Command::Unwatch(1));
    assert_eq!(d.watches, ["i + 1"]);
}

#[test]
fn switching_thread_simd_group_and_threadgroup_keeps_the_place() {
    let fx = fixture(SCAN);
    let mut d = start(&fx, [5, 0, 0]);
    d.apply(Command::RunTo(None, 16));
    d.apply(Command::RunTo(None, 16));
    apply(&fx, &mut d, Command::Thread([7, 0, 0]));
    assert_eq!(d.rec.thread_text(), "thread (7, 0, 0) in the grid, (3, 0, 0) in threadgroup (1, 0, 0)");
    assert_eq!((line(&d), var(&d, "k")), (Some(16), Some("1")), "the same visit of the same line");
    apply(&fx, &mut d, Command::Group([0, 0, 0]));
    assert_eq!(d.rec.thread, [3, 0, 0]);
    assert_eq!(var(&d, "tile"), Some("[0, 1, 2, 3]"));
    apply(&fx, &mut d, Command::Simd(0));
    assert_eq!(d.rec.thread, [3, 0, 0], "the only SIMD-group of a 4-thread group");
    assert_eq!(d.apply(Command::Simd(1)), Effect::None);
    assert!(d.message.contains("no SIMD-group 1"), "{}", d.message);
    assert_eq!(d.apply(Command::Thread([8, 0, 0])), Effect::None);
    assert!(d.message.contains("outside the grid of 8x1x1"), "{}", d.message);
}

#[test]
fn recordings_are_capped_with_a_clear_message() {
    let fx = fixture(SCAN);
    let mut d = Debugger::new([7, 0, 0]);
    d.load(record(&fx.target, [7, 0, 0], &[], 5, false).unwrap());
    assert!(d.rec.truncated && d.rec.stops.len() == 5);
    d.apply(Command::Continue);
    assert!(d.message.contains("recording stopped after 5 stops"), "{}", d.message);
}

#[test]
fn compile_errors_and_bad_arguments_are_failures_not_recordings() {
    let fx = fixture(&SCAN.replace("acc += tile[k];", "acc += tile[q];"));
    match record(&fx.target, [0, 0, 0], &[], 100, false) {
        Err(Failed::Kernel(text)) => assert!(text.contains("scan.metal:16"), "{text}"),
        other => panic!("expected a compile failure, got {other:?}"),
    }
    let fx = fixture(SCAN);
    match record(&fx.target, [9, 0, 0], &[], 100, false) {
        Err(Failed::Usage(text)) => assert!(text.contains("outside the grid"), "{text}"),
        other => panic!("expected a usage error, got {other:?}"),
    }
}

#[test]
fn a_puzzle_and_an_mlx_body_are_targets_too() {
    let dir = tempfile::tempdir().unwrap();
    let ws = puzzles::workspace::Workspace::new(dir.path().join("ws"));
    ws.init().unwrap();
    let puzzle = puzzles::find("1").unwrap();
    let text = ws.read(puzzle).unwrap();
    let (_, body) = puzzles::split_source(&text);
    let header = &text[..text.len() - body.len()];
    let body_line = header.lines().count() as u32 + 2;
    std::fs::write(ws.path(puzzle), format!("{header}uint local_i = thread_position_in_grid.x;\nout[local_i] = a[local_i] + 10;\n"))
        .unwrap();
    let target = Target { argv: vec!["1".into(), "--dir".into(), dir.path().join("ws").display().to_string()], test: None };
    let mut d = Debugger::new([2, 0, 0]);
    d.load(record(&target, [2, 0, 0], &[ProbeFor::Watch("a[local_i]".into())], 100, false).unwrap());
    assert!(d.rec.what.starts_with("puzzle 1 (Map), test 1"), "{}", d.rec.what);
    d.apply(Command::RunTo(None, body_line));
    assert_eq!(var(&d, "local_i"), Some("2"));
    let file = &d.rec.files[d.stop().unwrap().file];
    assert_eq!(file.lines[body_line as usize - 1], "out[local_i] = a[local_i] + 10;", "shown without the probes");
    let w = d.stop().unwrap().values.clone();
    assert_eq!(w.len(), 1);

    let body = dir.path().join("body.metal");
    std::fs::write(&body, "uint i = thread_position_in_grid.x;\nout[i] = inp[i] * 2;\n").unwrap();
    let argv = [body.to_str().unwrap(), "--input", "inp=arange(4):f32", "--output", "out:float32:4", "--grid", "4", "--threadgroup", "4"];
    let target = Target { argv: argv.iter().map(|s| s.to_string()).collect(), test: None };
    let mut d = Debugger::new([3, 0, 0]);
    d.load(record(&target, [3, 0, 0], &[], 100, false).unwrap());
    d.apply(Command::RunTo(None, 2));
    assert_eq!(var(&d, "i"), Some("3"));
    let a: Vec<(bool, &str, &str)> = d.stop().unwrap().accesses.iter().map(|a| (a.write, a.name.as_str(), a.value.as_str())).collect();
    assert_eq!(a, [(false, "inp", "3"), (true, "out", "6")]);
}

#[test]
fn typed_commands_parse_and_errors_teach() {
    assert_eq!(parse_command("s"), Ok(Command::Step));
    assert_eq!(parse_command(":next"), Ok(Command::Next));
    assert_eq!(parse_command("until 12"), Ok(Command::RunTo(None, 12)));
    assert_eq!(
        parse_command("break 12 thread 3,1 if i == 3"),
        Ok(Command::Break { file: None, line: 12, thread: Some([3, 1, 0]), condition: Some("i == 3".into()) })
    );
    assert_eq!(parse_command("b 7"), Ok(Command::Break { file: None, line: 7, thread: None, condition: None }));
    assert_eq!(parse_command("b"), Ok(Command::Back));
    assert_eq!(parse_command("watch a[min(i, 3)]"), Ok(Command::Watch("a[min(i, 3)]".into())));
    assert_eq!(parse_command("thread 7"), Ok(Command::Thread([7, 0, 0])));
    assert_eq!(parse_command("group 1,0,0"), Ok(Command::Group([1, 0, 0])));
    assert_eq!(parse_command("simd 1"), Ok(Command::Simd(1)));
    assert!(parse_command("break x").unwrap_err().contains("needs a line number"));
    assert!(parse_command("break 3 if ").unwrap_err().contains("needs an expression"));
    assert!(parse_command("thread 1,2,3,4").unwrap_err().contains("X[,Y[,Z]]"));
    assert!(parse_command("frobnicate").unwrap_err().contains("unknown command `frobnicate`"));
    assert!(parse_command("step 3").unwrap_err().contains("takes no arguments"));
}

/// `run --capture` of the fixture's target, then the source removed: the
/// capture as a target.
fn captured(fx: &Fixture) -> Target {
    use clap::{Args, FromArgMatches};
    let dir = fx._dir.path();
    let cap = dir.join("scan.mpcapture");
    let argv = std::iter::once("run".to_string()).chain(fx.target.argv.iter().cloned()).chain([
        "--capture".to_string(),
        cap.display().to_string(),
        "--out".into(),
        dir.join("out").display().to_string(),
    ]);
    let cmd = crate::run::RunArgs::augment_args(clap::Command::new("run"));
    let args = crate::run::RunArgs::from_arg_matches(&cmd.try_get_matches_from(argv).expect("run's arguments")).expect("run's arguments");
    crate::run::run(&args);
    assert!(cap.exists(), "run --capture wrote the capture");
    // The capture holds the source: the debugger no longer needs the file.
    std::fs::remove_file(dir.join("scan.metal")).unwrap();
    Target { argv: vec![cap.display().to_string()], test: None }
}

#[test]
fn a_capture_is_a_target_and_steps_like_its_source() {
    let fx = fixture(SCAN);
    let target = captured(&fx);
    let mut d = Debugger::new([5, 0, 0]);
    d.load(record(&target, [5, 0, 0], &[], 10_000, false).expect("records"));
    assert!(d.rec.what.starts_with("capture `"), "{}", d.rec.what);
    let mut seen = vec![line(&d).unwrap()];
    while !d.finished() {
        d.apply(Command::Step);
        if let Some(l) = line(&d) {
            seen.push(l);
        }
    }
    assert_eq!(seen, [11, 12, 13, 14, 15, 16, 15, 16, 15, 18, 21]);
}

/// Thread 6 reads `a[8]` on its third pass, thread 7 on its second.
const OOB: &str = "kernel void scan(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    float x = 0;
    for (uint k = 0; k < 3; k++) {
        x += a[i + k];
    }
    out[i] = x;
}
";

#[test]
fn continue_stops_before_the_watched_threads_finding() {
    let fx = fixture(OOB);
    let mut d = start(&fx, [6, 0, 0]);
    d.apply(Command::Continue);
    assert_eq!((line(&d), var(&d, "k")), (Some(5), Some("2")), "{}", d.message);
    assert!(d.message.contains("out-of-bounds"), "{}", d.message);
    assert!(d.stop().unwrap().faults[0].starts_with("out-of-bounds"));
    // Past it: the thread finishes; with findings off it never stops.
    d.apply(Command::Continue);
    assert!(d.finished(), "{}", d.message);
    d.pos = 0;
    d.apply(Command::BreakOnFindings(false));
    d.apply(Command::Continue);
    assert!(d.finished());
    // A thread without findings runs to the end.
    let mut d = start(&fx, [2, 0, 0]);
    d.apply(Command::Continue);
    assert!(d.finished() && d.message.contains("no breakpoint or finding"), "{}", d.message);
}

#[test]
fn finding_n_goes_to_its_thread_and_line() {
    let fx = fixture(OOB);
    let mut d = start(&fx, [0, 0, 0]);
    assert_eq!(d.rec.finding_sites.len(), 1, "{:?}", d.rec.findings);
    apply(&fx, &mut d, Command::Finding(1));
    assert_eq!((d.rec.thread, line(&d), var(&d, "k")), ([7, 0, 0], Some(5), Some("1")), "{}", d.message);
    assert_eq!(d.apply(Command::Finding(2)), Effect::None);
    assert!(d.message.contains("no finding 2"), "{}", d.message);
}

#[test]
fn unwritten_memory_shows_as_unknown() {
    // A private array half written, and an element read before it is written.
    let src = "kernel void scan(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    float v[3];
    v[0] = a[i];
    out[i] = v[0] + v[1];
}
";
    let fx = fixture(src);
    let mut d = start(&fx, [1, 0, 0]);
    d.apply(Command::RunTo(None, 5));
    assert_eq!(var(&d, "v"), Some("[1, ?, ?]"));
    let reads: Vec<(String, String)> = d.stop().unwrap().accesses.iter().map(|a| (a.name.clone(), a.value.clone())).collect();
    assert!(d.stop().unwrap().faults.iter().any(|f| f.starts_with("uninitialized-read")), "{:?} {reads:?}", d.stop());
}

#[test]
fn file_and_line_places_parse() {
    assert_eq!(
        parse_command("b softmax.h:70"),
        Ok(Command::Break { file: Some("softmax.h".into()), line: 70, thread: None, condition: None })
    );
    assert_eq!(parse_command("until lib/x.h:3"), Ok(Command::RunTo(Some("lib/x.h".into()), 3)));
    assert_eq!(parse_command("findings off"), Ok(Command::BreakOnFindings(false)));
    assert_eq!(parse_command("finding 2"), Ok(Command::Finding(2)));
    assert!(parse_command("finding 0").is_err());
    let p = crate::debug::parse_print("softmax.h:70: x, metal::exp(y)").unwrap();
    assert_eq!((p.file.as_deref(), p.line, p.exprs.clone()), (Some("softmax.h"), 70, vec!["x".to_string(), "metal::exp(y)".to_string()]));
    let p = crate::debug::parse_print("5: a::b").unwrap();
    assert_eq!((p.file, p.line), (None, 5));
    assert!(crate::debug::parse_print("x.h: 3").is_err());
}

#[test]
fn breakpoints_and_conditions_in_a_header() {
    let header = "#pragma once\ntemplate <typename T>\nT twice(T x) {\n    T y = x * 2;\n    return y;\n}\n";
    let src = "#include \"twice.h\"\nkernel void scan(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    out[i] = twice(a[i]);
}
";
    let fx = fixture(src);
    std::fs::write(fx._dir.path().join("twice.h"), header).expect("write");
    let mut d = start(&fx, [3, 0, 0]);
    apply(&fx, &mut d, Command::Break { file: Some("twice.h".into()), line: 5, thread: None, condition: Some("y > 5".into()) });
    d.pos = 0;
    d.apply(Command::Continue);
    assert_eq!((line(&d), var(&d, "y")), (Some(5), Some("6")), "{}", d.message);
    assert!(d.rec.files[d.stop().unwrap().file].name.ends_with("twice.h"));
    // Thread 2's y is 4: the condition is false there.
    apply(&fx, &mut d, Command::Thread([2, 0, 0]));
    d.pos = 0;
    d.apply(Command::Continue);
    assert!(d.finished(), "{}", d.message);
    d.apply(Command::Clear(Some("twice.h".into()), 5));
    assert!(d.message.contains("twice.h:5 removed"), "{}", d.message);
}

/// A fixture of `n` threads in one threadgroup.
fn fixture_n(src: &str, n: u32) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("scan.metal");
    std::fs::write(&file, src).expect("write");
    let (n, a, out) = (n.to_string(), format!("a=arange({n}):f32"), format!("out=zeros({n}):f32"));
    let argv = [file.to_str().expect("utf-8 path"), "--kernel", "scan", "--grid", &n, "--threadgroup", &n, "--arg", &a, "--arg", &out]
        .into_iter()
        .map(String::from)
        .collect();
    Fixture { _dir: dir, target: Target { argv, test: None } }
}

const SHUFFLE: &str = "#include <metal_stdlib>
using namespace metal;
kernel void scan(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    float v = a[i];
    float below = simd_shuffle_down(v, 1);
    simd_vote vote = simd_ballot(v > 3);
    if (lane < 31)
        out[i] = v + below;
}
";

#[test]
fn lanes_shows_an_expression_in_the_whole_simd_group() {
    // 20 threads: lanes 20..31 of the SIMD-group do not exist.
    let fx = fixture_n(SHUFFLE, 20);
    let mut d = start(&fx, [5, 0, 0]);
    apply(&fx, &mut d, Command::Lanes(Some("below".into())));
    d.apply(Command::RunTo(None, 8));
    let lanes = d.stop().unwrap().lanes.clone().expect("the lanes view");
    assert_eq!(lanes.len(), 20);
    assert_eq!((lanes[0].as_str(), lanes[5].as_str(), lanes[18].as_str()), ("1", "6", "19"));
    // Lane 19 reads lane 20, which does not exist: undefined, never a plausible value.
    assert_eq!(lanes[19], "undefined");
    // A ballot is a mask: its lanes show in hex.
    assert_eq!(var(&d, "vote"), Some("1048560 (0xffff0)"));
    apply(&fx, &mut d, Command::Lanes(None));
    assert_eq!(d.stop().unwrap().lanes, None);
}

#[test]
fn a_simdgroup_matrix_shows_its_values() {
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void scan(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    simdgroup_float8x8 m;
    simdgroup_load(m, a, 8);
    simdgroup_store(m, out, 8);
}
";
    let fx = fixture_n(src, 64);
    let mut d = start(&fx, [0, 0, 0]);
    d.apply(Command::RunTo(None, 7));
    let m = var(&d, "m").unwrap();
    assert!(m.starts_with("simdgroup_float8x8[[0, 1, 2, 3, 4, 5, 6, 7], [8, 9,"), "{m}");
    assert!(m.ends_with("[56, 57, 58, 59, 60, 61, 62, 63]]"), "{m}");
}

#[test]
fn break_nan_stops_where_the_thread_makes_an_infinity() {
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void scan(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    float x = a[i] * 10.0f;
    float e = exp(x);
    out[i] = e / simd_sum(e);
}
";
    let fx = fixture_n(src, 20);
    let mut d = start(&fx, [9, 0, 0]);
    d.apply(Command::Continue);
    assert!(d.finished(), "no break on NaN unless asked: {}", d.message);
    d.pos = 0;
    apply(&fx, &mut d, Command::BreakNan(true));
    d.pos = 0;
    d.apply(Command::Continue);
    assert_eq!(line(&d), Some(6), "{}", d.message);
    assert!(d.message.contains("exp(90) overflows float (inf)"), "{}", d.message);
    // A thread whose values stay finite runs to the end.
    apply(&fx, &mut d, Command::Thread([2, 0, 0]));
    d.pos = 0;
    d.apply(Command::Continue);
    assert!(d.finished(), "{}", d.message);
    assert_eq!(parse_command("break nan"), Ok(Command::BreakNan(true)));
    assert_eq!(parse_command("clear nan"), Ok(Command::BreakNan(false)));
    // The same from a capture of the run.
    let target = captured(&fx);
    let mut d = Debugger::new([9, 0, 0]);
    d.load(record(&target, [9, 0, 0], &[], 10_000, true).expect("records"));
    d.break_nan = true;
    d.apply(Command::Continue);
    assert_eq!(line(&d), Some(6), "{}", d.message);
    assert!(d.message.contains("exp(90) overflows float (inf)"), "{}", d.message);
}

#[test]
fn a_breakpoint_the_thread_never_reaches_is_named() {
    let fx = fixture(SCAN);
    // Thread 5 is odd: it never runs line 19 (the even branch).
    let mut d = start(&fx, [5, 0, 0]);
    d.apply(Command::Break { file: None, line: 19, thread: None, condition: None });
    assert!(d.message.contains("never stops there"), "{}", d.message);
    d.apply(Command::Continue);
    assert!(d.finished());
    assert!(d.message.contains("this thread never runs line 19"), "{}", d.message);
}

#[test]
fn finish_shows_what_the_function_returned() {
    let src = "#include <metal_stdlib>
using namespace metal;
struct P { float v; int n; };
P make(float x) {
    P p = {x * 2, 3};
    return p;
}
float half_of(float x) {
    return x / 2;
}
kernel void scan(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    P p = make(a[i]);
    float h = half_of(p.v);
    out[i] = h + p.n;
}
";
    let fx = fixture(src);
    let mut d = start(&fx, [3, 0, 0]);
    d.apply(Command::Step);
    assert_eq!((line(&d), d.stop().map(|s| s.depth)), (Some(5), Some(2)));
    d.apply(Command::Finish);
    assert_eq!(line(&d), Some(14));
    assert_eq!(d.message, "`make` returned {v: 6, n: 3}");
    d.apply(Command::Step);
    d.apply(Command::Finish);
    assert_eq!((line(&d), d.message.as_str()), (Some(15), "`half_of` returned 3"));
}
