//! The interactive debugger's model: one thread's recording, stop by stop,
//! and the commands that move through it. Plain data, no terminal: the
//! screen (`debug_tui.rs`) draws a `Debugger`, tests drive one directly.
//!
//! A recording comes from one deterministic run of the target with the
//! thread watched (`gpu::stops`). Moving forwards or backwards is moving
//! through it; what needs a new run (another thread, a new watch or
//! condition, a restart) is an `Effect::Rerun`, after which the driver
//! hands a new recording to `Debugger::load`.

use crate::debug::{Outcome, PrintSpec, Request, Target};
use gpu::stops::MemAccess;
use std::collections::HashMap;

/// A file the thread stopped in, as the user wrote it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceText {
    pub name: String,
    pub lines: Vec<String>,
}

/// What a probe of the recording stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum ProbeFor {
    Watch(String),
    /// A watch shown in every lane of the SIMD-group (`lanes EXPR`).
    Lanes(String),
    Condition {
        file: Option<String>,
        line: u32,
        expr: String,
    },
}

/// One stop: the thread is about to run the statement on `line`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stop {
    pub file: usize,
    pub line: u32,
    /// Inlined call depth: 1 in the kernel, 2 in a function it calls…
    pub depth: u32,
    pub func: String,
    pub vars: Vec<(String, String)>,
    pub vars_omitted: usize,
    pub simd_active: u32,
    pub simd_width: u32,
    /// The memory this statement reads and writes (values as accessed).
    pub accesses: Vec<MemAccess>,
    pub accesses_omitted: usize,
    /// Probe values here: (index into `Recording::probes`, value).
    pub values: Vec<(usize, String)>,
    /// Findings of this thread in the statement about to run (`kind: message`).
    pub faults: Vec<String>,
    /// The `lanes` watch here, lane by lane (`—`: the lane is not running it).
    pub lanes: Option<Vec<String>>,
    /// At a called function's `return`: the value it returned.
    pub returned: Option<String>,
}

/// Everything one run showed about the watched thread.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recording {
    /// What ran (`puzzle 10 (Dot Product), test 1 …`).
    pub what: String,
    pub files: Vec<SourceText>,
    /// The user's file (breakpoint lines are its lines).
    pub main_file: usize,
    pub stops: Vec<Stop>,
    /// The run had more stops than `limit`.
    pub truncated: bool,
    pub limit: usize,
    pub thread_ran: bool,
    pub thread: [u32; 3],
    pub threadgroup: [u32; 3],
    pub local: [u32; 3],
    /// Threads in the grid and per threadgroup.
    pub grid: [u32; 3],
    pub tg_size: [u32; 3],
    /// Sanitizer findings of the run (rendered), and where each is.
    pub findings: Vec<String>,
    pub finding_sites: Vec<crate::debug::FindingSite>,
    pub probes: Vec<ProbeFor>,
    /// Why some watches or conditions are not evaluated everywhere.
    pub notes: Vec<String>,
}

impl Recording {
    /// The thread in the project's one wording.
    pub fn thread_text(&self) -> String {
        let [x, y, z] = self.thread;
        let [lx, ly, lz] = self.local;
        let [gx, gy, gz] = self.threadgroup;
        format!("thread ({x}, {y}, {z}) in the grid, ({lx}, {ly}, {lz}) in threadgroup ({gx}, {gy}, {gz})")
    }

    /// Lane number within the threadgroup (x fastest) and SIMD-group number.
    pub fn simd_position(&self) -> (u32, u32) {
        let [lx, ly, lz] = self.local;
        let [tx, ty, _] = self.tg_size;
        let linear = lx + tx * (ly + ty * lz);
        (linear % 32, linear / 32)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Breakpoint {
    /// A header's name (`softmax.h`), or `None` for the kernel's own file.
    pub file: Option<String>,
    pub line: u32,
    /// Only while watching this thread.
    pub thread: Option<[u32; 3]>,
    /// Only where this MSL expression is true (evaluated at the line).
    pub condition: Option<String>,
}

/// A command, typed (`:break 12 if i == 3`) or from a key.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// To the next line, into called functions.
    Step,
    /// To the next line of this function (over calls).
    Next,
    /// Out of the current function.
    Finish,
    /// To the next breakpoint (or the end).
    Continue,
    /// Back one line (the run is deterministic: the recording is its replay).
    Back,
    /// Back to the previous breakpoint (or the start).
    ReverseContinue,
    /// Forwards to the next stop on this line (of this file).
    RunTo(Option<String>, u32),
    Break {
        file: Option<String>,
        line: u32,
        thread: Option<[u32; 3]>,
        condition: Option<String>,
    },
    /// Remove the breakpoints on this line (of this file).
    Clear(Option<String>, u32),
    /// Whether the thread's own findings stop `continue` (on by default).
    BreakOnFindings(bool),
    /// `break nan` / `clear nan`.
    BreakNan(bool),
    /// Go to finding N (counting from 1): its thread, at its line.
    Finding(usize),
    Watch(String),
    /// Show an expression in every lane of the SIMD-group (`None`: stop).
    Lanes(Option<String>),
    /// Remove watch N (counting from 1).
    Unwatch(usize),
    Thread([u32; 3]),
    /// The thread at the same lane in SIMD-group N of this threadgroup.
    Simd(u32),
    /// The thread at the same position in threadgroup X,Y,Z.
    Group([u32; 3]),
    /// Run again from the start (re-reading the source).
    Restart,
    Help,
    Quit,
}

/// What the driver must do after a command.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    None,
    /// Record again with `Debugger::request` and `load` the result.
    Rerun,
    Quit,
}

pub const HELP: &str = "commands: s[tep] | n[ext] | fin[ish] | c[ontinue] | b[ack] | rc (reverse continue) | u[ntil] [FILE:]LINE | \
break [FILE:]LINE [thread X,Y,Z] [if EXPR] | clear [FILE:]LINE | break nan | clear nan | findings on|off | finding N | w[atch] EXPR | unwatch N | \
l[anes] EXPR (in all 32 lanes) | \
t[hread] X,Y,Z | simd N | group X,Y,Z | restart | q[uit]";

/// Parse a typed command.
pub fn parse_command(text: &str) -> Result<Command, String> {
    let text = text.trim().trim_start_matches(':').trim();
    let (word, rest) = text.split_once(char::is_whitespace).map(|(w, r)| (w, r.trim())).unwrap_or((text, ""));
    let line = |r: &str| -> Result<(Option<String>, u32), String> {
        crate::debug::parse_place(r.trim())
            .map_err(|_| format!("`{word}` needs a line, LINE or FILE:LINE (e.g. `{word} 12`, `{word} softmax.h:70`), got `{r}`"))
    };
    let no_args = |c: Command| if rest.is_empty() { Ok(c) } else { Err(format!("`{word}` takes no arguments")) };
    match word {
        "s" | "step" => no_args(Command::Step),
        "n" | "next" => no_args(Command::Next),
        "fin" | "finish" => no_args(Command::Finish),
        "c" | "continue" => no_args(Command::Continue),
        "b" | "back" | "p" | "prev" if rest.is_empty() => Ok(Command::Back),
        "rc" | "reverse-continue" => no_args(Command::ReverseContinue),
        "u" | "until" | "run" | "advance" => line(rest).map(|(f, l)| Command::RunTo(f, l)),
        "b" | "break" => parse_break(rest),
        "clear" | "delete" | "d" if rest == "nan" => Ok(Command::BreakNan(false)),
        "clear" | "delete" | "d" => line(rest).map(|(f, l)| Command::Clear(f, l)),
        "findings" => match rest {
            "on" => Ok(Command::BreakOnFindings(true)),
            "off" => Ok(Command::BreakOnFindings(false)),
            _ => Err("`findings on` makes the thread's findings stop `continue` (the default); `findings off` runs past them".into()),
        },
        "e" | "finding" => rest
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .map(Command::Finding)
            .ok_or_else(|| "`finding N` goes to finding N (1, 2, … as listed): its thread, at its line".to_string()),
        "w" | "watch" if !rest.is_empty() => Ok(Command::Watch(rest.to_string())),
        "w" | "watch" => Err("`watch` needs an MSL expression, e.g. `watch a[i] * 2`".into()),
        "l" | "lanes" => Ok(Command::Lanes((!rest.is_empty()).then(|| rest.to_string()))),
        "unwatch" => rest.parse::<usize>().map(Command::Unwatch).map_err(|_| "`unwatch` needs a watch number (1, 2, …)".to_string()),
        "t" | "thread" => parse_dims0(rest, "thread").map(Command::Thread),
        "simd" => rest.parse::<u32>().map(Command::Simd).map_err(|_| "`simd` needs a SIMD-group number (0, 1, …)".to_string()),
        "group" | "g" => parse_dims0(rest, "group").map(Command::Group),
        "restart" | "r" => no_args(Command::Restart),
        "h" | "help" | "?" => Ok(Command::Help),
        "q" | "quit" | "exit" => no_args(Command::Quit),
        "" => Err("type a command; `help` lists them".into()),
        _ => Err(format!("unknown command `{word}`; {HELP}")),
    }
}

/// `LINE [thread X,Y,Z] [if EXPR]`.
fn parse_break(rest: &str) -> Result<Command, String> {
    if rest.trim() == "nan" {
        return Ok(Command::BreakNan(true));
    }
    let padded = format!(" {rest} ");
    let (head, condition) = match padded.split_once(" if ") {
        Some((h, c)) if !c.trim().is_empty() => (h.trim(), Some(c.trim().to_string())),
        Some(_) => return Err("`break LINE if EXPR` needs an expression after `if`".into()),
        None => (rest.trim(), None),
    };
    let mut words = head.split_whitespace();
    let (file, line) = words.next().and_then(|w| crate::debug::parse_place(w).ok()).ok_or_else(|| {
        "`break` needs a line number: `break 12`, `break softmax.h:70`, `break 12 thread 3,0,0`, `break 12 if i == 3`".to_string()
    })?;
    let thread = match (words.next(), words.next()) {
        (None, _) => None,
        (Some("thread"), Some(t)) => Some(parse_dims0(t, "thread")?),
        _ => return Err("after the line, `break` takes `thread X,Y,Z` and/or `if EXPR`".into()),
    };
    if words.next().is_some() {
        return Err("after the line, `break` takes `thread X,Y,Z` and/or `if EXPR`".into());
    }
    if condition.as_deref().is_some_and(|c| c.contains(['\n', ';', '{', '}'])) {
        return Err("a condition is one MSL expression (no `;` or braces)".into());
    }
    Ok(Command::Break { file, line, thread, condition })
}

/// `X[,Y[,Z]]`, positions from 0.
pub fn parse_dims0(s: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if s.trim().is_empty() || parts.len() > 3 {
        return Err(format!("`{what}` needs a position X[,Y[,Z]], e.g. `{what} 3` or `{what} 1,2,0`"));
    }
    let mut out = [0u32; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = p.parse().map_err(|_| format!("`{what}`: `{p}` is not a whole number"))?;
    }
    Ok(out)
}

/// The debugger: a recording, where we are in it, and what the user set.
#[derive(Clone, Debug, Default)]
pub struct Debugger {
    pub rec: Recording,
    /// Index into `rec.stops`; `rec.stops.len()` means the thread finished.
    pub pos: usize,
    pub breakpoints: Vec<Breakpoint>,
    pub watches: Vec<String>,
    /// The thread to record next.
    pub thread: [u32; 3],
    /// The expression shown across the SIMD-group's lanes.
    pub lanes: Option<String>,
    /// A line of the main file the user points at (run to / break here).
    pub cursor: u32,
    pub message: String,
    /// Where to land after the next `load` (see `Anchor`).
    anchor: Option<Anchor>,
    /// Shown once per load: the help line instead of the status message.
    pub show_help: bool,
    /// The thread's findings stop `continue` (`findings off` turns it off).
    pub stop_on_findings: bool,
    /// After the next `load`, go to the thread's first finding (if any).
    goto_fault: bool,
    /// `break nan`: stop where the thread makes a NaN or infinity from
    /// finite values (the run traces them).
    pub break_nan: bool,
}

/// A place that survives a rerun: the Nth visit of a line (another thread
/// runs the same code, so the same visit is the natural place to compare).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Anchor {
    file: usize,
    line: u32,
    visit: usize,
}

impl Debugger {
    pub fn new(thread: [u32; 3]) -> Debugger {
        Debugger { thread, stop_on_findings: true, ..Default::default() }
    }

    pub fn stop(&self) -> Option<&Stop> {
        self.rec.stops.get(self.pos)
    }

    pub fn finished(&self) -> bool {
        self.pos >= self.rec.stops.len()
    }

    /// The probes the next run must place: watches everywhere, conditions
    /// at their breakpoint's line.
    pub fn probes(&self) -> Vec<ProbeFor> {
        let mut out: Vec<ProbeFor> = self.watches.iter().map(|w| ProbeFor::Watch(w.clone())).collect();
        out.extend(self.lanes.iter().map(|e| ProbeFor::Lanes(e.clone())));
        for b in &self.breakpoints {
            if let Some(c) = &b.condition {
                out.push(ProbeFor::Condition { file: b.file.clone(), line: b.line, expr: c.clone() });
            }
        }
        out
    }

    /// The locals at the stop before this one in the same call (to mark
    /// what changed).
    pub fn previous_vars(&self) -> Option<&[(String, String)]> {
        let s = self.stop()?;
        let prev = self.rec.stops.get(self.pos.checked_sub(1)?)?;
        (prev.depth == s.depth && prev.func == s.func).then_some(prev.vars.as_slice())
    }

    /// The calls the thread is in, outermost first: (function, line of
    /// the call or, innermost, of the current stop).
    pub fn call_stack(&self) -> Vec<(String, u32)> {
        let Some(s) = self.stop() else { return Vec::new() };
        let mut out = vec![(s.func.clone(), s.line)];
        let mut depth = s.depth;
        for p in self.rec.stops[..self.pos].iter().rev() {
            if p.depth < depth {
                out.push((p.func.clone(), p.line));
                depth = p.depth;
            }
            if depth <= 1 {
                break;
            }
        }
        out.reverse();
        out
    }

    /// Take a new recording, landing where the last command asked.
    pub fn load(&mut self, rec: Recording) {
        self.rec = rec;
        self.pos = 0;
        if let Some(a) = self.anchor.take() {
            if let Some(i) = self.find_visit(a) {
                self.pos = i;
            }
        }
        if std::mem::take(&mut self.goto_fault) {
            if let Some(i) = (0..self.rec.stops.len()).find(|&i| !self.rec.stops[i].faults.is_empty()) {
                self.pos = i;
            }
        }
        self.cursor = self.stop().map(|s| s.line).unwrap_or(self.cursor);
    }

    fn key(s: &Stop) -> (usize, u32, u32) {
        (s.file, s.line, s.depth)
    }

    fn anchor_here(&self) -> Option<Anchor> {
        let s = self.stop()?;
        let visit = self.rec.stops[..self.pos].iter().filter(|t| t.file == s.file && t.line == s.line).count();
        Some(Anchor { file: s.file, line: s.line, visit })
    }

    fn find_visit(&self, a: Anchor) -> Option<usize> {
        let mut seen = 0;
        let mut last = None;
        for (i, s) in self.rec.stops.iter().enumerate() {
            if s.file == a.file && s.line == a.line {
                if seen == a.visit {
                    return Some(i);
                }
                seen += 1;
                last = Some(i);
            }
        }
        last
    }

    /// Whether stop `i` starts a new line (not the same line and call as the stop before).
    fn starts_line(&self, i: usize) -> bool {
        i == 0 || i >= self.rec.stops.len() || Self::key(&self.rec.stops[i - 1]) != Self::key(&self.rec.stops[i])
    }

    /// The recording's file named `name` (`None`: the kernel's own file):
    /// the same name, path or file name.
    pub fn file_named(&self, name: Option<&str>) -> Option<usize> {
        let Some(name) = name else { return Some(self.rec.main_file) };
        let base = |p: &str| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string();
        let files = &self.rec.files;
        files.iter().position(|f| f.name == name).or_else(|| files.iter().position(|f| base(&f.name) == base(name)))
    }

    /// Whether a breakpoint stops the thread at stop `i`.
    pub fn breaks_at(&self, i: usize) -> Option<&Breakpoint> {
        let s = self.rec.stops.get(i)?;
        if !self.starts_line(i) {
            return None;
        }
        self.breakpoints.iter().find(|b| {
            b.line == s.line
                && self.file_named(b.file.as_deref()) == Some(s.file)
                && b.thread.is_none_or(|t| t == self.rec.thread)
                && match &b.condition {
                    None => true,
                    Some(c) => self.condition_at(s, b.file.clone(), b.line, c) == Some(true),
                }
        })
    }

    /// Whether the thread's own finding stops it at stop `i` (`findings
    /// on`), or the birth of a non-finite value (`break nan`).
    pub fn faults_at(&self, i: usize) -> bool {
        self.rec
            .stops
            .get(i)
            .is_some_and(|s| s.faults.iter().any(|f| if f.starts_with("nan:") { self.break_nan } else { self.stop_on_findings }))
    }

    /// A condition's value at a stop (None: not evaluated there).
    pub fn condition_at(&self, s: &Stop, file: Option<String>, line: u32, expr: &str) -> Option<bool> {
        let want = ProbeFor::Condition { file, line, expr: expr.to_string() };
        let p = self.rec.probes.iter().position(|x| *x == want)?;
        s.values.iter().find(|v| v.0 == p).map(|v| truthy(&v.1))
    }

    /// A watch's value at the current stop.
    pub fn watch_value(&self, expr: &str) -> Option<&str> {
        let p = self.rec.probes.iter().position(|x| *x == ProbeFor::Watch(expr.to_string()))?;
        self.stop()?.values.iter().find(|v| v.0 == p).map(|v| v.1.as_str())
    }

    fn go(&mut self, i: usize) {
        self.pos = i.min(self.rec.stops.len());
        if let Some(s) = self.stop() {
            self.cursor = s.line;
        }
    }

    fn first_after(&self, ok: impl Fn(usize, &Stop) -> bool) -> Option<usize> {
        (self.pos + 1..self.rec.stops.len()).find(|&i| self.starts_line(i) && ok(i, &self.rec.stops[i]))
    }

    fn end_message(&self) -> String {
        if self.rec.truncated {
            format!(
                "recording stopped after {} stops (the limit, or 32 MiB of values); `--limit N` records more. Earlier stops can still be visited.",
                self.rec.stops.len()
            )
        } else {
            "the thread finished the kernel".to_string()
        }
    }

    /// Apply a command: move, or say what needs a new run.
    pub fn apply(&mut self, cmd: Command) -> Effect {
        self.message.clear();
        self.show_help = false;
        let depth = self.stop().map(|s| s.depth).unwrap_or(0);
        match cmd {
            Command::Step => self.forward(|_, _| true),
            Command::Next => self.forward(|_, s| s.depth <= depth),
            Command::Finish => {
                if depth <= 1 {
                    self.message = "already in the kernel itself; `finish` leaves a called function".into();
                } else {
                    let (from, func) = (self.pos, self.stop().map(|s| s.func.clone()).unwrap_or_default());
                    self.forward(|_, s| s.depth < depth);
                    // The value of the `return` it left by.
                    let upto = self.pos.min(self.rec.stops.len());
                    let value = self.rec.stops[from..upto].iter().rev().find(|s| s.depth == depth).and_then(|s| s.returned.clone());
                    if let Some(v) = value {
                        let then = if self.message.is_empty() { String::new() } else { format!("; {}", self.message) };
                        self.message = format!("`{func}` returned {v}{then}");
                    }
                }
            }
            Command::Continue => {
                // A finding stops the thread at the statement that makes it
                // (any stop, not only a line's first: a loop's test can fault).
                let hit = (self.pos + 1..self.rec.stops.len()).find(|&i| self.faults_at(i) || self.breaks_at(i).is_some());
                match hit {
                    Some(i) if self.faults_at(i) && self.breaks_at(i).is_none() => {
                        self.go(i);
                        let s = &self.rec.stops[i];
                        self.message = format!(
                            "stopped before the finding on line {} ({}); `findings off` runs past findings",
                            s.line,
                            s.faults.first().map(String::as_str).unwrap_or("")
                        );
                    }
                    Some(i) => {
                        self.go(i);
                        self.message = format!("stopped at the breakpoint on line {}", self.rec.stops[i].line);
                    }
                    None => {
                        self.go(self.rec.stops.len());
                        // Say which breakpoints this thread never gets to.
                        let never: Vec<String> = self
                            .breakpoints
                            .iter()
                            .filter(|b| {
                                let f = self.file_named(b.file.as_deref());
                                !self.rec.stops.iter().any(|s| Some(s.file) == f && s.line == b.line)
                            })
                            .map(|b| place_text(&b.file, b.line))
                            .collect();
                        let never = if never.is_empty() {
                            String::new()
                        } else {
                            format!("; this thread never runs {} (a guard or branch keeps it away: try another thread)", never.join(", "))
                        };
                        self.message = format!("{} (no breakpoint or finding on the way{never})", self.end_message());
                    }
                }
            }
            Command::Back => {
                if self.pos == 0 {
                    self.message = "at the first stop already".into();
                } else {
                    let mut i = self.pos - 1;
                    while i > 0 && !self.starts_line(i) {
                        i -= 1;
                    }
                    self.go(i);
                    self.message = format!("stepped back to stop {} of {}", i + 1, self.rec.stops.len());
                }
            }
            Command::ReverseContinue => {
                let hit = (0..self.pos).rev().find(|&i| self.breaks_at(i).is_some());
                self.go(hit.unwrap_or(0));
                self.message = match hit {
                    Some(i) => format!("back to the breakpoint at line {}", self.rec.stops[i].line),
                    None => "back at the start (no breakpoint before)".into(),
                };
            }
            Command::RunTo(file, line) => {
                let f = self.file_named(file.as_deref());
                match self.first_after(|_, s| Some(s.file) == f && s.line == line) {
                    Some(i) => self.go(i),
                    None => self.message = format!("the thread does not reach {} again from here", place_text(&file, line)),
                }
            }
            Command::Break { file, line, thread, condition } => {
                self.breakpoints.retain(|b| !(b.line == line && b.file == file));
                let f = self.file_named(file.as_deref());
                let reached = self.rec.stops.iter().any(|s| Some(s.file) == f && s.line == line);
                let rerun = condition.is_some();
                let place = place_text(&file, line);
                self.breakpoints.push(Breakpoint { file, line, thread, condition });
                self.message = format!(
                    "breakpoint set on {place}{}",
                    if reached { String::new() } else { " (this thread never stops there in this run)".into() }
                );
                if rerun {
                    self.anchor = self.anchor_here();
                    return Effect::Rerun;
                }
            }
            Command::Clear(file, line) => {
                let before = self.breakpoints.len();
                self.breakpoints.retain(|b| !(b.line == line && b.file == file));
                let place = place_text(&file, line);
                self.message = if before == self.breakpoints.len() {
                    format!("no breakpoint on {place}")
                } else {
                    format!("breakpoint on {place} removed")
                };
            }
            Command::BreakOnFindings(on) => {
                self.stop_on_findings = on;
                self.message = if on {
                    "the thread's findings stop `continue` again".into()
                } else {
                    "`continue` now runs past findings (`findings on` to stop at them)".into()
                };
            }
            Command::BreakNan(on) => {
                self.break_nan = on;
                self.message = if on {
                    "`continue` stops where this thread makes a NaN or infinity from finite values (`clear nan` to stop)".into()
                } else {
                    "no longer stopping at NaN births".into()
                };
                self.anchor = self.anchor_here();
                return Effect::Rerun;
            }
            Command::Finding(n) => {
                let Some(site) = self.rec.finding_sites.get(n - 1).cloned() else {
                    self.message = format!("there is no finding {n} ({} findings in this run)", self.rec.finding_sites.len());
                    return Effect::None;
                };
                self.thread = site.thread;
                let file = self.rec.files.iter().position(|f| f.name == site.file).unwrap_or(self.rec.main_file);
                // Land on the visit that makes the finding, else the line's first.
                self.anchor = Some(Anchor { file, line: site.line, visit: 0 });
                self.goto_fault = true;
                let [x, y, z] = site.thread;
                self.message = format!("finding {n}: thread ({x}, {y}, {z}) at line {}", site.line);
                return Effect::Rerun;
            }
            Command::Watch(expr) => {
                if !self.watches.contains(&expr) {
                    self.watches.push(expr);
                }
                self.anchor = self.anchor_here();
                return Effect::Rerun;
            }
            Command::Lanes(expr) => {
                if expr.is_none() {
                    self.message = "the SIMD-group view is closed".into();
                }
                self.lanes = expr;
                self.anchor = self.anchor_here();
                return Effect::Rerun;
            }
            Command::Unwatch(n) => {
                if n == 0 || n > self.watches.len() {
                    self.message = format!("there is no watch {n} ({} watches)", self.watches.len());
                } else {
                    let w = self.watches.remove(n - 1);
                    self.message = format!("watch `{w}` removed");
                }
            }
            Command::Thread(t) => return self.switch(t),
            Command::Simd(g) => {
                let (lane, _) = self.rec.simd_position();
                let [tx, ty, tz] = self.rec.tg_size;
                let linear = g.saturating_mul(32).saturating_add(lane);
                if linear >= tx * ty * tz {
                    self.message = format!("threadgroup has {} threads: no SIMD-group {g} (lane {lane} of it)", tx * ty * tz);
                    return Effect::None;
                }
                let local = [linear % tx, linear / tx % ty, linear / (tx * ty)];
                let t = [0, 1, 2].map(|d| self.rec.threadgroup[d] * self.rec.tg_size[d] + local[d]);
                return self.switch(t);
            }
            Command::Group(g) => {
                let t = [0, 1, 2].map(|d| g[d].saturating_mul(self.rec.tg_size[d]).saturating_add(self.rec.local[d]));
                return self.switch(t);
            }
            Command::Restart => {
                self.anchor = None;
                self.message = "restarted: the kernel ran again from the start".into();
                return Effect::Rerun;
            }
            Command::Help => {
                self.show_help = true;
                self.message = HELP.into();
            }
            Command::Quit => return Effect::Quit,
        }
        Effect::None
    }

    fn forward(&mut self, ok: impl Fn(usize, &Stop) -> bool) {
        match self.first_after(ok) {
            Some(i) => self.go(i),
            None => {
                self.go(self.rec.stops.len());
                self.message = self.end_message();
            }
        }
    }

    fn switch(&mut self, t: [u32; 3]) -> Effect {
        let [gx, gy, gz] = self.rec.grid;
        if (0..3).any(|d| t[d] >= self.rec.grid[d]) {
            let [x, y, z] = t;
            self.message = format!("thread ({x}, {y}, {z}) is outside the grid of {gx}x{gy}x{gz} threads");
            return Effect::None;
        }
        self.thread = t;
        self.anchor = self.anchor_here();
        Effect::Rerun
    }

    /// What a rerun may change, to put back when it fails.
    pub fn settings(&self) -> Settings {
        Settings { breakpoints: self.breakpoints.clone(), watches: self.watches.clone(), thread: self.thread, lanes: self.lanes.clone() }
    }

    pub fn restore(&mut self, s: Settings) {
        (self.breakpoints, self.watches, self.thread, self.lanes) = (s.breakpoints, s.watches, s.thread, s.lanes);
        self.anchor = None;
    }
}

/// The user's choices that a run depends on.
#[derive(Clone, Debug)]
pub struct Settings {
    breakpoints: Vec<Breakpoint>,
    watches: Vec<String>,
    thread: [u32; 3],
    lanes: Option<String>,
}

/// Why there is no recording.
#[derive(Clone, Debug, PartialEq)]
pub enum Failed {
    /// Bad arguments, a missing file, a thread outside the grid…
    Usage(String),
    /// The kernel does not compile (the rendered errors).
    Kernel(String),
}

impl Failed {
    pub fn text(&self) -> &str {
        match self {
            Failed::Usage(t) | Failed::Kernel(t) => t,
        }
    }
}

/// `line 12` or `softmax.h:70`.
fn place_text(file: &Option<String>, line: u32) -> String {
    match file {
        Some(f) => format!("{f}:{line}"),
        None => format!("line {line}"),
    }
}

/// How a condition's value reads as a truth value.
fn truthy(v: &str) -> bool {
    !matches!(v, "false" | "0" | "-0" | "nullptr")
}

/// Run the target for `thread` with `probes` placed and make a recording.
/// A watch is left out of the lines where it does not compile (a local not
/// in scope there); a watch or condition with an error of its own (one
/// that does not compile anywhere it goes) is turned off with a note and
/// the run repeated. `nan`: trace non-finite values (for `break nan`).
pub fn record(target: &Target, thread: [u32; 3], probes: &[ProbeFor], limit: usize, nan: bool) -> Result<Recording, Failed> {
    let mut off: Vec<bool> = vec![false; probes.len()];
    let mut notes: Vec<String> = Vec::new();
    for _round in 0..=probes.len() {
        // The specs of this run and the probe each stands for.
        let mut specs = Vec::new();
        let mut spec_probe = Vec::new();
        for (i, p) in probes.iter().enumerate().filter(|(i, _)| !off[*i]) {
            specs.push(match p {
                ProbeFor::Watch(e) | ProbeFor::Lanes(e) => PrintSpec { file: None, line: 0, exprs: vec![e.clone()], everywhere: true },
                ProbeFor::Condition { file, line, expr } => {
                    PrintSpec { file: file.clone(), ..PrintSpec::at(*line, vec![format!("(bool)({expr})")]) }
                }
            });
            spec_probe.push(i);
        }
        let req = Request { thread, prints: specs, limit, interactive: None, nan };
        let outcome = target.record(&req).map_err(Failed::Usage)?;
        let Some(failure) = &outcome.failure else {
            let skipped = outcome.skipped.clone();
            let mut rec = recording_of(outcome, &spec_probe, probes, thread, limit);
            rec.notes.extend(notes);
            for (s, lines) in skipped.iter().enumerate().filter(|(_, l)| !l.is_empty()) {
                let Some(ProbeFor::Watch(e)) = spec_probe.get(s).and_then(|&i| probes.get(i)) else { continue };
                let main_name = rec.files.get(rec.main_file).map(|f| f.name.clone()).unwrap_or_default();
                let shown: Vec<String> =
                    lines.iter().take(8).map(|(f, l)| if *f == main_name { l.to_string() } else { format!("{f}:{l}") }).collect();
                let more = if lines.len() > 8 { ", …" } else { "" };
                rec.notes.push(format!("watch `{e}` skips lines {}{more} (does not compile there)", shown.join(", ")));
            }
            return Ok(rec);
        };
        // Which probes the errors are in.
        let mut blamed = false;
        for (spec, message) in &outcome.probe_errors {
            let Some(&i) = spec_probe.get(*spec) else { continue };
            if off[i] {
                continue;
            }
            blamed = true;
            off[i] = true;
            notes.push(match &probes[i] {
                ProbeFor::Watch(e) | ProbeFor::Lanes(e) => format!("watch `{e}` does not compile ({message}); it is ignored"),
                ProbeFor::Condition { line, expr, .. } => {
                    format!("condition `{expr}` of the breakpoint on line {line} does not compile there ({message}); it is ignored")
                }
            });
        }
        if !blamed {
            return Err(Failed::Kernel(failure.clone()));
        }
    }
    Err(Failed::Usage("the watches and conditions could not be placed; remove some (`unwatch N`, `clear LINE`)".into()))
}

/// Whether `span` is in a probe's own expressions (not the kernel's code).
fn in_probe(sources: &msl::source::SourceMap, span: msl::source::Span) -> bool {
    sources.file(span.file).probe.is_some()
}

/// Turn one run's outcome into a recording.
fn recording_of(o: Outcome, spec_probe: &[usize], probes: &[ProbeFor], thread: [u32; 3], limit: usize) -> Recording {
    let mut rec = Recording {
        what: o.what.clone(),
        thread,
        grid: o.grid,
        tg_size: o.threadgroup,
        findings: o.findings.clone(),
        finding_sites: o.finding_sites.clone(),
        probes: probes.to_vec(),
        limit,
        ..Default::default()
    };
    let (Some(log), Some(sources)) = (o.stops, o.sources) else { return rec };
    rec.truncated = log.truncated;
    rec.thread_ran = log.thread_ran;
    rec.threadgroup = log.threadgroup;
    rec.local = log.local;
    // Files in the order the thread first stops in them; the user's file
    // shown without the probes placed in it.
    let mut file_index: HashMap<msl::source::FileId, usize> = HashMap::new();
    let mut stops = Vec::with_capacity(log.stops.len());
    for s in &log.stops {
        let f = *file_index.entry(s.span.file).or_insert_with(|| {
            let sf = sources.file(s.span.file);
            rec.files.push(SourceText { name: sf.name.clone(), lines: sf.text.lines().map(str::to_string).collect() });
            rec.files.len() - 1
        });
        stops.push(Stop {
            file: f,
            line: sources.line_col(s.span).0,
            depth: s.depth,
            func: s.func.clone(),
            vars: s.vars.clone(),
            vars_omitted: s.vars_omitted,
            simd_active: s.simd_active,
            simd_width: s.simd_width,
            // The debugger's own probes read memory too: not the line's accesses.
            accesses: s.accesses.iter().filter(|a| !in_probe(&sources, a.span)).cloned().collect(),
            accesses_omitted: s.accesses_omitted,
            values: Vec::new(),
            faults: s.faults.iter().map(|f| format!("{}: {}", f.kind, f.message)).collect(),
            lanes: None,
            returned: s.returned.clone(),
        });
    }
    // The kernel's own file: where depth-1 stops are.
    rec.main_file = stops.iter().find(|s| s.depth == 1).map(|s| s.file).unwrap_or(0);
    // A probe runs just before its statement's stop, or (on a loop's line)
    // just after the loop's stop: attach it to the stop on its line.
    for p in &log.probes {
        let Some(placed) = o.placed.iter().find(|pl| pl.sites.contains(&p.hit.probe)) else { continue };
        let Some(&probe) = spec_probe.get(placed.spec) else { continue };
        let next = p.after_stops;
        let at = |s: &Stop| s.line == placed.line && rec.files.get(s.file).is_some_and(|f| f.name == placed.file);
        let target = if stops.get(next).is_some_and(at) {
            Some(next)
        } else if next > 0 && stops.get(next - 1).is_some_and(at) {
            Some(next - 1)
        } else {
            None
        };
        if let Some(t) = target {
            let (lane, _) = rec.simd_position();
            let undefined = matches!(p.lanes.get(lane as usize), Some(Some(gpu::stops::LaneValue::Undefined)));
            let v = if undefined { "undefined".to_string() } else { p.hit.text() };
            if matches!(probes.get(probe), Some(ProbeFor::Lanes(_))) {
                stops[t].lanes = Some((0..p.lanes.len()).map(|i| p.lane_text(i)).collect());
            }
            let values = &mut stops[t].values;
            match values.iter_mut().find(|x| x.0 == probe) {
                Some(x) => x.1 = v,
                None => values.push((probe, v)),
            }
        }
    }
    rec.stops = stops;
    rec
}

#[cfg(test)]
mod tests;
