//! Colour and emphasis of the book's text, as rustc and rustlings use them:
//! a verdict that passes is green, one that fails red, a target missed
//! yellow. Every function takes `color`: the caller decides (terminal,
//! `NO_COLOR`, `--color`), and without it the text is unchanged.

/// What a piece of text says, which decides its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Passed, solved, ✓.
    Good,
    /// Failed, ✗, errors.
    Bad,
    /// Not solved yet, edited but not checked.
    Warn,
    /// Headings and titles.
    Strong,
    /// Hints, notes, help.
    Hint,
    /// What matters less: not started, dots, rules.
    Dim,
}

impl Tone {
    fn sgr(self) -> &'static str {
        match self {
            Tone::Good => "1;32",
            Tone::Bad => "1;31",
            Tone::Warn => "1;33",
            Tone::Strong => "1",
            Tone::Hint => "36",
            Tone::Dim => "2",
        }
    }
}

/// `text` in `tone` when `color`, else unchanged.
pub fn paint(color: bool, tone: Tone, text: &str) -> String {
    if color && !text.is_empty() {
        format!("\x1b[{}m{text}\x1b[0m", tone.sgr())
    } else {
        text.to_string()
    }
}

/// The number of columns `text` takes on a terminal: colour codes take none.
pub fn visible_width(text: &str) -> usize {
    let mut n = 0;
    let mut escape = false;
    for c in text.chars() {
        match (escape, c) {
            (false, '\x1b') => escape = true,
            (true, c) if c.is_ascii_alphabetic() => escape = false,
            (true, _) => {}
            (false, _) => n += 1,
        }
    }
    n
}

/// Text without its colour codes.
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut escape = false;
    for c in text.chars() {
        match (escape, c) {
            (false, '\x1b') => escape = true,
            (true, c) if c.is_ascii_alphabetic() => escape = false,
            (true, _) => {}
            (false, c) => out.push(c),
        }
    }
    out
}

/// Wrap one line (which may hold colour codes) into lines of at most
/// `cols` visible columns, breaking at spaces where it can (a word longer
/// than a line is split). Continuation lines start with as many spaces as
/// the line's own indentation plus `hang`, so a wrapped `= help:` or list
/// item stays readable. Colours open at a break are closed at the end of
/// the line and reopened on the next. Nothing is ever dropped.
pub fn wrap_line(line: &str, cols: usize, hang: usize) -> Vec<String> {
    let cols = cols.max(8);
    if visible_width(line) <= cols {
        return vec![line.to_string()];
    }
    let indent = strip(line).chars().take_while(|c| *c == ' ').count();
    let pad = (indent + hang).min(cols / 2);
    // Tokens: (text, visible width, is a space, the colour codes in force after it).
    let mut out = Vec::new();
    let mut current = String::new();
    let mut width = 0usize;
    // The last SGR sequence in force (reopened after a break).
    let mut active = String::new();
    let mut last_space: Option<(usize, usize, String)> = None; // (byte index in current, width there, colour then)
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            let mut seq = String::from(c);
            for d in chars.by_ref() {
                seq.push(d);
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
            active = if seq == "\x1b[0m" { String::new() } else { format!("{active}{seq}") };
            current.push_str(&seq);
            continue;
        }
        if width + 1 > cols {
            // Break at the last space of this line when there is one far
            // enough in, else here.
            let (head, rest, colour) = match last_space.take().filter(|(_, w, _)| *w > pad) {
                Some((at, _, colour)) => {
                    let rest = current[at..].trim_start_matches(' ').to_string();
                    (current[..at].trim_end().to_string(), rest, colour)
                }
                None => (std::mem::take(&mut current), String::new(), active.clone()),
            };
            out.push(if colour.is_empty() { head } else { format!("{head}\x1b[0m") });
            current = format!("{}{colour}{rest}", " ".repeat(pad));
            width = visible_width(&current);
        }
        if c == ' ' && width > pad {
            last_space = Some((current.len(), width, active.clone()));
        }
        current.push(c);
        width += 1;
    }
    if visible_width(&current) > 0 || out.is_empty() {
        out.push(current);
    }
    out
}

/// Every line of `text` wrapped with [`wrap_line`].
pub fn wrap_text(text: &str, cols: usize, hang: usize) -> Vec<String> {
    text.lines().flat_map(|l| wrap_line(l, cols, hang)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paint_only_with_color() {
        assert_eq!(paint(false, Tone::Good, "ok"), "ok");
        assert_eq!(paint(true, Tone::Bad, "no"), "\x1b[1;31mno\x1b[0m");
        assert_eq!(visible_width(&paint(true, Tone::Bad, "no")), 2);
        assert_eq!(strip(&paint(true, Tone::Bad, "no")), "no");
    }

    #[test]
    fn wrapping_keeps_every_word_and_fits() {
        let l = "   = help: read a pixel only when 0 <= x < W and 0 <= y < H, and use signed ints for the positions";
        let w = wrap_line(l, 40, 2);
        assert!(w.len() > 1 && w.iter().all(|x| visible_width(x) <= 40), "{w:#?}");
        assert!(w[1].starts_with("     "), "{w:#?}");
        let words: Vec<&str> = l.split_whitespace().collect();
        let back: Vec<String> = w.iter().flat_map(|x| x.split_whitespace().map(str::to_string).collect::<Vec<_>>()).collect();
        assert_eq!(back, words);
        // A word longer than a line is split, not lost.
        let long = "x".repeat(100);
        let w = wrap_line(&long, 30, 0);
        assert_eq!(w.concat().replace(' ', ""), long);
        assert!(w.iter().all(|x| visible_width(x) <= 30));
    }

    #[test]
    fn wrapping_carries_colour_over_the_break() {
        let l = paint(true, Tone::Bad, "error: a long red message that has to wrap somewhere");
        let w = wrap_line(&l, 20, 0);
        assert!(w.iter().all(|x| visible_width(x) <= 20), "{w:#?}");
        assert!(w[1].contains("\x1b[1;31m"), "{w:#?}");
        assert_eq!(strip(&w.join(" ")), strip(&l));
    }
}
