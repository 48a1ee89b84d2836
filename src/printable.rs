//! Text from files and histories made safe for a terminal: a lock name, holder, error or log
//! tail read from a history or a server's log could hold an escape sequence that rewrites the
//! screen, or a carriage return that hides a line. Newlines and tabs are kept.

use std::borrow::Cow;

/// `text` with every control character but `\n` and `\t` written as an escape (`\u{1b}`).
pub fn printable(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn escapes_control_characters_but_keeps_lines() {
        assert_eq!(printable("a\tb\nc"), "a\tb\nc");
        assert_eq!(
            printable("x\u{1b}[2Jy\rz\u{7}"),
            "x\\u{1b}[2Jy\\u{d}z\\u{7}"
        );
    }
}
