//! Text that reaches a terminal: every character that is not printable
//! (C0 and C1 controls, DEL, bidirectional overrides) is shown escaped, so
//! a source line, a capture's title or a kernel's name can never move the
//! cursor, set the window title, change colours or hide text.

use std::borrow::Cow;

/// Whether `c` must be escaped before it is printed. Newlines and tabs are
/// layout, not controls, when `layout` is true.
fn needs_escape(c: char, layout: bool) -> bool {
    match c {
        '\n' | '\t' => !layout,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        // Bidirectional overrides and isolates reorder what is shown.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

fn escape(s: &str, layout: bool) -> Cow<'_, str> {
    if !s.chars().any(|c| needs_escape(c, layout)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !needs_escape(c, layout) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

/// `s` with every control character escaped (`\x1b`, `\u{9b}`); newlines
/// and tabs are kept. For multi-line text printed as it is.
pub fn printable(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// `s` on one line: newlines and tabs escaped too. For names and titles.
pub fn printable_line(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_keeps_text() {
        assert_eq!(printable("plain é ✓"), "plain é ✓");
        assert_eq!(printable("a\x1b]0;title\x07b"), "a\\x1b]0;title\\x07b");
        assert_eq!(printable("x\u{9b}31m\u{7f}"), "x\\u{9b}31m\\x7f");
        assert_eq!(printable("l1\n\tl2"), "l1\n\tl2");
        assert_eq!(printable_line("l1\nl2\r"), "l1\\x0al2\\x0d");
        assert_eq!(printable("\u{202e}evil"), "\\u{202e}evil");
    }
}
