//! Mutations of Metal source for the quick fuzzers (`mutate.rs` here, and
//! crates/jit's `differential_fuzz`): line and token edits and inserted
//! C++ words, from a deterministic generator.

pub const WORDS: &[&str] = &[
    "template <typename T>",
    "template <>",
    "operator",
    "operator()",
    "auto",
    "decltype(",
    "typename",
    "::",
    "<",
    ">",
    ">>",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "...",
    "&",
    "&&",
    "*",
    "=",
    "= default;",
    "static",
    "constexpr",
    "thread",
    "device",
    "constant",
    "threadgroup",
    "struct S {",
    "using T = ",
    "enable_if_t<",
    "is_same_v<",
    "[[function_constant(0)]]",
    "namespace n = ",
    "this->",
    "return",
    "-> decltype(",
    "union",
    "explicit",
    "#define X(a) a a",
    "#include \"x.h\"",
    "0x7fffffff",
    "1e40",
    "float (*f)(float) = ",
    "nullptr",
    "? add1 : neg",
];

/// A tiny deterministic generator (xorshift).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

pub fn mutate(src: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
    for _ in 0..1 + rng.below(4) {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let i = rng.below(lines.len());
        match rng.below(6) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[rng.below(lines.len())].clone();
                lines.insert(i, l);
            }
            2 => {
                let w = WORDS[rng.below(WORDS.len())];
                let l = &mut lines[i];
                let mut at = rng.below(l.len() + 1);
                while !l.is_char_boundary(at) {
                    at -= 1;
                }
                l.insert_str(at, w);
            }
            3 => {
                let l = &mut lines[i];
                if !l.is_empty() {
                    let mut a = rng.below(l.len());
                    while !l.is_char_boundary(a) {
                        a -= 1;
                    }
                    let mut b = (a + 1 + rng.below(8)).min(l.len());
                    while !l.is_char_boundary(b) {
                        b += 1;
                    }
                    l.replace_range(a..b, "");
                }
            }
            4 => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
            _ => {
                let k = rng.below(WORDS.len());
                lines.insert(i, WORDS[k].to_string());
            }
        }
    }
    lines.join("\n")
}
