//! Watch one thread: the values of expressions each time it reaches a
//! point of the kernel (`metal-puzzles debug --thread … --print …`).
//!
//! The front end places the expressions in the HIR just before the
//! statement the user picked (`msl::probe`), checked in that scope; the
//! lowering turns each into `Inst::Probe`, numbered by its site; the
//! machine records them only for the watched thread and only when a
//! recorder is attached.

use crate::exec::Mask;
use msl::types::Scalar;

/// What kind of value a probe reads from its registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// Scalars or vector components of this type.
    Value(Scalar),
    Pointer,
}

/// One value seen by the watched thread.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeHit {
    pub probe: u32,
    pub slot: u32,
    pub kind: ProbeKind,
    /// Register bits, one per component.
    pub bits: Vec<u64>,
    /// The value already spelled out (a value read from memory, which may
    /// be partly unwritten: `?`).
    pub shown: Option<String>,
}

impl ProbeHit {
    /// The value as MSL would spell it (`3`, `0.5`, `true`, `float2(1, 2)`).
    pub fn text(&self) -> String {
        if let Some(s) = &self.shown {
            return s.clone();
        }
        let parts: Vec<String> = self.bits.iter().map(|&b| component_text(self.kind, b)).collect();
        match (self.kind, parts.len()) {
            (_, 1) => parts.into_iter().next().unwrap_or_default(),
            (ProbeKind::Value(s), n) => format!("{}{n}({})", s.name(), parts.join(", ")),
            (ProbeKind::Pointer, _) => parts.join(", "),
        }
    }
}

fn component_text(kind: ProbeKind, b: u64) -> String {
    match kind {
        ProbeKind::Pointer => {
            use crate::memory::{ptr_alloc, ptr_offset, AllocKind};
            let off = ptr_offset(b);
            match ptr_alloc(b).kind() {
                AllocKind::Null => "nullptr".into(),
                AllocKind::Buffer(i) => format!("&buffer({i})+{off}B"),
                AllocKind::ThreadgroupBuffer(i) => format!("&threadgroup({i})+{off}B"),
                AllocKind::Constant(i) => format!("&constant#{i}+{off}B"),
                AllocKind::Threadgroup(i) => format!("&threadgroup_var#{i}+{off}B"),
                AllocKind::Private(i) => format!("&thread_var#{i}+{off}B"),
                AllocKind::Invalid => format!("invalid pointer 0x{b:x}"),
            }
        }
        ProbeKind::Value(s) => match s {
            Scalar::Bool => (b != 0).to_string(),
            Scalar::Char | Scalar::Short | Scalar::Int => (b as u32 as i32).to_string(),
            Scalar::UChar | Scalar::UShort | Scalar::UInt => (b as u32).to_string(),
            Scalar::Long => (b as i64).to_string(),
            Scalar::ULong => b.to_string(),
            Scalar::Half | Scalar::BFloat | Scalar::Float => format!("{}", f32::from_bits(b as u32)),
        },
    }
}

/// What the watched thread showed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProbeLog {
    pub hits: Vec<ProbeHit>,
    /// Set when `limit` hits were recorded and later ones dropped.
    pub truncated: bool,
    /// Whether the watched thread exists in the dispatch (ran at all).
    pub thread_ran: bool,
}

/// The observer: records the watched thread's probes, at most `limit`.
#[derive(Debug)]
pub struct ProbeRecorder {
    pub thread: [u32; 3],
    limit: usize,
    /// The watched thread's lane in the current threadgroup, if it is in it.
    lane: Option<usize>,
    pub log: ProbeLog,
}

impl ProbeRecorder {
    pub fn new(thread: [u32; 3], limit: usize) -> ProbeRecorder {
        ProbeRecorder { thread, limit, lane: None, log: ProbeLog::default() }
    }

    pub fn start_threadgroup(&mut self, geo: &crate::exec::Geometry) {
        self.lane = None;
        if let Some((_, lane)) = geo.local_lane(self.thread) {
            self.lane = Some(lane);
            self.log.thread_ran = true;
        }
    }

    /// The lane to read if the watched thread runs this probe (`mask`).
    pub fn lane_in(&self, mask: &Mask) -> Option<usize> {
        self.lane.filter(|&l| mask.get(l))
    }

    pub fn record(&mut self, hit: ProbeHit) {
        if self.log.hits.len() >= self.limit {
            self.log.truncated = true;
            return;
        }
        self.log.hits.push(hit);
    }
}

/// Where a printed expression would change the kernel's state, and how: an
/// assignment, `++`/`--`, a standard-library call that writes through a
/// pointer or reference (atomics, `modf`'s out parameter, stores) or
/// synchronizes (barriers), or a call of a function of the program that
/// does any of these to something other than its own locals. A `--print`
/// must only observe: such an expression is refused.
pub fn side_effect(prog: &msl::hir::Program, e: &msl::hir::Expr) -> Option<(msl::source::Span, String)> {
    let mut seen = std::collections::HashSet::new();
    effect_in_expr(prog, e, &mut seen, None)
}

use msl::hir::{ExprKind as H, FuncId, Function, Stmt, StmtKind};
use msl::types::Type;

/// `own`: the function whose locals may be written freely (none for the
/// printed expression itself: even its temporaries are the kernel's).
fn effect_in_expr(
    prog: &msl::hir::Program,
    e: &msl::hir::Expr,
    seen: &mut std::collections::HashSet<FuncId>,
    own: Option<&Function>,
) -> Option<(msl::source::Span, String)> {
    let mut found = None;
    e.visit(&mut |x| {
        if found.is_some() {
            return;
        }
        found = match &x.kind {
            H::Assign { place, .. } | H::CompoundAssign { place, .. } if !own_local(place, own) => Some((x.span, "assigns a value".into())),
            H::IncDec { place, .. } if !own_local(place, own) => Some((x.span, "increments or decrements a value".into())),
            H::Builtin { id, param_types, .. } => {
                let writes = param_types
                    .iter()
                    .any(|t| matches!(t, Type::Pointer { is_const: false, .. } | Type::Reference { is_const: false, .. }));
                let syncs = msl::builtins::function(*id).is_some_and(|b| b.kind == msl::builtins::BuiltinKind::Barrier);
                (writes || syncs).then(|| (x.span, format!("calls `{id}`, which writes memory or synchronizes threads")))
            }
            H::Call { func, .. } => effect_in_function(prog, *func, seen).map(|(_, why)| {
                let name = &prog.functions[func.0 as usize].name;
                (x.span, format!("calls `{name}`, which {why}"))
            }),
            // Bound only when the function is inlined: assume the worst.
            H::CallPtr { .. } => Some((x.span, "calls a function through a pointer".into())),
            _ => None,
        };
    });
    found
}

/// Whether `place` is a local variable of `own` itself (not a reference or
/// pointer parameter, whose target belongs to the caller).
fn own_local(place: &msl::hir::Expr, own: Option<&Function>) -> bool {
    let Some(f) = own else { return false };
    let mut p = place;
    loop {
        match &p.kind {
            H::Field { base, .. } | H::Swizzle { base, .. } => p = base,
            H::Index { base, .. } if !matches!(base.ty, Type::Pointer { .. }) => p = base,
            H::Local(id) => return !matches!(f.local(*id).ty, Type::Pointer { .. } | Type::Reference { .. }),
            _ => return false,
        }
    }
}

fn effect_in_function(
    prog: &msl::hir::Program,
    id: FuncId,
    seen: &mut std::collections::HashSet<FuncId>,
) -> Option<(msl::source::Span, String)> {
    // Recursion: a function already being looked at adds nothing new.
    if !seen.insert(id) {
        return None;
    }
    let f = prog.functions.get(id.0 as usize)?;
    let mut stack: Vec<&Stmt> = f.body.iter().collect();
    while let Some(s) = stack.pop() {
        let exprs: Vec<&msl::hir::Expr> = match &s.kind {
            StmtKind::Expr(e) => vec![e],
            StmtKind::Local { init, .. } => init.iter().collect(),
            StmtKind::Block(b) => {
                stack.extend(b);
                vec![]
            }
            StmtKind::If { cond, then, els } => {
                stack.extend(then);
                stack.extend(els);
                vec![cond]
            }
            StmtKind::Loop { cond, body, step, .. } => {
                stack.extend(body);
                cond.iter().chain(step.iter()).collect()
            }
            StmtKind::Switch { cond, cases } => {
                stack.extend(cases.iter().flat_map(|c| &c.body));
                vec![cond]
            }
            StmtKind::Return(e) => e.iter().collect(),
            // Checked on their own where they are lowered.
            StmtKind::Break | StmtKind::Continue | StmtKind::Probe { .. } => vec![],
        };
        for e in exprs {
            if let Some(r) = effect_in_expr(prog, e, seen, Some(f)) {
                return Some(r);
            }
        }
    }
    None
}
