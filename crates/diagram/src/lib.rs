//! The puzzle book's diagrams: for one kernel run, which thread touched
//! which cell, drawn from the simulator's access trace
//! ([`gpu::trace::Trace`]).
//!
//! Each threadgroup is a panel holding the input tables (top), the
//! threadgroup-memory tables (one copy per barrier interval) and the output
//! tables. Every thread has a colour; a read is a dot of the reader's colour
//! in the cell, a write an outline of the writer's colour, and an arc runs
//! from every cell whose value fed a write to the cell written.
//!
//! Three renderings: [`render_svg`] (the reference), [`render_png`] (the SVG
//! rasterized with resvg) and [`render_terminal`] (a compact grid of
//! writers and read counts for watch mode).

mod model;
#[cfg(feature = "png")]
mod png;
mod svg;
mod terminal;

#[cfg(feature = "png")]
pub use png::render_png;
pub use svg::render_svg;
pub use terminal::render_terminal;

use gpu::trace::CellAlloc;

/// What a table is to the kernel: where it is drawn in a panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// A device buffer the kernel reads (drawn at the top).
    Input,
    /// A device buffer the kernel writes (drawn at the bottom).
    Output,
    /// Threadgroup memory (drawn once per barrier interval).
    Threadgroup,
}

/// One table of cells: a buffer or a threadgroup variable.
#[derive(Clone, Debug, PartialEq)]
pub struct TableDesc {
    pub name: String,
    pub role: Role,
    /// The allocation whose trace cells belong to this table.
    pub alloc: CellAlloc,
    /// 1-D (`[n]`) or 2-D (`[rows, cols]`); higher ranks are flattened to
    /// 2-D (all leading dimensions become rows). Long 1-D tables wrap at 16
    /// cells a row.
    pub shape: Vec<usize>,
    /// Bytes per element (trace offsets are divided by this).
    pub elem_size: u32,
    /// Cell labels in row-major order (input values, final outputs).
    pub values: Option<Vec<String>>,
}

impl TableDesc {
    /// The `[[buffer(index)]]` parameter of `kernel` as a table: named after
    /// the parameter, elements the size of its pointee. `None` when the
    /// kernel has no such buffer.
    pub fn for_buffer(kernel: &gpu::Kernel, index: u32, role: Role, shape: Vec<usize>, values: Option<Vec<String>>) -> Option<TableDesc> {
        kernel.params.iter().find_map(|p| match p.kind {
            gpu::ir::ParamKind::Buffer { index: i, pointee_size, .. } if i == index => Some(TableDesc {
                name: p.name.clone(),
                role,
                alloc: CellAlloc::Buffer(index),
                shape: shape.clone(),
                elem_size: pointee_size.max(1),
                values: values.clone(),
            }),
            _ => None,
        })
    }

    /// Threadgroup variable number `var` of `kernel` as a table, elements
    /// the size of its scalars; `shape` defaults to 1-D over the whole
    /// variable. `None` when there is no such variable.
    pub fn for_threadgroup_var(kernel: &gpu::Kernel, var: u32, shape: Option<Vec<usize>>) -> Option<TableDesc> {
        let v = kernel.threadgroup_vars.get(var as usize)?;
        let elem_size = v.grain.max(1);
        Some(TableDesc {
            name: v.name.clone(),
            role: Role::Threadgroup,
            alloc: CellAlloc::Threadgroup(var),
            // As declared (`a_shared[3][3]` is 3 x 3), else flat.
            shape: shape.unwrap_or_else(|| {
                let n: u64 = v.dims.iter().map(|&d| d as u64).product();
                if v.dims.len() > 1 && n * elem_size as u64 == v.size as u64 {
                    v.dims.iter().map(|&d| d as usize).collect()
                } else {
                    vec![(v.size / elem_size) as usize]
                }
            }),
            elem_size,
            values: None,
        })
    }
}

/// What to draw: the dispatch and the tables.
#[derive(Clone, Debug, PartialEq)]
pub struct DiagramSpec {
    pub title: String,
    /// Grid size in threads.
    pub grid: [u32; 3],
    /// Threadgroup size in threads.
    pub threadgroup: [u32; 3],
    pub tables: Vec<TableDesc>,
    /// Draw only this threadgroup (others are summarised in the subtitle).
    pub focus: Option<[u32; 3]>,
}

/// Most threadgroup panels drawn (later threadgroups are left out).
pub const MAX_PANELS: usize = 9;
/// Most rows and columns of a table drawn.
pub const MAX_ROWS: usize = 32;
pub const MAX_COLS: usize = 32;
/// Most threadgroup-memory copies (barrier intervals) drawn per table.
pub const MAX_INTERVALS: u32 = 8;
/// Most arcs drawn per panel.
pub const MAX_ARCS: usize = 1024;

/// Colour of thread `i` (threadgroup-local linear index): hues step by the
/// golden angle so neighbouring threads differ clearly; lightness alternates.
pub fn thread_color(i: u32) -> (u8, u8, u8) {
    let hue = (i as f64 * 137.507_764) % 360.0;
    let (s, l) = match i % 3 {
        0 => (0.75, 0.45),
        1 => (0.70, 0.36),
        _ => (0.80, 0.55),
    };
    hsl_to_rgb(hue, s, l)
}

fn hsl_to_rgb(h: f64, s: f64, l: f64) -> (u8, u8, u8) {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = h / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let f = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    (f(r), f(g), f(b))
}

pub(crate) fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Row-major (rows, cols) a table is drawn as.
pub fn grid_shape(shape: &[usize]) -> (usize, usize) {
    match shape {
        [] => (1, 1),
        [n] if *n <= 16 => (1, (*n).max(1)),
        [n] => (n.div_ceil(16), 16),
        [r, c] => ((*r).max(1), (*c).max(1)),
        _ => {
            let c = *shape.last().unwrap();
            (shape[..shape.len() - 1].iter().product::<usize>().max(1), c.max(1))
        }
    }
}
