//! Running a capture again, and comparing the replay with the record.

use crate::record::finding_records;
use crate::{check_level, ArrayRecord, Capture, CompileRecord, FindingRecord, Program, TemplateValue};
use arrays::{Array, DType};
use gpu::ir::ParamKind;
use msl::diag::Diagnostic;
use msl::include::{CapturedHeaders, CapturedInclude};
use msl::source::SourceMap;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a replay observes besides the run itself.
#[derive(Clone, Debug, Default)]
pub struct ReplayOptions {
    /// Record the debugger probes of this thread (at most this many values).
    pub probe: Option<([u32; 3], usize)>,
    /// Record this thread stop by stop for the interactive debugger (at most
    /// this many stops); the kernel is then lowered with debugger stops.
    pub stops: Option<([u32; 3], usize)>,
    pub profile: bool,
    pub log: Option<gpu::log::LogOptions>,
    /// Debugger probes to place (`msl::probe`).
    pub probes: Vec<msl::probe::ProbeRequest>,
    /// Trace where non-finite values are born (`report.nan`; the
    /// debugger's `break nan`).
    pub nan: bool,
}

/// What a replay produced.
#[derive(Debug)]
pub struct Replayed {
    /// Outputs by name, in the capture's order.
    pub outputs: Vec<(String, Array)>,
    pub report: gpu::RunReport,
    pub sources: SourceMap,
    /// Compile warnings.
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug)]
pub enum ReplayError {
    /// The captured source does not compile here (e.g. edited, or a newer
    /// front end refuses it).
    Compile { sources: SourceMap, diagnostics: Vec<Diagnostic> },
    /// The capture cannot be run (damaged, or arguments that do not fit).
    Invalid(String),
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::Compile { sources, diagnostics } => f.write_str(msl::diag::render(sources, diagnostics, false).trim_end()),
            ReplayError::Invalid(m) => f.write_str(m),
        }
    }
}

fn invalid(m: impl Into<String>) -> ReplayError {
    ReplayError::Invalid(m.into())
}

/// Compile options that answer `#include` from the capture only.
pub fn compile_options(c: &CompileRecord) -> msl::CompileOptions {
    let entries = c
        .headers
        .iter()
        .map(|h| CapturedInclude {
            from: h.from.clone(),
            spelled: h.spelled.clone(),
            quoted: h.quoted,
            name: h.name.clone(),
            text: h.text.clone(),
        })
        .collect();
    msl::CompileOptions {
        defines: c.defines.clone(),
        metal_version: c.metal_version,
        function_constants: c.function_constants.clone(),
        captured_headers: Some(Arc::new(CapturedHeaders { entries })),
        ..Default::default()
    }
}

fn run_options(c: &Capture, o: &ReplayOptions) -> gpu::RunOptions {
    gpu::RunOptions {
        check: check_level(&c.options.check),
        budget: c.options.budget,
        threads: c.options.threads,
        atomics_last_lane_first: c.options.atomics_last_lane_first,
        profile: o.profile,
        probe: o.probe,
        stops: o.stops,
        log: o.log.clone(),
        nan: o.nan,
        ..Default::default()
    }
}

/// Run the capture again, exactly as it was recorded.
pub fn replay(c: &Capture, o: &ReplayOptions) -> Result<Replayed, ReplayError> {
    match &c.program {
        Program::Source { .. } => replay_source(c, o),
        Program::Mlx { .. } => replay_mlx(c, o),
    }
}

fn replay_source(c: &Capture, o: &ReplayOptions) -> Result<Replayed, ReplayError> {
    let Program::Source { main, kernel: kname, grid, threadgroup, dispatch, arguments } = &c.program else {
        return Err(invalid("not a source capture"));
    };
    let opts = msl::CompileOptions { probes: msl::probe::Probes { requests: o.probes.clone(), view: None }, ..compile_options(&c.compile) };
    let comp = msl::compile(&main.name, &main.text, &opts);
    let diagnostics = comp.diagnostics.items.clone();
    let Some(program) = comp.program.as_ref() else {
        return Err(ReplayError::Compile { sources: comp.sources, diagnostics });
    };
    let Some((kid, _)) = program.kernel(kname) else {
        return Err(invalid(format!("the captured source has no kernel named `{kname}`")));
    };
    let lowered = gpu::lower::lower_kernel_with(
        program,
        kid,
        gpu::lower::LowerOptions { statement_marks: o.profile || o.nan, debug_stops: o.stops.is_some() },
    );
    let kernel = match lowered {
        Ok(k) => k,
        Err(e) => return Err(ReplayError::Compile { sources: comp.sources, diagnostics: vec![e.to_diagnostic()] }),
    };
    let mut given: BTreeMap<&str, &ArrayRecord> = arguments.iter().map(|a| (a.name.as_str(), a)).collect();
    let mut buffers: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let mut outputs: Vec<(String, u32, DType, Vec<usize>)> = Vec::new();
    for p in &kernel.params {
        if let ParamKind::Buffer { index, writable, .. } = &p.kind {
            let rec =
                given.remove(p.name.as_str()).ok_or_else(|| invalid(format!("the capture binds nothing to parameter `{}`", p.name)))?;
            let array = rec.to_array().map_err(invalid)?;
            buffers.insert(*index, array.contiguous_bytes());
            if *writable {
                outputs.push((p.name.clone(), *index, array.dtype, array.shape.clone()));
            }
        }
    }
    let dispatch = gpu::Dispatch {
        grid: *grid,
        threadgroup: *threadgroup,
        mode: if dispatch == "threadgroups" { gpu::DispatchMode::Threadgroups } else { gpu::DispatchMode::Threads },
    };
    let ropts = run_options(c, o);
    gpu::validate(&kernel, &dispatch, &ropts).map_err(|e| invalid(format!("cannot dispatch this kernel: {e}")))?;
    let report = gpu::run(&kernel, &dispatch, &mut buffers, &ropts);
    let mut outs = Vec::new();
    for (name, index, dtype, shape) in outputs {
        let bytes = buffers.remove(&index).unwrap_or_default();
        outs.push((name.clone(), Array::from_bytes(dtype, &shape, bytes).map_err(|e| invalid(format!("output `{name}`: {e}")))?));
    }
    Ok(Replayed { outputs: outs, report, sources: comp.sources, diagnostics })
}

fn replay_mlx(c: &Capture, o: &ReplayOptions) -> Result<Replayed, ReplayError> {
    let (kernel, mut call) = mlx_parts(c)?;
    call.profile = o.profile;
    call.probe = o.probe;
    call.stops = o.stops;
    call.probes = o.probes.clone();
    call.nan = o.nan;
    call.log = o.log.clone();
    match kernel.call_with(&call, &mut |_| {}) {
        Ok(r) => Ok(Replayed {
            outputs: kernel.output_names.iter().cloned().zip(r.outputs).collect(),
            report: r.report,
            sources: r.sources,
            diagnostics: r.diagnostics,
        }),
        Err(mlx::MlxError::Compile { sources, diagnostics, .. }) => Err(ReplayError::Compile { sources, diagnostics }),
        Err(mlx::MlxError::Argument(m)) => Err(invalid(m)),
    }
}

/// The MLX kernel and call an MLX capture holds (compiled from the
/// captured headers only).
pub fn mlx_parts(c: &Capture) -> Result<(mlx::MetalKernel, mlx::Call), ReplayError> {
    let Program::Mlx {
        name,
        input_names,
        output_names,
        source,
        header,
        source_file,
        header_file,
        ensure_row_contiguous,
        atomic_outputs,
        inputs,
        output_shapes,
        output_dtypes,
        grid,
        threadgroup,
        template,
        init_value,
    } = &c.program
    else {
        return Err(invalid("not an MLX capture"));
    };
    let ins: Vec<&str> = input_names.iter().map(String::as_str).collect();
    let outs: Vec<&str> = output_names.iter().map(String::as_str).collect();
    let user_file =
        |f: &crate::FileRecord| mlx::UserFile { name: f.name.clone(), text: f.text.clone(), offset: f.offset.min(f.text.len()) };
    let kernel = mlx::MetalKernel::new(name, &ins, &outs, source, header, *ensure_row_contiguous, *atomic_outputs)
        .map_err(|e| invalid(e.to_string()))?
        .with_files(Some(user_file(source_file)), header_file.as_ref().map(user_file))
        .with_compile_options(compile_options(&c.compile));
    let mut arrays = Vec::new();
    for a in inputs {
        arrays.push(mlx::Input::Array(a.to_array().map_err(invalid)?));
    }
    let dtypes = output_dtypes.iter().map(|d| DType::parse(d).map_err(invalid)).collect::<Result<Vec<_>, _>>()?;
    let mut call = mlx::Call::new(arrays, output_shapes.clone(), dtypes, *grid, *threadgroup);
    for (n, v) in template {
        let arg = match v {
            TemplateValue::Dtype(d) => mlx::TemplateArg::DType(DType::parse(d).map_err(invalid)?),
            TemplateValue::Int(i) => mlx::TemplateArg::Int(*i),
            TemplateValue::Bool(b) => mlx::TemplateArg::Bool(*b),
        };
        call.template.push((n.clone(), arg));
    }
    call.init_value = match init_value {
        Some(t) => Some(t.trim().parse::<f64>().map_err(|_| invalid(format!("init_value `{t}` is not a number")))?),
        None => None,
    };
    call.check = check_level(&c.options.check);
    call.budget = Some(c.options.budget);
    call.atomics_last_lane_first = c.options.atomics_last_lane_first;
    Ok((kernel, call))
}

/// How one recorded output compares with its replay.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputCheck {
    Same,
    /// Different; the first differing element when the data was stored.
    Differs(String),
    /// The replay has no output of that name.
    Missing,
}

/// The replay against the record.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub outputs: Vec<(String, OutputCheck)>,
    /// Each recorded finding and whether the replay found it again.
    pub findings: Vec<(FindingRecord, bool)>,
    /// Findings of the replay that the record does not have.
    pub new_findings: Vec<FindingRecord>,
}

impl Comparison {
    pub fn reproduces(&self) -> bool {
        self.outputs.iter().all(|(_, o)| *o == OutputCheck::Same) && self.findings.iter().all(|(_, ok)| *ok) && self.new_findings.is_empty()
    }
}

pub fn compare(c: &Capture, r: &Replayed) -> Comparison {
    let outputs = c
        .outputs
        .iter()
        .map(|rec| {
            let check = match r.outputs.iter().find(|(n, _)| *n == rec.name) {
                None => OutputCheck::Missing,
                Some((_, now)) => compare_output(rec, now),
            };
            (rec.name.clone(), check)
        })
        .collect();
    let now = finding_records(&r.report.findings, &r.sources);
    let findings: Vec<(FindingRecord, bool)> = c.findings.iter().map(|f| (f.clone(), now.contains(f))).collect();
    let new_findings = now.into_iter().filter(|f| !c.findings.contains(f)).collect();
    Comparison { outputs, findings, new_findings }
}

fn compare_output(rec: &ArrayRecord, now: &Array) -> OutputCheck {
    let fresh = ArrayRecord::new(&rec.name, now, true, false);
    if fresh.dtype != rec.dtype || fresh.shape != rec.shape {
        return OutputCheck::Differs(format!("it is now {} {:?}, recorded {} {:?}", fresh.dtype, fresh.shape, rec.dtype, rec.shape));
    }
    if fresh.checksum == rec.checksum {
        return OutputCheck::Same;
    }
    let Ok(old) = rec.to_array() else {
        return OutputCheck::Differs("its checksum differs (the recorded data was over the capture limit, so where is not known)".into());
    };
    let (a, b) = (now.to_f64_vec(), old.to_f64_vec());
    let differing = a.iter().zip(&b).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
    match a.iter().zip(&b).position(|(x, y)| x.to_bits() != y.to_bits()) {
        Some(i) => OutputCheck::Differs(format!(
            "{differing} of {} elements differ; the first is element {i} (flat, row-major): now {}, recorded {}",
            a.len(),
            a[i],
            b[i]
        )),
        None => OutputCheck::Differs("its bytes differ".into()),
    }
}
