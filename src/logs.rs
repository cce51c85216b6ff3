//! `--log none|all|thread=X,Y,Z`: what shader logging (`os_log`) prints.

use clap::Args;

/// Messages kept per dispatch (the rest are counted and a note says so).
pub const LOG_LIMIT: usize = 1000;

#[derive(Args, Clone, Default)]
pub struct LogArgs {
    /// Shader logging (`os_log_default.log(...)`): `all` (the default),
    /// `none`, or `thread=X,Y,Z` for one thread's messages.
    #[arg(long = "log", value_name = "all|none|thread=X,Y,Z")]
    pub log: Option<String>,
}

impl LogArgs {
    pub fn options(&self) -> Result<Option<gpu::log::LogOptions>, String> {
        let all = Some(gpu::log::LogOptions { thread: None, limit: LOG_LIMIT });
        match self.log.as_deref().map(str::trim) {
            None | Some("all") => Ok(all),
            Some("none") => Ok(None),
            Some(s) => match s.strip_prefix("thread=") {
                Some(t) => {
                    let mut d = [0u32; 3];
                    let parts: Vec<&str> = t.split(',').collect();
                    if parts.is_empty() || parts.len() > 3 {
                        return Err(format!("--log thread=`{t}` must be X, X,Y or X,Y,Z"));
                    }
                    for (k, p) in parts.iter().enumerate() {
                        d[k] = p.trim().parse().map_err(|_| format!("--log thread=`{t}`: `{p}` is not a whole number"))?;
                    }
                    Ok(Some(gpu::log::LogOptions { thread: Some(d), limit: LOG_LIMIT }))
                }
                None => Err(format!("--log `{s}` must be all, none or thread=X,Y,Z")),
            },
        }
    }
}

/// One line per message, tagged with its thread (and level when not plain `log`).
pub fn text(out: &gpu::log::LogOutput) -> String {
    let mut s = String::new();
    for m in &out.messages {
        let level = match m.level.strip_prefix("log_") {
            Some(l) => format!(" [{l}]"),
            None => String::new(),
        };
        s.push_str(&format!("{}{level}: {}\n", gpu::findings::thread_name(m.thread, m.local, m.threadgroup), m.text));
    }
    if out.dropped > 0 {
        s.push_str(&format!(
            "({} more log message(s) not shown: at most {LOG_LIMIT} are kept per dispatch; `--log thread=X,Y,Z` shows one thread's)\n",
            out.dropped
        ));
    }
    s
}

pub fn json(out: &gpu::log::LogOutput) -> serde_json::Value {
    let list: Vec<serde_json::Value> = out
        .messages
        .iter()
        .map(|m| serde_json::json!({"thread": m.thread, "threadgroup": m.threadgroup, "level": m.level, "message": m.text}))
        .collect();
    serde_json::json!({"messages": list, "dropped": out.dropped})
}
