//! The book's data: names, files, splitting and the specs' values.

use arrays::{Array, DType};
use puzzles::check::runs;
use puzzles::{find, split_source, BODY_MARKER, PUZZLES};

#[test]
fn slugs_and_files_follow_the_contract() {
    let slugs: Vec<&str> = PUZZLES.iter().map(|p| p.slug).collect();
    assert_eq!(
        slugs[..14],
        [
            "map",
            "zip",
            "guard",
            "map_2d",
            "broadcast",
            "threadgroups",
            "threadgroups_2d",
            "threadgroup_memory",
            "pooling",
            "dot_product",
            "1d_conv",
            "prefix_sum",
            "axis_sum",
            "matmul"
        ]
    );
    for (k, p) in PUZZLES.iter().enumerate() {
        assert_eq!(p.number as usize, k + 1);
        assert_eq!(p.file_name(), format!("{:02}_{}.metal", k + 1, p.slug));
        // Book one: one or two hints; book two: two or three.
        let hints = if p.number <= 14 { 1..=2 } else { 2..=3 };
        assert!(hints.contains(&p.hints.len()), "{}", p.slug);
        assert_eq!(find(&p.number.to_string()).unwrap().slug, p.slug);
        assert_eq!(find(p.slug).unwrap().number, p.number);
        let starter = p.starter_file();
        assert_eq!(starter.lines().any(|l| l == BODY_MARKER), !p.header.is_empty());
        let (header, body) = split_source(&starter);
        assert!(header.ends_with(p.header));
        assert!(body.contains(p.starter));
    }
    assert_eq!(find("07").unwrap().slug, "threadgroups_2d");
    assert_eq!(find("1D_conv").unwrap().number, 11);
    assert_eq!(find("15").unwrap().slug, "simd_sum");
    assert!(find(&(PUZZLES.len() + 1).to_string()).is_none() && find("0").is_none() && find("nope").is_none());
}

#[test]
fn split_at_the_marker_line_only() {
    assert_eq!(split_source("a\n// ---- body ----\nb\n"), ("a\n".into(), "b\n".into()));
    assert_eq!(split_source("a\r\n// ---- body ----\r\nb"), ("a\r\n".into(), "b".into()));
    assert_eq!(split_source("x // ---- body ----\nb"), (String::new(), "x // ---- body ----\nb".into()));
    assert_eq!(split_source("b"), (String::new(), "b".into()));
}

fn spec_of(slug: &str, case: usize) -> Vec<f64> {
    let p = find(slug).unwrap();
    let (_, _, _, inputs) = runs(p).into_iter().find(|r| r.1 == case && r.2.is_none()).unwrap();
    (p.spec)(&inputs).to_f64_vec()
}

#[test]
fn specs_give_the_books_values() {
    assert_eq!(spec_of("map", 0), [10.0, 11.0, 12.0, 13.0]);
    assert_eq!(spec_of("broadcast", 0), [0.0, 1.0, 1.0, 2.0]);
    assert_eq!(spec_of("threadgroups_2d", 0), [11.0; 25]);
    assert_eq!(spec_of("pooling", 0), [0.0, 1.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0]);
    assert_eq!(spec_of("dot_product", 0), [140.0]);
    assert_eq!(spec_of("1d_conv", 0), [5.0, 8.0, 11.0, 14.0, 5.0, 0.0]);
    assert_eq!(spec_of("1d_conv", 1), [14.0, 20.0, 26.0, 32.0, 38.0, 44.0, 50.0, 56.0, 62.0, 68.0, 74.0, 80.0, 41.0, 14.0, 0.0]);
    assert_eq!(spec_of("prefix_sum", 0), [28.0]);
    assert_eq!(spec_of("prefix_sum", 1), [28.0, 77.0]);
    assert_eq!(spec_of("axis_sum", 0), [15.0, 51.0, 87.0, 123.0]);
    assert_eq!(spec_of("matmul", 0), [1.0, 3.0, 3.0, 13.0]);
    let full = spec_of("matmul", 1);
    assert_eq!(full[..8], [140.0, 364.0, 588.0, 812.0, 1036.0, 1260.0, 1484.0, 1708.0]);
    assert_eq!(full[63], 28364.0);
}

#[test]
fn randomized_inputs_are_reproducible_and_keep_shapes() {
    for p in PUZZLES.iter() {
        let (a, b) = (runs(p), runs(p));
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.0, y.0);
            for (u, v) in x.3.iter().zip(&y.3) {
                assert!(u.same_as(v), "{} is not reproducible", x.0);
            }
        }
        for case in 0..p.tests.len() {
            let of_case: Vec<_> = a.iter().filter(|r| r.1 == case).collect();
            let exact = &of_case[0].3;
            for r in &of_case[1..] {
                for (u, v) in r.3.iter().zip(exact) {
                    assert_eq!((u.dtype, &u.shape), (v.dtype, &v.shape));
                }
                assert!(r.3.iter().zip(exact).any(|(u, v)| !u.same_as(v)), "{}: random equals exact", r.0);
            }
        }
    }
    // Inputs of the book's tests: int32 from arange unless the book says float32.
    let map = &runs(find("map").unwrap())[0].3[0];
    assert!(map.same_as(&Array::arange(DType::I32, &[4])));
    let b = &runs(find("matmul").unwrap())[0].3[1];
    assert_eq!(b.dtype, DType::F32);
    assert!(!b.is_row_contiguous(), "matmul's b is a transposed view");
}
