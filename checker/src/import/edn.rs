//! A small EDN reader: enough of the format for Jepsen op maps and `history.edn` files
//! (maps, vectors, lists, sets, keywords, strings, numbers, nil, booleans; tags are read past).

/// An EDN value. Maps keep their entries in file order.
#[derive(Debug, Clone, PartialEq)]
pub enum Edn {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// Without the leading colon.
    Keyword(String),
    Symbol(String),
    Char(char),
    Vector(Vec<Edn>),
    List(Vec<Edn>),
    Set(Vec<Edn>),
    Map(Vec<(Edn, Edn)>),
}

impl Edn {
    /// The value under keyword `key` of a map.
    pub fn get(&self, key: &str) -> Option<&Edn> {
        match self {
            Edn::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Edn::Keyword(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Reads every top-level form of `text`. The error is a message with the byte offset.
pub fn parse_all(text: &str) -> Result<Vec<Edn>, String> {
    let mut r = Reader {
        s: text.as_bytes(),
        i: 0,
        text,
    };
    let mut out = Vec::new();
    loop {
        r.skip_ws();
        if r.i >= r.s.len() {
            return Ok(out);
        }
        out.push(r.value()?);
    }
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
    text: &'a str,
}

fn is_delim(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(
            c,
            b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';'
        )
}

impl Reader<'_> {
    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.i))
    }

    fn skip_ws(&mut self) {
        while self.i < self.s.len() {
            match self.s[self.i] {
                c if c.is_ascii_whitespace() || c == b',' => self.i += 1,
                b';' => {
                    while self.i < self.s.len() && self.s[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn token(&mut self) -> &str {
        let start = self.i;
        while self.i < self.s.len() && !is_delim(self.s[self.i]) {
            self.i += 1;
        }
        &self.text[start..self.i]
    }

    fn seq(&mut self, close: u8) -> Result<Vec<Edn>, String> {
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            match self.s.get(self.i) {
                None => return self.err("unclosed collection"),
                Some(&c) if c == close => {
                    self.i += 1;
                    return Ok(items);
                }
                Some(_) => items.push(self.value()?),
            }
        }
    }

    fn value(&mut self) -> Result<Edn, String> {
        self.skip_ws();
        let Some(&c) = self.s.get(self.i) else {
            return self.err("unexpected end of input");
        };
        match c {
            b'[' => {
                self.i += 1;
                Ok(Edn::Vector(self.seq(b']')?))
            }
            b'(' => {
                self.i += 1;
                Ok(Edn::List(self.seq(b')')?))
            }
            b'{' => {
                self.i += 1;
                let items = self.seq(b'}')?;
                if items.len() % 2 != 0 {
                    return self.err("map with an odd number of forms");
                }
                let mut it = items.into_iter();
                let mut entries = Vec::new();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    entries.push((k, v));
                }
                Ok(Edn::Map(entries))
            }
            b'"' => self.string(),
            b'#' => {
                self.i += 1;
                match self.s.get(self.i) {
                    Some(b'{') => {
                        self.i += 1;
                        Ok(Edn::Set(self.seq(b'}')?))
                    }
                    Some(b'_') => {
                        self.i += 1;
                        self.value()?;
                        self.value()
                    }
                    // A tagged literal such as #jepsen.history.Op{...}: the tag is dropped.
                    _ => {
                        self.token();
                        self.value()
                    }
                }
            }
            b'\\' => {
                self.i += 1;
                let t = self.token().to_string();
                let ch = match t.as_str() {
                    "newline" => '\n',
                    "space" => ' ',
                    "tab" => '\t',
                    _ => match t.chars().next() {
                        Some(ch) => ch,
                        None => return self.err("empty character literal"),
                    },
                };
                Ok(Edn::Char(ch))
            }
            b')' | b']' | b'}' => self.err("unexpected closing delimiter"),
            _ => {
                let t = self.token();
                if t.is_empty() {
                    return self.err("unexpected character");
                }
                Ok(atom(t))
            }
        }
    }

    fn string(&mut self) -> Result<Edn, String> {
        self.i += 1;
        let mut out = String::new();
        let mut start = self.i;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'"' => {
                    out.push_str(&self.text[start..self.i]);
                    self.i += 1;
                    return Ok(Edn::Str(out));
                }
                b'\\' => {
                    out.push_str(&self.text[start..self.i]);
                    let Some(&e) = self.s.get(self.i + 1) else {
                        break;
                    };
                    out.push(match e {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        other => other as char,
                    });
                    self.i += 2;
                    start = self.i;
                }
                _ => self.i += 1,
            }
        }
        self.err("unterminated string")
    }
}

fn atom(t: &str) -> Edn {
    match t {
        "nil" => return Edn::Nil,
        "true" => return Edn::Bool(true),
        "false" => return Edn::Bool(false),
        _ => {}
    }
    if let Some(k) = t.strip_prefix(':') {
        return Edn::Keyword(k.to_string());
    }
    let num = t.strip_suffix('N').unwrap_or(t);
    if let Ok(i) = num.parse::<i64>() {
        return Edn::Int(i);
    }
    if let Ok(f) = t.strip_suffix('M').unwrap_or(t).parse::<f64>() {
        return Edn::Float(f);
    }
    Edn::Symbol(t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_jepsen_op_map() {
        let v = parse_all(r#"{:process 0, :type :invoke, :f :append, :key "0", :value "x 0 0 y"}"#)
            .unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].get("process"), Some(&Edn::Int(0)));
        assert_eq!(v[0].get("type"), Some(&Edn::Keyword("invoke".into())));
        assert_eq!(v[0].get("value"), Some(&Edn::Str("x 0 0 y".into())));
    }

    #[test]
    fn reads_nested_collections_tags_and_comments() {
        let v =
            parse_all("; c\n[#jepsen.history.Op{:value [1 -2] :s #{:a}} (nil true) \"a\\\"b\"]")
                .unwrap();
        let Edn::Vector(items) = &v[0] else {
            panic!("{v:?}")
        };
        assert_eq!(
            items[0].get("value"),
            Some(&Edn::Vector(vec![Edn::Int(1), Edn::Int(-2)]))
        );
        assert_eq!(items[1], Edn::List(vec![Edn::Nil, Edn::Bool(true)]));
        assert_eq!(items[2], Edn::Str("a\"b".into()));
    }

    #[test]
    fn unclosed_map_is_an_error() {
        assert!(parse_all("{:a 1").is_err());
    }
}
