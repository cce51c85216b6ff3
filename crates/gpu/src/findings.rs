//! Run-time findings (out-of-bounds, divergence, runaway loops, ...),
//! grouped by kind and source location so one bug gives one report.

use msl::source::Span;
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
    /// Global position of the first thread that hit it.
    pub thread: [u32; 3],
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
    pub fn report(
        &mut self,
        kind: FindingKind,
        span: Span,
        secondary: Option<(Span, String)>,
        thread: [u32; 3],
        threadgroup: [u32; 3],
        message: String,
    ) -> &mut Finding {
        let key = (kind, span, secondary.as_ref().map(|s| s.0));
        if let Some(&i) = self.index.get(&key) {
            let f = &mut self.list[i];
            f.count += 1;
            if f.examples.len() < MAX_EXAMPLES && !f.examples.contains(&thread) && f.thread != thread {
                f.examples.push(thread);
            }
            return f;
        }
        self.index.insert(key, self.list.len());
        self.list.push(Finding {
            kind,
            is_error: true,
            message,
            span,
            secondary,
            thread,
            threadgroup,
            count: 1,
            examples: Vec::new(),
            notes: Vec::new(),
        });
        self.list.last_mut().expect("just pushed")
    }

    pub fn has_errors(&self) -> bool {
        self.list.iter().any(|f| f.is_error)
    }
}

/// A thread or threadgroup position as people write it: `(x, y, z)`.
pub fn xyz(t: [u32; 3]) -> String {
    format!("({}, {}, {})", t[0], t[1], t[2])
}
