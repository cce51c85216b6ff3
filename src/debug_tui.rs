//! The interactive debugger's screen (`metal-puzzles debug TARGET` without
//! `--print`): draws a `debug_model::Debugger` with ratatui and turns keys
//! and typed commands into `Command`s. All the stepping logic is in the
//! model; this file only draws and reads keys.

use crate::debug::Target;
use crate::debug_model::{parse_command, record, Command, Debugger, Effect, Failed, Recording};
use crate::{EXIT_BAD_RESULT, EXIT_CANNOT_START, EXIT_OK};
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::{execute, terminal};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::{Frame, Terminal};
use std::io::IsTerminal;

/// The key bar (the full list is in `help`).
const KEYS: &str = "s step  n next  f finish  c continue  p back  P rev-cont  b break  r run to  ↑↓ line  J/K scroll  t thread  m simd  g group  w watch  l lanes  e finding  : cmd  R restart  ? help  q quit";

/// The help screen: every key and command, one per line (fits 80x24).
const HELP_LINES: &[&str] = &[
    "s / →      step (into calls)          n   next (over calls)",
    "f          finish the function        c   continue to a breakpoint or finding",
    "p / ←      step back                  P   back to the previous breakpoint",
    "b          breakpoint on the marked line (again: remove it)",
    "r          run to the marked line     ↑↓ PgUp PgDn   move the mark",
    "J / K      scroll the right pane      R   restart (re-reads the source)",
    "t / m / g  another thread, SIMD-group or threadgroup (same place)",
    "w          watch an expression        l   an expression in all 32 lanes",
    "e          go to finding N (its thread, where it happens)",
    ":          type a command:",
    "  break [FILE:]LINE [thread X,Y,Z] [if EXPR]   clear [FILE:]LINE",
    "  until [FILE:]LINE    watch EXPR    unwatch N    lanes EXPR | lanes",
    "  findings on|off (findings stop `continue`; on by default)",
    "  finding N    thread X,Y,Z    simd N    group X,Y,Z    restart",
    "FILE:LINE names a header the kernel includes (`break softmax.h:70`).",
    "Values: ? never written (garbage on a GPU), undefined (a SIMD-group",
    "function read an inactive lane), — a lane not running the line.",
    "q / Esc    quit                       any key closes this help",
];

/// Restores the terminal even if drawing fails or panics.
struct Screen;

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
        let _ = execute!(std::io::stdout(), terminal::LeaveAlternateScreen, crossterm::cursor::Show);
    }
}

/// What the screen shows besides the model: the right pane's scroll.
#[derive(Default)]
struct View {
    state_scroll: u16,
}

/// What the bottom line is doing.
enum Input {
    Keys,
    /// A command being typed (the text after `:`).
    Typing(String),
}

pub fn run(target: Target, thread: [u32; 3], limit: usize) -> u8 {
    // Resolve and run the target first, so a bad one is an ordinary error.
    let first = match record(&target, thread, &[], limit, false) {
        Ok(r) => r,
        Err(Failed::Usage(e)) => {
            eprintln!("error: {e}");
            return EXIT_CANNOT_START;
        }
        Err(Failed::Kernel(e)) => {
            eprint!("{e}");
            return EXIT_BAD_RESULT;
        }
    };
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!(
            "error: the interactive debugger needs a terminal; for scripts, print values with `--thread X,Y,Z --print 'LINE: expr, …'`"
        );
        return EXIT_CANNOT_START;
    }
    let mut dbg = Debugger::new(thread);
    dbg.load(first);
    dbg.message = opening_message(&dbg.rec);
    match interact(&target, &mut dbg, limit) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("error: the terminal failed: {e}");
            EXIT_CANNOT_START
        }
    }
}

fn opening_message(rec: &Recording) -> String {
    if !rec.thread_ran {
        return "this thread is not in the dispatch: pick another with `t`".into();
    }
    if rec.stops.is_empty() {
        return "the thread ran no statement".into();
    }
    "s steps, n steps over calls, c continues to a breakpoint (b sets one on the marked line); ? for all commands".into()
}

fn interact(target: &Target, dbg: &mut Debugger, limit: usize) -> std::io::Result<()> {
    terminal::enable_raw_mode()?;
    let _screen = Screen;
    execute!(std::io::stdout(), terminal::EnterAlternateScreen, crossterm::cursor::Hide)?;
    let mut term = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    let mut input = Input::Keys;
    let mut view = View::default();
    loop {
        term.draw(|f| draw(f, dbg, &input, &view))?;
        let Event::Key(key) = event::read()? else { continue };
        if key.kind != KeyEventKind::Press {
            continue;
        }
        // The help screen: any key closes it.
        if dbg.show_help {
            dbg.show_help = false;
            dbg.message.clear();
            continue;
        }
        if matches!(input, Input::Keys) {
            match key.code {
                KeyCode::Char('J') => {
                    view.state_scroll = view.state_scroll.saturating_add(3);
                    continue;
                }
                KeyCode::Char('K') => {
                    view.state_scroll = view.state_scroll.saturating_sub(3);
                    continue;
                }
                _ => {}
            }
        }
        let cmd = match &mut input {
            Input::Typing(text) => match key.code {
                KeyCode::Enter => {
                    let typed = std::mem::take(text);
                    input = Input::Keys;
                    match parse_command(&typed) {
                        Ok(c) => Some(c),
                        Err(e) => {
                            dbg.message = e;
                            None
                        }
                    }
                }
                KeyCode::Esc => {
                    input = Input::Keys;
                    None
                }
                KeyCode::Backspace => {
                    text.pop();
                    None
                }
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    input = Input::Keys;
                    None
                }
                KeyCode::Char(ch) if text.len() < 400 => {
                    text.push(ch);
                    None
                }
                _ => None,
            },
            Input::Keys => match key_command(dbg, key) {
                KeyAction::Run(c) => Some(c),
                KeyAction::Type(prefill) => {
                    input = Input::Typing(prefill.to_string());
                    None
                }
                KeyAction::Nothing => None,
            },
        };
        let Some(cmd) = cmd else { continue };
        let before = dbg.settings();
        match dbg.apply(cmd) {
            Effect::None => {}
            Effect::Quit => return Ok(()),
            Effect::Rerun => {
                let said = std::mem::replace(&mut dbg.message, "running the kernel…".into());
                term.draw(|f| draw(f, dbg, &input, &view))?;
                match record(target, dbg.thread, &dbg.probes(), limit, dbg.break_nan) {
                    Ok(rec) => {
                        dbg.load(rec);
                        dbg.message = if dbg.rec.thread_ran { said } else { opening_message(&dbg.rec) };
                    }
                    Err(e) => {
                        dbg.restore(before);
                        dbg.message = first_line(e.text());
                    }
                }
            }
        }
    }
}

enum KeyAction {
    Run(Command),
    /// Open the command line with this text.
    Type(&'static str),
    Nothing,
}

fn key_command(dbg: &mut Debugger, key: KeyEvent) -> KeyAction {
    use KeyAction::{Nothing, Run, Type};
    let lines = dbg.rec.files.get(dbg.shown_file()).map(|f| f.lines.len() as u32).unwrap_or(1).max(1);
    let mut move_cursor = |delta: i64| {
        dbg.cursor = (dbg.cursor as i64 + delta).clamp(1, lines as i64) as u32;
        Nothing
    };
    match key.code {
        KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => Run(Command::Quit),
        KeyCode::Char('s') | KeyCode::F(11) => Run(Command::Step),
        KeyCode::Char('n') | KeyCode::F(10) => Run(Command::Next),
        KeyCode::Char('f') => Run(Command::Finish),
        KeyCode::Char('c') | KeyCode::F(5) => Run(Command::Continue),
        KeyCode::Char('p') | KeyCode::Left => Run(Command::Back),
        KeyCode::Char('P') => Run(Command::ReverseContinue),
        KeyCode::Right => Run(Command::Step),
        KeyCode::Char('b') => {
            let line = dbg.cursor;
            let file = dbg.shown_file_name();
            if dbg.breakpoints.iter().any(|b| b.line == line && b.file == file) {
                Run(Command::Clear(file, line))
            } else {
                Run(Command::Break { file, line, thread: None, condition: None })
            }
        }
        KeyCode::Char('r') => Run(Command::RunTo(dbg.shown_file_name(), dbg.cursor)),
        KeyCode::Char('R') => Run(Command::Restart),
        KeyCode::Char('t') => Type("thread "),
        KeyCode::Char('m') => Type("simd "),
        KeyCode::Char('g') => Type("group "),
        KeyCode::Char('w') => Type("watch "),
        KeyCode::Char('l') => Type("lanes "),
        KeyCode::Char('e') => Type("finding "),
        KeyCode::Char(':') => Type(""),
        KeyCode::Char('?') | KeyCode::Char('h') => Run(Command::Help),
        KeyCode::Char('q') | KeyCode::Esc => Run(Command::Quit),
        KeyCode::Up | KeyCode::Char('k') => move_cursor(-1),
        KeyCode::Down | KeyCode::Char('j') => move_cursor(1),
        KeyCode::PageUp => move_cursor(-10),
        KeyCode::PageDown => move_cursor(10),
        _ => Nothing,
    }
}

fn first_line(s: &str) -> String {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string()
}

// ----- drawing ----------------------------------------------------------------

/// The key bar's entries (`s step`) packed into rows of `width` columns,
/// never splitting one.
fn key_bar(width: usize) -> Vec<String> {
    let mut rows: Vec<String> = Vec::new();
    for entry in KEYS.split("  ") {
        match rows.last_mut() {
            Some(r) if r.chars().count() + 2 + entry.chars().count() <= width => {
                r.push_str("  ");
                r.push_str(entry);
            }
            _ => rows.push(entry.to_string()),
        }
    }
    rows
}

/// Rows `text` takes wrapped at word boundaries to `width` columns.
fn wrapped_rows(text: &str, width: usize) -> usize {
    let width = width.max(1);
    let (mut rows, mut col) = (1, 0);
    for word in text.split(' ') {
        let w = word.chars().count();
        let need = if col == 0 { w } else { col + 1 + w };
        if need <= width {
            col = need;
            continue;
        }
        // A new row; a word longer than the width spills over more.
        rows += usize::from(col > 0) + w.saturating_sub(1) / width;
        col = if w == 0 { 0 } else { (w - 1) % width + 1 };
    }
    rows
}

fn draw(f: &mut Frame, dbg: &Debugger, input: &Input, view: &View) {
    let area = f.area();
    if dbg.show_help {
        let mut lines = vec![Line::styled("metal-puzzles debug · keys and commands", Style::new().add_modifier(Modifier::BOLD))];
        lines.extend(HELP_LINES.iter().map(|l| Line::from(*l)));
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
        return;
    }
    // The key bar gets the rows it needs, so nothing is cut at any width.
    let keys = key_bar(area.width as usize);
    let key_rows = keys.len().clamp(1, 4) as u16;
    let rows = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(2),
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(key_rows),
    ])
    .split(area);
    f.render_widget(Paragraph::new(title_line(dbg)).style(Style::new().add_modifier(Modifier::BOLD)), rows[0]);
    f.render_widget(Paragraph::new(thread_lines(dbg)), rows[1]);
    let cols = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).split(rows[2]);
    draw_source(f, dbg, cols[0]);
    draw_state(f, dbg, cols[1], view);
    let status = Paragraph::new(dbg.message.clone()).style(Style::new().fg(Color::Yellow));
    f.render_widget(status, rows[3]);
    let bottom = match input {
        Input::Typing(t) => Paragraph::new(format!(":{t}█")),
        Input::Keys => Paragraph::new(keys.join("\n")).style(Style::new().fg(Color::DarkGray)),
    };
    f.render_widget(bottom, rows[4]);
}

fn title_line(dbg: &Debugger) -> String {
    let n = dbg.rec.stops.len();
    let at = if dbg.finished() {
        "finished".to_string()
    } else {
        format!("stop {}/{n}{}", dbg.pos + 1, if dbg.rec.truncated { "+" } else { "" })
    };
    format!("metal-puzzles debug · {} · {at}", dbg.rec.what)
}

fn thread_lines(dbg: &Debugger) -> Vec<Line<'static>> {
    let rec = &dbg.rec;
    let first = rec.thread_text();
    let (lane, group) = rec.simd_position();
    let mask = match dbg.stop() {
        Some(s) => {
            let mut spans =
                vec![Span::raw(format!("SIMD-group {group}, lane {lane}: {}/{} active ", s.simd_active.count_ones(), s.simd_width))];
            for l in 0..s.simd_width {
                let on = s.simd_active >> l & 1 == 1;
                let (ch, style) = match (l == lane, on) {
                    (true, _) => ("◆", Style::new().fg(Color::Cyan)),
                    (false, true) => ("●", Style::new().fg(Color::Green)),
                    (false, false) => ("·", Style::new().fg(Color::DarkGray)),
                };
                spans.push(Span::styled(ch, style));
            }
            Line::from(spans)
        }
        None => Line::from(if rec.thread_ran { "the thread has finished" } else { "this thread did not run" }),
    };
    vec![Line::from(first), mask]
}

impl Debugger {
    /// The file the source pane shows: the current stop's, else the user's.
    pub fn shown_file(&self) -> usize {
        self.stop().map(|s| s.file).unwrap_or(self.rec.main_file)
    }

    /// How breakpoints name the shown file: `None` for the kernel's own.
    pub fn shown_file_name(&self) -> Option<String> {
        let f = self.shown_file();
        (f != self.rec.main_file).then(|| self.rec.files.get(f).map(|s| s.name.clone())).flatten()
    }
}

fn draw_source(f: &mut Frame, dbg: &Debugger, area: Rect) {
    let file = dbg.shown_file();
    let Some(src) = dbg.rec.files.get(file) else {
        f.render_widget(Paragraph::new("(no source: the thread never stopped)").block(Block::bordered()), area);
        return;
    };
    let current = dbg.stop().map(|s| s.line);
    let height = area.height.saturating_sub(2) as usize;
    // Keep the cursor (which follows the current line) in the middle.
    let focus = dbg.cursor.max(1) as usize;
    let top = focus.saturating_sub(height / 2).max(1).min(src.lines.len().saturating_sub(height).max(1));
    let width = src.lines.len().to_string().len().max(2);
    // Borders, the marks and the line number take the rest.
    let room = (area.width as usize).saturating_sub(2 + 2 + width + 1);
    let mut lines = Vec::new();
    for n in top..(top + height).min(src.lines.len() + 1) {
        let text = fit(&src.lines.get(n - 1).cloned().unwrap_or_default().replace('\t', "    "), room);
        let bp = dbg.breakpoints.iter().any(|b| b.line == n as u32 && dbg.file_named(b.file.as_deref()) == Some(file));
        let here = current == Some(n as u32);
        let mark = match (bp, here) {
            (true, true) => "●▶",
            (true, false) => "● ",
            (false, true) => " ▶",
            (false, false) if n as u32 == dbg.cursor => " ›",
            _ => "  ",
        };
        let style = if here {
            Style::new().bg(Color::Blue).fg(Color::White).add_modifier(Modifier::BOLD)
        } else if n as u32 == dbg.cursor {
            Style::new().add_modifier(Modifier::UNDERLINED)
        } else {
            Style::new()
        };
        let gutter_style = if bp { Style::new().fg(Color::Red) } else { Style::new().fg(Color::DarkGray) };
        lines.push(Line::from(vec![Span::styled(format!("{mark}{n:>width$} "), gutter_style), Span::styled(text, style)]));
    }
    let func = dbg.stop().map(|s| format!(" · in `{}`", s.func)).unwrap_or_default();
    let block = Block::bordered().title(fit(&format!(" {}{func} ", src.name), (area.width as usize).saturating_sub(2)));
    f.render_widget(Paragraph::new(lines).block(block), area);
}

/// `text` cut to `width` characters, ending in `…` when something was cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn draw_state(f: &mut Frame, dbg: &Debugger, area: Rect, view: &View) {
    let mut lines: Vec<Line> = Vec::new();
    let head = |t: &str| Line::styled(t.to_string(), Style::new().add_modifier(Modifier::BOLD).fg(Color::Cyan));
    let inner = area.width.saturating_sub(2) as usize;
    match dbg.stop() {
        Some(s) => {
            if !s.faults.is_empty() {
                lines.push(Line::styled("Finding at this statement", Style::new().add_modifier(Modifier::BOLD).fg(Color::Red)));
                for fault in &s.faults {
                    lines.push(Line::styled(format!("  {fault}"), Style::new().fg(Color::Red)));
                }
            }
            lines.push(head(&format!("Locals (line {}, call depth {})", s.line, s.depth)));
            let before = dbg.previous_vars();
            for (name, value) in &s.vars {
                // A local whose value differs from the stop before is marked.
                let changed = before.is_some_and(|b| b.iter().any(|(n, v)| n == name && v != value));
                let style = if changed { Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD) } else { Style::new() };
                let mark = if changed { "*" } else { " " };
                match matrix_rows(value) {
                    Some((ty, rows)) => {
                        lines.push(Line::styled(format!("{mark} {name} = {ty}"), style));
                        lines.extend(rows.into_iter().map(|r| Line::styled(format!("    {r}"), style)));
                    }
                    None => lines.push(Line::styled(format!("{mark} {name} = {value}"), style)),
                }
            }
            if s.vars_omitted > 0 {
                lines.push(Line::from(format!("  … {} more", s.vars_omitted)));
            }
            if !dbg.watches.is_empty() {
                lines.push(head("Watches"));
                for (i, w) in dbg.watches.iter().enumerate() {
                    let v = dbg.watch_value(w).unwrap_or("— (not evaluated here)");
                    lines.push(Line::from(format!("  {} {w} = {v}", i + 1)));
                }
            }
            if let (Some(expr), Some(vals)) = (&dbg.lanes, &s.lanes) {
                lines.push(head(&format!("Lanes of the SIMD-group: {expr}")));
                lines.extend(lane_grid(vals, inner));
            }
            lines.push(head("Memory this line accesses"));
            if s.accesses.is_empty() {
                lines.push(Line::from("  (none)"));
            }
            for a in &s.accesses {
                let verb = if a.write { "write" } else { "read " };
                lines.push(Line::from(format!("  {verb} {} = {}", a.place(), a.value)));
                let mut cells = vec![Span::raw("    ")];
                for (i, v) in &a.around {
                    let style = if *i == a.index { Style::new().add_modifier(Modifier::REVERSED) } else { Style::new() };
                    cells.push(Span::styled(format!("{}{v}", gpu::stops::index_text(*i, &a.dims)), style));
                    cells.push(Span::raw(" "));
                }
                lines.push(Line::from(cells));
            }
            let stack = dbg.call_stack();
            if stack.len() > 1 {
                lines.push(head("Call stack"));
                for (depth, (func, line)) in stack.iter().enumerate().rev() {
                    lines.push(Line::from(format!("  {} {func} (line {line})", depth + 1)));
                }
            }
            if s.accesses_omitted > 0 {
                lines.push(Line::from(format!("  … {} more accesses", s.accesses_omitted)));
            }
        }
        None => {
            lines.push(head("Finished"));
            lines.push(Line::from(if dbg.rec.truncated {
                "  recording stopped at the limit (--limit N records more)"
            } else {
                "  p steps back, R restarts"
            }));
        }
    }
    if !dbg.breakpoints.is_empty() {
        lines.push(head("Breakpoints"));
        for b in &dbg.breakpoints {
            let mut t = match &b.file {
                Some(f) => format!("  {f}:{}", b.line),
                None => format!("  line {}", b.line),
            };
            if let Some([x, y, z]) = b.thread {
                t.push_str(&format!(" thread ({x}, {y}, {z})"));
            }
            if let Some(c) = &b.condition {
                t.push_str(&format!(" if {c}"));
            }
            lines.push(Line::from(t));
        }
    }
    if !dbg.rec.findings.is_empty() {
        lines.push(head(&format!("Findings of this run ({}; e N goes to one)", dbg.rec.findings.len())));
        for (i, fnd) in dbg.rec.findings.iter().enumerate() {
            lines.push(Line::from(format!("  {} {}", i + 1, first_line(fnd))));
        }
    }
    for n in &dbg.rec.notes {
        lines.push(Line::styled(format!("note: {n}"), Style::new().fg(Color::Yellow)));
    }
    // The pane scrolls (J/K); its title says when there is more.
    let total: usize = lines.iter().map(|l| wrapped_rows(&l.to_string(), inner)).sum();
    let height = area.height.saturating_sub(2) as usize;
    let scroll = (view.state_scroll as usize).min(total.saturating_sub(height)) as u16;
    let more_below = total > height + scroll as usize;
    let title = match (scroll > 0, more_below) {
        (false, false) => String::new(),
        (false, true) => " more below: J ".into(),
        (true, true) => " K ↑ more ↓ J ".into(),
        (true, false) => " more above: K ".into(),
    };
    let block = Block::bordered().title(title);
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).scroll((scroll, 0)).block(block), area);
}

/// A SIMD-group matrix's text as its type and 8 rows.
fn matrix_rows(value: &str) -> Option<(String, Vec<String>)> {
    let (ty, rest) = value.split_once("[[")?;
    if !ty.starts_with("simdgroup_") {
        return None;
    }
    let body = rest.strip_suffix("]]")?;
    Some((ty.to_string(), body.split("], [").map(|r| format!("[{r}]")).collect()))
}

/// Lane values in as many columns as fit `width`: `12:3.5`.
fn lane_grid(vals: &[String], width: usize) -> Vec<Line<'static>> {
    let cell = vals.iter().enumerate().map(|(i, v)| format!("{i}:{v}").chars().count()).max().unwrap_or(1) + 2;
    let cols = (width.saturating_sub(2) / cell).clamp(1, 8);
    vals.chunks(cols)
        .enumerate()
        .map(|(row, chunk)| {
            let spans: Vec<Span> = chunk
                .iter()
                .enumerate()
                .map(|(c, v)| {
                    let i = row * cols + c;
                    let style = match v.as_str() {
                        "undefined" | "?" => Style::new().fg(Color::Red),
                        "—" => Style::new().fg(Color::DarkGray),
                        _ => Style::new(),
                    };
                    Span::styled(format!("{:<cell$}", format!("{i}:{v}")), style)
                })
                .collect();
            let mut all = vec![Span::raw("  ")];
            all.extend(spans);
            Line::from(all)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(fit("abcdef", 6), "abcdef");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 0), "");
    }

    #[test]
    fn wrapped_rows_counts_word_wrapping() {
        assert_eq!(wrapped_rows("aa bb cc", 5), 2);
        assert_eq!(wrapped_rows("aa bb", 5), 1);
        assert_eq!(key_bar(140).len(), 2);
        assert_eq!(key_bar(200), vec![KEYS.to_string()]);
        assert!(key_bar(80).iter().all(|r| r.chars().count() <= 80) && key_bar(80).len() == 3);
    }
}
