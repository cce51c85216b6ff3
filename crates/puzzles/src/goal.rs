//! The goal picture: what a puzzle's test asks for before any attempt —
//! the inputs, the output the spec expects, and for every output cell the
//! input cells its value depends on (found by probing the spec, as
//! [`crate::explain::spec_dependencies`] does for explanations).
//!
//! It is drawn by the same diagram code as a kernel's trace: the picture
//! is a trace made up on the host, one "thread" per output cell, which
//! reads the cells the spec needs and writes its cell.

use crate::check::build_input;
use crate::show::{draw_shape, labels, Shown};
use crate::Puzzle;
use diagram::{DiagramSpec, Role, TableDesc};
use gpu::trace::{CellAlloc, CellInfo, Trace, TraceEvent};
use std::collections::HashMap;

/// The goal picture of test `case` of `puzzle`.
pub fn goal(puzzle: &'static Puzzle, case: usize) -> Result<Shown, String> {
    let tc = puzzle.tests.get(case).ok_or_else(|| format!("puzzle {} has no test {}", puzzle.number, case + 1))?;
    let inputs: Vec<arrays::Array> = tc.inputs.iter().map(|s| build_input(s, None)).collect();
    let expected = (puzzle.spec)(&inputs);
    let out_shape = draw_shape(&expected.shape);
    let cols = *out_shape.last().unwrap_or(&1);
    let cells: Vec<usize> = (0..expected.len()).collect();
    // `None` when the inputs are too large to probe: the picture then has
    // the values but no arrows.
    let deps = crate::explain::spec_dependencies(puzzle.spec, &inputs, &cells, puzzle.tolerance);

    let mut tables = Vec::new();
    for (k, (a, spec)) in inputs.iter().zip(tc.inputs).enumerate() {
        tables.push(TableDesc {
            name: spec.name.to_string(),
            role: Role::Input,
            alloc: CellAlloc::Buffer(k as u32),
            shape: draw_shape(&a.shape),
            elem_size: 1,
            values: Some(labels(a)),
        });
    }
    let out_alloc = CellAlloc::Buffer(inputs.len() as u32);
    tables.push(TableDesc {
        name: puzzle.output_name.to_string(),
        role: Role::Output,
        alloc: out_alloc,
        shape: out_shape.clone(),
        elem_size: 1,
        values: Some(labels(&expected)),
    });

    let mut trace = Trace::default();
    let mut index: HashMap<(CellAlloc, i64), u32> = HashMap::new();
    let mut cell = |alloc: CellAlloc, offset: usize| -> u32 {
        *index.entry((alloc, offset as i64)).or_insert_with(|| {
            trace.cells.push(CellInfo { alloc, offset: offset as i64, size: 1 });
            (trace.cells.len() - 1) as u32
        })
    };
    let mut events = Vec::new();
    for i in cells {
        let thread = [(i % cols.max(1)) as u32, (i / cols.max(1)) as u32, 0];
        let sources: Vec<u32> = deps
            .as_ref()
            .and_then(|d| d.get(i))
            .map(|d| d.iter().map(|&(k, e)| cell(CellAlloc::Buffer(k as u32), e)).collect())
            .unwrap_or_default();
        let event = |write: bool, cell: u32, sources: Vec<u32>| TraceEvent {
            thread,
            threadgroup: [0, 0, 0],
            interval: 0,
            write,
            cell,
            sources,
            value: None,
            span: Default::default(),
            atomic: false,
        };
        events.extend(sources.iter().map(|&s| event(false, s, Vec::new())));
        let target = cell(out_alloc, i);
        events.push(event(true, target, sources));
    }
    trace.events = events;
    // One panel whose "threads" are the output cells, laid out like them.
    let rows = out_shape.iter().rev().skip(1).product::<usize>().max(1);
    let size = [cols.max(1) as u32, rows as u32, 1];
    let title = format!("Puzzle {}: the goal — which input cells each output cell needs", puzzle.number);
    let spec = DiagramSpec { title, grid: size, threadgroup: size, tables, focus: None };
    Ok(Shown { spec, trace, findings: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_goal_links_each_output_to_its_input() {
        let p = crate::find("map").unwrap();
        let shown = goal(p, 0).unwrap();
        let writes: Vec<&TraceEvent> = shown.trace.events.iter().filter(|e| e.write).collect();
        assert_eq!(writes.len(), 4);
        for (i, w) in writes.iter().enumerate() {
            assert_eq!(w.thread, [i as u32, 0, 0]);
            let src: Vec<&CellInfo> = w.sources.iter().map(|&s| &shown.trace.cells[s as usize]).collect();
            assert_eq!(src, vec![&CellInfo { alloc: CellAlloc::Buffer(0), offset: i as i64, size: 1 }]);
        }
        let out = shown.spec.tables.last().unwrap();
        assert_eq!(out.values.as_deref(), Some(&["10".to_string(), "11".into(), "12".into(), "13".into()][..]));
        assert!(diagram::render_svg(&shown.spec, &shown.trace).contains("<svg"));
    }

    #[test]
    fn every_puzzle_has_a_goal() {
        for p in crate::PUZZLES.iter() {
            let shown = goal(p, 0).unwrap_or_else(|e| panic!("puzzle {}: {e}", p.number));
            assert!(shown.trace.events.iter().any(|e| e.write), "puzzle {}", p.number);
            assert!(diagram::render_svg(&shown.spec, &shown.trace).starts_with("<svg"), "puzzle {}", p.number);
        }
    }
}
