//! The PNG rendering: the SVG rasterized with resvg.

use resvg::{tiny_skia, usvg};
use std::sync::{Arc, OnceLock};

/// The system fonts, loaded once. Without any, text is left out of the
/// image (no error).
fn fonts() -> Arc<usvg::fontdb::Database> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        // The SVG asks for DejaVu Sans, Helvetica, Arial or sans-serif: make
        // the generic family something that exists.
        let families: Vec<String> = db.faces().flat_map(|f| f.families.iter().map(|(n, _)| n.clone())).collect();
        let pick = ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica", "Noto Sans"]
            .iter()
            .find(|want| families.iter().any(|f| f == *want))
            .map(|s| s.to_string())
            .or_else(|| {
                let mut v = families.clone();
                v.sort();
                v.into_iter().next()
            });
        if let Some(fam) = pick {
            db.set_sans_serif_family(fam);
        }
        Arc::new(db)
    })
    .clone()
}

/// Rasterize an SVG (from [`crate::render_svg`]) to PNG bytes, at twice the
/// SVG's size when it is small enough, on a white background.
pub fn render_png(svg: &str) -> Result<Vec<u8>, String> {
    render_with(svg, fonts())
}

fn render_with(svg: &str, fontdb: Arc<usvg::fontdb::Database>) -> Result<Vec<u8>, String> {
    let opt = usvg::Options { fontdb, ..Default::default() };
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| format!("svg: {e}"))?;
    let size = tree.size();
    let scale = if size.width().max(size.height()) <= 1800.0 { 2.0 } else { 1.0 };
    let (w, h) = ((size.width() * scale).ceil() as u32, (size.height() * scale).ceil() as u32);
    let mut pixmap = tiny_skia::Pixmap::new(w.max(1), h.max(1)).ok_or_else(|| format!("cannot allocate a {w}×{h} image"))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| format!("png: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = r#"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect x="1" y="1" width="10" height="10" fill="red"/><text x="12" y="12" font-family="sans-serif">7</text></svg>"#;

    #[test]
    fn renders_without_any_font() {
        let png = render_with(SVG, Arc::new(usvg::fontdb::Database::new())).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }

    #[test]
    fn bad_svg_is_an_error() {
        assert!(render_png("<svg").is_err());
    }
}
