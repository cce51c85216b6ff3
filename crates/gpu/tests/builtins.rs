//! Per-builtin property tests through the whole pipeline (MSL source →
//! checked program → IR → simulator) against Rust reference
//! implementations. Each test compiles a tiny kernel `out[i] = f(a[i], ...)`
//! once and runs it on random inputs that include NaN, ±inf, denormals, ±0
//! and extreme integers.

mod common;
use common::*;
use half::{bf16, f16};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

const LANES: usize = 64;
const CASES: u32 = 64;

fn runner(cases: u32) -> TestRunner {
    // A fixed seed: the same inputs on every run and machine (no flaky CI).
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 200,
        rng_seed: RngSeed::Fixed(0x6d70_7a6c),
        ..Config::default()
    })
}

/// Run `k` over LANES threads with input buffers 0.. and an output buffer
/// after them; returns the output bytes.
fn run_map(k: &gpu::Kernel, inputs: &[Vec<u8>], out_len: usize) -> Vec<u8> {
    let mut b = std::collections::BTreeMap::new();
    for (i, x) in inputs.iter().enumerate() {
        b.insert(i as u32, x.clone());
    }
    let out = inputs.len() as u32;
    b.insert(out, vec![0u8; out_len]);
    let r = run(k, &threads([LANES as u32, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::None));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    b.remove(&out).unwrap()
}

/// A kernel `out[i] = EXPR` where a, b, c are elements of type `ta`.
fn map_kernel(ta: &str, tr: &str, arity: usize, expr: &str) -> gpu::Kernel {
    let names = ["a", "b", "c"];
    let mut params: Vec<String> = (0..arity).map(|j| format!("const device {ta}* {}_ [[buffer({j})]]", names[j])).collect();
    params.push(format!("device {tr}* out [[buffer({arity})]]"));
    params.push("uint i [[thread_position_in_grid]]".into());
    let loads: String = (0..arity).map(|j| format!("{ta} {0} = {0}_[i]; ", names[j])).collect();
    let src = format!("{PRELUDE}kernel void k({}) {{ {loads}out[i] = {expr}; }}\n", params.join(", "));
    compile(&src, "k")
}

// ------------------------------------------------------------------ floats

#[derive(Clone, Copy, Debug, PartialEq)]
enum FK {
    F32,
    F16,
    BF16,
}

impl FK {
    fn name(self) -> &'static str {
        match self {
            FK::F32 => "float",
            FK::F16 => "half",
            FK::BF16 => "bfloat",
        }
    }
    fn size(self) -> usize {
        if self == FK::F32 {
            4
        } else {
            2
        }
    }
    /// Round an f32 to this kind (RNE) and return its bits.
    fn bits(self, x: f32) -> u32 {
        match self {
            FK::F32 => x.to_bits(),
            FK::F16 => f16::from_f32(x).to_bits() as u32,
            FK::BF16 => bf16::from_f32(x).to_bits() as u32,
        }
    }
    #[allow(clippy::wrong_self_convention)] // decodes bits of this kind
    fn from_bits(self, b: u32) -> f32 {
        match self {
            FK::F32 => f32::from_bits(b),
            FK::F16 => f16::from_bits(b as u16).to_f32(),
            FK::BF16 => bf16::from_bits(b as u16).to_f32(),
        }
    }
    fn round(self, x: f32) -> f32 {
        self.from_bits(self.bits(x))
    }
    fn encode(self, v: &[f32]) -> Vec<u8> {
        v.iter()
            .flat_map(|&x| {
                let b = self.bits(x);
                if self == FK::F32 {
                    b.to_le_bytes().to_vec()
                } else {
                    (b as u16).to_le_bytes().to_vec()
                }
            })
            .collect()
    }
    fn decode_bits(self, b: &[u8]) -> Vec<u32> {
        b.chunks_exact(self.size())
            .map(
                |c| if c.len() == 4 { u32::from_le_bytes(c.try_into().unwrap()) } else { u16::from_le_bytes(c.try_into().unwrap()) as u32 },
            )
            .collect()
    }
    fn sign_bit(self) -> u32 {
        if self == FK::F32 {
            0x8000_0000
        } else {
            0x8000
        }
    }
    /// Position on the number line in ulps (±0 both 0).
    fn ord(self, bits: u32) -> i64 {
        let s = self.sign_bit();
        if bits & s != 0 {
            -((bits & (s - 1)) as i64)
        } else {
            bits as i64
        }
    }
    /// Values of the kind, with the special ones overrepresented.
    fn strategy(self) -> BoxedStrategy<f32> {
        let specials = vec![
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            2.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::from_bits(0x007f_ffff),
            f32::MAX,
            f32::MIN,
            65504.0,
            6.1e-5,
            5.96e-8,
            1.5,
            -2.5,
            3.0,
        ];
        let k = self;
        let special = proptest::sample::select(specials).prop_map(move |x| k.round(x));
        let small = (-8.0f32..8.0).prop_map(move |x| k.round(x));
        let raw = match self {
            FK::F32 => any::<u32>().prop_map(f32::from_bits).boxed(),
            FK::F16 => any::<u16>().prop_map(|b| f16::from_bits(b).to_f32()).boxed(),
            FK::BF16 => any::<u16>().prop_map(|b| bf16::from_bits(b).to_f32()).boxed(),
        };
        prop_oneof![2 => special, 3 => small, 3 => raw].boxed()
    }
}

#[derive(Clone, Copy, Debug)]
enum Tol {
    /// Bit-exact (any NaN matches any NaN).
    Bits,
    /// Within n ulps of the kind; ±0 equal. For half/bfloat a nonzero
    /// tolerance becomes 1 ulp of the kind (f32 result, then rounded).
    Ulp(i64),
}

fn check_float(kind: FK, got_bits: u32, want: &[f32], tol: Tol) -> Result<(), String> {
    let got = kind.from_bits(got_bits);
    for &w in want {
        let wb = kind.bits(w);
        let wr = kind.from_bits(wb);
        let ok = if wr.is_nan() || got.is_nan() {
            wr.is_nan() && got.is_nan()
        } else {
            match tol {
                Tol::Bits => got_bits == wb,
                Tol::Ulp(n) => {
                    let n = if kind == FK::F32 || n == 0 { n } else { 1 };
                    (kind.ord(got_bits) - kind.ord(wb)).abs() <= n
                }
            }
        };
        if ok {
            return Ok(());
        }
    }
    Err(format!("got {got:e} (bits {got_bits:#x}), want {:?} ({tol:?})", want.iter().map(|w| kind.round(*w)).collect::<Vec<_>>()))
}

fn d1(f: fn(f64) -> f64) -> impl Fn(f32) -> f32 {
    move |x| f(x as f64) as f32
}

fn float_prop(
    kind: FK,
    arity: usize,
    expr: &str,
    tol: Tol,
    reference: &dyn Fn(&[f32]) -> Vec<f32>,
    strategies: Option<Vec<BoxedStrategy<f32>>>,
) {
    let k = map_kernel(kind.name(), kind.name(), arity, expr);
    let strats = strategies.unwrap_or_else(|| (0..arity).map(|_| kind.strategy()).collect());
    let lanes = strats.into_iter().map(|s| proptest::collection::vec(s, LANES)).collect::<Vec<_>>();
    let mut r = runner(CASES);
    let result = r.run(&lanes, |ins| {
        let bytes: Vec<Vec<u8>> = ins.iter().map(|v| kind.encode(v)).collect();
        let out = kind.decode_bits(&run_map(&k, &bytes, LANES * kind.size()));
        for l in 0..LANES {
            let args: Vec<f32> = ins.iter().map(|v| kind.round(v[l])).collect();
            let want = reference(&args);
            check_float(kind, out[l], &want, tol).map_err(|e| TestCaseError::fail(format!("{} {expr} with {args:?}: {e}", kind.name())))?;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

fn unary(name: &str, tol: Tol, f: impl Fn(f32) -> f32) {
    for kind in [FK::F32, FK::F16, FK::BF16] {
        float_prop(kind, 1, &format!("{name}(a)"), tol, &|a| vec![f(a[0])], None);
    }
}

fn binary(expr: &str, tol: Tol, f: impl Fn(f32, f32) -> f32) {
    for kind in [FK::F32, FK::F16, FK::BF16] {
        float_prop(kind, 2, expr, tol, &|a| vec![f(a[0], a[1])], None);
    }
}

fn ternary(expr: &str, tol: Tol, f: impl Fn(f32, f32, f32) -> Vec<f32>) {
    for kind in [FK::F32, FK::F16, FK::BF16] {
        float_prop(kind, 3, expr, tol, &|a| f(a[0], a[1], a[2]), None);
    }
}

/// Transcendental functions: ≤ 4 ulp in float (Metal's precise-math bound
/// for most of them), the f32 result correctly rounded within 1 ulp in
/// half/bfloat.
const TRANS: Tol = Tol::Ulp(4);

#[test]
fn float_exp_log() {
    unary("exp", TRANS, d1(f64::exp));
    unary("exp2", TRANS, d1(f64::exp2));
    unary("exp10", TRANS, d1(|x| 10f64.powf(x)));
    unary("log", TRANS, d1(f64::ln));
    unary("log2", TRANS, d1(f64::log2));
    unary("log10", TRANS, d1(f64::log10));
}

#[test]
fn float_sqrt_rsqrt() {
    unary("sqrt", Tol::Bits, f32::sqrt);
    unary("rsqrt", Tol::Ulp(2), d1(|x| 1.0 / x.sqrt()));
}

#[test]
fn float_trig() {
    unary("sin", TRANS, d1(f64::sin));
    unary("cos", TRANS, d1(f64::cos));
    unary("tan", TRANS, d1(f64::tan));
    unary("asin", TRANS, d1(f64::asin));
    unary("acos", TRANS, d1(f64::acos));
    unary("atan", TRANS, d1(f64::atan));
}

#[test]
fn float_hyperbolic() {
    unary("sinh", TRANS, d1(f64::sinh));
    unary("cosh", TRANS, d1(f64::cosh));
    unary("tanh", TRANS, d1(f64::tanh));
    // Independent formulas (not the std functions the simulator may use).
    unary(
        "asinh",
        TRANS,
        d1(|x| {
            if x.is_infinite() || x == 0.0 {
                x
            } else if x.abs() < 1e-4 {
                x - x * x * x / 6.0
            } else if x.abs() > 1e150 {
                x.signum() * (x.abs().ln() + std::f64::consts::LN_2)
            } else {
                x.signum() * (x.abs() + (x * x + 1.0).sqrt()).ln()
            }
        }),
    );
    unary(
        "acosh",
        TRANS,
        d1(|x| {
            if x < 1.0 {
                f64::NAN
            } else if x > 1e150 {
                x.ln() + std::f64::consts::LN_2
            } else {
                (x + (x * x - 1.0).sqrt()).ln()
            }
        }),
    );
    unary("atanh", TRANS, d1(|x| if x.abs() < 1e-8 { x } else { 0.5 * ((1.0 + x) / (1.0 - x)).ln() }));
}

/// sin(pi x), cos(pi x), tan(pi x) with an exact reduction of x modulo 2.
fn pi_ref(x: f32, which: u8) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    let r = (x as f64) % 2.0; // exact
    let p = std::f64::consts::PI * r;
    match which {
        0 => {
            if r == r.trunc() {
                return if x.is_sign_negative() { -0.0 } else { 0.0 };
            }
            p.sin() as f32
        }
        1 => {
            if (r * 2.0) == (r * 2.0).trunc() && r != r.trunc() {
                return 0.0;
            }
            p.cos() as f32
        }
        _ => {
            if r == r.trunc() {
                return if x.is_sign_negative() { -0.0 } else { 0.0 };
            }
            if (r * 2.0) == (r * 2.0).trunc() {
                // n + 1/2: +inf for even n, -inf for odd n.
                let n = ((x as f64) - 0.5).round() as i64;
                return if n.rem_euclid(2) == 0 { f32::INFINITY } else { f32::NEG_INFINITY };
            }
            (p.sin() / p.cos()) as f32
        }
    }
}

#[test]
fn float_pi_functions() {
    unary("sinpi", TRANS, |x| pi_ref(x, 0));
    unary("cospi", TRANS, |x| pi_ref(x, 1));
    unary("tanpi", TRANS, |x| pi_ref(x, 2));
}

#[test]
fn float_rounding_and_sign() {
    unary("ceil", Tol::Bits, f32::ceil);
    unary("floor", Tol::Bits, f32::floor);
    unary("trunc", Tol::Bits, f32::trunc);
    unary("round", Tol::Bits, f32::round);
    unary("rint", Tol::Bits, f32::round_ties_even);
    unary("abs", Tol::Bits, f32::abs);
    unary("fabs", Tol::Bits, f32::abs);
    unary("fract", Tol::Bits, |x| {
        if x.is_nan() {
            f32::NAN
        } else if x.is_infinite() {
            0.0
        } else {
            (x - x.floor()).min(f32::from_bits(0x3f7f_ffff))
        }
    });
    unary("saturate", Tol::Ulp(0), |x| if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) });
    unary("sign", Tol::Bits, |x| {
        if x.is_nan() {
            0.0
        } else if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            x
        }
    });
    unary("-", Tol::Bits, |x| -x);
}

#[test]
fn float_arithmetic_operators() {
    // Operands and result in the kind: the f32 operation then one rounding
    // is the correctly rounded result for half/bfloat too.
    binary("a + b", Tol::Bits, |a, b| a + b);
    binary("a - b", Tol::Bits, |a, b| a - b);
    binary("a * b", Tol::Bits, |a, b| a * b);
    binary("a / b", Tol::Bits, |a, b| a / b);
}

fn nextafter(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        return f32::NAN;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        let t = f32::from_bits(1);
        return if y > 0.0 { t } else { -t };
    }
    let b = x.to_bits();
    let up = (y > x) == (x > 0.0);
    f32::from_bits(if up { b + 1 } else { b - 1 })
}

#[test]
fn float_binary_functions() {
    binary("pow(a, b)", Tol::Ulp(16), |a, b| (a as f64).powf(b as f64) as f32);
    binary("powr(a, b)", Tol::Ulp(16), |x, y| {
        if x.is_nan()
            || y.is_nan()
            || x < 0.0
            || (x == 0.0 && y == 0.0)
            || (x == f32::INFINITY && y == 0.0)
            || (x == 1.0 && y.is_infinite())
        {
            f32::NAN
        } else if x == 0.0 {
            if y < 0.0 {
                f32::INFINITY
            } else {
                0.0
            }
        } else {
            (x as f64).powf(y as f64) as f32
        }
    });
    binary("atan2(a, b)", TRANS, |a, b| (a as f64).atan2(b as f64) as f32);
    binary("fmod(a, b)", Tol::Bits, |a, b| ((a as f64) % (b as f64)) as f32);
    binary("fmin(a, b)", Tol::Ulp(0), f32::min);
    binary("fmax(a, b)", Tol::Ulp(0), f32::max);
    binary("min(a, b)", Tol::Ulp(0), f32::min);
    binary("max(a, b)", Tol::Ulp(0), f32::max);
    binary("copysign(a, b)", Tol::Bits, f32::copysign);
    binary("fdim(a, b)", Tol::Bits, |a, b| {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if a > b {
            a - b
        } else {
            0.0
        }
    });
    binary("step(a, b)", Tol::Bits, |e, x| if x < e { 0.0 } else { 1.0 });
    // nextafter in the element kind's own spacing.
    for kind in [FK::F32, FK::F16, FK::BF16] {
        float_prop(
            kind,
            2,
            "nextafter(a, b)",
            Tol::Bits,
            &|v| {
                let (x, y) = (v[0], v[1]);
                if kind == FK::F32 {
                    return vec![nextafter(x, y)];
                }
                if x.is_nan() || y.is_nan() {
                    return vec![f32::NAN];
                }
                if x == y {
                    return vec![y];
                }
                let b = kind.bits(x);
                let r = if x == 0.0 {
                    if y > 0.0 {
                        1
                    } else {
                        kind.sign_bit() | 1
                    }
                } else if (y > x) == (x > 0.0) {
                    b + 1
                } else {
                    b - 1
                };
                vec![kind.from_bits(r)]
            },
            None,
        );
    }
}

#[test]
fn float_ternary_functions() {
    // fma rounds once in every precision: f32's fused multiply-add
    // for float; for half and bfloat the correctly rounded function that
    // gpu-math's tests/fma.rs checks against exact big-integer arithmetic.
    for (kind, gk) in [(FK::F32, gpu_math::FloatKind::F32), (FK::F16, gpu_math::FloatKind::F16), (FK::BF16, gpu_math::FloatKind::BF16)] {
        let once = gpu_math::float_ternary_in(gk, "fma", false).unwrap();
        for expr in ["fma(a, b, c)", "fast::fma(a, b, c)", "precise::fma(a, b, c)"] {
            float_prop(kind, 3, expr, Tol::Bits, &|a| vec![once(a[0], a[1], a[2])], None);
        }
    }
    ternary("clamp(a, b, c)", Tol::Ulp(0), |x, lo, hi| vec![x.max(lo).min(hi)]);
    ternary("mix(a, b, c)", Tol::Ulp(0), |x, y, t| vec![x + (y - x) * t, (y - x).mul_add(t, x)]);
    ternary("fmin3(a, b, c)", Tol::Ulp(0), |a, b, c| vec![a.min(b).min(c)]);
    ternary("fmax3(a, b, c)", Tol::Ulp(0), |a, b, c| vec![a.max(b).max(c)]);
    ternary("fmedian3(a, b, c)", Tol::Ulp(0), |a, b, c| {
        let mut v: Vec<f32> = [a, b, c].into_iter().filter(|x| !x.is_nan()).collect();
        v.sort_by(|x, y| x.total_cmp(y));
        match v.len() {
            3 => vec![v[1]],
            2 => vec![v[0], v[1]],
            1 => vec![v[0]],
            _ => vec![f32::NAN],
        }
    });
}

#[test]
fn float_smoothstep_on_ordered_edges() {
    for kind in [FK::F32, FK::F16, FK::BF16] {
        let e0 = (-4.0f32..0.0).prop_map(move |x| kind.round(x)).boxed();
        let e1 = (0.5f32..4.0).prop_map(move |x| kind.round(x)).boxed();
        float_prop(
            kind,
            3,
            "smoothstep(a, b, c)",
            Tol::Ulp(4),
            &|v| {
                let (e0, e1, x) = (v[0] as f64, v[1] as f64, v[2] as f64);
                if x.is_nan() {
                    // clamp(NaN) -> 0 with fmin/fmax semantics.
                    return vec![0.0];
                }
                let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
                vec![(t * t * (3.0 - 2.0 * t)) as f32]
            },
            Some(vec![e0, e1, kind.strategy()]),
        );
    }
}

#[test]
fn float_classification() {
    for kind in [FK::F32, FK::F16, FK::BF16] {
        type Pred = (&'static str, fn(FK, f32) -> bool);
        let preds: [Pred; 6] = [
            ("isnan(a)", |_, x| x.is_nan()),
            ("isinf(a)", |_, x| x.is_infinite()),
            ("isfinite(a)", |_, x| x.is_finite()),
            ("signbit(a)", |_, x| x.is_sign_negative()),
            ("isnormal(a)", |k, x| match k {
                FK::F32 => x.is_normal(),
                FK::F16 => f16::from_f32(x).is_normal(),
                FK::BF16 => bf16::from_f32(x).is_normal(),
            }),
            ("a != a", |_, x| x.is_nan()),
        ];
        for (expr, p) in preds {
            let k = map_kernel(kind.name(), "uint", 1, &format!("{expr} ? 1u : 0u"));
            let mut r = runner(CASES / 2);
            r.run(&proptest::collection::vec(kind.strategy(), LANES), |v| {
                let out = to_u32(&run_map(&k, &[kind.encode(&v)], LANES * 4));
                for l in 0..LANES {
                    let x = kind.round(v[l]);
                    prop_assert_eq!(out[l] == 1, p(kind, x), "{} {} of {:e}", kind.name(), expr, x);
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn float_comparisons_are_ieee() {
    for kind in [FK::F32, FK::F16] {
        for (op, f) in
            [("<", f32::lt as fn(&f32, &f32) -> bool), ("<=", f32::le), (">", f32::gt), (">=", f32::ge), ("==", f32::eq), ("!=", f32::ne)]
        {
            let k = map_kernel(kind.name(), "uint", 2, &format!("(a {op} b) ? 1u : 0u"));
            let mut r = runner(CASES / 2);
            r.run(&(proptest::collection::vec(kind.strategy(), LANES), proptest::collection::vec(kind.strategy(), LANES)), |(a, b)| {
                let out = to_u32(&run_map(&k, &[kind.encode(&a), kind.encode(&b)], LANES * 4));
                for l in 0..LANES {
                    let (x, y) = (kind.round(a[l]), kind.round(b[l]));
                    prop_assert_eq!(out[l] == 1, f(&x, &y), "{:e} {} {:e}", x, op, y);
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

// ---------------------------------------------------------------- integers

#[derive(Clone, Copy, Debug, PartialEq)]
struct IK {
    name: &'static str,
    bits: u32,
    signed: bool,
}

const INT_KINDS: [IK; 8] = [
    IK { name: "char", bits: 8, signed: true },
    IK { name: "uchar", bits: 8, signed: false },
    IK { name: "short", bits: 16, signed: true },
    IK { name: "ushort", bits: 16, signed: false },
    IK { name: "int", bits: 32, signed: true },
    IK { name: "uint", bits: 32, signed: false },
    IK { name: "long", bits: 64, signed: true },
    IK { name: "ulong", bits: 64, signed: false },
];

impl IK {
    fn mask(self) -> u64 {
        if self.bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }
    /// The value of the low `bits` bits of `v` in this kind.
    fn val(self, v: i128) -> i128 {
        let u = (v as u128 as u64) & self.mask();
        if self.signed && self.bits < 64 && (u >> (self.bits - 1)) & 1 == 1 {
            u as i128 - (1i128 << self.bits)
        } else if self.signed && self.bits == 64 {
            u as i64 as i128
        } else {
            u as i128
        }
    }
    fn min(self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }
    fn max(self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }
    fn size(self) -> usize {
        self.bits as usize / 8
    }
    fn encode(self, v: &[i128]) -> Vec<u8> {
        v.iter().flat_map(|&x| (x as u128 as u64).to_le_bytes()[..self.size()].to_vec()).collect()
    }
    fn decode(self, b: &[u8]) -> Vec<i128> {
        b.chunks_exact(self.size())
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                self.val(u64::from_le_bytes(w) as i128)
            })
            .collect()
    }
    fn strategy(self) -> BoxedStrategy<i128> {
        let k = self;
        let w = self.bits as i128;
        let specials = vec![0, 1, -1, 2, -2, k.min(), k.min() + 1, k.max(), k.max() - 1, w, w - 1, w + 1, 7, 8, 9, 31, 32, 33, 63, 64];
        let special = proptest::sample::select(specials).prop_map(move |x| k.val(x));
        let raw = any::<u64>().prop_map(move |x| k.val(x as i128));
        let small = (-40i128..40).prop_map(move |x| k.val(x));
        prop_oneof![2 => special, 3 => raw, 2 => small].boxed()
    }
    /// Is the kind promoted to int in C++ arithmetic?
    fn promoted(self) -> bool {
        self.bits < 32
    }
}

fn int_prop(k: IK, tr: &str, rk: IK, arity: usize, expr: &str, f: &dyn Fn(&[i128]) -> i128, strats: Option<Vec<BoxedStrategy<i128>>>) {
    let kernel = map_kernel(k.name, tr, arity, expr);
    let strats = strats.unwrap_or_else(|| (0..arity).map(|_| k.strategy()).collect());
    let lanes: Vec<_> = strats.into_iter().map(|s| proptest::collection::vec(s, LANES)).collect();
    let mut r = runner(CASES);
    r.run(&lanes, |ins| {
        let bytes: Vec<Vec<u8>> = ins.iter().map(|v| k.encode(v)).collect();
        let out = rk.decode(&run_map(&kernel, &bytes, LANES * rk.size()));
        for l in 0..LANES {
            let args: Vec<i128> = ins.iter().map(|v| v[l]).collect();
            let want = rk.val(f(&args));
            prop_assert_eq!(out[l], want, "{} {} with {:?}", k.name, expr, args);
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

/// Shift amount: modulo the width of the (promoted) left operand.
fn shamt(k: IK, b: i128) -> u32 {
    let w = if k.promoted() { 32 } else { k.bits };
    ((b as u128 as u64) % w as u64) as u32
}

#[test]
fn int_operators_wrap_and_divide_like_metal() {
    for k in INT_KINDS {
        int_prop(k, k.name, k, 2, "a + b", &|v| v[0] + v[1], None);
        int_prop(k, k.name, k, 2, "a - b", &|v| v[0] - v[1], None);
        int_prop(k, k.name, k, 2, "a * b", &|v| v[0].wrapping_mul(v[1]), None);
        // Division by zero gives 0 (gpu-math); MIN / -1 wraps; truncation toward zero.
        int_prop(k, k.name, k, 2, "a / b", &|v| if v[1] == 0 { 0 } else { v[0] / v[1] }, None);
        int_prop(k, k.name, k, 2, "a % b", &|v| if v[1] == 0 { 0 } else { v[0] % v[1] }, None);
        int_prop(k, k.name, k, 2, "a & b", &|v| v[0] & v[1], None);
        int_prop(k, k.name, k, 2, "a | b", &|v| v[0] | v[1], None);
        int_prop(k, k.name, k, 2, "a ^ b", &|v| v[0] ^ v[1], None);
        int_prop(k, k.name, k, 1, "~a", &|v| !v[0], None);
        int_prop(k, k.name, k, 1, "-a", &|v| -v[0], None);
    }
}

#[test]
fn int_shifts() {
    for k in INT_KINDS {
        // Narrow kinds are promoted to int first (C++), so `char << 9` is 0
        // after truncation, and `char >> 9` of a negative char is -1.
        int_prop(k, k.name, k, 2, "a << b", &move |v| v[0] << shamt(k, v[1]), None);
        int_prop(k, k.name, k, 2, "a >> b", &move |v| v[0] >> shamt(k, v[1]), None);
    }
}

/// Shifts with in-range amounts: no promotion/modulo question involved.
#[test]
fn int_shifts_in_range() {
    for k in INT_KINDS {
        let amt = (0i128..k.bits as i128).boxed();
        int_prop(k, k.name, k, 2, "a << b", &move |v| v[0] << v[1], Some(vec![k.strategy(), amt.clone()]));
        int_prop(k, k.name, k, 2, "a >> b", &move |v| v[0] >> v[1], Some(vec![k.strategy(), amt.clone()]));
    }
}

#[test]
fn int_functions() {
    for k in INT_KINDS {
        let w = k.bits;
        let u = IK { name: INT_KINDS.iter().find(|x| x.bits == w && !x.signed).unwrap().name, bits: w, signed: false };
        let m = k.mask() as u128;
        let bitsof = move |x: i128| (x as u128) & m;
        int_prop(k, k.name, k, 1, "abs(a)", &|v| v[0].abs(), None);
        int_prop(k, k.name, k, 1, "clz(a)", &move |v| (bitsof(v[0]).leading_zeros() - (128 - w)) as i128, None);
        int_prop(k, k.name, k, 1, "ctz(a)", &move |v| if v[0] == 0 { w as i128 } else { bitsof(v[0]).trailing_zeros() as i128 }, None);
        int_prop(k, k.name, k, 1, "popcount(a)", &move |v| bitsof(v[0]).count_ones() as i128, None);
        int_prop(k, k.name, k, 1, "reverse_bits(a)", &move |v| (bitsof(v[0]).reverse_bits() >> (128 - w)) as i128, None);
        int_prop(k, k.name, k, 2, "min(a, b)", &|v| v[0].min(v[1]), None);
        int_prop(k, k.name, k, 2, "max(a, b)", &|v| v[0].max(v[1]), None);
        int_prop(k, u.name, u, 2, "absdiff(a, b)", &|v| (v[0] - v[1]).abs(), None);
        int_prop(k, k.name, k, 2, "addsat(a, b)", &move |v| (v[0] + v[1]).clamp(k.min(), k.max()), None);
        int_prop(k, k.name, k, 2, "subsat(a, b)", &move |v| (v[0] - v[1]).clamp(k.min(), k.max()), None);
        int_prop(k, k.name, k, 2, "hadd(a, b)", &|v| (v[0] + v[1]) >> 1, None);
        int_prop(k, k.name, k, 2, "rhadd(a, b)", &|v| (v[0] + v[1] + 1) >> 1, None);
        int_prop(
            k,
            k.name,
            k,
            2,
            "mulhi(a, b)",
            &move |v| if k.signed { (v[0] * v[1]) >> w } else { ((v[0] as u128 * v[1] as u128) >> w) as i128 },
            None,
        );
        int_prop(
            k,
            k.name,
            k,
            2,
            "rotate(a, b)",
            &move |v| {
                let s = ((v[1] as u128 as u64) % w as u64) as u32;
                let x = bitsof(v[0]);
                (if s == 0 { x } else { ((x << s) | (x >> (w - s))) & m }) as i128
            },
            None,
        );
        int_prop(k, k.name, k, 3, "clamp(a, b, c)", &|v| v[0].max(v[1]).min(v[2]), None);
        int_prop(
            k,
            k.name,
            k,
            3,
            "madsat(a, b, c)",
            &move |v| v[0].checked_mul(v[1]).map_or(k.max(), |p| (p + v[2]).clamp(k.min(), k.max())),
            None,
        );
        int_prop(
            k,
            k.name,
            k,
            3,
            "median3(a, b, c)",
            &|v| {
                let mut s = [v[0], v[1], v[2]];
                s.sort();
                s[1]
            },
            None,
        );
    }
}

#[test]
fn int_comparisons_signed_and_unsigned() {
    let kb = IK { name: "uint", bits: 32, signed: false };
    for k in INT_KINDS {
        int_prop(k, "uint", kb, 2, "(a < b) ? 1u : 0u", &|v| (v[0] < v[1]) as i128, None);
        int_prop(k, "uint", kb, 2, "(a >= b) ? 1u : 0u", &|v| (v[0] >= v[1]) as i128, None);
        int_prop(k, "uint", kb, 2, "(a == b) ? 1u : 0u", &|v| (v[0] == v[1]) as i128, None);
    }
}

// ------------------------------------------------------------- conversions

#[test]
fn float_to_int_truncates_and_saturates() {
    for k in INT_KINDS {
        for fk in [FK::F32, FK::F16, FK::BF16] {
            let kernel = map_kernel(fk.name(), k.name, 1, &format!("static_cast<{}>(a)", k.name));
            let mut r = runner(CASES);
            r.run(&proptest::collection::vec(fk.strategy(), LANES), |v| {
                let out = k.decode(&run_map(&kernel, &[fk.encode(&v)], LANES * k.size()));
                for l in 0..LANES {
                    let x = fk.round(v[l]) as f64;
                    let want = if x.is_nan() {
                        0
                    } else if x >= k.max() as f64 {
                        k.max()
                    } else if x <= k.min() as f64 {
                        k.min()
                    } else {
                        x.trunc() as i128
                    };
                    prop_assert_eq!(out[l], want, "{}({}) -> {}", fk.name(), x, k.name);
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn int_to_float_rounds_to_nearest_even() {
    for k in INT_KINDS {
        let kernel = map_kernel(k.name, "float", 1, "float(a)");
        let mut r = runner(CASES);
        r.run(&proptest::collection::vec(k.strategy(), LANES), |v| {
            let out = to_f32(&run_map(&kernel, &[k.encode(&v)], LANES * 4));
            for l in 0..LANES {
                // i128 -> f32 in Rust rounds to nearest even, exactly once.
                let want = v[l] as f32;
                prop_assert_eq!(out[l].to_bits(), want.to_bits(), "{}({}) -> float", k.name, v[l]);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn small_ints_to_half_and_bfloat() {
    for (fk, range) in [(FK::F16, 2048i128), (FK::BF16, 256)] {
        for k in [INT_KINDS[0], INT_KINDS[2], INT_KINDS[4], INT_KINDS[6]] {
            let kernel = map_kernel(k.name, fk.name(), 1, &format!("{}(a)", fk.name()));
            let lim = range.min(k.max());
            int_prop_float(&kernel, k, fk, (-lim..=lim).boxed());
        }
    }
}

fn int_prop_float(kernel: &gpu::Kernel, k: IK, fk: FK, s: BoxedStrategy<i128>) {
    let mut r = runner(CASES / 2);
    r.run(&proptest::collection::vec(s, LANES), |v| {
        let out = fk.decode_bits(&run_map(kernel, &[k.encode(&v)], LANES * fk.size()));
        for l in 0..LANES {
            prop_assert_eq!(out[l], fk.bits(v[l] as f32), "{} -> {}", v[l], fk.name());
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn float_narrowing_and_widening_conversions() {
    // float -> half / bfloat: RNE, overflow to inf, NaN stays NaN.
    for fk in [FK::F16, FK::BF16] {
        let kernel = map_kernel("float", fk.name(), 1, &format!("{}(a)", fk.name()));
        let mut r = runner(CASES);
        r.run(&proptest::collection::vec(FK::F32.strategy(), LANES), |v| {
            let out = fk.decode_bits(&run_map(&kernel, &[FK::F32.encode(&v)], LANES * 2));
            for l in 0..LANES {
                check_float(fk, out[l], &[v[l]], Tol::Bits).map_err(TestCaseError::fail)?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        // half / bfloat -> float is exact.
        let kernel = map_kernel(fk.name(), "float", 1, "float(a)");
        let mut r = runner(CASES);
        r.run(&proptest::collection::vec(fk.strategy(), LANES), |v| {
            let out = to_f32(&run_map(&kernel, &[fk.encode(&v)], LANES * 4));
            for l in 0..LANES {
                check_float(FK::F32, out[l].to_bits(), &[fk.round(v[l])], Tol::Bits).map_err(TestCaseError::fail)?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    }
    // half -> bfloat goes through the exact f32 value.
    let kernel = map_kernel("half", "bfloat", 1, "bfloat(a)");
    let mut r = runner(CASES);
    r.run(&proptest::collection::vec(FK::F16.strategy(), LANES), |v| {
        let out = FK::BF16.decode_bits(&run_map(&kernel, &[FK::F16.encode(&v)], LANES * 2));
        for l in 0..LANES {
            check_float(FK::BF16, out[l], &[FK::F16.round(v[l])], Tol::Bits).map_err(TestCaseError::fail)?;
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn as_type_bit_casts_preserve_bits() {
    // uint <-> float keeps NaN payloads and signalling bits.
    let k = map_kernel("uint", "float", 1, "as_type<float>(a)");
    let k2 = map_kernel("float", "uint", 1, "as_type<uint>(a)");
    let k3 = map_kernel("uint", "half2", 1, "as_type<half2>(a)");
    let k4 = map_kernel("ulong", "uint2", 1, "as_type<uint2>(a)");
    let k5 = map_kernel("ushort", "half", 1, "as_type<half>(a)");
    let k6 = map_kernel("int", "uint", 1, "as_type<uint>(a) >> 31");
    let mut r = runner(CASES);
    r.run(&(proptest::collection::vec(any::<u32>(), LANES), proptest::collection::vec(any::<u64>(), LANES)), |(v, w)| {
        let vb = u32s(&v);
        prop_assert_eq!(to_u32(&run_map(&k, std::slice::from_ref(&vb), LANES * 4)), v.clone(), "as_type<float>(uint)");
        prop_assert_eq!(to_u32(&run_map(&k2, std::slice::from_ref(&vb), LANES * 4)), v.clone(), "as_type<uint>(float)");
        // Signalling half NaNs are covered by `as_type_keeps_signalling_half_nans`.
        let v: Vec<u32> = v.iter().map(|&x| quiet_half_pair(x)).collect();
        let vb = u32s(&v);
        prop_assert_eq!(to_u32(&run_map(&k3, std::slice::from_ref(&vb), LANES * 4)), v.clone(), "as_type<half2>(uint)");
        let wb = u64s(&w);
        prop_assert_eq!(to_u64(&run_map(&k4, std::slice::from_ref(&wb), LANES * 8)), w.clone(), "as_type<uint2>(ulong)");
        let hb: Vec<u8> = vb[..LANES * 2].to_vec(); // quieted above
        prop_assert_eq!(to_u16(&run_map(&k5, std::slice::from_ref(&hb), LANES * 2)), to_u16(&hb), "as_type<half>(ushort)");
        let sign = to_u32(&run_map(&k6, &[vb], LANES * 4));
        for l in 0..LANES {
            prop_assert_eq!(sign[l], v[l] >> 31);
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

/// Set the quiet bit of any signalling-NaN half in a pair of halves.
fn quiet_half_pair(x: u32) -> u32 {
    let q = |h: u32| if h & 0x7c00 == 0x7c00 && h & 0x3ff != 0 { h | 0x200 } else { h };
    q(x & 0xffff) | (q(x >> 16) << 16)
}

#[test]
#[ignore = "bug: half values travel as f32 inside the simulator, so a signalling-NaN half bit pattern (e.g. 0x7c98) comes back quieted (0x7e98) from as_type<half>/as_type<half2> and plain half loads/stores; fixing it needs raw-bit half registers in exec/ops"]
fn as_type_keeps_signalling_half_nans() {
    let k = map_kernel("uint", "half2", 1, "as_type<half2>(a)");
    let k2 = map_kernel("ushort", "half", 1, "as_type<half>(a)");
    let k3 = map_kernel("half", "half", 1, "a");
    let v: Vec<u32> = (0..LANES as u32).map(|i| (0x7c01 + i * 3) | ((0xfc01 + i) << 16)).collect();
    assert_eq!(to_u32(&run_map(&k, &[u32s(&v)], LANES * 4)), v);
    let h: Vec<u16> = v.iter().map(|&x| x as u16).collect();
    assert_eq!(to_u16(&run_map(&k2, &[u16s(&h)], LANES * 2)), h);
    assert_eq!(to_u16(&run_map(&k3, &[u16s(&h)], LANES * 2)), h, "a plain copy of a half");
}

// ----------------------------------------------------- relational/geometric

fn vec_kernel(body: &str, out_ty: &str) -> gpu::Kernel {
    let src = format!(
        "{PRELUDE}kernel void k(const device float4* a [[buffer(0)]], const device float4* b [[buffer(1)]], const device float4* c [[buffer(2)]], device {out_ty}* out [[buffer(3)]], uint i [[thread_position_in_grid]]) {{ float4 x = a[i]; float4 y = b[i]; float4 z = c[i]; {body} }}\n"
    );
    compile(&src, "k")
}

fn finite_vec4() -> impl Strategy<Value = Vec<f32>> {
    proptest::collection::vec(prop_oneof![(-100.0f32..100.0), Just(0.0f32), Just(-0.0f32), Just(1.0f32)], LANES * 4)
}

fn rel_close(got: f32, want: f64, ulps: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    let err = (got as f64 - want).abs();
    err <= ulps * f32::EPSILON as f64 * want.abs().max(f32::MIN_POSITIVE as f64) || err <= 1e-30
}

#[test]
fn geometric_dot_length_normalize_cross() {
    let kd = vec_kernel("out[i] = float4(dot(x, y), length(x), length(x.xyz), dot(x.xy, y.xy));", "float4");
    let kn = vec_kernel("out[i] = normalize(x);", "float4");
    let kc = vec_kernel("out[i] = float4(cross(x.xyz, y.xyz), distance(x, y));", "float4");
    let mut r = runner(CASES);
    r.run(&(finite_vec4(), finite_vec4()), |(a, b)| {
        let ins = [f32s(&a), f32s(&b), f32s(&a)];
        let d = to_f32(&run_map(&kd, &ins, LANES * 16));
        let n = to_f32(&run_map(&kn, &ins, LANES * 16));
        let c = to_f32(&run_map(&kc, &ins, LANES * 16));
        for l in 0..LANES {
            let x: Vec<f64> = a[l * 4..l * 4 + 4].iter().map(|&v| v as f64).collect();
            let y: Vec<f64> = b[l * 4..l * 4 + 4].iter().map(|&v| v as f64).collect();
            let dot: f64 = (0..4).map(|j| x[j] * y[j]).sum();
            let abs_dot: f64 = (0..4).map(|j| (x[j] * y[j]).abs()).sum();
            // dot may cancel: bound the error by the sum of magnitudes.
            prop_assert!((d[l * 4] as f64 - dot).abs() <= 4.0 * f32::EPSILON as f64 * abs_dot + 1e-30, "dot {} vs {}", d[l * 4], dot);
            let len: f64 = (0..4).map(|j| x[j] * x[j]).sum::<f64>().sqrt();
            prop_assert!(rel_close(d[l * 4 + 1], len, 4.0), "length {} vs {}", d[l * 4 + 1], len);
            let len3: f64 = (0..3).map(|j| x[j] * x[j]).sum::<f64>().sqrt();
            prop_assert!(rel_close(d[l * 4 + 2], len3, 4.0), "length3 {} vs {}", d[l * 4 + 2], len3);
            let dot2 = x[0] * y[0] + x[1] * y[1];
            prop_assert!(
                (d[l * 4 + 3] as f64 - dot2).abs() <= 4.0 * f32::EPSILON as f64 * ((x[0] * y[0]).abs() + (x[1] * y[1]).abs()) + 1e-30
            );
            if len > 1e-15 {
                for j in 0..4 {
                    let want = x[j] / len;
                    prop_assert!(
                        (n[l * 4 + j] as f64 - want).abs() <= 8.0 * f32::EPSILON as f64,
                        "normalize[{}] {} vs {}",
                        j,
                        n[l * 4 + j],
                        want
                    );
                }
            }
            let cr = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]];
            let mags = [
                (x[1] * y[2]).abs() + (x[2] * y[1]).abs(),
                (x[2] * y[0]).abs() + (x[0] * y[2]).abs(),
                (x[0] * y[1]).abs() + (x[1] * y[0]).abs(),
            ];
            for j in 0..3 {
                prop_assert!(
                    (c[l * 4 + j] as f64 - cr[j]).abs() <= 4.0 * f32::EPSILON as f64 * mags[j] + 1e-30,
                    "cross[{}] {} vs {}",
                    j,
                    c[l * 4 + j],
                    cr[j]
                );
            }
            let dist: f64 = (0..4).map(|j| (x[j] - y[j]).powi(2)).sum::<f64>().sqrt();
            prop_assert!(
                rel_close(c[l * 4 + 3], dist, 6.0) || (c[l * 4 + 3] as f64 - dist).abs() < 1e-5,
                "distance {} vs {}",
                c[l * 4 + 3],
                dist
            );
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn relational_select_all_any_and_vector_clamp_mix() {
    let ks = vec_kernel("out[i] = select(x, y, x < z);", "float4");
    let ka = vec_kernel(
        "out[i] = uint4(all(x < y) ? 1u : 0u, any(x < y) ? 1u : 0u, all(x.xy > y.xy) ? 1u : 0u, any(isnan(z)) ? 1u : 0u);",
        "uint4",
    );
    let kc = vec_kernel("out[i] = clamp(x, min(y, z), max(y, z));", "float4");
    let km = vec_kernel("out[i] = mix(x, y, fract(z));", "float4");
    let ksm = vec_kernel("out[i] = smoothstep(float4(-1.0f), float4(2.0f), x);", "float4");
    let mut r = runner(CASES);
    r.run(&(finite_vec4(), finite_vec4(), proptest::collection::vec(FK::F32.strategy(), LANES * 4)), |(a, b, c)| {
        let ins = [f32s(&a), f32s(&b), f32s(&c)];
        let s = to_f32(&run_map(&ks, &ins, LANES * 16));
        let al = to_u32(&run_map(&ka, &ins, LANES * 16));
        let cl = to_f32(&run_map(&kc, &ins, LANES * 16));
        let mx = to_f32(&run_map(&km, &ins, LANES * 16));
        let sm = to_f32(&run_map(&ksm, &ins, LANES * 16));
        for l in 0..LANES {
            let x = &a[l * 4..l * 4 + 4];
            let y = &b[l * 4..l * 4 + 4];
            let z = &c[l * 4..l * 4 + 4];
            for j in 0..4 {
                let want = if x[j] < z[j] { y[j] } else { x[j] };
                prop_assert_eq!(s[l * 4 + j].to_bits(), want.to_bits(), "select lane {} comp {}", l, j);
                let lo = y[j].min(z[j]);
                let hi = y[j].max(z[j]);
                let want = x[j].max(lo).min(hi);
                prop_assert!(cl[l * 4 + j] == want, "clamp {} vs {}", cl[l * 4 + j], want);
                let t = if z[j].is_nan() {
                    f32::NAN
                } else if z[j].is_infinite() {
                    0.0
                } else {
                    (z[j] - z[j].floor()).min(f32::from_bits(0x3f7f_ffff))
                };
                let w1 = x[j] + (y[j] - x[j]) * t;
                let w2 = (y[j] - x[j]).mul_add(t, x[j]);
                let got = mx[l * 4 + j];
                prop_assert!(
                    got.to_bits() == w1.to_bits() || got.to_bits() == w2.to_bits() || (got.is_nan() && w1.is_nan()) || got == w1,
                    "mix {} vs {}",
                    got,
                    w1
                );
                let tt = ((x[j] as f64 + 1.0) / 3.0).clamp(0.0, 1.0);
                let want = tt * tt * (3.0 - 2.0 * tt);
                prop_assert!((sm[l * 4 + j] as f64 - want).abs() <= 1e-6, "smoothstep {} vs {}", sm[l * 4 + j], want);
            }
            let lt: Vec<bool> = (0..4).map(|j| x[j] < y[j]).collect();
            prop_assert_eq!(al[l * 4], lt.iter().all(|&v| v) as u32);
            prop_assert_eq!(al[l * 4 + 1], lt.iter().any(|&v| v) as u32);
            prop_assert_eq!(al[l * 4 + 2], (x[0] > y[0] && x[1] > y[1]) as u32);
            prop_assert_eq!(al[l * 4 + 3], z.iter().any(|v| v.is_nan()) as u32);
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
}
