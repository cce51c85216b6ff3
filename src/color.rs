//! Whether to print in colour: `--color auto|always|never` (every
//! sub-command), the `NO_COLOR` convention (no-color.org) and whether the
//! stream is a terminal. Decided once in `main`, asked everywhere else.

use std::io::IsTerminal;
use std::sync::OnceLock;

/// The `--color` flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour on a terminal, unless `NO_COLOR` is set (and not empty) or `TERM` is `dumb`.
    Auto,
    /// Always colour, even in a pipe or under `NO_COLOR`.
    Always,
    /// Never colour.
    Never,
}

static CHOICE: OnceLock<ColorChoice> = OnceLock::new();

/// Record the flag (first call wins; `main` makes it).
pub fn set(choice: ColorChoice) {
    let _ = CHOICE.set(choice);
}

/// Whether text for a stream that `is_terminal` says is (or is not) a
/// terminal gets colour codes, given the flag and the environment.
pub fn decide(choice: ColorChoice, is_terminal: bool, no_color: Option<&str>, term: Option<&str>) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_terminal && no_color.is_none_or(str::is_empty) && term != Some("dumb"),
    }
}

fn for_stream(is_terminal: bool) -> bool {
    let choice = CHOICE.get().copied().unwrap_or(ColorChoice::Auto);
    let no_color = std::env::var("NO_COLOR").ok();
    let term = std::env::var("TERM").ok();
    decide(choice, is_terminal, no_color.as_deref(), term.as_deref())
}

/// Colour for what goes to standard output.
pub fn stdout() -> bool {
    for_stream(std::io::stdout().is_terminal())
}

/// Colour for what goes to standard error.
pub fn stderr() -> bool {
    for_stream(std::io::stderr().is_terminal())
}

/// Colour on the live screen (always a terminal).
pub fn screen() -> bool {
    for_stream(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_and_pipes_turn_it_off_unless_forced() {
        assert!(decide(ColorChoice::Auto, true, None, Some("xterm")));
        assert!(!decide(ColorChoice::Auto, false, None, Some("xterm")));
        assert!(!decide(ColorChoice::Auto, true, Some("1"), Some("xterm")));
        assert!(decide(ColorChoice::Auto, true, Some(""), Some("xterm")), "an empty NO_COLOR does not count");
        assert!(!decide(ColorChoice::Auto, true, None, Some("dumb")));
        assert!(decide(ColorChoice::Always, false, Some("1"), None));
        assert!(!decide(ColorChoice::Never, true, None, None));
    }
}
