//! The Metal Shading Language front end: source text to a checked program.
//!
//! Pipeline: [`preprocess`] (macros, conditionals, includes) → [`parse`]
//! (AST with spans) → [`check`] (names, types, overloads, templates). Each
//! stage collects [`diag::Diagnostic`]s instead of stopping at the first.

pub mod diag;
pub mod lex;
pub mod preprocess;
pub mod source;
pub mod token;
pub mod ast;
pub mod types;
