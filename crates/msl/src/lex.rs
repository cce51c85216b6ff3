//! The lexer: source text to tokens. Comments and backslash-newlines vanish
//! here; everything else about lines is kept in `Token::line_start` for the
//! preprocessor.

use crate::diag::{Diagnostic, Diagnostics};
use crate::source::{FileId, Span};
use crate::token::{BadNumber, FloatSuffix, IntSuffix, Punct, Token, TokenKind};
use std::rc::Rc;

/// Lex a whole file. Always ends with an `Eof` token; problems go to `diags`.
pub fn lex(file: FileId, text: &str, diags: &mut Diagnostics) -> Vec<Token> {
    let mut lx = Lexer { file, src: text.as_bytes(), text, pos: 0, diags, line_start: true, space: false, garbage: false };
    let mut out = Vec::with_capacity(text.len() / 4);
    loop {
        let tok = lx.next_token();
        if std::mem::take(&mut lx.garbage) {
            // An unknown character was reported; it produces no token.
            lx.space = true;
            continue;
        }
        let eof = tok.kind == TokenKind::Eof;
        out.push(tok);
        if eof {
            break;
        }
    }
    out
}

struct Lexer<'a, 'd> {
    file: FileId,
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    diags: &'d mut Diagnostics,
    line_start: bool,
    space: bool,
    /// Set when the last "token" was an unknown character to drop.
    garbage: bool,
}

impl Lexer<'_, '_> {
    fn span(&self, lo: usize) -> Span {
        Span::new(self.file, lo as u32, self.pos as u32)
    }

    /// Byte at `pos + k`, looking through backslash-newline splices is not
    /// needed inside tokens in practice; we only splice between tokens.
    fn peek(&self, k: usize) -> u8 {
        *self.src.get(self.pos + k).unwrap_or(&0)
    }

    fn skip_trivia(&mut self) {
        loop {
            let c = self.peek(0);
            match c {
                b'\n' => {
                    self.pos += 1;
                    self.line_start = true;
                    self.space = true;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                    self.pos += 1;
                    self.space = true;
                }
                b'\\' if self.peek(1) == b'\n' => {
                    self.pos += 2;
                    self.space = true;
                }
                b'\\' if self.peek(1) == b'\r' && self.peek(2) == b'\n' => {
                    self.pos += 3;
                    self.space = true;
                }
                b'/' if self.peek(1) == b'/' => {
                    // A line comment ends at the newline; a backslash before
                    // the newline continues it (as in C).
                    while self.pos < self.src.len() {
                        if self.src[self.pos] == b'\n' {
                            if self.pos > 0 && self.src[self.pos - 1] == b'\\' {
                                self.pos += 1;
                                continue;
                            }
                            break;
                        }
                        self.pos += 1;
                    }
                    self.space = true;
                }
                b'/' if self.peek(1) == b'*' => {
                    let lo = self.pos;
                    self.pos += 2;
                    let mut closed = false;
                    while self.pos < self.src.len() {
                        if self.src[self.pos] == b'*' && self.peek(1) == b'/' {
                            self.pos += 2;
                            closed = true;
                            break;
                        }
                        self.pos += 1;
                    }
                    if !closed {
                        self.diags.push(
                            Diagnostic::error(Span::new(self.file, lo as u32, lo as u32 + 2), "unterminated `/*` comment")
                                .code("E0001")
                                .label("comment starts here and never ends")
                                .help("close the comment with `*/`"),
                        );
                    }
                    self.space = true;
                }
                _ => return,
            }
        }
    }

    fn next_token(&mut self) -> Token {
        self.skip_trivia();
        let lo = self.pos;
        let line_start = std::mem::replace(&mut self.line_start, false);
        let space = std::mem::replace(&mut self.space, false);
        let kind = if self.pos >= self.src.len() { TokenKind::Eof } else { self.token_kind() };
        let mut t = Token::new(kind, self.span(lo));
        t.line_start = line_start;
        t.space_before = space;
        t
    }

    fn token_kind(&mut self) -> TokenKind {
        let c = self.peek(0);
        if c.is_ascii_alphabetic() || c == b'_' {
            let lo = self.pos;
            while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
                self.pos += 1;
            }
            return TokenKind::Ident(Rc::from(&self.text[lo..self.pos]));
        }
        if c.is_ascii_digit() || (c == b'.' && self.peek(1).is_ascii_digit()) {
            return self.number();
        }
        match c {
            b'"' => return self.string(),
            b'\'' => return self.char_lit(),
            _ => {}
        }
        if let Some((p, len)) = punct_at(&self.src[self.pos..]) {
            self.pos += len;
            return TokenKind::Punct(p);
        }
        // Not a token of the language: report it and skip one character.
        let lo = self.pos;
        let ch = self.text[lo..].chars().next().unwrap_or('?');
        self.pos += ch.len_utf8().max(1);
        self.diags.push(
            Diagnostic::error(self.span(lo), format!("unexpected character {:?} in source", ch))
                .code("E0002")
                .label("not part of the Metal Shading Language"),
        );
        self.garbage = true;
        TokenKind::Eof
    }

    fn number(&mut self) -> TokenKind {
        let lo = self.pos;
        let is_hex = self.peek(0) == b'0' && matches!(self.peek(1), b'x' | b'X');
        let is_bin = self.peek(0) == b'0' && matches!(self.peek(1), b'b' | b'B');
        // Scan a preprocessing number: digits, letters, '.', and signs after exponents.
        self.pos += 1;
        loop {
            let c = self.peek(0);
            let prev = self.src[self.pos - 1];
            let sign_after_exponent =
                (c == b'+' || c == b'-') && (matches!(prev, b'e' | b'E') && !is_hex || matches!(prev, b'p' | b'P') && is_hex);
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'\'' || sign_after_exponent {
                self.pos += 1;
            } else {
                break;
            }
        }
        let raw: String = self.text[lo..self.pos].chars().filter(|&c| c != '\'').collect();
        match parse_number(&raw, is_hex, is_bin) {
            Ok(k) => k,
            // Reported by the preprocessor if it survives macro expansion.
            Err(msg) => TokenKind::BadNumber(Box::new(BadNumber { raw: Rc::from(raw.as_str()), problem: Rc::from(msg.as_str()) })),
        }
    }

    fn escape(&mut self) -> u32 {
        // At a backslash inside a char/string literal.
        self.pos += 1;
        let c = self.peek(0);
        if c >= 0x80 {
            // A non-ASCII character after `\`: keep it whole.
            let ch = self.text.get(self.pos..).and_then(|s| s.chars().next()).unwrap_or('?');
            self.pos += ch.len_utf8();
            return ch as u32;
        }
        if self.pos < self.src.len() {
            self.pos += 1;
        }
        match c {
            b'n' => 10,
            b't' => 9,
            b'r' => 13,
            b'0'..=b'7' => {
                let mut v = (c - b'0') as u32;
                for _ in 0..2 {
                    if matches!(self.peek(0), b'0'..=b'7') {
                        v = v * 8 + (self.peek(0) - b'0') as u32;
                        self.pos += 1;
                    }
                }
                v
            }
            b'x' => {
                let mut v = 0u32;
                while self.peek(0).is_ascii_hexdigit() {
                    v = v.wrapping_mul(16).wrapping_add((self.peek(0) as char).to_digit(16).unwrap_or(0));
                    self.pos += 1;
                }
                v
            }
            b'a' => 7,
            b'b' => 8,
            b'f' => 12,
            b'v' => 11,
            other => other as u32,
        }
    }

    fn string(&mut self) -> TokenKind {
        let lo = self.pos;
        self.pos += 1;
        let mut s = String::new();
        loop {
            match self.peek(0) {
                b'"' => {
                    self.pos += 1;
                    break;
                }
                b'\n' | 0 if self.pos >= self.src.len() || self.peek(0) == b'\n' => {
                    self.diags.push(
                        Diagnostic::error(Span::new(self.file, lo as u32, lo as u32 + 1), "unterminated string literal")
                            .code("E0004")
                            .label("string starts here")
                            .help("add the closing `\"` on the same line"),
                    );
                    break;
                }
                b'\\' => {
                    let v = self.escape();
                    s.push(char::from_u32(v).unwrap_or('?'));
                }
                _ => {
                    let ch = self.text[self.pos..].chars().next().unwrap_or('?');
                    s.push(ch);
                    self.pos += ch.len_utf8().max(1);
                }
            }
        }
        TokenKind::Str(Rc::from(s.as_str()))
    }

    fn char_lit(&mut self) -> TokenKind {
        let lo = self.pos;
        self.pos += 1;
        let mut value = 0u32;
        let mut n = 0;
        loop {
            match self.peek(0) {
                b'\'' => {
                    self.pos += 1;
                    break;
                }
                _ if self.pos >= self.src.len() || self.peek(0) == b'\n' => {
                    self.diags.push(
                        Diagnostic::error(Span::new(self.file, lo as u32, lo as u32 + 1), "unterminated character literal")
                            .code("E0004")
                            .label("character literal starts here"),
                    );
                    break;
                }
                b'\\' => {
                    value = self.escape();
                    n += 1;
                }
                _ => {
                    let ch = self.text[self.pos..].chars().next().unwrap_or('?');
                    value = ch as u32;
                    self.pos += ch.len_utf8().max(1);
                    n += 1;
                }
            }
        }
        if n != 1 && !self.diags.has_errors() {
            self.diags.push(Diagnostic::error(self.span(lo), "a character literal must hold exactly one character").code("E0004"));
        }
        TokenKind::Char(value)
    }
}

/// Parse a preprocessing number into an integer or floating literal.
fn parse_number(raw: &str, is_hex: bool, is_bin: bool) -> Result<TokenKind, String> {
    let lower = raw.to_ascii_lowercase();
    let is_float =
        if is_hex { lower.contains('.') || lower.contains('p') } else { !is_bin && (lower.contains('.') || lower.contains('e')) };
    if is_float {
        let (body, suffix) = if !is_hex && (lower.ends_with("bf")) {
            (&lower[..lower.len() - 2], FloatSuffix::Bf)
        } else if lower.ends_with('f') && !is_hex {
            (&lower[..lower.len() - 1], FloatSuffix::F)
        } else if lower.ends_with('h') {
            (&lower[..lower.len() - 1], FloatSuffix::H)
        } else if is_hex && lower.ends_with('f') && lower.contains('p') {
            (&lower[..lower.len() - 1], FloatSuffix::F)
        } else {
            (&lower[..], FloatSuffix::None)
        };
        let kind = match suffix {
            FloatSuffix::H => gpu_math::FloatKind::F16,
            FloatSuffix::Bf => gpu_math::FloatKind::BF16,
            FloatSuffix::F | FloatSuffix::None => gpu_math::FloatKind::F32,
        };
        // The literal's value is its digits rounded once to its own type
        // (through f64 first, a half literal could be off by one ulp).
        let value = if is_hex {
            gpu_math::round_f64_to(kind, parse_hex_float(body)?) as f64
        } else {
            gpu_math::decimal_to_kind(kind, body).ok_or_else(|| "malformed floating-point number".to_string())? as f64
        };
        return Ok(TokenKind::Float { value, suffix });
    }
    // Integer: split digits from suffix.
    let (digits_start, radix) = if is_hex {
        (2, 16)
    } else if is_bin {
        (2, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (1, 8)
    } else {
        (0, 10)
    };
    let rest = &lower[digits_start..];
    let split = rest.find(|c: char| !c.is_digit(radix)).unwrap_or(rest.len());
    let (digits, suf) = rest.split_at(split);
    // A decimal integer followed by `f`/`h` (like `1f`) is not valid C++.
    let suffix = match suf {
        "" => IntSuffix::default(),
        "u" => IntSuffix { unsigned: true, long: false },
        "l" | "ll" => IntSuffix { unsigned: false, long: true },
        "ul" | "lu" | "ull" | "llu" => IntSuffix { unsigned: true, long: true },
        other => return Err(format!("unknown suffix `{other}`")),
    };
    if digits.is_empty() && radix != 8 {
        return Err("no digits".into());
    }
    let value =
        if digits.is_empty() { 0 } else { u64::from_str_radix(digits, radix).map_err(|_| "too large for a 64-bit integer".to_string())? };
    Ok(TokenKind::Int { value, suffix, decimal: radix == 10 })
}

fn parse_hex_float(body: &str) -> Result<f64, String> {
    let body = body.trim_start_matches("0x");
    let (mant, exp) = body.split_once('p').ok_or("hex float needs a `p` exponent")?;
    let exp: i32 = exp.parse().map_err(|_| "bad exponent".to_string())?;
    let (int_part, frac_part) = mant.split_once('.').unwrap_or((mant, ""));
    let mut v = 0f64;
    for c in int_part.chars() {
        v = v * 16.0 + c.to_digit(16).ok_or("bad hex digit")? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        v += c.to_digit(16).ok_or("bad hex digit")? as f64 * scale;
        scale /= 16.0;
    }
    Ok(v * 2f64.powi(exp.clamp(-2000, 2000)))
}

/// The longest punctuator at the start of `s`.
fn punct_at(s: &[u8]) -> Option<(Punct, usize)> {
    use Punct::*;
    let c0 = *s.first()?;
    let c1 = *s.get(1).unwrap_or(&0);
    let c2 = *s.get(2).unwrap_or(&0);
    let three = match (c0, c1, c2) {
        (b'<', b'<', b'=') => Some(ShlEq),
        (b'>', b'>', b'=') => Some(ShrEq),
        (b'.', b'.', b'.') => Some(Ellipsis),
        _ => None,
    };
    if let Some(p) = three {
        return Some((p, 3));
    }
    let two = match (c0, c1) {
        (b'-', b'>') => Some(Arrow),
        (b':', b':') => Some(ColonColon),
        (b'+', b'=') => Some(PlusEq),
        (b'-', b'=') => Some(MinusEq),
        (b'*', b'=') => Some(StarEq),
        (b'/', b'=') => Some(SlashEq),
        (b'%', b'=') => Some(PercentEq),
        (b'&', b'=') => Some(AmpEq),
        (b'|', b'=') => Some(PipeEq),
        (b'^', b'=') => Some(CaretEq),
        (b'<', b'<') => Some(Shl),
        (b'>', b'>') => Some(Shr),
        (b'=', b'=') => Some(EqEq),
        (b'!', b'=') => Some(NotEq),
        (b'<', b'=') => Some(Le),
        (b'>', b'=') => Some(Ge),
        (b'&', b'&') => Some(AndAnd),
        (b'|', b'|') => Some(OrOr),
        (b'+', b'+') => Some(PlusPlus),
        (b'-', b'-') => Some(MinusMinus),
        (b'#', b'#') => Some(HashHash),
        _ => None,
    };
    if let Some(p) = two {
        return Some((p, 2));
    }
    let one = match c0 {
        b'(' => LParen,
        b')' => RParen,
        b'[' => LBracket,
        b']' => RBracket,
        b'{' => LBrace,
        b'}' => RBrace,
        b';' => Semi,
        b',' => Comma,
        b'.' => Dot,
        b'?' => Question,
        b':' => Colon,
        b'+' => Plus,
        b'-' => Minus,
        b'*' => Star,
        b'/' => Slash,
        b'%' => Percent,
        b'&' => Amp,
        b'|' => Pipe,
        b'^' => Caret,
        b'~' => Tilde,
        b'!' => Bang,
        b'=' => Eq,
        b'<' => Lt,
        b'>' => Gt,
        b'#' => Hash,
        _ => return None,
    };
    Some((one, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        let mut d = Diagnostics::new();
        let toks = lex(FileId(0), src, &mut d);
        assert!(!d.has_errors(), "{:?}", d.items);
        toks.into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn numbers() {
        let k = kinds("1 0x1Fu 2.5f 1e3 .5h 10ul 07 1.0bf 0x1p4");
        assert_eq!(k[0], TokenKind::Int { value: 1, suffix: IntSuffix::default(), decimal: true });
        assert_eq!(k[1], TokenKind::Int { value: 31, suffix: IntSuffix { unsigned: true, long: false }, decimal: false });
        assert_eq!(k[2], TokenKind::Float { value: 2.5, suffix: FloatSuffix::F });
        assert_eq!(k[3], TokenKind::Float { value: 1000.0, suffix: FloatSuffix::None });
        assert_eq!(k[4], TokenKind::Float { value: 0.5, suffix: FloatSuffix::H });
        assert_eq!(k[5], TokenKind::Int { value: 10, suffix: IntSuffix { unsigned: true, long: true }, decimal: true });
        assert_eq!(k[6], TokenKind::Int { value: 7, suffix: IntSuffix::default(), decimal: false });
        assert_eq!(k[7], TokenKind::Float { value: 1.0, suffix: FloatSuffix::Bf });
        assert_eq!(k[8], TokenKind::Float { value: 16.0, suffix: FloatSuffix::None });
    }

    #[test]
    fn line_flags_and_splices() {
        let mut d = Diagnostics::new();
        let toks = lex(FileId(0), "#define A \\\n  1\nB // c\n/* x\n */ C", &mut d);
        let starts: Vec<bool> = toks.iter().map(|t| t.line_start).collect();
        // '#', define, A, 1, B, C, EOF
        assert_eq!(starts, vec![true, false, false, false, true, true, false]);
    }

    #[test]
    fn unterminated_things_are_errors_not_panics() {
        for src in ["/* abc", "\"abc", "'a", "@", "\u{1F600}"] {
            let mut d = Diagnostics::new();
            let toks = lex(FileId(0), src, &mut d);
            assert!(d.has_errors(), "{src}");
            assert_eq!(toks.last().unwrap().kind, TokenKind::Eof);
        }
    }

    /// Numbers that are no literal stay preprocessing numbers: macros may
    /// paste or stringify them; the preprocessor reports any that are left.
    #[test]
    fn malformed_numbers_are_kept_as_preprocessing_numbers() {
        for src in ["0x", "1e+", "8bit", "3.5.2"] {
            let mut d = Diagnostics::new();
            let toks = lex(FileId(0), src, &mut d);
            assert!(!d.has_errors(), "{src}");
            assert!(matches!(&toks[0].kind, TokenKind::BadNumber(b) if &*b.raw == src), "{src}: {:?}", toks[0].kind);
        }
    }

    #[test]
    fn punctuation_is_longest_match() {
        let k = kinds("a>>=b<<c->d::e...");
        assert!(k.contains(&TokenKind::Punct(Punct::ShrEq)));
        assert!(k.contains(&TokenKind::Punct(Punct::Shl)));
        assert!(k.contains(&TokenKind::Punct(Punct::Arrow)));
        assert!(k.contains(&TokenKind::Punct(Punct::ColonColon)));
        assert!(k.contains(&TokenKind::Punct(Punct::Ellipsis)));
    }
}
