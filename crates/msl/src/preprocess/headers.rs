//! `#include`: finding, reading and entering headers, and the headers the
//! Metal compiler provides itself.

use super::{IncludeFrame, PTok, Pp, Reader, MAX_HEADER_ENTRIES, MAX_INCLUDED_BYTES, MAX_INCLUDE_DEPTH};
use crate::diag::Diagnostic;
use crate::include::{read_header, Lookup};
use crate::lex;
use crate::source::{FileId, IncludeEdge, Span};
use crate::token::{Punct, Token, TokenKind};
use std::path::{Path, PathBuf};

/// Headers the Metal compiler provides; `#include` of these produces nothing.
/// The name the built-in declarations are shown under in messages.
const BUILTIN_DECLS_NAME: &str = "<metal_type_traits>";

/// What `<metal_type_traits>` declares as C++ templates (the traits that
/// answer questions about types are built into the checker instead).
const BUILTIN_DECLS: &str = "\
namespace metal {
template <typename T, T v>
struct integral_constant {
  static constexpr constant T value = v;
  using value_type = T;
  constexpr operator value_type() const thread { return value; }
  constexpr value_type operator()() const thread { return value; }
};
template <bool B>
using bool_constant = integral_constant<bool, B>;
using true_type = bool_constant<true>;
using false_type = bool_constant<false>;
}
";

fn is_builtin_header(name: &str) -> bool {
    name.starts_with("metal_") && unsupported_header(name).is_none()
}

/// Apple headers this simulator does not model, with the reason.
fn unsupported_header(name: &str) -> Option<&'static str> {
    if name.starts_with("MetalPerformancePrimitives/") || name == "metal_tensor" || name.starts_with("metal_tensor") {
        Some("Metal 4 tensor operations (macOS 26 SDK) are not simulated")
    } else if name.starts_with("metal_raytracing") {
        Some("ray tracing is not simulated")
    } else {
        None
    }
}

/// How a header is named in messages: relative to the main file's folder
/// when it is inside it, else its full path.
fn display_name(path: &Path, main_dir: Option<&PathBuf>) -> String {
    match main_dir.and_then(|d| path.strip_prefix(d).ok()) {
        Some(rel) => rel.display().to_string(),
        None => path.display().to_string(),
    }
}

impl Pp<'_, '_> {
    pub(super) fn include(&mut self, name: &str, dspan: Span, rest: &[Token]) {
        let (header, quoted) = match rest.first().map(|t| &t.kind) {
            Some(TokenKind::Punct(Punct::Lt)) => {
                let mut h = String::new();
                let mut closed = false;
                for t in &rest[1..] {
                    if t.is_punct(Punct::Gt) {
                        closed = true;
                        break;
                    }
                    h.push_str(&self.spell(&PTok::new(t.clone())));
                }
                if !closed {
                    self.emit(
                        Diagnostic::error(dspan, format!("missing `>` in `#{name}`")).code("E0105").help("write `#include <metal_stdlib>`"),
                    );
                    return;
                }
                (h, false)
            }
            Some(TokenKind::Str(s)) => (s.to_string(), true),
            _ => {
                self.emit(
                    Diagnostic::error(dspan, format!("`#{name}` needs a header name"))
                        .code("E0105")
                        .help("write `#include <metal_stdlib>` or `#include \"my_header.h\"`"),
                );
                return;
            }
        };
        let span = match (rest.first(), rest.last()) {
            (Some(a), Some(b)) => dspan.to(a.span.to(b.span)),
            _ => dspan,
        };
        let shown = if quoted { format!("\"{header}\"") } else { format!("<{header}>") };
        if !quoted {
            if let Some(why) = unsupported_header(&header) {
                self.emit(
                    Diagnostic::error(span, format!("unsupported header {shown}: {why}"))
                        .code(crate::diag::codes::UNSUPPORTED_HEADER)
                        .label("not supported by this simulator")
                        .note("code that needs it cannot run here; guard it with `#if __has_include(...)` to keep a fallback"),
                );
                return;
            }
            if is_builtin_header(&header) {
                self.builtin_declarations(span);
                return;
            }
        }
        if self.includes.len() >= MAX_INCLUDE_DEPTH {
            // Once is enough: a cycle hits the limit again on every path.
            if std::mem::replace(&mut self.reported_too_deep, true) {
                return;
            }
            self.emit(
                Diagnostic::error(span, format!("#include nested too deeply (more than {MAX_INCLUDE_DEPTH} levels)"))
                    .code("E0105")
                    .label("including this goes too deep")
                    .help("headers that include each other need include guards or `#pragma once`"),
            );
            return;
        }
        if let Some(captured) = self.captured.clone() {
            let from = self.sources.file(dspan.file).name.clone();
            let Some(entry) = captured.find(&from, &header, quoted) else {
                self.emit(
                    Diagnostic::error(span, format!("cannot find header {shown}: the capture holds no such header included from `{from}`"))
                        .code("E0105")
                        .label("not in the capture")
                        .note("a capture replays the headers it recorded; the source or its macros differ from the recorded run"),
                );
                return;
            };
            let key = PathBuf::from(format!("<captured>/{}", entry.name));
            let file = match self.loaded.get(&key) {
                Some(&f) => f,
                None => {
                    let f = self.sources.add_included(entry.name.clone(), entry.text.clone(), span);
                    self.loaded.insert(key, f);
                    f
                }
            };
            self.enter_header(file, header, quoted, dspan.file, span);
            return;
        }
        let including_dir = self.file_dirs.get(&dspan.file).cloned();
        let path = match self.roots.lookup(&header, quoted, including_dir.as_deref()) {
            Lookup::Found(path) => path,
            Lookup::Refused(path) => {
                self.emit(
                    Diagnostic::error(span, format!("refusing to include {shown}: `{}` is outside the allowed folders", path.display()))
                        .code("E0105")
                        .label("outside the source folder and the `-I` roots")
                        .note("headers are read only from the folder of the file being compiled and from `-I` folders")
                        .help("add the header's root folder with `-I DIR`"),
                );
                return;
            }
            Lookup::NotFound(searched) => {
                let mut d = Diagnostic::error(span, format!("cannot find header {shown}")).code("E0105").label("no such header");
                if self.roots.is_empty() {
                    d = d.note("this source has no folder and no `-I` roots were given, so only Metal's built-in headers (`<metal_stdlib>`, ...) exist");
                } else {
                    let list: Vec<String> = searched.iter().map(|p| format!("`{}`", p.display())).collect();
                    d = d.note(if list.is_empty() {
                        "no folder was searched".to_string()
                    } else {
                        format!("searched {}", list.join(", "))
                    });
                }
                self.emit(d.help("give the folder the path is relative to with `-I DIR` (e.g. the library's repository root)"));
                return;
            }
        };
        let file = match self.loaded.get(&path) {
            Some(&f) => f,
            None => {
                let text = match read_header(&path) {
                    Ok(t) if self.included_bytes + t.len() <= MAX_INCLUDED_BYTES => t,
                    Ok(_) => {
                        self.emit(
                            Diagnostic::error(span, format!("cannot include {shown}: headers total more than {MAX_INCLUDED_BYTES} bytes"))
                                .code("E0105"),
                        );
                        return;
                    }
                    Err(e) => {
                        self.emit(Diagnostic::error(span, format!("cannot read header {shown}: {e}")).code("E0105").label("found here"));
                        return;
                    }
                };
                self.included_bytes += text.len();
                let display = display_name(&path, self.file_dirs.get(&self.main));
                let f = self.sources.add_included(display, text, span);
                if let Some(dir) = path.parent() {
                    self.file_dirs.insert(f, dir.to_path_buf());
                }
                self.loaded.insert(path, f);
                f
            }
        };
        self.enter_header(file, header, quoted, dspan.file, span);
    }

    /// Continue reading in `file`, the header `spelled` that `from` includes.
    fn enter_header(&mut self, file: FileId, spelled: String, quoted: bool, from: FileId, span: Span) {
        if self.once.contains(&file) {
            self.sources.record_include(IncludeEdge { from, spelled, quoted, to: file });
            return;
        }
        // Every entry counts: a header that includes itself twice without a
        // guard would otherwise be read 2^200 times before the depth limit.
        self.header_entries += 1;
        if self.header_entries > MAX_HEADER_ENTRIES {
            if self.header_entries == MAX_HEADER_ENTRIES + 1 {
                self.emit(
                    Diagnostic::error(span, format!("headers were included more than {MAX_HEADER_ENTRIES} times in all"))
                        .code("E0105")
                        .label("one inclusion too many")
                        .help("headers that include themselves or each other need include guards or `#pragma once`"),
                );
            }
            return;
        }
        self.sources.record_include(IncludeEdge { from, spelled, quoted, to: file });
        let toks = lex::lex(file, &self.sources.file(file).text, self.diags);
        let reader = std::mem::replace(&mut self.reader, Reader::new(toks));
        self.includes.push(IncludeFrame { reader, conds_len: self.conds.len() });
    }

    /// The part of Metal's headers that is ordinary C++ (`integral_constant`
    /// and friends), read once, the first time a built-in header is
    /// included, as a header file of its own.
    fn builtin_declarations(&mut self, span: Span) {
        let key = PathBuf::from(BUILTIN_DECLS_NAME);
        if self.loaded.contains_key(&key) {
            return;
        }
        let f = self.sources.add_included(BUILTIN_DECLS_NAME, BUILTIN_DECLS, span);
        self.loaded.insert(key, f);
        let toks = lex::lex(f, &self.sources.file(f).text, self.diags);
        let reader = std::mem::replace(&mut self.reader, Reader::new(toks));
        self.includes.push(IncludeFrame { reader, conds_len: self.conds.len() });
    }

    /// `__has_include`: a built-in header, or a file the include search finds.
    pub(super) fn header_exists(&self, name: &str, quoted: bool, from: FileId) -> bool {
        if !quoted && is_builtin_header(name) {
            return true;
        }
        if !quoted && unsupported_header(name).is_some() {
            return false;
        }
        if let Some(captured) = &self.captured {
            return captured.find(&self.sources.file(from).name, name, quoted).is_some();
        }
        matches!(self.roots.lookup(name, quoted, self.file_dirs.get(&from).map(PathBuf::as_path)), Lookup::Found(_))
    }
}
