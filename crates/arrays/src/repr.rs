//! Printing arrays the way MLX (`repr(mx.array)`) and NumPy (`repr(np.ndarray)`)
//! do.

use half::{bf16, f16};

use crate::array::{shape_str, Array, Scalar};
use crate::dtype::DType;

/// Formats like C++ `ostream << double` with default flags (`%g`, precision 6).
pub fn format_g6(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    const P: i32 = 6;
    let sci = format!("{:.*e}", (P - 1) as usize, v);
    let (mant, exp) = sci.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    if !(-4..P).contains(&exp) {
        let mant = trim_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        let fixed = format!("{:.*}", (P - 1 - exp) as usize, v);
        trim_zeros(&fixed).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Indices shown along an axis of length `n`: all, or the first and last
/// `edge` with `None` marking the `...`.
fn shown(n: usize, summarize: bool, edge: usize) -> Vec<Option<usize>> {
    if summarize && n > 2 * edge {
        (0..edge).map(Some).chain(std::iter::once(None)).chain((n - edge..n).map(Some)).collect()
    } else {
        (0..n).map(Some).collect()
    }
}

fn mlx_elem(s: Scalar) -> String {
    match s {
        Scalar::Bool(b) => if b { "True" } else { "False" }.into(),
        Scalar::Int(i) => i.to_string(),
        Scalar::UInt(u) => u.to_string(),
        Scalar::Float(f) => format_g6(f),
    }
}

fn mlx_sub(a: &Array, idx: &mut Vec<usize>, out: &mut String) {
    let dim = idx.len();
    let n = a.shape[dim];
    let is_last = dim + 1 == a.ndim();
    out.push('[');
    for (k, item) in shown(n, true, 3).into_iter().enumerate() {
        if k > 0 {
            if is_last {
                out.push_str(", ");
            } else {
                out.push_str(",\n");
                out.push_str(&" ".repeat(7 + dim));
            }
        }
        match item {
            None => out.push_str("..."),
            Some(i) => {
                idx.push(i);
                if is_last {
                    out.push_str(&mlx_elem(a.get(idx)));
                } else {
                    mlx_sub(a, idx, out);
                }
                idx.pop();
            }
        }
    }
    out.push(']');
}

// ---------------------------------------------------------------- NumPy

/// Shortest decimal digits that read back as the same value of `dtype`:
/// `(negative, digits, exponent)` with value = d.ddd × 10^exponent.
fn shortest_digits(v: f64, dtype: DType) -> (bool, String, i32) {
    let neg = v.is_sign_negative();
    let a = v.abs();
    if a == 0.0 {
        return (neg, "0".into(), 0);
    }
    let same = |s: &str| -> bool {
        let p: f64 = s.parse().unwrap_or(f64::NAN);
        match dtype {
            DType::F16 => f16::from_f64(p).to_bits() == f16::from_f64(a).to_bits(),
            DType::BF16 => bf16::from_f64(p).to_bits() == bf16::from_f64(a).to_bits(),
            DType::F32 => s.parse::<f32>().map(|x| x == a as f32).unwrap_or(false),
            _ => p == a,
        }
    };
    for prec in 0..17 {
        let s = format!("{:.*e}", prec, a);
        if same(&s) {
            let (m, e) = s.split_once('e').unwrap();
            return (neg, m.replace('.', ""), e.parse().unwrap());
        }
    }
    let s = format!("{a:e}");
    let (m, e) = s.split_once('e').unwrap();
    (neg, m.replace('.', ""), e.parse().unwrap())
}

/// `(int part with sign, fraction digits)`, unique digits with at most
/// `precision` fraction digits.
fn positional_parts(v: f64, dtype: DType, precision: usize) -> (String, String) {
    let (neg, digits, exp) = shortest_digits(v, dtype);
    let sign = if neg { "-" } else { "" };
    let (ip, fp) = if exp >= 0 {
        let e = exp as usize;
        if digits.len() > e + 1 {
            (digits[..=e].to_string(), digits[e + 1..].to_string())
        } else {
            (format!("{digits}{}", "0".repeat(e + 1 - digits.len())), String::new())
        }
    } else {
        ("0".to_string(), format!("{}{digits}", "0".repeat((-exp - 1) as usize)))
    };
    if fp.len() > precision {
        let s = format!("{:.*}", precision, v.abs());
        let (i, f) = s.split_once('.').unwrap_or((&s, ""));
        return (format!("{sign}{i}"), f.trim_end_matches('0').to_string());
    }
    (format!("{sign}{ip}"), fp)
}

enum NpFormat {
    Bool { pad_true: bool },
    Int { width: usize },
    Float(FloatFormat),
}

struct FloatFormat {
    dtype: DType,
    sci: bool,
    pad_left: usize,
    pad_right: usize,
    /// sci: mantissa fraction digits; positional: unused
    precision: usize,
    exp_size: usize,
}

const NP_PRECISION: usize = 8;

impl FloatFormat {
    fn new(dtype: DType, vals: &[f64]) -> FloatFormat {
        let finite: Vec<f64> = vals.iter().copied().filter(|v| v.is_finite()).collect();
        let nonzero: Vec<f64> = finite.iter().map(|v| v.abs()).filter(|&v| v != 0.0).collect();
        let mut sci = false;
        if !nonzero.is_empty() {
            let max = nonzero.iter().copied().fold(f64::MIN, f64::max);
            let min = nonzero.iter().copied().fold(f64::MAX, f64::min);
            // NumPy: 10^min(8, decimal precision of the dtype)
            let cutoff = match dtype {
                DType::F16 => 1e3,
                DType::BF16 => 1e2,
                _ => 1e6,
            };
            // the ratio is computed in the dtype's arithmetic
            let ratio = match dtype {
                DType::F16 => f16::from_f64(max / min).to_f64(),
                DType::BF16 => bf16::from_f64(max / min).to_f64(),
                _ => (max as f32 / min as f32) as f64,
            };
            sci = max >= cutoff || min < 1e-4 || ratio > 1e3;
        }
        let mut f = FloatFormat { dtype, sci, pad_left: 0, pad_right: 0, precision: 0, exp_size: 0 };
        if finite.is_empty() {
            // only nan/inf: widths come from the non-finite rule below
        } else if sci {
            let parts: Vec<(bool, String, i32)> = finite.iter().map(|&v| shortest_digits(v, dtype)).collect();
            f.precision = parts.iter().map(|(_, d, _)| d.len() - 1).max().unwrap_or(0).min(NP_PRECISION);
            f.exp_size = parts.iter().map(|(_, _, e)| e.unsigned_abs().to_string().len().max(2)).max().unwrap_or(2);
            f.pad_left = 1 + parts.iter().any(|p| p.0) as usize;
            f.pad_right = f.exp_size + 2 + f.precision;
        } else {
            for &v in &finite {
                let (i, fr) = positional_parts(v, dtype, NP_PRECISION);
                f.pad_left = f.pad_left.max(i.len());
                f.pad_right = f.pad_right.max(fr.len());
            }
        }
        if finite.len() != vals.len() {
            let neginf = vals.contains(&f64::NEG_INFINITY) as usize;
            let offset = f.pad_right + 1;
            f.pad_left = f.pad_left.max(3usize.saturating_sub(offset)).max((3 + neginf).saturating_sub(offset));
        }
        f
    }

    fn format(&self, v: f64) -> String {
        if !v.is_finite() {
            let s = if v.is_nan() {
                "nan"
            } else if v > 0.0 {
                "inf"
            } else {
                "-inf"
            };
            return format!("{s:>w$}", w = self.pad_left + self.pad_right + 1);
        }
        if self.sci {
            // NumPy pads the shortest digits with further exact digits up to
            // the common precision: the exact value rounded to `precision`.
            let neg = v.is_sign_negative();
            let s = format!("{:.*e}", self.precision, v.abs());
            let (m, e) = s.split_once('e').unwrap();
            let digits = m.replace('.', "");
            let exp: i32 = e.parse().unwrap();
            let int = format!("{}{}", if neg { "-" } else { "" }, &digits[..1]);
            let frac = format!("{:0<w$}", &digits[1..], w = self.precision);
            format!(
                "{int:>pl$}.{frac}e{}{:0>es$}",
                if exp < 0 { '-' } else { '+' },
                exp.unsigned_abs(),
                pl = self.pad_left,
                es = self.exp_size
            )
        } else {
            let (i, fr) = positional_parts(v, self.dtype, NP_PRECISION);
            format!("{i:>pl$}.{fr:<pr$}", pl = self.pad_left, pr = self.pad_right)
        }
    }
}

impl NpFormat {
    fn new(a: &Array, vals: &[Scalar]) -> NpFormat {
        match a.dtype {
            DType::Bool => NpFormat::Bool { pad_true: a.ndim() > 0 },
            d if d.is_float() => NpFormat::Float(FloatFormat::new(d, &vals.iter().map(|s| s.to_f64()).collect::<Vec<_>>())),
            _ => NpFormat::Int { width: vals.iter().map(|&s| mlx_elem(s).len()).max().unwrap_or(0) },
        }
    }

    fn format(&self, s: Scalar) -> String {
        match self {
            NpFormat::Bool { pad_true } => match s {
                Scalar::Bool(true) if *pad_true => " True".into(),
                Scalar::Bool(true) => "True".into(),
                _ => "False".into(),
            },
            NpFormat::Int { width } => format!("{:>width$}", mlx_elem(s)),
            NpFormat::Float(f) => f.format(s.to_f64()),
        }
    }
}

fn collect_shown(a: &Array, summarize: bool, idx: &mut Vec<usize>, out: &mut Vec<Scalar>) {
    if idx.len() == a.ndim() {
        out.push(a.get(idx));
        return;
    }
    for i in shown(a.shape[idx.len()], summarize, 3).into_iter().flatten() {
        idx.push(i);
        collect_shown(a, summarize, idx, out);
        idx.pop();
    }
}

fn extend_line(s: &mut String, line: &mut String, word: &str, width: usize, hanging: &str) {
    let wrap = line.len() + word.len() > width && line.len() > hanging.len();
    if wrap {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = hanging.to_string();
    }
    line.push_str(word);
}

struct NpCtx<'a> {
    a: &'a Array,
    fmt: NpFormat,
    summarize: bool,
}

impl NpCtx<'_> {
    fn rec(&self, idx: &mut Vec<usize>, hanging: &str, width: usize) -> String {
        let axis = idx.len();
        let left = self.a.ndim() - axis;
        if left == 0 {
            return self.fmt.format(self.a.get(idx));
        }
        let next_hanging = format!("{hanging} ");
        let next_width = width.saturating_sub(1);
        let n = self.a.shape[axis];
        let items = shown(n, self.summarize, 3);
        let last = items.len() - 1;
        let mut s = String::new();
        let sub = |i: usize, idx: &mut Vec<usize>| {
            idx.push(i);
            let r = self.rec(idx, &next_hanging, next_width);
            idx.pop();
            r
        };
        if left == 1 {
            let elem_width = width.saturating_sub(1);
            let mut line = hanging.to_string();
            for (k, item) in items.iter().enumerate() {
                let word = match item {
                    Some(i) => sub(*i, idx),
                    None => "...".to_string(),
                };
                extend_line(&mut s, &mut line, &word, elem_width, hanging);
                if k != last {
                    line.push_str(", ");
                }
            }
            s.push_str(&line);
        } else {
            let line_sep = format!(",{}", "\n".repeat(left - 1));
            for (k, item) in items.iter().enumerate() {
                s.push_str(hanging);
                match item {
                    Some(i) => s.push_str(&sub(*i, idx)),
                    None => s.push_str("..."),
                }
                if k != last {
                    s.push_str(&line_sep);
                }
            }
        }
        format!("[{}]", &s[hanging.len()..])
    }
}

const NP_LINE_WIDTH: usize = 75;
const NP_THRESHOLD: usize = 1000;

impl Array {
    /// The array as MLX prints it: `array([[1, 2],\n       [3, 4]], dtype=int32)`.
    ///
    /// Like MLX, every axis longer than 6 is summarized to its first and
    /// last 3 entries around `...`, whatever the total size; floats print
    /// like C++ streams (`%g`, 6 significant digits), with no column
    /// alignment.
    pub fn repr_mlx(&self) -> String {
        let mut out = String::from("array(");
        if self.ndim() == 0 {
            out.push_str(&mlx_elem(self.get(&[])));
        } else {
            mlx_sub(self, &mut Vec::new(), &mut out);
        }
        out.push_str(", dtype=");
        out.push_str(self.dtype.mlx_name());
        out.push(')');
        out
    }

    /// The array as NumPy 2 prints it: aligned columns, lines wrapped at 75
    /// characters, arrays over 1000 elements summarized (3 edge items per
    /// axis), the dtype omitted for bool and int64.
    pub fn repr_numpy(&self) -> String {
        let prefix = "array(";
        let summarize = self.len() > NP_THRESHOLD;
        let lst = if self.is_empty() {
            "[]".to_string()
        } else {
            let mut vals = Vec::new();
            collect_shown(self, summarize, &mut Vec::new(), &mut vals);
            let ctx = NpCtx { a: self, fmt: NpFormat::new(self, &vals), summarize };
            let hanging = " ".repeat(prefix.len() + 1);
            ctx.rec(&mut Vec::new(), &hanging, NP_LINE_WIDTH - 1)
        };
        let mut extras = Vec::new();
        if (self.is_empty() && self.shape != [0]) || summarize {
            extras.push(format!("shape={}", shape_str(&self.shape)));
        }
        let implied = matches!(self.dtype, DType::Bool | DType::I64);
        if !implied || self.is_empty() {
            extras.push(format!("dtype={}", self.dtype.mlx_name()));
        }
        if extras.is_empty() {
            return format!("{prefix}{lst})");
        }
        let arr_str = format!("{prefix}{lst},");
        let extra = format!("{})", extras.join(", "));
        let last_line = arr_str.len() - arr_str.rfind('\n').map_or(0, |p| p + 1);
        let spacer = if last_line + extra.len() + 1 > NP_LINE_WIDTH { format!("\n{}", " ".repeat(prefix.len())) } else { " ".to_string() };
        format!("{arr_str}{spacer}{extra}")
    }
}
