//! Debugger probes: expressions the user wants to see each time a thread
//! reaches a line (`debug --print 'LINE: expr, …'`, the interactive
//! debugger's watches and breakpoint conditions).
//!
//! A probe is placed by the front end, not by editing the source: the
//! request names a line, [`plan`] finds the statement the thread stops at
//! there (for a loop's line: the start of every iteration), and the checker
//! checks the expressions in the scope just before that statement and puts
//! them in the HIR as a `StmtKind::Probe`. The expressions are their own
//! file in the source map (named by the request), so their errors point at
//! what the user typed; the kernel's text is never touched.

use crate::ast::{self, Item, ItemKind, MemberKind, Stmt, StmtKind, TranslationUnit};
use crate::diag::{codes, Diagnostic, Diagnostics};
use crate::source::{FileId, SourceMap, Span};
use std::collections::HashMap;

/// What the user asked to see, and where.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRequest {
    pub at: ProbeAt,
    /// The expressions as typed, separated by commas (`i, a[i]`).
    pub text: String,
    /// How messages name the request (`--print 12`, `watch 2`).
    pub name: String,
    /// A watch: left out, silently, where it does not compile (a name not
    /// in scope there); a `--print` that does not compile is an error.
    pub optional: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ProbeAt {
    /// Before the first statement starting on `line` of the kernel's own
    /// file (`None`) or of a file it includes, by name or path.
    Line { file: Option<String>, line: u32 },
    /// Before every line with a statement (the debugger's watches).
    Everywhere,
}

/// The probes of one compilation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Probes {
    pub requests: Vec<ProbeRequest>,
    /// A generated source (an MLX body): the part of the main file the user
    /// wrote and how its lines are numbered in the user's file.
    pub view: Option<MainView>,
}

/// The user's text inside a generated main file.
#[derive(Clone, Debug, PartialEq)]
pub struct MainView {
    /// The user's file, as messages name it.
    pub name: String,
    /// Byte range of the main file that is the user's text.
    pub lo: u32,
    pub hi: u32,
    /// The user's line number of the main file's line holding `lo`.
    pub first_line: u32,
}

/// Where one request was placed: once per checked copy of the statement
/// (a template function's statement once per instance).
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeSite {
    pub request: u32,
    /// The statement whose line the probe is on (a loop's line: the loop,
    /// though the probe runs at the start of each pass).
    pub stmt: Span,
    /// False for an optional request that does not compile there.
    pub placed: bool,
}

/// Whether a file named `name` (display name or path) is the one `wanted`
/// names: the same, or the same file name.
pub fn names_file(name: &str, wanted: &str) -> bool {
    let base = |p: &str| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string();
    name == wanted || base(name) == base(wanted)
}

/// Where the probes go, for the checker.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Statement span → requests placed just before it.
    pub before: HashMap<Span, Vec<u32>>,
    /// Loop-body block span → requests placed at its start (every iteration,
    /// after a range-based `for`'s variable is declared).
    pub block_top: HashMap<Span, Vec<u32>>,
    /// Each request's parsed expressions.
    pub exprs: Vec<Vec<ast::Expr>>,
    pub optional: Vec<bool>,
    /// Each request's places: (where it goes, the statement whose line it
    /// is, that line in words: ``line 12 of `k.metal` ``).
    pub place: Vec<Vec<(Span, Span, String)>>,
    pub sites: Vec<ProbeSite>,
}

impl Plan {
    /// Request `r` placed at `key`: the statement whose line it is, and
    /// that line in words.
    pub fn place_of(&self, r: u32, key: Span) -> (Span, String) {
        let found = self.place.get(r as usize).and_then(|p| p.iter().find(|p| p.0 == key));
        found.map(|p| (p.1, p.2.clone())).unwrap_or((key, String::new()))
    }
}

/// Most places all requests together may be given (an `Everywhere` watch
/// takes every line of every file the kernel reads).
const MAX_PLACES: usize = 200_000;

/// A statement the thread stops at.
#[derive(Clone, Copy, Debug)]
struct StopAt {
    /// Where the thread stops (its line is the statement's).
    start: Span,
    /// Where the probes go.
    spot: Spot,
}

#[derive(Clone, Copy, Debug)]
enum Spot {
    Before(Span),
    /// At the start of a loop body's block.
    BlockTop(Span),
}

/// Find where each request goes (`exprs`: each request's parsed
/// expressions). Requests naming a line without a statement, or a file the
/// kernel does not read, are errors on the request's own file (`files`).
pub(crate) fn plan(
    unit: &TranslationUnit,
    sources: &SourceMap,
    main: FileId,
    probes: &Probes,
    files: &[FileId],
    exprs: Vec<Vec<ast::Expr>>,
    diags: &mut Diagnostics,
) -> Plan {
    let mut stops = Vec::new();
    for item in &unit.items {
        item_stops(item, &mut stops);
    }
    let view = probes.view.as_ref();
    let in_view = |s: Span| s.file != main || view.is_none_or(|v| (v.lo..v.hi).contains(&s.lo));
    stops.retain(|s| in_view(s.start));
    // Lines as the user numbers them.
    let line_of = |s: Span| -> u32 {
        let f = sources.file(s.file);
        match view.filter(|_| s.file == main) {
            Some(v) => (f.line_of(s.lo) + v.first_line).saturating_sub(f.line_of(v.lo)),
            None => f.line_of(s.lo),
        }
    };
    let name_of = |f: FileId| match view.filter(|_| f == main) {
        Some(v) => v.name.clone(),
        None => sources.file(f).name.clone(),
    };
    let mut plan = Plan { exprs, ..Plan::default() };
    let mut places = 0usize;
    for (r, req) in probes.requests.iter().enumerate() {
        plan.optional.push(req.optional);
        let mut chosen: Vec<StopAt> = Vec::new();
        match &req.at {
            ProbeAt::Line { file, line } => {
                let target = match file {
                    None => Some(main),
                    Some(w) if names_file(&name_of(main), w) => Some(main),
                    Some(w) => sources.includes().iter().map(|e| e.to).find(|&h| names_file(&sources.file(h).name, w)),
                };
                let at = Span::new(files[r], 0, 0);
                let Some(target) = target else {
                    let mut names: Vec<String> = sources.includes().iter().map(|e| sources.file(e.to).name.clone()).collect();
                    names.sort();
                    names.dedup();
                    let w = file.as_deref().unwrap_or_default();
                    let list = if names.is_empty() { "(none)".to_string() } else { names.join(", ") };
                    diags.push(
                        Diagnostic::error(at, format!("`{w}` is not a file this kernel reads; its headers are: {list}"))
                            .code(codes::PROBE_PLACE)
                            .help("name the kernel's own file or one of the headers it includes"),
                    );
                    plan.place.push(Vec::new());
                    continue;
                };
                let here: Vec<&StopAt> = stops.iter().filter(|s| s.start.file == target).collect();
                match here.iter().filter(|s| line_of(s.start) == *line).min_by_key(|s| s.start.lo) {
                    Some(s) => chosen.push(**s),
                    None => {
                        let mut lines: Vec<u32> = here.iter().map(|s| line_of(s.start)).collect();
                        lines.sort();
                        lines.dedup();
                        lines.sort_by_key(|&l| (l.abs_diff(*line), l));
                        lines.truncate(5);
                        lines.sort();
                        let near: Vec<String> = lines.iter().map(u32::to_string).collect();
                        let near = if near.is_empty() { "(none)".to_string() } else { near.join(", ") };
                        diags.push(
                            Diagnostic::error(
                                at,
                                format!("line {line} of `{}` has no statement of the kernel to stop at", name_of(target)),
                            )
                            .code(codes::PROBE_PLACE)
                            .note(format!("lines with statements near it: {near}"))
                            .help("pick a line where a statement starts (a loop's line stops at every iteration)"),
                        );
                    }
                }
            }
            ProbeAt::Everywhere => {
                // The first statement of each line of each file.
                let mut first: HashMap<(FileId, u32), StopAt> = HashMap::new();
                for s in &stops {
                    let e = first.entry((s.start.file, line_of(s.start))).or_insert(*s);
                    if s.start.lo < e.start.lo {
                        *e = *s;
                    }
                }
                let mut all: Vec<StopAt> = first.into_values().collect();
                all.sort_by_key(|s| (s.start.file, s.start.lo));
                // A loop's line is also where the thread first arrives,
                // before the loop starts: a watch shows there too.
                let entries: Vec<StopAt> = all
                    .iter()
                    .filter(|s| matches!(s.spot, Spot::BlockTop(_)) || matches!(s.spot, Spot::Before(b) if b != s.start))
                    .map(|s| StopAt { start: s.start, spot: Spot::Before(s.start) })
                    .collect();
                all.extend(entries);
                chosen = all;
            }
        }
        places += chosen.len();
        if places > MAX_PLACES {
            diags.push(Diagnostic::error(
                Span::new(files[r], 0, 0),
                format!("too many places to probe (more than {MAX_PLACES}); watch fewer expressions"),
            ));
            break;
        }
        let mut place = Vec::new();
        for s in chosen {
            let (map, key) = match s.spot {
                Spot::Before(k) => (&mut plan.before, k),
                Spot::BlockTop(k) => (&mut plan.block_top, k),
            };
            let list = map.entry(key).or_default();
            if !list.contains(&(r as u32)) {
                list.push(r as u32);
            }
            let where_ = format!("line {} of `{}`", line_of(s.start), name_of(s.start.file));
            place.push((key, s.start, where_));
        }
        plan.place.push(place);
    }
    plan
}

fn item_stops(item: &Item, out: &mut Vec<StopAt>) {
    match &item.kind {
        ItemKind::Function(f) => {
            if let Some(b) = &f.body {
                b.stmts.iter().for_each(|s| stmt_stops(s, out));
            }
        }
        ItemKind::Struct(st) => {
            for m in &st.members {
                match &m.kind {
                    MemberKind::Method(f) | MemberKind::Constructor { func: f, .. } => {
                        if let Some(b) = &f.body {
                            b.stmts.iter().for_each(|s| stmt_stops(s, out));
                        }
                    }
                    MemberKind::Nested(i) => item_stops(i, out),
                    _ => {}
                }
            }
        }
        ItemKind::Namespace { items, .. } => items.iter().for_each(|i| item_stops(i, out)),
        ItemKind::Template { item, .. } => item_stops(item, out),
        _ => {}
    }
}

/// Where probes go to run before each pass of a loop's body.
fn body_spot(body: &Stmt) -> Spot {
    match &body.kind {
        StmtKind::Block(_) => Spot::BlockTop(body.span),
        _ => Spot::Before(body.span),
    }
}

fn stmt_stops(s: &Stmt, out: &mut Vec<StopAt>) {
    let here = StopAt { start: s.span, spot: Spot::Before(s.span) };
    match &s.kind {
        StmtKind::Block(b) => b.stmts.iter().for_each(|x| stmt_stops(x, out)),
        StmtKind::If { then, els, .. } => {
            out.push(here);
            stmt_stops(then, out);
            if let Some(e) = els {
                stmt_stops(e, out);
            }
        }
        // A loop's line stops at the start of every pass, where its
        // variables are in scope.
        StmtKind::For { body, .. } | StmtKind::RangeFor { body, .. } | StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } => {
            out.push(StopAt { start: s.span, spot: body_spot(body) });
            stmt_stops(body, out);
        }
        StmtKind::Switch { body, .. } => {
            out.push(here);
            stmt_stops(body, out);
        }
        StmtKind::Case(_) | StmtKind::Default | StmtKind::Empty => {}
        _ => out.push(here),
    }
}
