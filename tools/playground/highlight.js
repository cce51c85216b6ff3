// A small Metal Shading Language highlighter: a one-pass scanner over the
// text that wraps comments, strings, numbers, preprocessor lines, keywords,
// types, attributes and calls in <span class="tok-…">. It returns one HTML
// string per line so the editor can mark lines that carry findings.

const KEYWORDS = new Set(`alignas alignof auto break case catch char class const constexpr const_cast continue decltype default
delete do else enum explicit extern false for friend goto if inline mutable namespace new noexcept nullptr operator private
protected public register reinterpret_cast return sizeof static static_assert static_cast struct switch template this
thread_local true typedef typeid typename union using virtual volatile while device threadgroup constant thread kernel
vertex fragment threadgroup_imageblock ray_data object_data visible stitchable metal`.split(/\s+/));

const TYPES = new Set(`void bool char uchar short ushort int uint long ulong half float bfloat size_t ptrdiff_t atomic
atomic_int atomic_uint atomic_bool atomic_float atomic_ulong simdgroup_float8x8 simdgroup_half8x8 simdgroup_bfloat8x8
int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t texture2d sampler array packed_float3 mem_flags
memory_order`.split(/\s+/));

const VECTOR = /^(bool|char|uchar|short|ushort|int|uint|long|ulong|half|float|bfloat)[234](x[234])?$/;
const PACKED = /^packed_(char|uchar|short|ushort|int|uint|half|float|bfloat)[234]$/;

function escape(s) {
  return s.replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"));
}

const TOKEN = new RegExp(
  [
    String.raw`(?<com>\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$))`,
    String.raw`(?<str>"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)`,
    String.raw`(?<hash>#)`,
    String.raw`(?<attr>\[\[[^\]\n]*\]\])`,
    String.raw`(?<num>(?:0[xX][0-9a-fA-F']+|(?:\d[\d']*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[uUlLfFhH]*)`,
    String.raw`(?<id>[A-Za-z_]\w*)`,
  ].join("|"),
  "g",
);

/** Highlight `text`; returns an array of HTML strings, one per line. */
export function highlightLines(text) {
  let html = "";
  let last = 0;
  // Preprocessor lines: a `#` first on a line colours the whole line.
  const pp = /^[ \t]*#[^\n]*/gm;
  const ppRanges = [];
  for (const m of text.matchAll(pp)) ppRanges.push([m.index, m.index + m[0].length]);
  let ppIdx = 0;
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m; m = TOKEN.exec(text)) {
    while (ppIdx < ppRanges.length && ppRanges[ppIdx][1] <= m.index) ppIdx++;
    const inPP = ppIdx < ppRanges.length && ppRanges[ppIdx][0] <= m.index && !m.groups.com;
    html += escape(text.slice(last, m.index));
    const t = m[0];
    let cls = null;
    if (m.groups.com) cls = "com";
    else if (inPP || m.groups.hash) cls = "pp";
    else if (m.groups.str) cls = "str";
    else if (m.groups.attr) cls = "attr";
    else if (m.groups.num) cls = "num";
    else if (m.groups.id) {
      if (KEYWORDS.has(t)) cls = "kw";
      else if (TYPES.has(t) || VECTOR.test(t) || PACKED.test(t)) cls = "ty";
      else if (/^\s*\(/.test(text.slice(m.index + t.length, m.index + t.length + 8))) cls = "fn";
    }
    html += cls ? wrapMultiline(t, cls) : escape(t);
    last = m.index + t.length;
  }
  html += escape(text.slice(last));
  return html.split("\n");
}

// A token that spans lines (a block comment) is closed and reopened at each
// line break, so every line's HTML stands alone.
function wrapMultiline(t, cls) {
  return escape(t)
    .split("\n")
    .map((part) => `<span class="tok-${cls}">${part}</span>`)
    .join("\n");
}
