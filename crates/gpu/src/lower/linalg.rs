//! Lowering matrix products, `transpose` and `determinant` to per-element
//! multiply-adds. A matrix value is its elements in column-major order, one
//! register each (element (c, r) at `c * rows + r`).

use super::{err, LResult, Lowerer, Val};
use crate::ir::*;
use msl::ast::BinaryOp;
use msl::hir;
use msl::source::Span;
use msl::types::{Scalar, Type};

/// The (element, columns, rows) of a matrix type.
fn shape(t: &Type) -> Option<(Scalar, usize, usize)> {
    match t {
        Type::Matrix { elem, cols, rows } => Some((*elem, *cols as usize, *rows as usize)),
        _ => None,
    }
}

/// The matrix functions lowered here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Linalg {
    /// `a * b` with a matrix on either side (the checker's `__matrix_multiply`).
    Multiply,
    Transpose,
    Determinant,
}

impl Lowerer<'_> {
    pub(super) fn linalg(&mut self, op: Linalg, name: &str, args: &[hir::Expr], span: Span, out: &mut Block) -> LResult<Val> {
        let a = self.regs(&args[0], out)?;
        let at = self.access(span, name);
        match op {
            Linalg::Transpose => {
                let Some((_, cols, rows)) = shape(&args[0].ty) else { return err(span, "internal error: transpose of a non-matrix") };
                // Element (c, r) of the result is element (r, c) of the argument.
                let res: Vec<Reg> = (0..rows).flat_map(|c| (0..cols).map(move |r| r * rows + c)).map(|k| a[k]).collect();
                Ok(Val::Regs(self.copy_regs(&res, out)))
            }
            Linalg::Determinant => {
                let Some((elem, n, _)) = shape(&args[0].ty) else { return err(span, "internal error: determinant of a non-matrix") };
                let cols: Vec<usize> = (0..n).collect();
                Ok(Val::Regs(vec![self.cofactor_det(&a, n, &cols, 0, elem, at, out)]))
            }
            Linalg::Multiply => {
                let b = self.regs(&args[1], out)?;
                let (lt, rt) = (&args[0].ty, &args[1].ty);
                // Each result element is a dot product of a row of the left
                // operand with a column of the right one.
                let (elem, terms): (Scalar, Vec<Vec<(Reg, Reg)>>) = match (shape(lt), shape(rt)) {
                    (Some((elem, cols, rows)), None) => {
                        (elem, (0..rows).map(|r| (0..cols).map(|c| (a[c * rows + r], b[c])).collect()).collect())
                    }
                    (None, Some((elem, cols, rows))) => {
                        (elem, (0..cols).map(|c| (0..rows).map(|r| (a[r], b[c * rows + r])).collect()).collect())
                    }
                    (Some((elem, k, rows)), Some((_, cols, _))) => (
                        elem,
                        (0..cols)
                            .flat_map(|c| (0..rows).map(move |r| (c, r)))
                            .map(|(c, r)| (0..k).map(|t| (a[t * rows + r], b[c * k + t])).collect())
                            .collect(),
                    ),
                    _ => return err(span, "internal error: a matrix product without a matrix"),
                };
                let res = terms.into_iter().map(|pairs| self.dot_terms(&pairs, elem, at, out)).collect();
                Ok(Val::Regs(res))
            }
        }
    }

    fn op(&mut self, op: BinaryOp, ty: Scalar, a: Reg, b: Reg, at: AccessId, out: &mut Block) -> Reg {
        let dst = self.reg_for(ty);
        out.push(Inst::Binary { op, ty, dst, a, b, at });
        dst
    }

    /// Σ x·y over the pairs, left to right.
    fn dot_terms(&mut self, pairs: &[(Reg, Reg)], ty: Scalar, at: AccessId, out: &mut Block) -> Reg {
        let mut acc = self.op(BinaryOp::Mul, ty, pairs[0].0, pairs[0].1, at, out);
        for &(x, y) in &pairs[1..] {
            let p = self.op(BinaryOp::Mul, ty, x, y, at, out);
            acc = self.op(BinaryOp::Add, ty, acc, p, at, out);
        }
        acc
    }

    /// The determinant of the square sub-matrix of `m` (n rows) made of rows
    /// `row..n` and the columns `cols`, by cofactor expansion along its
    /// first row.
    #[allow(clippy::too_many_arguments)]
    fn cofactor_det(&mut self, m: &[Reg], n: usize, cols: &[usize], row: usize, ty: Scalar, at: AccessId, out: &mut Block) -> Reg {
        let el = |c: usize, r: usize| m[c * n + r];
        if cols.len() == 1 {
            return el(cols[0], row);
        }
        let mut acc: Option<Reg> = None;
        for (i, &c) in cols.iter().enumerate() {
            let rest: Vec<usize> = cols.iter().copied().filter(|&x| x != c).collect();
            let minor = self.cofactor_det(m, n, &rest, row + 1, ty, at, out);
            let term = self.op(BinaryOp::Mul, ty, el(c, row), minor, at, out);
            acc = Some(match acc {
                None => term,
                Some(a) if i % 2 == 1 => self.op(BinaryOp::Sub, ty, a, term, at, out),
                Some(a) => self.op(BinaryOp::Add, ty, a, term, at, out),
            });
        }
        acc.expect("at least one column")
    }
}
