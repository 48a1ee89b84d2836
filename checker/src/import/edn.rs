//! An EDN reader for the histories Jepsen and Knossos write: `;` comments and `#_` discards,
//! whitespace and commas anywhere, collections over many lines, namespaced keywords and maps,
//! string escapes (`\uXXXX` included), characters, sets, tagged literals and records
//! (`#jepsen.history.Op{…}`, `#inst "…"`), bigints (`1N`), decimals, ratios and `##Inf`.
//!
//! Nesting is limited to [`MAX_DEPTH`] levels: the reader recurses once per level, and a value
//! nested thousands deep (a few KB of `[`) would otherwise overflow the stack.

use std::fmt;

/// How deep collections, tags and metadata may nest. Jepsen ops nest a handful of levels.
pub const MAX_DEPTH: usize = 128;

/// An EDN value. Maps keep their entries in file order.
#[derive(Debug, Clone, PartialEq)]
pub enum Edn {
    Nil,
    Bool(bool),
    Int(i64),
    /// An integer outside i64 (Clojure's BigInt), as written without its `N`.
    BigInt(String),
    Float(f64),
    Str(String),
    /// Without the leading colon; a namespaced keyword keeps its `ns/`.
    Keyword(String),
    Symbol(String),
    Char(char),
    Vector(Vec<Edn>),
    List(Vec<Edn>),
    Set(Vec<Edn>),
    Map(Vec<(Edn, Edn)>),
    /// `#tag value`: a record (`#jepsen.history.Op{…}`), `#inst`, `#uuid`, …
    Tagged(String, Box<Edn>),
}

impl Edn {
    /// The value under keyword `key` of a map (or of a tagged record).
    pub fn get(&self, key: &str) -> Option<&Edn> {
        match self {
            Edn::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Edn::Keyword(s) if s == key))
                .map(|(_, v)| v),
            Edn::Tagged(_, inner) => inner.get(key),
            _ => None,
        }
    }

    /// The value as EDN text, cut to about `max` characters, for error messages.
    pub fn brief(&self, max: usize) -> String {
        let mut s = self.to_string();
        if s.len() > max {
            let cut = (0..=max)
                .rev()
                .find(|&i| s.is_char_boundary(i))
                .unwrap_or(0);
            s.truncate(cut);
            s.push('…');
        }
        s
    }
}

fn write_seq(f: &mut fmt::Formatter<'_>, open: &str, items: &[Edn], close: &str) -> fmt::Result {
    f.write_str(open)?;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        write!(f, "{item}")?;
    }
    f.write_str(close)
}

impl fmt::Display for Edn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Edn::Nil => f.write_str("nil"),
            Edn::Bool(b) => write!(f, "{b}"),
            Edn::Int(i) => write!(f, "{i}"),
            Edn::BigInt(s) => write!(f, "{s}N"),
            Edn::Float(x) => write!(f, "{x:?}"),
            Edn::Str(s) => write!(f, "{s:?}"),
            Edn::Keyword(k) => write!(f, ":{k}"),
            Edn::Symbol(s) => f.write_str(s),
            Edn::Char(c) => write!(f, "\\{c}"),
            Edn::Vector(v) => write_seq(f, "[", v, "]"),
            Edn::List(v) => write_seq(f, "(", v, ")"),
            Edn::Set(v) => write_seq(f, "#{", v, "}"),
            Edn::Map(entries) => {
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k} {v}")?;
                }
                f.write_str("}")
            }
            Edn::Tagged(tag, v) => write!(f, "#{tag} {v}"),
        }
    }
}

/// Why EDN text could not be read, and on which line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct EdnError {
    pub line: usize,
    pub message: String,
}

/// Reads every top-level form of `text` (line numbers from 1).
pub fn parse_all(text: &str) -> Result<Vec<Edn>, EdnError> {
    let mut r = Reader::new(text, 1);
    let mut out = Vec::new();
    while let Some((_, form)) = r.next_form()? {
        out.push(form);
    }
    Ok(out)
}

/// Reads forms one at a time, knowing the line each starts on.
pub struct Reader<'a> {
    text: &'a str,
    s: &'a [u8],
    i: usize,
    /// Line of byte `counted`; lines are counted forward lazily as positions are asked for.
    counted: usize,
    line: usize,
}

fn is_delim(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(
            c,
            b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';'
        )
}

/// What closes a collection, and its name for messages.
fn closer(open: u8) -> (u8, &'static str) {
    match open {
        b'[' => (b']', "vector"),
        b'(' => (b')', "list"),
        _ => (b'}', "map"),
    }
}

impl<'a> Reader<'a> {
    /// A reader of `text`, whose first line is line `first_line` of its file.
    pub fn new(text: &'a str, first_line: usize) -> Self {
        Reader {
            text,
            s: text.as_bytes(),
            i: 0,
            counted: 0,
            line: first_line,
        }
    }

    /// The line byte `pos` is on; `pos` never goes backwards between calls.
    fn line_at(&mut self, pos: usize) -> usize {
        let pos = pos.min(self.s.len());
        if pos > self.counted {
            self.line += self.s[self.counted..pos]
                .iter()
                .filter(|&&c| c == b'\n')
                .count();
            self.counted = pos;
        }
        self.line
    }

    fn err<T>(&mut self, message: impl Into<String>) -> Result<T, EdnError> {
        Err(EdnError {
            line: self.line_at(self.i),
            message: message.into(),
        })
    }

    /// The next top-level form and the line it starts on; `None` at the end of the text.
    pub fn next_form(&mut self) -> Result<Option<(usize, Edn)>, EdnError> {
        self.skip_ws(0)?;
        if self.i >= self.s.len() {
            return Ok(None);
        }
        let line = self.line_at(self.i);
        Ok(Some((line, self.value(0)?)))
    }

    /// When the next form is a vector or list, steps into it and returns its closing byte, so
    /// its items can be read one by one with [`Reader::next_item`].
    pub fn enter_seq(&mut self) -> Result<Option<u8>, EdnError> {
        self.skip_ws(0)?;
        match self.s.get(self.i) {
            Some(&c @ (b'[' | b'(')) => {
                self.i += 1;
                Ok(Some(closer(c).0))
            }
            _ => Ok(None),
        }
    }

    /// The next item of the collection entered with [`Reader::enter_seq`] and its line;
    /// `None` once its closing delimiter is read.
    pub fn next_item(&mut self, close: u8) -> Result<Option<(usize, Edn)>, EdnError> {
        self.skip_ws(1)?;
        match self.s.get(self.i) {
            None => self.err(format!(
                "the text ends inside a collection: a `{}` is missing",
                close as char
            )),
            Some(&c) if c == close => {
                self.i += 1;
                Ok(None)
            }
            Some(_) => {
                let line = self.line_at(self.i);
                Ok(Some((line, self.value(1)?)))
            }
        }
    }

    /// Skips whitespace, commas, `;` comments and `#_` discarded forms.
    fn skip_ws(&mut self, depth: usize) -> Result<(), EdnError> {
        while let Some(&c) = self.s.get(self.i) {
            match c {
                c if c.is_ascii_whitespace() || c == b',' => self.i += 1,
                b';' => {
                    while self.i < self.s.len() && self.s[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                b'#' if self.s.get(self.i + 1) == Some(&b'_') => {
                    if depth + 1 >= MAX_DEPTH {
                        return self.err(format!(
                            "`#_` discards nest deeper than {MAX_DEPTH} levels, the most lockpick reads"
                        ));
                    }
                    self.i += 2;
                    self.skip_ws(depth + 1)?;
                    if self.i >= self.s.len() {
                        return self.err("`#_` discards nothing: the text ends");
                    }
                    self.value(depth + 1)?;
                }
                _ => break,
            }
        }
        Ok(())
    }

    fn token(&mut self) -> &'a str {
        let start = self.i;
        while self.i < self.s.len() && !is_delim(self.s[self.i]) {
            self.i += 1;
        }
        &self.text[start..self.i]
    }

    /// Reads a collection's items up to `close`.
    fn seq(&mut self, close: u8, what: &str, depth: usize) -> Result<Vec<Edn>, EdnError> {
        let opened = self.line_at(self.i);
        let mut items = Vec::new();
        loop {
            self.skip_ws(depth)?;
            match self.s.get(self.i) {
                None => {
                    return self.err(format!(
                        "the {what} opened on line {opened} is never closed (a `{}` is missing)",
                        close as char
                    ))
                }
                Some(&c) if c == close => {
                    self.i += 1;
                    return Ok(items);
                }
                Some(_) => items.push(self.value(depth)?),
            }
        }
    }

    fn map(&mut self, depth: usize, ns: Option<&str>) -> Result<Edn, EdnError> {
        let items = self.seq(b'}', "map", depth)?;
        if items.len() % 2 != 0 {
            return self.err("a map has a key without a value (an odd number of forms)");
        }
        let mut it = items.into_iter();
        let mut entries = Vec::new();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            // `#:ns{:a 1}` is `{:ns/a 1}`; `:_/a` inside it stays `:a`.
            let k = match (ns, k) {
                (Some(ns), Edn::Keyword(name)) if !name.contains('/') => {
                    Edn::Keyword(format!("{ns}/{name}"))
                }
                (Some(_), Edn::Keyword(name)) if name.starts_with("_/") => {
                    Edn::Keyword(name[2..].to_string())
                }
                (_, k) => k,
            };
            entries.push((k, v));
        }
        Ok(Edn::Map(entries))
    }

    fn value(&mut self, depth: usize) -> Result<Edn, EdnError> {
        if depth >= MAX_DEPTH {
            return self.err(format!(
                "values nest deeper than {MAX_DEPTH} levels, the most lockpick reads"
            ));
        }
        self.skip_ws(depth)?;
        let Some(&c) = self.s.get(self.i) else {
            return self.err("the text ends where a value was expected");
        };
        let inner = depth + 1;
        match c {
            b'[' | b'(' | b'{' => {
                self.i += 1;
                let (close, what) = closer(c);
                match c {
                    b'[' => Ok(Edn::Vector(self.seq(close, what, inner)?)),
                    b'(' => Ok(Edn::List(self.seq(close, what, inner)?)),
                    _ => self.map(inner, None),
                }
            }
            b'"' => self.string().map(Edn::Str),
            b'#' => self.dispatch(inner),
            b'^' => {
                // Metadata says nothing about the value it is attached to.
                self.i += 1;
                self.value(inner)?;
                self.value(inner)
            }
            b'\\' => self.character(),
            b')' | b']' | b'}' => self.err(format!("`{}` closes nothing", c as char)),
            _ => {
                let t = self.token();
                if t.is_empty() {
                    return self.err(format!("unexpected character {:?}", c as char));
                }
                self.atom(t)
            }
        }
    }

    /// Everything after a `#`.
    fn dispatch(&mut self, inner: usize) -> Result<Edn, EdnError> {
        self.i += 1;
        match self.s.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                Ok(Edn::Set(self.seq(b'}', "set", inner)?))
            }
            Some(b'#') => {
                self.i += 1;
                match self.token() {
                    "Inf" => Ok(Edn::Float(f64::INFINITY)),
                    "-Inf" => Ok(Edn::Float(f64::NEG_INFINITY)),
                    "NaN" => Ok(Edn::Float(f64::NAN)),
                    other => self.err(format!(
                        "unknown symbolic value ##{other}; allowed: ##Inf, ##-Inf, ##NaN"
                    )),
                }
            }
            Some(b'"') => self.string().map(Edn::Str),
            Some(b':') => {
                self.i += 1;
                let ns = self.token();
                self.skip_ws(inner)?;
                if ns.is_empty() || self.s.get(self.i) != Some(&b'{') {
                    return self.err("`#:` must be followed by a namespace and a map");
                }
                self.i += 1;
                self.map(inner, Some(ns))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let tag = self.token();
                Ok(Edn::Tagged(tag.to_string(), Box::new(self.value(inner)?)))
            }
            Some(&c) => self.err(format!(
                "unsupported dispatch `#{}`; read are #{{…}}, #_, ##Inf, #:ns{{…}} and #tag values",
                c as char
            )),
            None => self.err("the text ends after `#`"),
        }
    }

    /// A character literal: `\a`, `\newline`, `\u00e9`, `\o101`.
    fn character(&mut self) -> Result<Edn, EdnError> {
        self.i += 1;
        let start = self.i;
        let Some(first) = self.text[start..].chars().next() else {
            return self.err("the text ends after `\\`");
        };
        self.i += first.len_utf8();
        let rest = self.token();
        let name = &self.text[start..start + first.len_utf8() + rest.len()];
        let ch = match name {
            "newline" => '\n',
            "space" => ' ',
            "tab" => '\t',
            "return" => '\r',
            "backspace" => '\u{8}',
            "formfeed" => '\u{c}',
            _ if rest.is_empty() => first,
            _ => {
                let code = match (first, rest.len()) {
                    ('u', 4) => u32::from_str_radix(rest, 16).ok(),
                    ('o', 1..=3) => u32::from_str_radix(rest, 8).ok().filter(|&c| c <= 0o377),
                    _ => None,
                };
                match code.and_then(char::from_u32) {
                    Some(c) => c,
                    None => return self.err(format!("unknown character literal \\{name}")),
                }
            }
        };
        Ok(Edn::Char(ch))
    }

    /// Four hex digits of a `\u` escape, starting at byte `at`.
    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.text.get(at..at + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(digits, 16).ok()
    }

    fn string(&mut self) -> Result<String, EdnError> {
        let opened = self.line_at(self.i);
        self.i += 1;
        let mut out = String::new();
        let mut start = self.i;
        while let Some(&c) = self.s.get(self.i) {
            match c {
                b'"' => {
                    out.push_str(&self.text[start..self.i]);
                    self.i += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(&self.text[start..self.i]);
                    let (ch, len) = self.escape()?;
                    out.push(ch);
                    self.i += len;
                    start = self.i;
                }
                _ => self.i += 1,
            }
        }
        self.err(format!(
            "the string opened on line {opened} is never closed"
        ))
    }

    /// The escape at `self.i` (a backslash) and its length in bytes.
    fn escape(&mut self) -> Result<(char, usize), EdnError> {
        let Some(&e) = self.s.get(self.i + 1) else {
            return self.err("the text ends inside a string escape");
        };
        let simple = match e {
            b'n' => Some('\n'),
            b't' => Some('\t'),
            b'r' => Some('\r'),
            b'b' => Some('\u{8}'),
            b'f' => Some('\u{c}'),
            b'"' => Some('"'),
            b'\\' => Some('\\'),
            b'/' => Some('/'),
            _ => None,
        };
        if let Some(ch) = simple {
            return Ok((ch, 2));
        }
        if e != b'u' {
            let shown = self.text[self.i + 1..].chars().next().unwrap_or('?');
            return self.err(format!(
                "unknown string escape \\{shown}; allowed: \\n \\t \\r \\b \\f \\\" \\\\ \\uXXXX"
            ));
        }
        let Some(hi) = self.hex4(self.i + 2) else {
            return self.err("a \\u escape needs four hex digits");
        };
        if (0xD800..0xDC00).contains(&hi) {
            // A UTF-16 surrogate pair, as Java writes characters beyond the BMP.
            let lo = (self.text.get(self.i + 6..self.i + 8) == Some("\\u"))
                .then(|| self.hex4(self.i + 8))
                .flatten()
                .filter(|lo| (0xDC00..0xE000).contains(lo));
            if let Some(lo) = lo {
                let code = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                if let Some(ch) = char::from_u32(code) {
                    return Ok((ch, 12));
                }
            }
        }
        match char::from_u32(hi) {
            Some(ch) => Ok((ch, 6)),
            None => self.err(format!("\\u{hi:04x} is half a surrogate pair")),
        }
    }

    fn atom(&mut self, t: &str) -> Result<Edn, EdnError> {
        match t {
            "nil" => return Ok(Edn::Nil),
            "true" => return Ok(Edn::Bool(true)),
            "false" => return Ok(Edn::Bool(false)),
            _ => {}
        }
        if let Some(k) = t.strip_prefix(':') {
            if k.is_empty() || k == ":" {
                return self.err("a keyword needs a name after `:`");
            }
            return Ok(Edn::Keyword(k.to_string()));
        }
        let b = t.as_bytes();
        let numeric = b[0].is_ascii_digit()
            || (matches!(b[0], b'+' | b'-') && b.get(1).is_some_and(u8::is_ascii_digit));
        if !numeric {
            return Ok(Edn::Symbol(t.to_string()));
        }
        match number(t) {
            Some(n) => Ok(n),
            None => self.err(format!("{t:?} is not a number")),
        }
    }
}

/// An integer (`12`, `-3`, `7N`, too large for i64 → [`Edn::BigInt`]), a float (`1.5`,
/// `2e3`, `1.5M`) or a ratio (`1/3`).
fn number(t: &str) -> Option<Edn> {
    let digits = |s: &str| {
        let s = s.strip_prefix(['+', '-']).unwrap_or(s);
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
    };
    let int = t.strip_suffix('N').unwrap_or(t);
    if digits(int) {
        let int = int.strip_prefix('+').unwrap_or(int);
        return Some(match int.parse::<i64>() {
            Ok(i) => Edn::Int(i),
            Err(_) => Edn::BigInt(int.to_string()),
        });
    }
    if let Some((n, d)) = t.split_once('/') {
        if digits(n) && digits(d) {
            let (n, d) = (n.parse::<f64>().ok()?, d.parse::<f64>().ok()?);
            return (d != 0.0).then(|| Edn::Float(n / d));
        }
        return None;
    }
    let float = t.strip_suffix('M').unwrap_or(t);
    // Rust also parses "inf" and "nan"; a number token starts with a digit, so neither occurs.
    float.parse::<f64>().ok().map(Edn::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Edn {
        let mut v = parse_all(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(v.len(), 1, "{text}: {v:?}");
        v.remove(0)
    }

    fn kw(s: &str) -> Edn {
        Edn::Keyword(s.into())
    }

    #[test]
    fn reads_a_jepsen_op_map() {
        let v = one(r#"{:process 0, :type :invoke, :f :append, :key "0", :value "x 0 0 y"}"#);
        assert_eq!(v.get("process"), Some(&Edn::Int(0)));
        assert_eq!(v.get("type"), Some(&kw("invoke")));
        assert_eq!(v.get("value"), Some(&Edn::Str("x 0 0 y".into())));
    }

    #[test]
    fn reads_nested_collections_tags_and_comments() {
        let v = one("; c\n[#jepsen.history.Op{:value [1 -2] :s #{:a}} (nil true) \"a\\\"b\"]");
        let Edn::Vector(items) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(
            items[0].get("value"),
            Some(&Edn::Vector(vec![Edn::Int(1), Edn::Int(-2)]))
        );
        let Edn::Tagged(tag, _) = &items[0] else {
            panic!("{:?}", items[0])
        };
        assert_eq!(tag, "jepsen.history.Op");
        assert_eq!(items[1], Edn::List(vec![Edn::Nil, Edn::Bool(true)]));
        assert_eq!(items[2], Edn::Str("a\"b".into()));
    }

    #[test]
    fn reads_numbers_of_every_kind() {
        let v = one(
            "[1 -2 +3 7N 99999999999999999999 99999999999999999999N 1.5 -2e3 1.5M 1/4 ##Inf ##NaN]",
        );
        let Edn::Vector(items) = v else { panic!() };
        assert_eq!(
            items[..4],
            [Edn::Int(1), Edn::Int(-2), Edn::Int(3), Edn::Int(7)]
        );
        assert_eq!(items[4], Edn::BigInt("99999999999999999999".into()));
        assert_eq!(items[5], Edn::BigInt("99999999999999999999".into()));
        assert_eq!(
            items[6..10],
            [
                Edn::Float(1.5),
                Edn::Float(-2000.0),
                Edn::Float(1.5),
                Edn::Float(0.25)
            ]
        );
        assert_eq!(items[10], Edn::Float(f64::INFINITY));
        assert!(matches!(items[11], Edn::Float(x) if x.is_nan()));
        for bad in ["1.2.3", "12abc", "1/0", "-1x"] {
            let e = parse_all(bad).unwrap_err();
            assert!(e.message.contains("not a number"), "{bad}: {e}");
        }
    }

    #[test]
    fn reads_string_escapes_and_characters() {
        assert_eq!(
            one(r#""tab\there \u00e9\u0041 \ud83d\ude00 \\ \/""#),
            Edn::Str("tab\there éA 😀 \\ /".into())
        );
        assert_eq!(one("\"two\nlines\""), Edn::Str("two\nlines".into()));
        let chars = one(r"[\a \newline \space \tab \u00e9 \o101 \( \,]");
        assert_eq!(
            chars,
            Edn::Vector(
                ['a', '\n', ' ', '\t', 'é', 'A', '(', ',']
                    .map(Edn::Char)
                    .to_vec()
            )
        );
        for bad in [r#""\q""#, r#""\u12""#, r"\nope", r#""open"#] {
            assert!(parse_all(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn discards_comments_metadata_and_reads_namespaced_forms() {
        let v = one(
            ";; a Jepsen history\n[ #_ {:dropped 1} ,, #_#_ 1 2\n ^{:meta 1} :jepsen.history/op ; trailing\n #:jepsen.history{:type :ok, :_/plain 2} #inst \"2024-01-01T00:00:00Z\" #_ 3 ]",
        );
        let Edn::Vector(items) = v else { panic!() };
        assert_eq!(items.len(), 3, "{items:?}");
        assert_eq!(items[0], kw("jepsen.history/op"));
        assert_eq!(items[1].get("jepsen.history/type"), Some(&kw("ok")));
        assert_eq!(items[1].get("plain"), Some(&Edn::Int(2)));
        assert_eq!(
            items[2],
            Edn::Tagged(
                "inst".into(),
                Box::new(Edn::Str("2024-01-01T00:00:00Z".into()))
            )
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_all("[\n{:a 1}\n{:a}\n]").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("odd number"), "{e}");
        let e = parse_all("[\n{:a 1}\n").unwrap_err();
        assert!(e.message.contains("opened on line 1"), "{e}");
        assert!(parse_all("{:a 1").is_err());
        assert!(parse_all("]").is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_naming_the_limit_not_a_stack_overflow() {
        let deep = format!("{}{}", "[".repeat(8000), "]".repeat(8000));
        let e = parse_all(&deep).unwrap_err();
        assert!(e.message.contains(&MAX_DEPTH.to_string()), "{e}");
        let e = parse_all(&"#_".repeat(8000)).unwrap_err();
        assert!(e.message.contains(&MAX_DEPTH.to_string()), "{e}");
        // Just under the limit still reads.
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH - 1), "]".repeat(MAX_DEPTH - 1));
        assert!(parse_all(&ok).is_ok());
    }

    #[test]
    fn items_of_a_top_level_vector_carry_their_lines() {
        let text = "; header\n[{:a 1}\n {:a 2\n  :b 3}\n {:a 4}]\n";
        let mut r = Reader::new(text, 1);
        let close = r.enter_seq().unwrap().expect("a vector");
        let mut lines = Vec::new();
        while let Some((line, _)) = r.next_item(close).unwrap() {
            lines.push(line);
        }
        assert_eq!(lines, [2, 3, 5]);
        assert!(r.next_form().unwrap().is_none());
    }
}
