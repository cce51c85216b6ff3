//! Shader logging output (`os_log_default.log("x = %d", x)`): each message
//! tagged with its thread, in the order the simulator ran them (threadgroups
//! in order; within one log call, threads in increasing index), which is
//! the same on every run. At most `limit` messages are kept per dispatch;
//! the rest are counted.

use crate::exec::Mask;
use crate::probe::ProbeKind;
use msl::hir::LogFormat;
use msl::types::Scalar;

/// What to log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// Only this thread's messages (`--log thread=X,Y,Z`).
    pub thread: Option<[u32; 3]>,
    /// Only this threadgroup's messages (`--log threadgroup=X,Y,Z`).
    pub threadgroup: Option<[u32; 3]>,
    /// Only messages of this subsystem (`--log subsystem=S`).
    pub subsystem: Option<String>,
    /// Only messages of this category (`--log category=C`).
    pub category: Option<String>,
    /// Only messages at least this severe (`--log level=error`): an index
    /// into `LEVELS`.
    pub min_level: usize,
    /// Most messages kept per dispatch.
    pub limit: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LogMessage {
    pub thread: [u32; 3],
    /// Its position within its threadgroup.
    pub local: [u32; 3],
    pub threadgroup: [u32; 3],
    /// `log`, `log_debug`, `log_info`, `log_error` or `log_fault`.
    pub level: &'static str,
    /// The `os_log` object's subsystem and category (`None` for
    /// `os_log_default`).
    pub origin: Option<(String, String)>,
    pub text: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogOutput {
    pub messages: Vec<LogMessage>,
    /// Messages dropped after the limit.
    pub dropped: u64,
}

/// The observer attached while logging.
#[derive(Debug)]
pub struct LogRecorder {
    pub options: LogOptions,
    pub out: LogOutput,
}

/// The levels from least to most severe, as `os_log` names its calls.
pub const LEVELS: [&str; 5] = ["log_debug", "log_info", "log", "log_error", "log_fault"];

/// A level's severity (index into `LEVELS`; unknown ones count as `log`).
pub fn severity(level: &str) -> usize {
    LEVELS.iter().position(|l| *l == level).unwrap_or(2)
}

impl LogOptions {
    /// A subsystem or category filter that no log call of the kernel's
    /// program uses would silently show nothing: an error naming those it
    /// does use. `origins` are the program's (subsystem, category) pairs.
    pub fn check_filters(&self, origins: &[(String, String)]) -> Result<(), String> {
        for (key, wanted, part) in [("subsystem", &self.subsystem, 0), ("category", &self.category, 1)] {
            let Some(w) = wanted else { continue };
            let mut known: Vec<&str> = origins.iter().map(|o| if part == 0 { o.0.as_str() } else { o.1.as_str() }).collect();
            known.sort();
            known.dedup();
            if known.contains(&w.as_str()) {
                continue;
            }
            let have = if known.is_empty() {
                "the kernel logs only to `os_log_default`, which has neither".to_string()
            } else {
                format!("its `os_log` objects have {}", known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "))
            };
            return Err(format!("the log filter {key}={w} names no {key} the kernel logs to ({have}): it would show nothing"));
        }
        Ok(())
    }
}

impl LogRecorder {
    pub fn new(options: LogOptions) -> LogRecorder {
        LogRecorder { options, out: LogOutput::default() }
    }

    /// One log call run by the lanes in `mask`: `values(lane)` reads the
    /// arguments' register bits of a lane.
    pub fn record(
        &mut self,
        site: &LogFormat,
        kinds: &[ProbeKind],
        mask: &Mask,
        geo: &crate::exec::Geometry,
        values: &dyn Fn(usize) -> Vec<u64>,
    ) {
        let o = &self.options;
        let origin = site.origin.as_ref();
        let wanted = |filter: &Option<String>, of: fn(&(String, String)) -> &str| match filter {
            None => true,
            Some(f) => origin.is_some_and(|o| of(o) == f),
        };
        if severity(site.level) < o.min_level || !wanted(&o.subsystem, |o| &o.0) || !wanted(&o.category, |o| &o.1) {
            return;
        }
        for l in mask.lanes() {
            let thread = geo.global(l);
            if self.options.thread.is_some_and(|t| t != thread) || self.options.threadgroup.is_some_and(|g| g != geo.tg_pos) {
                continue;
            }
            if self.out.messages.len() >= self.options.limit {
                self.out.dropped += 1;
                continue;
            }
            let args: Vec<(ProbeKind, u64)> = kinds.iter().copied().zip(values(l)).collect();
            self.out.messages.push(LogMessage {
                thread,
                local: geo.local(l),
                threadgroup: geo.tg_pos,
                level: site.level,
                origin: site.origin.clone(),
                text: printf(&site.text, &args),
            });
        }
    }
}

/// One parsed conversion: flags, width, precision and the letter.
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    conv: u8,
}

/// Format like C's printf (the front end checked the format against the
/// arguments, so every conversion has a value of a fitting kind).
pub fn printf(format: &str, args: &[(ProbeKind, u64)]) -> String {
    let b = format.as_bytes();
    let mut out = String::new();
    let mut next = args.iter();
    let mut i = 0;
    let mut literal_start = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        out.push_str(&format[literal_start..i]);
        i += 1;
        if b.get(i) == Some(&b'%') {
            out.push('%');
            i += 1;
            literal_start = i;
            continue;
        }
        let mut s = Spec { left: false, plus: false, space: false, alt: false, zero: false, width: 0, precision: None, conv: b'd' };
        while let Some(&c) = b.get(i) {
            match c {
                b'-' => s.left = true,
                b'+' => s.plus = true,
                b' ' => s.space = true,
                b'#' => s.alt = true,
                b'0' => s.zero = true,
                _ => break,
            }
            i += 1;
        }
        while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
            s.width = (s.width * 10 + (d - b'0') as usize).min(1000);
            i += 1;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            let mut p = 0usize;
            while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
                p = (p * 10 + (d - b'0') as usize).min(100);
                i += 1;
            }
            s.precision = Some(p);
        }
        while b.get(i).is_some_and(|c| b"hlqjzt".contains(c)) {
            i += 1;
        }
        s.conv = b.get(i).copied().unwrap_or(b'd');
        i += 1;
        literal_start = i.min(b.len());
        let Some(&(kind, bits)) = next.next() else { break };
        out.push_str(&conversion(&s, kind, bits));
    }
    out.push_str(&format[literal_start.min(format.len())..]);
    out
}

fn conversion(s: &Spec, kind: ProbeKind, bits: u64) -> String {
    let scalar = match kind {
        ProbeKind::Value(sc) => sc,
        ProbeKind::Pointer => return pad(s, format!("0x{bits:x}"), false),
    };
    let signed_value = || -> i64 {
        match scalar {
            Scalar::Long | Scalar::ULong => bits as i64,
            Scalar::Char | Scalar::Short | Scalar::Int => bits as u32 as i32 as i64,
            Scalar::Bool | Scalar::UChar | Scalar::UShort | Scalar::UInt => bits as u32 as i64,
            _ => f32::from_bits(bits as u32) as i64,
        }
    };
    let unsigned_value = || -> u64 {
        match scalar {
            Scalar::Long | Scalar::ULong => bits,
            Scalar::Half | Scalar::BFloat | Scalar::Float => f32::from_bits(bits as u32) as u64,
            _ => bits as u32 as u64,
        }
    };
    match s.conv {
        b'd' | b'i' => {
            let v = signed_value();
            let digits = with_precision(v.unsigned_abs().to_string(), s.precision);
            let sign = if v < 0 {
                "-"
            } else if s.plus {
                "+"
            } else if s.space {
                " "
            } else {
                ""
            };
            pad(s, format!("{sign}{digits}"), true)
        }
        b'u' => pad(s, with_precision(unsigned_value().to_string(), s.precision), true),
        b'x' | b'X' | b'o' => {
            let v = unsigned_value();
            let (text, prefix) = match s.conv {
                b'x' => (format!("{v:x}"), "0x"),
                b'X' => (format!("{v:X}"), "0X"),
                _ => (format!("{v:o}"), "0"),
            };
            let text = with_precision(text, s.precision);
            pad(s, if s.alt && v != 0 { format!("{prefix}{text}") } else { text }, true)
        }
        b'c' => pad(s, char::from(unsigned_value() as u8).to_string(), false),
        _ => {
            let v = match scalar {
                Scalar::Half | Scalar::BFloat | Scalar::Float => f32::from_bits(bits as u32) as f64,
                Scalar::Long => bits as i64 as f64,
                Scalar::ULong => bits as f64,
                _ => signed_value() as f64,
            };
            pad(s, float_text(s, v), v.is_finite())
        }
    }
}

fn with_precision(digits: String, precision: Option<usize>) -> String {
    match precision {
        Some(p) if digits.len() < p => format!("{}{digits}", "0".repeat(p - digits.len())),
        _ => digits,
    }
}

/// `%f`, `%e`, `%g`, `%a` (and upper-case forms) of `v`.
fn float_text(s: &Spec, v: f64) -> String {
    let upper = s.conv.is_ascii_uppercase();
    // C prints -0.0 as "-0.000000": the sign bit decides.
    let sign = if v.is_sign_negative() {
        "-"
    } else if s.plus {
        "+"
    } else if s.space {
        " "
    } else {
        ""
    };
    let a = v.abs();
    let body = if a.is_nan() {
        "nan".to_string()
    } else if a.is_infinite() {
        "inf".to_string()
    } else {
        let p = s.precision.unwrap_or(6);
        match s.conv.to_ascii_lowercase() {
            b'f' => format!("{a:.p$}"),
            b'e' => exp_text(a, p),
            b'a' => format!("{a:e}"),
            _ => {
                // %g: the shorter of %e and %f with P significant digits,
                // trailing zeros removed (unless `#`).
                let p = if p == 0 { 1 } else { p };
                let x = if a == 0.0 { 0 } else { exp_text(a, p - 1).rsplit('e').next().and_then(|e| e.parse::<i32>().ok()).unwrap_or(0) };
                let t = if x < -4 || x >= p as i32 { exp_text(a, p - 1) } else { format!("{a:.*}", (p as i32 - 1 - x).max(0) as usize) };
                if s.alt {
                    t
                } else {
                    trim_zeros(&t)
                }
            }
        }
    };
    let t = format!("{sign}{body}");
    if upper {
        t.to_uppercase()
    } else {
        t
    }
}

/// C's `%.pe`: `1.500000e+01`.
fn exp_text(a: f64, p: usize) -> String {
    let t = format!("{a:.p$e}");
    let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

fn trim_zeros(t: &str) -> String {
    let (m, e) = match t.find('e') {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
    format!("{m}{e}")
}

/// Pad to the width: left-justified with `-`, zeros after the sign with `0`.
fn pad(s: &Spec, text: String, numeric: bool) -> String {
    let n = text.chars().count();
    if n >= s.width {
        return text;
    }
    let fill = s.width - n;
    if s.left {
        format!("{text}{}", " ".repeat(fill))
    } else if s.zero && numeric && s.precision.is_none_or(|_| matches!(s.conv, b'f' | b'F' | b'e' | b'E' | b'g' | b'G')) {
        let sign_len = text.chars().take_while(|c| matches!(c, '-' | '+' | ' ')).count();
        format!("{}{}{}", &text[..sign_len], "0".repeat(fill), &text[sign_len..])
    } else {
        format!("{}{text}", " ".repeat(fill))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: f32) -> (ProbeKind, u64) {
        (ProbeKind::Value(Scalar::Float), v.to_bits() as u64)
    }
    fn i(v: i32) -> (ProbeKind, u64) {
        (ProbeKind::Value(Scalar::Int), v as u32 as u64)
    }
    fn u(v: u32) -> (ProbeKind, u64) {
        (ProbeKind::Value(Scalar::UInt), v as u64)
    }

    #[test]
    fn like_c() {
        assert_eq!(printf("x = %d, %u%%", &[i(-3), u(7)]), "x = -3, 7%");
        assert_eq!(printf("[%5d|%-5d|%05d|%+d]", &[i(42), i(42), i(-42), i(5)]), "[   42|42   |-0042|+5]");
        assert_eq!(printf("%x %X %#x %o %.3u", &[u(255), u(255), u(255), u(8), u(7)]), "ff FF 0xff 10 007");
        assert_eq!(printf("%f %.2f %8.3f", &[f(1.5), f(2.0), f(-1.23456)]), "1.500000 2.00   -1.235");
        assert_eq!(printf("%e %.1E", &[f(1234.5), f(0.00012)]), "1.234500e+03 1.2E-04");
        assert_eq!(printf("%g %g %g %g", &[f(0.0001), f(100000.0), f(1e6), f(2.5)]), "0.0001 100000 1e+06 2.5");
        assert_eq!(printf("%c%c", &[(ProbeKind::Value(Scalar::Char), 'h' as u64), (ProbeKind::Value(Scalar::Char), 'i' as u64)]), "hi");
        assert_eq!(printf("%f %f", &[f(f32::INFINITY), f(f32::NAN)]), "inf nan");
        assert_eq!(printf("100%% done", &[]), "100% done");
    }
}
