//! Source generation, byte for byte as `mx.fast.metal_kernel` does it
//! (see docs/mlx-metal-kernel.md).

use crate::{MetalKernel, MlxError, TemplateArg};
use arrays::DType;

/// MLX passes inputs with fewer elements than this in the `constant` space.
pub const MAX_CONSTANT_ARRAY_SIZE: usize = 8;

/// The 20 thread attributes MLX detects, in its (alphabetical) order.
pub const ATTRIBUTES: [(&str, &str); 20] = [
    ("dispatch_quadgroups_per_threadgroup", "uint"),
    ("dispatch_simdgroups_per_threadgroup", "uint"),
    ("dispatch_threads_per_threadgroup", "uint3"),
    ("grid_origin", "uint3"),
    ("grid_size", "uint3"),
    ("quadgroup_index_in_threadgroup", "uint"),
    ("quadgroups_per_threadgroup", "uint"),
    ("simdgroup_index_in_threadgroup", "uint"),
    ("simdgroups_per_threadgroup", "uint"),
    ("thread_execution_width", "uint"),
    ("thread_index_in_quadgroup", "uint"),
    ("thread_index_in_simdgroup", "uint"),
    ("thread_index_in_threadgroup", "uint"),
    ("thread_position_in_grid", "uint3"),
    ("thread_position_in_threadgroup", "uint3"),
    ("threadgroup_position_in_grid", "uint3"),
    ("threadgroups_per_grid", "uint3"),
    ("threads_per_grid", "uint3"),
    ("threads_per_simdgroup", "uint"),
    ("threads_per_threadgroup", "uint3"),
];

/// What the generated signature needs to know about one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputSpec {
    pub dtype: DType,
    pub shape: Vec<usize>,
}

impl InputSpec {
    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn is_scalar(&self) -> bool {
        self.shape.is_empty()
    }
    pub fn is_constant(&self) -> bool {
        self.size() < MAX_CONSTANT_ARRAY_SIZE
    }
}

/// Buffer indices of one input and its metadata buffers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputSlots {
    pub buffer: u32,
    pub shape: Option<u32>,
    pub strides: Option<u32>,
    pub ndim: Option<u32>,
}

/// A generated kernel: its name, the text MLX prints with `verbose`, the
/// text that is compiled and where the user's pieces sit inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    pub kernel_name: String,
    /// Exactly what MLX's verbose output shows between the fences.
    pub source: String,
    /// Preamble + source: what gets compiled.
    pub full_source: String,
    /// Byte offset of `source` in `full_source` (the preamble's length).
    pub source_offset: usize,
    /// Byte range of the header within `source`.
    pub header_range: std::ops::Range<usize>,
    /// Byte range of the body within `source`.
    pub body_range: std::ops::Range<usize>,
    pub inputs: Vec<InputSlots>,
    pub outputs: Vec<u32>,
    /// The attribute parameters that were added (their names).
    pub attributes: Vec<&'static str>,
    /// MLX's malformed-signature quirk applies (the source will not compile).
    pub signature_quirk: bool,
}

/// `<1, 3, float16_t>`: MLX's `write_template`.
fn write_template(args: &[(String, TemplateArg)]) -> String {
    let vals: Vec<String> = args.iter().map(|(_, a)| a.value_text()).collect();
    format!("<{}>", vals.join(", "))
}

/// The kernel name MLX builds from the name, template values and the
/// input/output types.
pub fn kernel_name(name: &str, template: &[(String, TemplateArg)], inputs: &[InputSpec], output_dtypes: &[DType]) -> String {
    let mut k = format!("custom_kernel_{name}");
    if !template.is_empty() {
        // regex_replace(<, >, ", " -> "_") and drop the trailing "_".
        let mut hash = write_template(template).replace(['<', '>'], "_").replace(", ", "_");
        hash.pop();
        k.push('_');
        k.push_str(&hash);
    }
    for i in inputs {
        k.push('_');
        k.push_str(i.dtype.metal_type());
        if i.is_scalar() {
            k.push('s');
        } else if i.is_constant() {
            k.push('c');
        }
    }
    for d in output_dtypes {
        k.push('_');
        k.push_str(d.metal_type());
    }
    k
}

pub(crate) fn generate(
    kernel: &MetalKernel,
    inputs: &[InputSpec],
    output_dtypes: &[DType],
    template: &[(String, TemplateArg)],
) -> Result<Generated, MlxError> {
    if inputs.len() != kernel.input_names.len() {
        return Err(MlxError::Argument(format!(
            "inputs: kernel `{}` has {} input name{} ({}) but {} input{} {} given; pass one input per name, in the same order",
            kernel.name,
            kernel.input_names.len(),
            plural(kernel.input_names.len()),
            kernel.input_names.join(", "),
            inputs.len(),
            plural(inputs.len()),
            if inputs.len() == 1 { "was" } else { "were" }
        )));
    }
    if output_dtypes.len() != kernel.output_names.len() {
        return Err(MlxError::Argument(format!(
            "output_dtypes: kernel `{}` has {} output name{} ({}) but {} output dtype{} {} given; pass one dtype per output name",
            kernel.name,
            kernel.output_names.len(),
            plural(kernel.output_names.len()),
            kernel.output_names.join(", "),
            output_dtypes.len(),
            plural(output_dtypes.len()),
            if output_dtypes.len() == 1 { "was" } else { "were" }
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (n, _) in template {
        if !is_identifier(n) {
            return Err(MlxError::Argument(format!(
                "template: `{n}` is not a valid template parameter name (use a C identifier such as `T`)"
            )));
        }
        if !seen.insert(n.as_str()) {
            return Err(MlxError::Argument(format!("template: `{n}` is given twice")));
        }
    }
    let source = &kernel.source;
    let attributes: Vec<(&'static str, &'static str)> = ATTRIBUTES.iter().copied().filter(|(a, _)| source.contains(a)).collect();
    let name = kernel_name(&kernel.name, template, inputs, output_dtypes);

    let mut s = String::with_capacity(kernel.header.len() + source.len() + 1024);
    s.push_str(&kernel.header);
    let header_range = 0..kernel.header.len();
    if !template.is_empty() {
        let params: Vec<String> = template.iter().map(|(n, a)| format!("{} {n}", a.kind())).collect();
        s.push_str(&format!("template <{}>\n", params.join(", ")));
    }
    s.push_str("[[kernel]] void ");
    s.push_str(&name);
    s.push_str("(\n");
    let mut index: usize = 0;
    let mut slots = Vec::new();
    for (n, spec) in kernel.input_names.iter().zip(inputs) {
        let location = if spec.is_constant() { "constant" } else { "device" };
        let r = if spec.is_scalar() { "&" } else { "*" };
        s.push_str(&format!("  const {location} {}{r} {n} [[buffer({index})]],\n", spec.dtype.metal_type()));
        let mut slot = InputSlots { buffer: index as u32, ..Default::default() };
        index += 1;
        if !spec.is_scalar() {
            if source.contains(&format!("{n}_shape")) {
                s.push_str(&format!("  const constant int* {n}_shape [[buffer({index})]],\n"));
                slot.shape = Some(index as u32);
                index += 1;
            }
            if source.contains(&format!("{n}_strides")) {
                s.push_str(&format!("  const constant int64_t* {n}_strides [[buffer({index})]],\n"));
                slot.strides = Some(index as u32);
                index += 1;
            }
            if source.contains(&format!("{n}_ndim")) {
                s.push_str(&format!("  const constant int& {n}_ndim [[buffer({index})]],\n"));
                slot.ndim = Some(index as u32);
                index += 1;
            }
        }
        slots.push(slot);
    }
    let n_params = inputs.len() + kernel.output_names.len();
    let mut outputs = Vec::new();
    let mut quirk = false;
    for (i, (n, d)) in kernel.output_names.iter().zip(output_dtypes).enumerate() {
        s.push_str("  device ");
        if kernel.atomic_outputs {
            s.push_str(&format!("atomic<{}>", d.metal_type()));
        } else {
            s.push_str(d.metal_type());
        }
        s.push_str(&format!("* {n} [[buffer({index})]]"));
        // MLX compares the running buffer index (which counts shape/strides/
        // ndim buffers too) with the number of inputs + outputs.
        if index + 1 < n_params || !attributes.is_empty() {
            s.push_str(",\n");
        } else {
            s.push_str(") {\n");
            if i + 1 < kernel.output_names.len() {
                quirk = true;
            }
        }
        outputs.push(index as u32);
        index += 1;
    }
    for (i, (a, t)) in attributes.iter().enumerate() {
        s.push_str(&format!("  {t} {a} [[{a}]]"));
        s.push_str(if i + 1 < attributes.len() { ",\n" } else { ") {\n" });
    }
    let body_start = s.len();
    s.push_str(source);
    let body_range = body_start..s.len();
    s.push_str("\n}\n");
    if !template.is_empty() {
        let targs = format!("{name}{}", write_template(template));
        s.push_str(&format!("\ntemplate [[host_name(\"{name}\")]] [[kernel]] decltype({targs}) {targs};\n"));
    }
    let preamble = crate::PREAMBLE;
    let mut full = String::with_capacity(preamble.len() + s.len() + 1);
    full.push_str(preamble);
    if !preamble.ends_with('\n') {
        full.push('\n');
    }
    let source_offset = full.len();
    full.push_str(&s);
    Ok(Generated {
        kernel_name: name,
        source: s,
        full_source: full,
        source_offset,
        header_range,
        body_range,
        inputs: slots,
        outputs,
        attributes: attributes.iter().map(|(a, _)| *a).collect(),
        signature_quirk: quirk,
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub(crate) fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f == '_' || f.is_ascii_alphabetic()) && c.all(|x| x == '_' || x.is_ascii_alphanumeric())
}
