//! Run-time findings (out-of-bounds, divergence, runaway loops, ...),
//! grouped by kind and source location so one bug gives one report.

use msl::diag::{Diagnostic, Label, Severity};
use msl::source::{SourceMap, Span};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    OutOfBounds,
    DataRace,
    BarrierDivergence,
    UninitializedRead,
    RunawayKernel,
    DivisionByZero,
    MisalignedAccess,
    InvalidDispatch,
}

impl FindingKind {
    /// The contract's name for the kind.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::OutOfBounds => "out-of-bounds",
            FindingKind::DataRace => "data-race",
            FindingKind::BarrierDivergence => "barrier-divergence",
            FindingKind::UninitializedRead => "uninitialized-read",
            FindingKind::RunawayKernel => "runaway-kernel",
            FindingKind::DivisionByZero => "division-by-zero",
            FindingKind::MisalignedAccess => "misaligned-access",
            FindingKind::InvalidDispatch => "invalid-dispatch",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub kind: FindingKind,
    pub is_error: bool,
    /// The first occurrence's message.
    pub message: String,
    pub span: Span,
    /// The other access of a race.
    pub secondary: Option<(Span, String)>,
    /// Global position of the first thread that hit it
    /// (`thread_position_in_grid`).
    pub thread: [u32; 3],
    /// Its position within its threadgroup (`thread_position_in_threadgroup`).
    pub local: [u32; 3],
    /// Its threadgroup's position (`threadgroup_position_in_grid`).
    pub threadgroup: [u32; 3],
    /// How many times it happened (threads x occurrences).
    pub count: u64,
    /// A few more example threads.
    pub examples: Vec<[u32; 3]>,
    pub notes: Vec<String>,
}

/// Findings of one run, in the order first seen.
#[derive(Debug, Default)]
pub struct Findings {
    pub list: Vec<Finding>,
    index: HashMap<(FindingKind, Span, Option<Span>), usize>,
}

const MAX_EXAMPLES: usize = 4;

impl Findings {
    // (The thread's grid position, threadgroup and threadgroup size name it.)
    #[allow(clippy::too_many_arguments)]
    pub fn report(
        &mut self,
        kind: FindingKind,
        span: Span,
        secondary: Option<(Span, String)>,
        thread: [u32; 3],
        threadgroup: [u32; 3],
        threads_per_threadgroup: [u32; 3],
        message: String,
    ) -> &mut Finding {
        let key = (kind, span, secondary.as_ref().map(|s| s.0));
        if let Some(&i) = self.index.get(&key) {
            let f = &mut self.list[i];
            f.count += 1;
            if f.examples.len() < MAX_EXAMPLES && !f.examples.contains(&thread) && f.thread != thread {
                f.examples.push(thread);
            }
            return &mut self.list[i];
        }
        self.index.insert(key, self.list.len());
        self.list.push(Finding {
            kind,
            is_error: true,
            message,
            span,
            secondary,
            thread,
            local: local_of(thread, threadgroup, threads_per_threadgroup),
            threadgroup,
            count: 1,
            examples: Vec::new(),
            notes: Vec::new(),
        });
        self.list.last_mut().expect("just pushed")
    }

    /// Count one more occurrence of an existing finding of `kind` at
    /// `span` (no secondary place) by `thread`; false when there is none
    /// yet (then build its message and `report` it).
    pub fn bump(&mut self, kind: FindingKind, span: Span, thread: [u32; 3]) -> bool {
        let Some(&i) = self.index.get(&(kind, span, None)) else { return false };
        let f = &mut self.list[i];
        f.count += 1;
        if f.examples.len() < MAX_EXAMPLES && !f.examples.contains(&thread) && f.thread != thread {
            f.examples.push(thread);
        }
        true
    }

    pub fn has_errors(&self) -> bool {
        self.list.iter().any(|f| f.is_error)
    }

    /// Add the findings of threadgroups that ran after these ones (another
    /// worker's): same groups add up, new ones go last.
    pub fn absorb(&mut self, later: Findings) {
        for f in later.list {
            let key = (f.kind, f.span, f.secondary.as_ref().map(|s| s.0));
            match self.index.get(&key) {
                Some(&i) => {
                    let g = &mut self.list[i];
                    g.count += f.count;
                    for t in std::iter::once(f.thread).chain(f.examples) {
                        if g.examples.len() < MAX_EXAMPLES && g.thread != t && !g.examples.contains(&t) {
                            g.examples.push(t);
                        }
                    }
                }
                None => {
                    self.index.insert(key, self.list.len());
                    self.list.push(f);
                }
            }
        }
    }
}

/// A thread or threadgroup position as people write it: `(x, y, z)`.
pub fn xyz(t: [u32; 3]) -> String {
    format!("({}, {}, {})", t[0], t[1], t[2])
}

/// How every message names a thread: its position in the grid
/// (`thread_position_in_grid`), then its position within its threadgroup
/// (`thread_position_in_threadgroup`) and that threadgroup's position.
pub fn thread_name(thread: [u32; 3], local: [u32; 3], threadgroup: [u32; 3]) -> String {
    format!("thread {} in the grid, {} in threadgroup {}", xyz(thread), xyz(local), xyz(threadgroup))
}

/// A thread's position within its threadgroup, from its grid position, its
/// threadgroup's position and the (full) threadgroup size.
pub fn local_of(thread: [u32; 3], threadgroup: [u32; 3], threads_per_threadgroup: [u32; 3]) -> [u32; 3] {
    [0, 1, 2].map(|d| thread[d].saturating_sub(threadgroup[d].saturating_mul(threads_per_threadgroup[d])))
}

impl Finding {
    /// Whether `o` is the same problem seen again (another test, other
    /// values): same kind at the same places, as one run groups them.
    pub fn same_place(&self, o: &Finding) -> bool {
        self.kind == o.kind && self.span == o.span && self.secondary.as_ref().map(|s| s.0) == o.secondary.as_ref().map(|s| s.0)
    }

    /// The finding as a diagnostic at the access, rustc-style: the thread
    /// in the label, the other access of a race as a secondary label, how
    /// often it happened and how to fix it.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::new(if self.is_error { Severity::Error } else { Severity::Warning }, self.span, self.message.clone());
        d.code = Some(self.kind.name());
        d.label = thread_name(self.thread, self.local, self.threadgroup);
        if let Some((span, msg)) = &self.secondary {
            d.secondary.push(Label { span: *span, message: msg.clone() });
        }
        if self.count > 1 {
            let more: Vec<String> = self.examples.iter().map(|t| xyz(*t)).collect();
            let also =
                if more.is_empty() { String::new() } else { format!("; other threads, by position in the grid: {}", more.join(", ")) };
            d.notes.push(format!("this happened {} times{also}", self.count));
        }
        d.help.extend(self.notes.iter().cloned());
        d
    }

    /// The JSON form `run --json` and `check --json` print.
    pub fn to_json(&self, sources: &SourceMap) -> serde_json::Value {
        let line = if self.span == Span::default() && sources.files().is_empty() { 0 } else { sources.line_col(self.span).0 };
        serde_json::json!({
            "kind": self.kind.name(),
            "severity": if self.is_error { "error" } else { "warning" },
            "message": self.message,
            "line": line,
            "thread": self.thread,
            "threadgroup": self.threadgroup,
            "count": self.count,
            "secondary_line": self.secondary.as_ref().map(|(s, _)| sources.line_col(*s).0),
        })
    }
}
