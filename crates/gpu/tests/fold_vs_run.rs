//! One arithmetic: a value the front end folds at compile time is bit for
//! bit the value the executor computes at run time.
//!
//! For random operands of every scalar type, the same expression is written
//! twice: once over constants (a program-scope `constant` the checker must
//! fold; the test checks it did) and once over values read from a buffer (so
//! the executor computes it). Every binary and unary operator and every
//! conversion between the twelve scalar types is covered. An expression whose
//! result C++ leaves undefined may refuse to fold; then the front end must
//! have said why in a warning.

mod common;
use common::*;
use msl::hir::{ConstValue, ExprKind};
use msl::types::Scalar;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

/// Operand pairs per generated program (one thread each).
const PAIRS: usize = 8;

const TYPES: [Scalar; 12] = [
    Scalar::Bool,
    Scalar::Char,
    Scalar::UChar,
    Scalar::Short,
    Scalar::UShort,
    Scalar::Int,
    Scalar::UInt,
    Scalar::Long,
    Scalar::ULong,
    Scalar::Half,
    Scalar::BFloat,
    Scalar::Float,
];

const BINARY: [&str; 18] = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "==", "!=", "<", ">", "<=", ">=", "&&", "||"];
const UNARY: [&str; 3] = ["-", "~", "!"];

/// Whether C++ accepts `a op b` on two values of `t` (no `%`, shifts or
/// bitwise operators on floating types).
fn binary_applies(op: &str, t: Scalar) -> bool {
    !(t.is_float() && matches!(op, "%" | "<<" | ">>" | "&" | "|" | "^"))
}

fn unary_applies(op: &str, t: Scalar) -> bool {
    !(t.is_float() && op == "~")
}

/// The type the result is stored as: comparisons and logic give bool,
/// everything else is converted back to the operand type.
fn result_type(op: &str, t: Scalar) -> Scalar {
    if matches!(op, "==" | "!=" | "<" | ">" | "<=" | ">=" | "&&" | "||" | "!") {
        Scalar::Bool
    } else {
        t
    }
}

// ------------------------------------------------------------ values

/// A random value of `t` in the lane form of `gpu_math::scalar`, with the
/// edges (zero, ±1, extremes, NaN, infinities, subnormals, small shift
/// counts) often.
fn value(t: Scalar) -> BoxedStrategy<u64> {
    let kind = t.arith();
    match t {
        Scalar::Bool => prop_oneof![Just(0u64), Just(1u64)].boxed(),
        _ if t.is_integer() => {
            let w = t.size() * 8;
            let k = gpu_math::IntKind { bits: w, signed: t.is_signed() };
            let norm = move |v: u64| gpu_math::normalize(k, v);
            let min = if t.is_signed() { 1u64 << (w - 1) } else { 0 };
            let max = if t.is_signed() {
                (1u64 << (w - 1)) - 1
            } else if w == 64 {
                u64::MAX
            } else {
                (1u64 << w) - 1
            };
            prop_oneof![
                3 => any::<u64>().prop_map(norm),
                2 => (0u64..70).prop_map(norm),
                1 => prop::sample::select(vec![0, 1, u64::MAX, min, max, min.wrapping_add(1), max - 1]).prop_map(norm),
            ]
            .boxed()
        }
        _ => {
            let widen = move |b: u16| -> u64 {
                (match t {
                    Scalar::Half => half::f16::from_bits(b).to_f32(),
                    _ => half::bf16::from_bits(b).to_f32(),
                })
                .to_bits() as u64
            };
            let special = [0.0f32, -0.0, 1.0, -1.0, 0.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 65504.0, 3.0e9, -3.0e9, 1e-40];
            let special: Vec<u64> =
                special.iter().map(|x| gpu_math::scalar::convert(Scalar::Float.arith(), kind, x.to_bits() as u64)).collect();
            let random =
                if t == Scalar::Float { any::<u32>().prop_map(|b| b as u64).boxed() } else { any::<u16>().prop_map(widen).boxed() };
            prop_oneof![
                3 => random,
                1 => (-3000i32..3000).prop_map(move |i| gpu_math::scalar::convert(Scalar::Int.arith(), kind, i as i64 as u64)),
                1 => prop::sample::select(special),
            ]
            .boxed()
        }
    }
}

/// `v` (lane form of `t`) spelled as a constant expression of type `t` that
/// the front end folds exactly: integers as a cast of their bit pattern,
/// floats as a cast of an exact hexadecimal float literal.
fn spell(t: Scalar, v: u64) -> String {
    let name = t.name();
    match t {
        Scalar::Bool => (if v & 1 == 1 { "true" } else { "false" }).to_string(),
        _ if t.is_integer() => {
            let w = t.size() * 8;
            let bits = if w == 64 { v } else { v & ((1u64 << w) - 1) };
            format!("{name}({bits:#x}ul)")
        }
        _ => {
            let x = f32::from_bits(v as u32);
            if x.is_nan() {
                return format!("{name}(NAN)");
            }
            if x.is_infinite() {
                return format!("{name}({}INFINITY)", if x < 0.0 { "-" } else { "" });
            }
            let b = x.to_bits();
            let exp = ((b >> 23) & 0xff) as i32;
            let frac = b & 0x7f_ffff;
            let (m, e) = if exp == 0 { (frac, -149) } else { (frac | 0x80_0000, exp - 150) };
            let sign = if b >> 31 == 1 { "-" } else { "" };
            format!("{name}({sign}0x{m:x}p{e}f)")
        }
    }
}

/// `t`'s bytes in memory from its lane form.
fn to_memory(t: Scalar, v: u64) -> Vec<u8> {
    match t {
        Scalar::Half => half::f16::from_f32(f32::from_bits(v as u32)).to_bits().to_le_bytes().to_vec(),
        Scalar::BFloat => half::bf16::from_f32(f32::from_bits(v as u32)).to_bits().to_le_bytes().to_vec(),
        Scalar::Float => (v as u32).to_le_bytes().to_vec(),
        _ => v.to_le_bytes()[..t.size() as usize].to_vec(),
    }
}

/// The lane form of a value of `t` read from memory.
fn from_memory(t: Scalar, bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    raw[..bytes.len()].copy_from_slice(bytes);
    let raw = u64::from_le_bytes(raw);
    match t {
        Scalar::Bool => (raw & 0xff != 0) as u64,
        Scalar::Half => half::f16::from_bits(raw as u16).to_f32().to_bits() as u64,
        Scalar::BFloat => half::bf16::from_bits(raw as u16).to_f32().to_bits() as u64,
        Scalar::Float => raw,
        _ => gpu_math::normalize(gpu_math::IntKind { bits: t.size() * 8, signed: t.is_signed() }, raw),
    }
}

fn same(t: Scalar, a: u64, b: u64) -> bool {
    a == b || (t.is_float() && f32::from_bits(a as u32).is_nan() && f32::from_bits(b as u32).is_nan())
}

// ------------------------------------------------------------ programs

/// One expression to compare: its result type, and its text over the
/// constants (`ca`, `cb`) or over the buffer values (`a`, `b`).
struct Case {
    what: String,
    rt: Scalar,
    constant: String,
    runtime: String,
}

fn cases(t: Scalar, a: &[u64], b: &[u64]) -> Vec<Vec<Case>> {
    (0..PAIRS)
        .map(|k| {
            let (ca, cb) = (spell(t, a[k]), spell(t, b[k]));
            let mut out = Vec::new();
            for op in BINARY.iter().filter(|op| binary_applies(op, t)) {
                let rt = result_type(op, t);
                out.push(Case {
                    what: format!("{ca} {op} {cb}"),
                    rt,
                    constant: format!("{}({ca} {op} {cb})", rt.name()),
                    runtime: format!("{}(a {op} b)", rt.name()),
                });
            }
            for op in UNARY.iter().filter(|op| unary_applies(op, t)) {
                let rt = result_type(op, t);
                out.push(Case {
                    what: format!("{op}{ca}"),
                    rt,
                    constant: format!("{}({op}{ca})", rt.name()),
                    runtime: format!("{}({op}a)", rt.name()),
                });
            }
            for to in TYPES {
                out.push(Case {
                    what: format!("{}({ca})", to.name()),
                    rt: to,
                    constant: format!("static_cast<{}>({ca})", to.name()),
                    runtime: format!("static_cast<{}>(a)", to.name()),
                });
            }
            out
        })
        .collect()
}

/// Run one generated program pair for type `t` and operand lists `a`, `b`.
fn check(t: Scalar, a: &[u64], b: &[u64]) -> Result<(), String> {
    let all = cases(t, a, b);
    let n = all[0].len();
    // Each result lives in its own 8-byte slot of `out`, whatever its type.
    let slot = |k: usize, i: usize, rt: Scalar| format!("*(device {}*)(out + {})", rt.name(), 8 * (k * n + i));

    let mut constant_src = String::from(PRELUDE);
    for (k, list) in all.iter().enumerate() {
        for (i, c) in list.iter().enumerate() {
            constant_src += &format!("constant {} R_{k}_{i} = {};\n", c.rt.name(), c.constant);
        }
    }
    constant_src += "kernel void k(device uchar* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {\n";
    for (k, list) in all.iter().enumerate() {
        for (i, c) in list.iter().enumerate() {
            constant_src += &format!("  if (tid == 0) {} = R_{k}_{i};\n", slot(k, i, c.rt));
        }
    }
    constant_src += "}\n";

    let tn = t.name();
    let mut runtime_src = String::from(PRELUDE);
    runtime_src += &format!(
        "kernel void k(device uchar* out [[buffer(0)]], device const {tn}* in [[buffer(1)]], uint tid [[thread_position_in_grid]]) {{\n"
    );
    runtime_src += &format!("  {tn} a = in[2 * tid], b = in[2 * tid + 1];\n  uint k = tid;\n");
    for (i, c) in all[0].iter().enumerate() {
        let at = format!("*(device {}*)(out + 8 * (k * {n} + {i}))", c.rt.name());
        runtime_src += &format!("  {at} = {};\n", c.runtime);
    }
    runtime_src += "}\n";

    // Folded values, straight from the checked program.
    let comp = msl::compile("constant.metal", &constant_src, &Default::default());
    if comp.has_errors() {
        return Err(format!("constant program does not compile:\n{}", comp.render(false)));
    }
    // Lines that carry a warning about undefined behaviour (each global is
    // on a line of its own).
    let undefined_lines: Vec<u32> = comp
        .diagnostics
        .items
        .iter()
        .filter(|d| d.message.contains("undefined behaviour") || d.notes.iter().any(|n| n.contains("undefined behaviour")))
        .map(|d| comp.sources.line_col(d.span).0)
        .collect();
    let global_line = |k: usize, i: usize| (PRELUDE.lines().count() + k * n + i + 1) as u32;
    let program = comp.program.as_ref().unwrap();
    let folded = |k: usize, i: usize| -> Option<ConstValue> {
        let g = program.globals.iter().find(|g| g.name == format!("R_{k}_{i}"))?;
        match g.init.kind {
            ExprKind::Const(v) => Some(v),
            _ => None,
        }
    };

    // Run-time values.
    let kernel = compile(&runtime_src, "k");
    let input: Vec<u8> = (0..PAIRS).flat_map(|k| [to_memory(t, a[k]), to_memory(t, b[k])].concat()).collect();
    let mut buffers = bufs(vec![(0, vec![0u8; 8 * PAIRS * n]), (1, input)]);
    run(&kernel, &threads([PAIRS as u32, 1, 1], [PAIRS as u32, 1, 1]), &mut buffers, &opts(CheckLevel::None));
    let out = &buffers[&0];

    for (k, list) in all.iter().enumerate() {
        for (i, c) in list.iter().enumerate() {
            let at = 8 * (k * n + i);
            let ran = from_memory(c.rt, &out[at..at + c.rt.size() as usize]);
            match folded(k, i) {
                Some(v) => {
                    let f = v.to_bits(c.rt);
                    if !same(c.rt, f, ran) {
                        return Err(format!("{} as {}: folded {f:#x}, ran {ran:#x}", c.what, c.rt.name()));
                    }
                }
                // Not folded: only an undefined operation may refuse, and the
                // front end must have warned about it.
                None if undefined_lines.contains(&global_line(k, i)) => {}
                None => return Err(format!("{} was not folded and no warning says why", c.what)),
            }
        }
    }
    Ok(())
}

fn differential(t: Scalar, cases: u32) {
    let config = Config { cases, rng_seed: RngSeed::Fixed(0x5eed_0000 + t as u64), failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let pairs = proptest::collection::vec(value(t), PAIRS);
    let result = runner.run(&(pairs.clone(), pairs), |(a, b)| check(t, &a, &b).map_err(TestCaseError::fail));
    if let Err(e) = result {
        panic!("{}: {e}", t.name());
    }
}

#[test]
fn bool_and_8_bit() {
    for t in [Scalar::Bool, Scalar::Char, Scalar::UChar] {
        differential(t, 12);
    }
}

#[test]
fn sixteen_bit_integers() {
    for t in [Scalar::Short, Scalar::UShort] {
        differential(t, 12);
    }
}

#[test]
fn thirty_two_bit_integers() {
    for t in [Scalar::Int, Scalar::UInt] {
        differential(t, 16);
    }
}

#[test]
fn sixty_four_bit_integers() {
    for t in [Scalar::Long, Scalar::ULong] {
        differential(t, 16);
    }
}

#[test]
fn half_and_bfloat() {
    for t in [Scalar::Half, Scalar::BFloat] {
        differential(t, 16);
    }
}

#[test]
fn float() {
    differential(Scalar::Float, 16);
}

/// The case the issue names: `0.1h + 0.2h` folds to what the executor adds.
#[test]
fn half_literal_sum_folds_like_it_runs() {
    let src = format!(
        "{PRELUDE}constant half X = 0.1h + 0.2h;\n\
         kernel void k(device half* out [[buffer(0)]], device const half* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {{\n\
           out[0] = X; out[1] = in[0] + in[1];\n}}\n"
    );
    let k = compile(&src, "k");
    let input = [half::f16::from_f32(0.1), half::f16::from_f32(0.2)].iter().flat_map(|h| h.to_bits().to_le_bytes()).collect();
    let mut b = bufs(vec![(0, vec![0u8; 4]), (1, input)]);
    run(&k, &threads([1, 1, 1], [1, 1, 1]), &mut b, &opts(CheckLevel::None));
    let out = to_u16(&b[&0]);
    assert_eq!(out[0], out[1]);
    assert_eq!(half::f16::from_bits(out[0]).to_f32(), 307.0 / 1024.0); // 0.2998046875
}
