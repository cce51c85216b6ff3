//! Kernel test specs (`metal-puzzles test DIR`): TOML files beside the
//! `.metal` files of a project that is not Python (candle, mistral.rs,
//! llama.cpp style) say which kernel to run on which inputs and what the
//! outputs must be. Every spec runs under the sanitizer. The format is
//! described in `docs/kernel-tests.md`.

use crate::bind::{load_npy, name_seed, Value};
use crate::formats::TestCase;
use crate::{CheckLevel, CompileOptions, Dispatch, DispatchMode, Error, Library, Outcome, RunOptions};
use arrays::{Array, DType};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A spec file: defaults for its tests, then `[[test]]` tables.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    file: Option<String>,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    defines: BTreeMap<String, toml::Value>,
    #[serde(default)]
    constants: BTreeMap<String, toml::Value>,
    check: Option<String>,
    budget: Option<u64>,
    rtol: Option<f64>,
    atol: Option<f64>,
    #[serde(default)]
    test: Vec<TestSpec>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct TestSpec {
    name: Option<String>,
    file: Option<String>,
    kernel: String,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    defines: BTreeMap<String, toml::Value>,
    #[serde(default)]
    constants: BTreeMap<String, toml::Value>,
    grid: Vec<u32>,
    threadgroup: Vec<u32>,
    dispatch: Option<String>,
    #[serde(default)]
    threadgroup_memory: BTreeMap<String, u32>,
    seed: Option<u64>,
    check: Option<String>,
    budget: Option<u64>,
    rtol: Option<f64>,
    atol: Option<f64>,
    #[serde(default)]
    inputs: BTreeMap<String, toml::Value>,
    #[serde(default)]
    expect: BTreeMap<String, toml::Value>,
}

/// Whether `path` is a kernel test spec: `*.test.toml` or `metal-tests.toml`.
pub fn is_spec_file(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.ends_with(".test.toml") || name == "metal-tests.toml"
}

/// Spec files under `dir` (or `dir` itself when it is one), sorted, so
/// that every machine sees the same order (shards depend on it).
pub fn find_specs(dir: &Path) -> Result<Vec<PathBuf>, String> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    if !dir.is_dir() {
        return Err(format!("`{}` is not a folder or a spec file", dir.display()));
    }
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("cannot read `{}`: {e}", d.display()))?;
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Err(format!(
                    "`{}` holds more than {MAX_ENTRIES} files and folders; point `test` at the kernels' folder",
                    dir.display()
                ));
            }
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            // Symbolic links are not followed (no cycles); hidden and build folders are skipped.
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() && !name.starts_with('.') && name != "target" && name != "node_modules" {
                stack.push(path);
            } else if kind.is_file() && is_spec_file(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Files and folders `find_specs` looks at before giving up.
const MAX_ENTRIES: usize = 200_000;
/// Spec files are small; refuse anything larger.
const MAX_SPEC_BYTES: u64 = 4 << 20;

/// One test, ready to run.
#[derive(Debug, Clone)]
pub struct Test {
    /// The spec file it came from.
    pub spec_file: PathBuf,
    /// Its name (unique within the file).
    pub name: String,
    spec: TestSpec,
    /// The file's settings for all its tests (its `test` list emptied).
    defaults: std::sync::Arc<FileSpec>,
}

impl Test {
    /// `spec.test.toml::name`, as reports name it.
    pub fn id(&self) -> String {
        format!("{}::{}", self.spec_file.display(), self.name)
    }
}

/// Read every test of a spec file; errors name the file and what is wrong.
pub fn load(path: &Path) -> Result<Vec<Test>, String> {
    let len = std::fs::metadata(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?.len();
    if len > MAX_SPEC_BYTES {
        return Err(format!("`{}` is {len} bytes; a spec file may have at most {MAX_SPEC_BYTES}", path.display()));
    }
    let text = crate::read_source(path)?;
    let mut spec: FileSpec = toml::from_str(&text).map_err(|e| format!("{}: {}", path.display(), e.to_string().trim_end()))?;
    if spec.test.is_empty() {
        return Err(format!("{}: no `[[test]]` tables (each test starts with `[[test]]`, see docs/kernel-tests.md)", path.display()));
    }
    let tests = std::mem::take(&mut spec.test);
    let defaults = std::sync::Arc::new(spec);
    let mut names = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for (i, t) in tests.into_iter().enumerate() {
        let name = t.name.clone().unwrap_or_else(|| format!("{}#{}", t.kernel, i + 1));
        if !names.insert(name.clone()) {
            return Err(format!("{}: two tests are named `{name}`; give each `[[test]]` its own `name`", path.display()));
        }
        if t.file.is_none() && defaults.file.is_none() {
            return Err(format!(
                "{}: test `{name}` names no Metal file: add `file = \"kernels.metal\"` to it or at the top of the file",
                path.display()
            ));
        }
        out.push(Test { spec_file: path.to_path_buf(), name, spec: t, defaults: defaults.clone() });
    }
    Ok(out)
}

/// Whether test number `index` (0-based, in collection order) belongs to
/// shard `k` of `n` (1-based): tests are dealt round-robin.
pub fn in_shard(index: usize, shard: (usize, usize)) -> bool {
    index % shard.1 == shard.0 - 1
}

/// Parse `K/N` (1 ≤ K ≤ N).
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard `{s}` must be K/N with 1 ≤ K ≤ N, e.g. 2/4 (the second of four shards)");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n) = (k.trim().parse::<usize>().map_err(|_| bad())?, n.trim().parse::<usize>().map_err(|_| bad())?);
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// How one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Passed,
    /// Wrong outputs, an error finding or a compile error.
    Failed,
    /// It could not run (a bad spec, a missing file or parameter).
    Error,
}

/// One test's result.
#[derive(Debug)]
pub struct TestResult {
    pub id: String,
    pub spec_file: PathBuf,
    pub name: String,
    pub kernel: String,
    pub status: Status,
    /// Why it failed, one line each.
    pub reasons: Vec<String>,
    /// The run's outcome, when it ran.
    pub outcome: Option<Outcome>,
    /// A compile error's rendered report and the error (for JSON).
    pub error: Option<Error>,
    pub seconds: f64,
}

impl TestResult {
    /// The result as a JUnit test case.
    pub fn junit_case(&self) -> TestCase {
        let failure = match self.status {
            Status::Passed => None,
            _ => Some((self.reasons.first().cloned().unwrap_or_else(|| "failed".into()), self.details(false))),
        };
        TestCase {
            name: self.name.clone(),
            classname: self.spec_file.display().to_string(),
            seconds: self.seconds,
            failure,
            skipped: None,
            output: self.outcome.as_ref().map(|o| o.warnings.join("\n")).unwrap_or_default(),
        }
    }

    /// Reasons, then the rendered diagnostics and findings.
    pub fn details(&self, color: bool) -> String {
        let mut text: String = self.reasons.iter().map(|r| format!("{r}\n")).collect();
        if let Some(o) = &self.outcome {
            text.push_str(&o.render(color));
        }
        if let Some(e) = &self.error {
            text.push_str(&e.render(color));
        }
        text
    }

    /// The result as JSON: the run document's diagnostics and findings, plus status and reasons.
    pub fn to_json(&self) -> serde_json::Value {
        let mut doc = match (&self.outcome, &self.error) {
            (Some(o), _) => o.to_json(serde_json::Map::new()),
            (None, Some(e)) => e.to_json(),
            (None, None) => crate::json::error_document(&self.reasons.join("; ")),
        };
        doc["id"] = self.id.clone().into();
        doc["file"] = self.spec_file.display().to_string().into();
        doc["name"] = self.name.clone().into();
        doc["kernel"] = self.kernel.clone().into();
        doc["status"] = match self.status {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Error => "error",
        }
        .into();
        doc["reasons"] = serde_json::json!(self.reasons);
        doc["seconds"] = serde_json::json!(self.seconds);
        doc
    }
}

/// Compiled libraries shared by the tests of one run (many tests use one file).
#[derive(Default)]
pub struct Runner {
    libraries: BTreeMap<(PathBuf, String), std::sync::Arc<Library>>,
}

impl Runner {
    pub fn new() -> Runner {
        Runner::default()
    }

    /// Run one test.
    pub fn run(&mut self, test: &Test) -> TestResult {
        let started = Instant::now();
        let mut r = TestResult {
            id: test.id(),
            spec_file: test.spec_file.clone(),
            name: test.name.clone(),
            kernel: test.spec.kernel.clone(),
            status: Status::Passed,
            reasons: Vec::new(),
            outcome: None,
            error: None,
            seconds: 0.0,
        };
        match self.run_inner(test) {
            Ok((outcome, reasons)) => {
                if !reasons.is_empty() {
                    r.status = Status::Failed;
                }
                r.reasons = reasons;
                r.outcome = Some(outcome);
            }
            Err(Failure::Compile(e)) => {
                r.status = Status::Failed;
                r.reasons.push(format!("`{}` does not compile", test.spec.file.as_deref().or(test.defaults.file.as_deref()).unwrap_or("")));
                r.error = Some(e);
            }
            Err(Failure::Spec(m)) => {
                r.status = Status::Error;
                r.reasons.push(m);
            }
        }
        r.seconds = started.elapsed().as_secs_f64();
        r
    }

    fn run_inner(&mut self, test: &Test) -> Result<(Outcome, Vec<String>), Failure> {
        let t = &test.spec;
        let d = &test.defaults;
        let base = test.spec_file.parent().map(Path::to_path_buf).unwrap_or_default();
        let base = if base.as_os_str().is_empty() { PathBuf::from(".") } else { base };
        let file = base.join(t.file.as_deref().or(d.file.as_deref()).unwrap_or_default());
        let mut options = CompileOptions::default();
        for inc in d.include.iter().chain(&t.include) {
            options.include_dirs.push(base.join(inc));
        }
        for (k, v) in d.defines.iter().chain(&t.defines) {
            options.defines.retain(|(n, _)| n != k);
            options.defines.push((k.clone(), toml_text(v).map_err(|e| Failure::Spec(format!("define `{k}`: {e}")))?));
        }
        for (k, v) in d.constants.iter().chain(&t.constants) {
            options.function_constants.retain(|(n, _)| n != k);
            options.function_constants.push((k.clone(), toml_text(v).map_err(|e| Failure::Spec(format!("constant `{k}`: {e}")))?));
        }
        let key = (file.clone(), format!("{:?}|{:?}|{:?}", options.include_dirs, options.defines, options.function_constants));
        // Successes are kept for the other tests of the file; a file that
        // fails to compile is compiled again for each test that names it.
        let lib = match self.libraries.get(&key) {
            Some(l) => l.clone(),
            None => {
                let l = std::sync::Arc::new(Library::compile_file(&file, &options).map_err(|e| match e {
                    Error::Usage(m) => Failure::Spec(m),
                    other => Failure::Compile(other),
                })?);
                self.libraries.insert(key, l.clone());
                l
            }
        };
        for (k, _) in &options.function_constants {
            let fcs = &lib.program().function_constants;
            if !fcs.iter().any(|c| c.name == *k || k.parse::<u32>() == Ok(c.index)) {
                return Err(Failure::Spec(format!("constant `{k}` names no function constant of `{}`", file.display())));
            }
        }
        let kernel = lib.kernel(&t.kernel).map_err(|e| match e {
            Error::Usage(m) => Failure::Spec(m),
            other => Failure::Compile(other),
        })?;
        let seed = t.seed.unwrap_or(0);
        let mut values = Vec::new();
        let mut arrays_by_name: Vec<(String, Array)> = Vec::new();
        for (name, v) in &t.inputs {
            let value = input_value(name, v, &base, seed).map_err(Failure::Spec)?;
            if let Value::Array(a) = &value {
                arrays_by_name.push((name.clone(), a.clone()));
            }
            values.push((name.clone(), value));
        }
        let bindings = kernel.bind(values).map_err(|e| Failure::Spec(e.to_string()))?;
        let dims = |v: &[u32], what: &str| -> Result<[u32; 3], Failure> {
            if v.is_empty() || v.len() > 3 || v.contains(&0) {
                return Err(Failure::Spec(format!("`{what}` must be 1 to 3 whole numbers, each at least 1 (got {v:?})")));
            }
            let mut out = [1; 3];
            out[..v.len()].copy_from_slice(v);
            Ok(out)
        };
        let mode = match t.dispatch.as_deref() {
            None | Some("threads") => DispatchMode::Threads,
            Some("threadgroups") => DispatchMode::Threadgroups,
            Some(other) => return Err(Failure::Spec(format!("`dispatch` must be \"threads\" or \"threadgroups\", not {other:?}"))),
        };
        let dispatch = Dispatch { grid: dims(&t.grid, "grid")?, threadgroup: dims(&t.threadgroup, "threadgroup")?, mode };
        let check = crate::check_level(t.check.as_deref().or(d.check.as_deref()).unwrap_or("all")).map_err(Failure::Spec)?;
        let mut threadgroup_buffers = BTreeMap::new();
        for (k, bytes) in &t.threadgroup_memory {
            let index =
                k.parse::<u32>().map_err(|_| Failure::Spec(format!("threadgroup_memory: `{k}` is not a [[threadgroup(N)]] index")))?;
            threadgroup_buffers.insert(index, *bytes);
        }
        let options = RunOptions {
            check,
            budget: t.budget.or(d.budget).unwrap_or(crate::DEFAULT_BUDGET),
            threadgroup_buffers,
            ..RunOptions::default()
        };
        let outcome = kernel.run(&bindings, dispatch, &options).map_err(|e| match e {
            Error::Usage(m) => Failure::Spec(m),
            other => Failure::Compile(other),
        })?;
        let mut reasons = Vec::new();
        if outcome.report.cancelled {
            reasons.push("the run was cancelled".into());
        }
        for f in outcome.findings().iter().filter(|f| f.is_error) {
            let (line, _) = if outcome.sources.files().len() > f.span.file.0 as usize { outcome.sources.line_col(f.span) } else { (0, 0) };
            reasons.push(format!("{} at line {line}: {}", f.kind.name(), f.message));
        }
        if check == CheckLevel::None && outcome.findings().is_empty() {
            // (nothing checked: the outputs are all there is to judge)
        }
        let rtol_default = t.rtol.or(d.rtol).unwrap_or(1e-5);
        let atol_default = t.atol.or(d.atol).unwrap_or(1e-8);
        let mut expressions = Vec::new();
        for (name, e) in &t.expect {
            let Some(got) = outcome.output(name) else {
                let outs: Vec<&str> = outcome.outputs.iter().map(|o| o.name.as_str()).collect();
                return Err(Failure::Spec(format!(
                    "expect: `{name}` is not an output of `{}` (its writable buffers: {})",
                    t.kernel,
                    if outs.is_empty() { "none".into() } else { outs.join(", ") }
                )));
            };
            let (want, rtol, atol) = match expectation(name, e, &base, got, rtol_default, atol_default).map_err(Failure::Spec)? {
                Expected::Array(a, rtol, atol) => (a, rtol, atol),
                Expected::Expr(text, rtol, atol) => {
                    expressions.push((name.clone(), text, rtol, atol));
                    continue;
                }
            };
            if let Some(why) = compare(name, got, &want, rtol, atol) {
                reasons.push(why);
            }
        }
        if !expressions.is_empty() {
            let exprs: Vec<(String, String)> = expressions.iter().map(|(n, e, _, _)| (n.clone(), e.clone())).collect();
            match evaluate_numpy(&arrays_by_name, &exprs) {
                Ok(results) => {
                    for ((name, text, rtol, atol), want) in expressions.iter().zip(results) {
                        let got = outcome.output(name).expect("checked above");
                        if let Some(why) = compare(name, got, &want, *rtol, *atol) {
                            reasons.push(format!("{why} (expected from `{text}`)"));
                        }
                    }
                }
                Err(e) => reasons.push(e),
            }
        }
        Ok((outcome, reasons))
    }
}

enum Failure {
    Compile(Error),
    Spec(String),
}

/// A TOML scalar as the text a define or function constant takes.
fn toml_text(v: &toml::Value) -> Result<String, String> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(format!("{f:?}")),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => Err(format!("must be a string, number or bool, not {other}")),
    }
}

/// An input: a `run --arg` string (`"rand(1024):float32"`, `"3:u32"`,
/// `"@x.npy"`), `{ npy = "x.npy" }`, `{ json = … }`, or `{ value = 2.5, dtype = "float32" }`
/// / `{ values = [...], dtype = "…" }`.
fn input_value(name: &str, v: &toml::Value, base: &Path, seed: u64) -> Result<Value, String> {
    match v {
        toml::Value::String(s) => {
            if let Some(path) = s.strip_prefix('@') {
                return crate::bind::parse_value(name, &format!("@{}", base.join(path).display()));
            }
            if s.trim_start().starts_with(['{', '[']) {
                return crate::bind::parse_value(name, s);
            }
            arrays::parse_value(s, seed ^ name_seed(name)).map(Value::Array).map_err(|e| format!("input `{name}`: {e}"))
        }
        toml::Value::Table(t) => {
            if let Some(p) = t.get("npy").and_then(|p| p.as_str()) {
                return load_npy(name, &base.join(p));
            }
            if let Some(j) = t.get("json") {
                let json = serde_json::to_value(j).map_err(|e| format!("input `{name}`: {e}"))?;
                return Ok(Value::Json(json));
            }
            let dtype = t.get("dtype").and_then(|d| d.as_str()).ok_or_else(|| {
                format!("input `{name}`: a table needs `npy = \"file.npy\"`, `json = …`, or `value`/`values` with a `dtype`")
            })?;
            let dtype = DType::parse(dtype).map_err(|e| format!("input `{name}`: {e}"))?;
            if let Some(v) = t.get("value") {
                return Ok(Value::Array(number_array(name, std::slice::from_ref(v), dtype, &[])?));
            }
            if let Some(toml::Value::Array(items)) = t.get("values") {
                return Ok(Value::Array(number_array(name, items, dtype, &[items.len()])?));
            }
            Err(format!("input `{name}`: give `value = …` or `values = [...]` with the dtype"))
        }
        toml::Value::Array(_) | toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => Err(format!(
            "input `{name}`: say its dtype: `{name} = {{ value = {v}, dtype = \"float32\" }}` (or `values = [...]` for a list)"
        )),
        other => Err(format!("input `{name}`: {other} is not an input form (see docs/kernel-tests.md)")),
    }
}

fn number_array(name: &str, items: &[toml::Value], dtype: DType, shape: &[usize]) -> Result<Array, String> {
    let mut values = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        values.push(match v {
            toml::Value::Integer(n) => *n as f64,
            toml::Value::Float(f) => *f,
            toml::Value::Boolean(b) => *b as u8 as f64,
            other => return Err(format!("input `{name}`[{i}]: {other} is not a number")),
        });
    }
    if dtype.is_integer() {
        let ints: Vec<i64> = values.iter().map(|&x| x as i64).collect();
        if let Some((lo, hi)) = dtype.int_range() {
            if let Some(bad) = ints.iter().find(|&&x| (x as i128) < lo || (x as i128) > hi) {
                return Err(format!("input `{name}`: {bad} does not fit {}", dtype.mlx_name()));
            }
        }
        return Array::from_i64(dtype, shape, &ints);
    }
    Array::from_f64(dtype, shape, &values)
}

enum Expected {
    Array(Array, f64, f64),
    Expr(String, f64, f64),
}

/// An expectation: `{ npy = "y.npy" }`, `{ expr = "x * 2" }` (NumPy, the
/// inputs by name), `{ values = [...] }` or a bare list, each with optional
/// `rtol`/`atol`.
fn expectation(name: &str, v: &toml::Value, base: &Path, got: &Array, rtol: f64, atol: f64) -> Result<Expected, String> {
    match v {
        toml::Value::Array(items) => Ok(Expected::Array(number_array(name, items, got.dtype, &[items.len()])?, rtol, atol)),
        toml::Value::String(s) => Ok(Expected::Expr(s.clone(), rtol, atol)),
        toml::Value::Table(t) => {
            for k in t.keys() {
                if !["npy", "expr", "values", "rtol", "atol"].contains(&k.as_str()) {
                    return Err(format!("expect `{name}`: unknown key `{k}` (use npy, expr or values, with rtol/atol)"));
                }
            }
            let f = |k: &str, d: f64| t.get(k).and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64))).unwrap_or(d);
            let (rtol, atol) = (f("rtol", rtol), f("atol", atol));
            if let Some(p) = t.get("npy").and_then(|p| p.as_str()) {
                let path = base.join(p);
                let a = Array::read_npy(&path).map_err(|e| format!("expect `{name}`: cannot load `{}`: {e}", path.display()))?;
                return Ok(Expected::Array(a, rtol, atol));
            }
            if let Some(e) = t.get("expr").and_then(|e| e.as_str()) {
                return Ok(Expected::Expr(e.to_string(), rtol, atol));
            }
            if let Some(toml::Value::Array(items)) = t.get("values") {
                return Ok(Expected::Array(number_array(name, items, got.dtype, &[items.len()])?, rtol, atol));
            }
            Err(format!("expect `{name}`: give `npy = \"file.npy\"`, `expr = \"…\"` or `values = [...]`"))
        }
        other => Err(format!("expect `{name}`: {other} is not an expectation (see docs/kernel-tests.md)")),
    }
}

/// Compare an output with its expected values: same number of elements,
/// then every element close (`|got - want| <= atol + rtol * |want|`, NaN
/// equal to NaN; integers exactly). The first few differences are named.
fn compare(name: &str, got: &Array, want: &Array, rtol: f64, atol: f64) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("`{name}` has {} elements, but {} were expected", got.len(), want.len()));
    }
    let exact = got.dtype.is_integer() || got.dtype == DType::Bool;
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    let mut bad = Vec::new();
    let mut count = 0;
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let ok = if exact { a == b } else { (a.is_nan() && b.is_nan()) || arrays::isclose(*a, *b, rtol, atol) };
        if !ok {
            count += 1;
            if bad.len() < 3 {
                bad.push(format!("{name}[{i}] is {a}, expected {b}"));
            }
        }
    }
    (count > 0).then(|| {
        let tol = if exact { "exactly".to_string() } else { format!("within rtol {rtol}, atol {atol}") };
        format!("{count} of {} elements of `{name}` differ from the expected values {tol}: {}", g.len(), bad.join("; "))
    })
}

/// Evaluate NumPy expressions with the inputs bound by name, in a Python
/// with NumPy (`$METAL_PUZZLES_PYTHON`, else `python3`).
fn evaluate_numpy(inputs: &[(String, Array)], exprs: &[(String, String)]) -> Result<Vec<Array>, String> {
    let dir = tempdir()?;
    let result = (|| {
        for (n, a) in inputs {
            a.write_npy(dir.join(format!("in_{n}.npy"))).map_err(|e| format!("cannot write a temporary file: {e}"))?;
        }
        let list = serde_json::json!(exprs.iter().map(|(n, e)| [n, e]).collect::<Vec<_>>());
        std::fs::write(dir.join("exprs.json"), list.to_string()).map_err(|e| format!("cannot write a temporary file: {e}"))?;
        let python = std::env::var("METAL_PUZZLES_PYTHON").unwrap_or_else(|_| "python3".into());
        let out = std::process::Command::new(&python)
            .arg("-c")
            .arg(EVAL_SCRIPT)
            .arg(&dir)
            .output()
            .map_err(|e| format!("expected values given as expressions need Python with NumPy, but `{python}` did not start ({e}); set METAL_PUZZLES_PYTHON or use `npy = …`"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
            return Err(format!("evaluating an expected value failed: {last}"));
        }
        exprs.iter().map(|(n, _)| Array::read_npy(dir.join(format!("out_{n}.npy")))).collect()
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Reads the inputs, evaluates each expression with NumPy and writes the results.
const EVAL_SCRIPT: &str = r#"
import json, os, sys
import numpy as np
d = sys.argv[1]
env = {"np": np, "numpy": np}
for f in sorted(os.listdir(d)):
    if f.startswith("in_") and f.endswith(".npy"):
        env[f[3:-4]] = np.load(os.path.join(d, f))
for name, expr in json.load(open(os.path.join(d, "exprs.json"))):
    try:
        value = eval(expr, {"__builtins__": {"abs": abs, "min": min, "max": max, "range": range, "len": len, "sum": sum, "float": float, "int": int}}, env)
    except Exception as e:
        sys.exit(f"`{name}` = `{expr}`: {type(e).__name__}: {e}")
    a = np.asarray(value)
    if a.dtype == np.float64:
        a = a.astype(np.float32)
    np.save(os.path.join(d, "out_" + name + ".npy"), np.ascontiguousarray(a))
"#;

fn tempdir() -> Result<PathBuf, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!("metal-puzzles-test-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    Ok(dir)
}
