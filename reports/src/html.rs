//! Text made safe for the pages and SVGs this crate writes by hand (the templates escape their own).

/// `text` safe inside an SVG or HTML element or a quoted attribute.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
