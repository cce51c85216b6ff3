//! The kernel corpus in `tests/kernels` (see its README): valid files compile
//! cleanly, each invalid file reports its first error on the `// ERROR:` line,
//! and the unsupported files are still rejected (they document known gaps).
//! Every program that compiles also passes the HIR verifier (`msl::verify`).

use std::path::{Path, PathBuf};

fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels")
}

fn metal_files(folder: &str) -> Vec<PathBuf> {
    let dir = kernels_dir().join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "metal"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .metal files in {}", dir.display());
    files
}

fn compile(path: &Path) -> msl::Compilation {
    let text = std::fs::read_to_string(path).unwrap();
    let name = format!("{}/{}", path.parent().unwrap().file_name().unwrap().to_string_lossy(), path.file_name().unwrap().to_string_lossy());
    msl::compile(&name, &text, &msl::CompileOptions::default())
}

fn check_valid(folder: &str) {
    let mut failures = Vec::new();
    for path in metal_files(folder) {
        let c = compile(&path);
        if c.has_errors() {
            failures.push(format!("{}:\n{}", path.display(), c.render(false)));
            continue;
        }
        let program = c.program.as_ref().expect("no errors but no program");
        if program.kernels().next().is_none() {
            failures.push(format!("{}: compiled, but no kernel found", path.display()));
        }
        for v in msl::verify::verify(program) {
            let (line, col) = c.sources.line_col(v.span);
            failures.push(format!("{}:{line}:{col}: the HIR verifier: {v}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{} file(s) failed:\n\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn puzzles_compile() {
    check_valid("puzzles");
}

#[test]
fn mlx_kernels_compile() {
    check_valid("mlx");
}

#[test]
fn seeds_compile() {
    check_valid("seeds");
}

#[test]
fn features_compile() {
    check_valid("features");
}

/// `// ERROR: <line>: <description>` on the first line of an invalid file.
fn expected_error_line(path: &Path, text: &str) -> u32 {
    let first = text.lines().next().unwrap_or("");
    let rest = first.strip_prefix("// ERROR:").unwrap_or_else(|| panic!("{}: first line is not `// ERROR: <line>: ...`", path.display()));
    let (line, _) = rest.trim().split_once(':').unwrap_or_else(|| panic!("{}: malformed ERROR line", path.display()));
    line.trim().parse().unwrap_or_else(|_| panic!("{}: malformed ERROR line number", path.display()))
}

#[test]
fn invalid_files_report_error_on_marked_line() {
    let mut failures = Vec::new();
    for path in metal_files("invalid") {
        let text = std::fs::read_to_string(&path).unwrap();
        let want = expected_error_line(&path, &text);
        let c = compile(&path);
        let Some(first) = c.diagnostics.items.iter().find(|d| d.is_error()) else {
            failures.push(format!("{}: expected an error on line {want}, got none:\n{}", path.display(), c.render(false)));
            continue;
        };
        let (line, _) = c.sources.line_col(first.span);
        if line != want {
            failures.push(format!("{}: first error on line {line}, expected line {want}:\n{}", path.display(), c.render(false)));
        }
        assert!(c.program.is_none(), "{}: a program was produced despite errors", path.display());
    }
    assert!(failures.is_empty(), "{} file(s) failed:\n\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn unsupported_files_are_rejected() {
    let mut failures = Vec::new();
    for path in metal_files("unsupported") {
        let c = compile(&path);
        if !c.has_errors() {
            failures.push(format!("{}: now compiles without errors; if the gap is closed, move it to features/", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
