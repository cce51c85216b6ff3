//! Mistakes of a first hour that a compiler explains badly: a whole
//! `kernel void f(...) { ... }` pasted into a file that holds only a body,
//! `printf` (Metal has none), a `×` or a curly quote pasted from a PDF, an
//! `#include` in the body. They are found in the file's text before it is
//! compiled, and reported as typed diagnostics (each with its own code),
//! pointing at the place, saying what to do.

use crate::check::{book_call, build_input, puzzle_kernel};
use crate::{split_source, Puzzle};
use msl::diag::Diagnostic;
use msl::source::{SourceMap, Span};

/// `kernel void …` in a body file.
pub const CODE_WHOLE_KERNEL: &str = "B0001";
/// `printf`, `std::cout`: Metal has no console.
pub const CODE_PRINTF: &str = "B0002";
/// A character that is not ASCII outside comments.
pub const CODE_NOT_ASCII: &str = "B0003";
/// `#include` in a body: MLX includes the Metal library itself.
pub const CODE_INCLUDE: &str = "B0004";

/// What a piece of code is: an identifier, another ASCII character, or a
/// character that is not ASCII, with its byte range in the text.
#[derive(Debug, PartialEq)]
enum Piece<'a> {
    Word(&'a str),
    Punct(char),
    Wide(char),
}

/// The pieces of `text` outside comments and string literals, from byte
/// `from` on, with their byte offsets.
fn pieces(text: &str, from: usize) -> Vec<(usize, Piece<'_>)> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = from;
    while i < text.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
            continue;
        }
        if let Some(inner) = rest.strip_prefix("/*") {
            i += inner.find("*/").map_or(rest.len(), |e| e + 4);
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        if c == '"' || c == '\'' {
            // A literal: to its closing quote on the same line.
            let mut j = i + 1;
            while j < text.len() && b[j] != c as u8 && b[j] != b'\n' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            i = (j + 1).min(text.len());
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let len = rest.find(|d: char| !(d.is_ascii_alphanumeric() || d == '_')).unwrap_or(rest.len());
            out.push((i, Piece::Word(&rest[..len])));
            i += len;
            continue;
        }
        if !c.is_ascii() {
            out.push((i, Piece::Wide(c)));
        } else if !c.is_ascii_whitespace() {
            out.push((i, Piece::Punct(c)));
        }
        i += c.len_utf8();
    }
    out
}

/// Whether `text` declares a kernel (`kernel` or `[[kernel]]` outside
/// comments): a whole Metal source, not a puzzle's body.
pub fn declares_kernel(text: &str) -> bool {
    pieces(text, 0).iter().any(|(_, p)| *p == Piece::Word("kernel"))
}

/// The ASCII a look-alike character stands for, and where it comes from.
fn look_alike(c: char) -> Option<(&'static str, &'static str)> {
    Some(match c {
        '×' | '·' | '∗' => ("*", "a multiplication sign"),
        '÷' | '∕' => ("/", "a division sign"),
        '−' | '–' | '—' | '‐' => ("-", "a typographic dash or minus"),
        '‘' | '’' | '′' => ("'", "a curly quote"),
        '“' | '”' | '″' => ("\"", "a curly quote"),
        '≤' => ("<=", "a less-or-equal sign"),
        '≥' => (">=", "a greater-or-equal sign"),
        '≠' => ("!=", "a not-equal sign"),
        '\u{a0}' | '\u{2009}' | '\u{202f}' => (" ", "a non-breaking or thin space"),
        '\u{200b}' | '\u{feff}' => ("", "an invisible zero-width character"),
        '…' => ("...", "an ellipsis character"),
        _ => return None,
    })
}

/// The beginner mistakes in a workspace file's body (after the header
/// marker), as diagnostics in a source map holding the file. `None` when
/// there is none (the file then goes to the compiler).
pub fn check(puzzle: &Puzzle, file_name: &str, file_text: &str) -> Option<(SourceMap, Vec<Diagnostic>)> {
    let (_, body) = split_source(file_text);
    let from = file_text.len() - body.len();
    let mut sources = SourceMap::new();
    let file = sources.add(file_name, file_text);
    let span = |at: usize, len: usize| Span::new(file, at as u32, (at + len) as u32);
    let line_of = |at: usize| file_text[..at].matches('\n').count() + 1;
    let ps = pieces(file_text, from);
    let mut out = Vec::new();
    let mut wide_seen = 0;
    for (k, (at, piece)) in ps.iter().enumerate() {
        let at = *at;
        let next = |n: usize| ps.get(k + n).map(|(_, p)| p);
        match piece {
            Piece::Word("kernel") if out.iter().all(|d: &Diagnostic| d.code != Some(CODE_WHOLE_KERNEL)) => {
                let mut d = Diagnostic::error(span(at, 6), "this file holds only the kernel's body, not a whole kernel")
                    .code(CODE_WHOLE_KERNEL)
                    .label("a kernel declaration in the body");
                if let Some(sig) = signature(puzzle, file_text) {
                    d = d.note(format!("MLX writes the kernel around your code; it is:\n{sig}"));
                }
                out.push(
                    d.help("keep only the statements between the braces: delete this line (up to its `{`) and the matching `}` at the end"),
                );
            }
            Piece::Word(w @ ("printf" | "puts" | "NSLog")) if next(1) == Some(&Piece::Punct('(')) => {
                let line = line_of(at);
                let args = printf_args(&file_text[at..]);
                let what = if args.is_empty() { "i".to_string() } else { args.join(", ") };
                out.push(
                    Diagnostic::error(span(at, w.len()), format!("Metal has no `{w}`: a GPU kernel cannot print"))
                        .code(CODE_PRINTF)
                        .label("not available in Metal")
                        .help(format!(
                            "delete this call and print the values with the debugger, for one thread each time it reaches line {line}: `metal-puzzles debug {} --thread 0 --print '{line}: {what}'`",
                            puzzle.number
                        )),
                );
            }
            Piece::Word("std") if next(1) == Some(&Piece::Punct(':')) && matches!(next(3), Some(Piece::Word("cout" | "cerr"))) => {
                let line = line_of(at);
                out.push(
                    Diagnostic::error(span(at, 3), "Metal has no `std::cout`: a GPU kernel cannot print")
                        .code(CODE_PRINTF)
                        .label("not available in Metal")
                        .help(format!(
                            "delete this line and print values with the debugger: `metal-puzzles debug {} --thread 0 --print '{line}: i'`",
                            puzzle.number
                        )),
                );
            }
            Piece::Punct('#') if next(1) == Some(&Piece::Word("include")) => {
                out.push(
                    Diagnostic::error(span(at, 8), "`#include` in the kernel's body")
                        .code(CODE_INCLUDE)
                        .label("inside the kernel")
                        .help("delete this line: MLX includes <metal_stdlib> and `using namespace metal;` for every kernel, and your file is the body of one"),
                );
            }
            Piece::Wide(c) => {
                wide_seen += 1;
                if wide_seen > 5 {
                    continue;
                }
                let (message, help) = match look_alike(*c) {
                    Some(("", what)) => (
                        format!("{what} (U+{:04X}) in the code", *c as u32),
                        "delete it (it often comes with text copied from a PDF or a web page)".to_string(),
                    ),
                    Some((ascii, what)) => (
                        format!("`{c}` is {what}, not Metal (U+{:04X})", *c as u32),
                        format!("write `{ascii}` instead (such characters come with text copied from a PDF or a web page)"),
                    ),
                    None => (
                        format!("`{c}` (U+{:04X}) is not ASCII: Metal code outside comments is plain ASCII", *c as u32),
                        "retype it with the keyboard, or move it into a comment".to_string(),
                    ),
                };
                out.push(Diagnostic::error(span(at, c.len_utf8()), message).code(CODE_NOT_ASCII).label("here").help(help));
            }
            _ => {}
        }
    }
    (!out.is_empty()).then_some((sources, out))
}

/// The argument expressions of a `printf("…", a, b)` call after its format
/// string (empty when they are not simple: nested calls, several lines).
fn printf_args(call: &str) -> Vec<String> {
    let Some(open) = call.find('(') else { return Vec::new() };
    let line_end = call.find('\n').unwrap_or(call.len());
    let Some(close) = call[..line_end].rfind(')').filter(|&c| c > open) else { return Vec::new() };
    let inner = &call[open + 1..close];
    let Some(after) = inner.rfind('"').map(|q| &inner[q + 1..]) else { return Vec::new() };
    let args: Vec<String> = after.split(',').map(str::trim).filter(|a| !a.is_empty()).map(str::to_string).collect();
    if args.iter().any(|a| a.contains(['(', ')', '"', '\''])) {
        return Vec::new();
    }
    args
}

/// The signature of the kernel MLX generates around the body, for the
/// puzzle's first test: `[[kernel]] void …(…) {`, `…your code…`, `}`.
pub fn signature(puzzle: &Puzzle, file_text: &str) -> Option<String> {
    if !puzzle.stages.is_empty() {
        return None;
    }
    let (header, _) = split_source(file_text);
    let case = puzzle.tests.first()?;
    let inputs: Vec<arrays::Array> = case.inputs.iter().map(|s| build_input(s, None)).collect();
    let generated = puzzle_kernel(puzzle, &header, "").ok()?.generate_for(&book_call(puzzle, case, &inputs)).ok()?;
    signature_of(&generated.source)
}

/// The kernel signature lines of a generated source (the `[[kernel]]` line
/// through the opening brace), with the body elided.
pub fn signature_of(src: &str) -> Option<String> {
    let start = src.find("[[kernel]]")?;
    let end = src[start..].find(") {")? + start + 3;
    Some(format!("{}\n    ...your code...\n}}\n", &src[start..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(slug: &str, body: &str) -> Vec<&'static str> {
        let p = crate::find(slug).unwrap();
        check(p, "f.metal", body).map(|(_, d)| d.iter().filter_map(|d| d.code).collect()).unwrap_or_default()
    }

    #[test]
    fn finds_each_mistake_and_nothing_in_comments() {
        assert_eq!(codes("map", "kernel void f(device float* out [[buffer(0)]]) {\n}\n"), [CODE_WHOLE_KERNEL]);
        assert_eq!(codes("map", "uint i = 0;\nprintf(\"%d\", i);\n"), [CODE_PRINTF]);
        assert_eq!(codes("map", "out[0] = a[0] × 2;\n"), [CODE_NOT_ASCII]);
        assert_eq!(codes("map", "#include <metal_stdlib>\nout[0] = 1;\n"), [CODE_INCLUDE]);
        assert!(codes("map", "// a kernel × printf(\"x\") ≤\nout[0] = 1; /* kernel */\n").is_empty());
        assert!(codes("map", "uint local_i = thread_position_in_grid.x;\nout[local_i] = a[local_i] + 10;\n").is_empty());
    }

    #[test]
    fn printf_help_names_the_values() {
        let p = crate::find("map").unwrap();
        let (_, d) = check(p, "f.metal", "uint i = 0;\nprintf(\"%d %f\", i, a[i]);\n").unwrap();
        assert!(d[0].help[0].contains("--print '2: i, a[i]'"), "{:?}", d[0].help);
    }

    #[test]
    fn the_signature_is_the_one_mlx_generates() {
        let p = crate::find("map").unwrap();
        let sig = signature(p, &p.starter_file()).unwrap();
        assert!(sig.starts_with("[[kernel]] void custom_kernel_map") && sig.contains("...your code..."), "{sig}");
    }
}
