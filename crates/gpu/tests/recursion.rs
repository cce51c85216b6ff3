//! Recursive functions: the lowering inlines every call, so recursion is
//! unrolled to a bounded depth. Kernels whose recursion stays within it run
//! exactly; a thread that goes deeper stops the run with a runaway finding
//! at the recursive call, naming the function.

mod common;
use common::*;

fn run_u32(src: &str, n: u32) -> (Vec<u32>, RunReport, Compiled) {
    let c = compile_full(&format!("{PRELUDE}{src}"), "k");
    let mut b = bufs(vec![(0, u32s(&vec![0; n as usize]))]);
    let r = run(&c.kernel, &threads([n, 1, 1], [n, 1, 1]), &mut b, &opts(CheckLevel::All));
    let out = b[&0].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    (out, r, c)
}

#[test]
fn self_recursion_within_the_depth_runs_exactly() {
    let src = r#"
uint factorial(uint n) {
  if (n <= 1u) { return 1u; }
  return n * factorial(n - 1u);
}
kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = factorial(i % 9u);
}
"#;
    let (out, r, _) = run_u32(src, 12);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    for (i, v) in out.iter().enumerate() {
        let expect: u32 = (1..=(i as u32 % 9)).product();
        assert_eq!(*v, expect, "thread {i}");
    }
}

/// Two recursive calls per level (a call tree, not a chain) and mutual
/// recursion through a second function.
#[test]
fn branching_and_mutual_recursion_run_exactly() {
    let src = r#"
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
bool is_odd(uint n);
bool is_even(uint n) { return n == 0u ? true : is_odd(n - 1u); }
bool is_odd(uint n) { return n == 0u ? false : is_even(n - 1u); }
kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = uint(fib(int(i % 7u))) * 10u + (is_even(i % 5u) ? 1u : 0u);
}
"#;
    let (out, r, _) = run_u32(src, 10);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let fib = |n: u32| -> u32 {
        let (mut a, mut b) = (0u32, 1u32);
        for _ in 0..n {
            (a, b) = (b, a + b);
        }
        a
    };
    for (i, v) in out.iter().enumerate() {
        let i = i as u32;
        assert_eq!(*v, fib(i % 7) * 10 + u32::from((i % 5).is_multiple_of(2)), "thread {i}");
    }
}

/// The shape of MLX's `LoopedElemToLoc::next(int n, …)`: a member function
/// of a struct template that calls itself once more with the remainder.
#[test]
fn a_member_function_calling_itself_updates_its_object() {
    let src = r#"
template <int D>
struct Walker {
  int index = 0;
  int wraps = 0;
  void advance(int n, int size) thread {
    index += n;
    if (index >= size) {
      int extra = index - size;
      index = 0;
      wraps += 1;
      if (extra > 0) { advance(extra, size); }
    }
  }
};
kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  Walker<2> w;
  w.advance(int(i), 3);
  out[i] = uint(w.index) * 100u + uint(w.wraps);
}
"#;
    let (out, r, _) = run_u32(src, 8);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    for (i, v) in out.iter().enumerate() {
        // Same arithmetic in Rust: each wrap leaves index 0 and recurses on the rest.
        let (mut index, mut wraps, mut n) = (0i32, 0u32, i as i32);
        loop {
            index += n;
            if index < 3 {
                break;
            }
            n = index - 3;
            index = 0;
            wraps += 1;
            if n == 0 {
                break;
            }
        }
        assert_eq!(*v, index as u32 * 100 + wraps, "thread {i}");
    }
}

/// A thread whose recursion never reaches its base case is stopped at the
/// recursive call with a runaway finding; no hang, no crash.
#[test]
fn recursion_past_the_depth_is_a_runaway_finding_at_the_call() {
    let src = r#"
uint count_down(uint n) {
  if (n == 0u) { return 0u; }
  return 1u + count_down(n - 2u);
}
kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = count_down(i);
}
"#;
    let (_, r, c) = run_u32(src, 4);
    let runaway: Vec<_> = r.findings.iter().filter(|f| f.kind == FindingKind::RunawayKernel).collect();
    assert_eq!(runaway.len(), 1, "{:#?}", r.findings);
    let f = runaway[0];
    assert_eq!(c.line(f), 6, "{f:?}");
    assert!(f.message.contains("`count_down`") && f.message.contains("recursed more than"), "{}", f.message);
    // Odd threads never reach 0: the first of them is named.
    assert_eq!(f.thread[0], 1, "{f:?}");
}
