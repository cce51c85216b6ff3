//! `--log`: what shader logging (`os_log`) prints: `all`, `none`, or
//! filters that all apply (repeat `--log`): `thread=X,Y,Z`,
//! `threadgroup=X,Y,Z`, `level=debug|info|default|error|fault` (that level
//! and more severe), `subsystem=S` and `category=C` (of a declared
//! `os_log name("S", "C")`; `os_log_default` has neither).

use clap::Args;

/// Messages kept per dispatch (the rest are counted and a note says so).
pub const LOG_LIMIT: usize = 1000;

#[derive(Args, Clone, Default)]
pub struct LogArgs {
    /// Shader logging (`os_log_default.log(...)`): `all` (the default),
    /// `none`, or filters, repeatable (all apply): `thread=X,Y,Z`,
    /// `threadgroup=X,Y,Z`, `level=debug|info|default|error|fault` (that
    /// level and more severe), `subsystem=S`, `category=C` (those of a
    /// declared `constant os_log name("S", "C")`).
    #[arg(long = "log", value_name = "all|none|thread=X,Y,Z|threadgroup=X,Y,Z|level=L|subsystem=S|category=C")]
    pub log: Vec<String>,
}

/// `--log` level names, least severe first, as `gpu::log::LEVELS` orders them.
const LEVEL_NAMES: [&str; 5] = ["debug", "info", "default", "error", "fault"];

fn dims(what: &str, t: &str) -> Result<[u32; 3], String> {
    let mut d = [0u32; 3];
    let parts: Vec<&str> = t.split(',').collect();
    if t.trim().is_empty() || parts.len() > 3 {
        return Err(format!("--log {what}=`{t}` must be X, X,Y or X,Y,Z"));
    }
    for (k, p) in parts.iter().enumerate() {
        d[k] = p.trim().parse().map_err(|_| format!("--log {what}=`{t}`: `{p}` is not a whole number"))?;
    }
    Ok(d)
}

impl LogArgs {
    pub fn options(&self) -> Result<Option<gpu::log::LogOptions>, String> {
        let mut o = gpu::log::LogOptions { limit: LOG_LIMIT, ..Default::default() };
        for s in self.log.iter().map(|s| s.trim()) {
            match s.split_once('=') {
                None if s == "all" => {}
                None if s == "none" => return Ok(None),
                Some(("thread", t)) => o.thread = Some(dims("thread", t)?),
                Some(("threadgroup", t)) => o.threadgroup = Some(dims("threadgroup", t)?),
                Some((key @ ("subsystem" | "category"), v)) => {
                    if v.is_empty() {
                        return Err(format!("--log {key}= needs a name, e.g. `--log {key}={}`", if key == "subsystem" { "com.example.app" } else { "kernels" }));
                    }
                    *(if key == "subsystem" { &mut o.subsystem } else { &mut o.category }) = Some(v.to_string());
                }
                Some(("level", l)) => {
                    o.min_level = LEVEL_NAMES.iter().position(|n| *n == l.trim()).ok_or_else(|| {
                        format!("--log level=`{l}` must be one of {} (that level and more severe are shown)", LEVEL_NAMES.join(", "))
                    })?
                }
                _ => {
                    return Err(format!(
                        "--log `{s}` must be all, none, thread=X,Y,Z, threadgroup=X,Y,Z, level=debug|info|default|error|fault, subsystem=S or category=C"
                    ))
                }
            }
        }
        Ok(Some(o))
    }

    /// A `thread=` or `threadgroup=` filter outside the dispatch is an
    /// error (it would silently show nothing; so is an unknown
    /// `subsystem=`/`category=`, which the run checks against the kernel).
    pub fn check_in_grid(&self, grid_threads: [u32; 3], groups: [u32; 3]) -> Result<(), String> {
        let Some(o) = self.options()? else { return Ok(()) };
        let outside = |p: [u32; 3], n: [u32; 3]| (0..3).any(|d| p[d] >= n[d]);
        if let Some(t) = o.thread.filter(|&t| outside(t, grid_threads)) {
            let [gx, gy, gz] = grid_threads;
            return Err(format!(
                "--log thread={},{},{} is outside the grid of {gx}x{gy}x{gz} threads: it would show nothing",
                t[0], t[1], t[2]
            ));
        }
        if let Some(g) = o.threadgroup.filter(|&g| outside(g, groups)) {
            let [gx, gy, gz] = groups;
            return Err(format!(
                "--log threadgroup={},{},{} is outside the {gx}x{gy}x{gz} threadgroups of the dispatch: it would show nothing",
                g[0], g[1], g[2]
            ));
        }
        Ok(())
    }
}

/// The logging options of a run of `grid_threads` threads in `groups`
/// threadgroups; under `debug --print` (`watched`), only the watched
/// thread's messages unless `--log` names others.
pub fn run_options(
    args: &LogArgs,
    grid_threads: [u32; 3],
    groups: [u32; 3],
    watched: Option<[u32; 3]>,
) -> Result<Option<gpu::log::LogOptions>, String> {
    args.check_in_grid(grid_threads, groups)?;
    let mut o = args.options()?;
    if let (Some(o), Some(t)) = (o.as_mut(), watched) {
        if o.thread.is_none() && o.threadgroup.is_none() {
            o.thread = Some(t);
        }
    }
    Ok(o)
}

/// `default` for `log`, `error` for `log_error`…
fn level_name(level: &str) -> &'static str {
    LEVEL_NAMES[gpu::log::severity(level)]
}

/// One line per message, tagged with its thread, its logger's subsystem and
/// category (`os_log_default` has none) and its level when not plain `log`.
pub fn text(out: &gpu::log::LogOutput) -> String {
    let mut s = String::new();
    for m in &out.messages {
        let level = match m.level.strip_prefix("log_") {
            Some(l) => format!(" [{l}]"),
            None => String::new(),
        };
        let origin = match &m.origin {
            Some((sub, cat)) => format!(" [{sub}:{cat}]"),
            None => String::new(),
        };
        s.push_str(&format!("{}{origin}{level}: {}\n", gpu::findings::thread_name(m.thread, m.local, m.threadgroup), m.text));
    }
    if out.dropped > 0 {
        s.push_str(&format!(
            "({} more log message(s) not shown: at most {LOG_LIMIT} are kept per dispatch; `--log thread=X,Y,Z`, `threadgroup=X,Y,Z` or `level=error` shows fewer)\n",
            out.dropped
        ));
    }
    s
}

pub fn json(out: &gpu::log::LogOutput) -> serde_json::Value {
    let list: Vec<serde_json::Value> = out
        .messages
        .iter()
        .map(|m| {
            let (subsystem, category) = m.origin.as_ref().map(|(s, c)| (s.as_str(), c.as_str())).unzip();
            serde_json::json!({
                "thread": m.thread, "threadgroup": m.threadgroup, "level": m.level, "severity": level_name(m.level),
                "subsystem": subsystem, "category": category, "message": m.text,
            })
        })
        .collect();
    serde_json::json!({"messages": list, "dropped": out.dropped})
}
