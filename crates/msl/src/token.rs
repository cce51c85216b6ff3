//! Tokens shared by the lexer, the preprocessor and the parser.

use crate::source::Span;
use std::fmt;
use std::rc::Rc;

/// Punctuators of C++ that MSL uses. `>>` is one token; the parser splits it
/// when it closes two template argument lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Punct {
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Semi,
    Comma,
    Dot,
    Arrow,
    Ellipsis,
    Question,
    Colon,
    ColonColon,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Amp,
    Pipe,
    Caret,
    Tilde,
    Bang,
    Eq,
    Lt,
    Gt,
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    PercentEq,
    AmpEq,
    PipeEq,
    CaretEq,
    Shl,
    Shr,
    ShlEq,
    ShrEq,
    EqEq,
    NotEq,
    Le,
    Ge,
    AndAnd,
    OrOr,
    PlusPlus,
    MinusMinus,
    Hash,
    HashHash,
}

impl Punct {
    pub fn as_str(self) -> &'static str {
        use Punct::*;
        match self {
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            Semi => ";",
            Comma => ",",
            Dot => ".",
            Arrow => "->",
            Ellipsis => "...",
            Question => "?",
            Colon => ":",
            ColonColon => "::",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Amp => "&",
            Pipe => "|",
            Caret => "^",
            Tilde => "~",
            Bang => "!",
            Eq => "=",
            Lt => "<",
            Gt => ">",
            PlusEq => "+=",
            MinusEq => "-=",
            StarEq => "*=",
            SlashEq => "/=",
            PercentEq => "%=",
            AmpEq => "&=",
            PipeEq => "|=",
            CaretEq => "^=",
            Shl => "<<",
            Shr => ">>",
            ShlEq => "<<=",
            ShrEq => ">>=",
            EqEq => "==",
            NotEq => "!=",
            Le => "<=",
            Ge => ">=",
            AndAnd => "&&",
            OrOr => "||",
            PlusPlus => "++",
            MinusMinus => "--",
            Hash => "#",
            HashHash => "##",
        }
    }
}

/// Suffix of an integer literal (`u`, `l`, `ul`, `ll`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct IntSuffix {
    pub unsigned: bool,
    /// `l` or `ll`: a 64-bit type in MSL.
    pub long: bool,
}

/// Suffix of a floating literal: none (float in MSL), `f`, `h` (half).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatSuffix {
    None,
    F,
    H,
    /// `bf` (bfloat), accepted by recent Metal compilers.
    Bf,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// Identifiers and keywords alike; the parser decides which is which.
    Ident(Rc<str>),
    Int {
        value: u64,
        suffix: IntSuffix,
        /// Decimal literals and hex/octal ones get different types in C++.
        decimal: bool,
    },
    Float {
        value: f64,
        suffix: FloatSuffix,
    },
    Char(u32),
    Str(Rc<str>),
    Punct(Punct),
    /// A preprocessing number that is no valid literal (`8bit`): fine as a
    /// macro argument that is pasted or stringified, an error (`problem`)
    /// once it reaches the parser or an `#if`.
    /// Boxed: rare, and two strings would make every token larger.
    BadNumber(Box<BadNumber>),
    /// End of input; always the last token.
    Eof,
}

/// The text of a preprocessing number that is no valid literal, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct BadNumber {
    pub raw: Rc<str>,
    pub problem: Rc<str>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    /// Where the token is in the user's text. For a token produced by a
    /// macro expansion, this is the macro invocation (what compilers report).
    pub span: Span,
    /// For tokens from a macro body: the token's place in the `#define`.
    pub macro_def: Option<Span>,
    /// First token on its line (the preprocessor needs this for `#`).
    pub line_start: bool,
    /// Whitespace precedes the token (`#define F(x)` vs `#define F (x)`).
    pub space_before: bool,
}

impl Token {
    pub fn new(kind: TokenKind, span: Span) -> Token {
        Token { kind, span, macro_def: None, line_start: false, space_before: false }
    }

    pub fn is_punct(&self, p: Punct) -> bool {
        matches!(self.kind, TokenKind::Punct(q) if q == p)
    }

    pub fn ident(&self) -> Option<&str> {
        match &self.kind {
            TokenKind::Ident(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_ident(&self, name: &str) -> bool {
        self.ident() == Some(name)
    }
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenKind::Ident(s) => write!(f, "{s}"),
            TokenKind::Int { value, suffix, .. } => {
                write!(f, "{value}")?;
                if suffix.unsigned {
                    write!(f, "u")?;
                }
                if suffix.long {
                    write!(f, "l")?;
                }
                Ok(())
            }
            TokenKind::Float { value, suffix } => {
                let mut s = format!("{value:?}");
                if !s.contains(['.', 'e', 'E', 'n', 'i']) {
                    s.push_str(".0");
                }
                write!(f, "{s}")?;
                match suffix {
                    FloatSuffix::None => Ok(()),
                    FloatSuffix::F => write!(f, "f"),
                    FloatSuffix::H => write!(f, "h"),
                    FloatSuffix::Bf => write!(f, "bf"),
                }
            }
            TokenKind::Char(c) => match char::from_u32(*c) {
                Some(ch) => write!(f, "{:?}", ch),
                None => write!(f, "'\\x{c:x}'"),
            },
            TokenKind::Str(s) => write!(f, "{:?}", s.as_ref()),
            TokenKind::Punct(p) => write!(f, "{}", p.as_str()),
            TokenKind::BadNumber(b) => write!(f, "{}", b.raw),
            TokenKind::Eof => write!(f, "end of file"),
        }
    }
}
