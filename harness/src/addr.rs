//! Text forms shared by lockpick's small servers and its command line: percent-decoding of URL
//! paths, and the address a host name stands for.

use std::net::SocketAddr;

/// `%XX` escapes decoded; `None` for a bad escape or bytes that are not UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Of the addresses a name resolves to, the first IPv4 one, else the first: Go's resolver
/// (and so Toxiproxy) picks that way, and `localhost` is then 127.0.0.1.
pub fn pick_resolved(addrs: impl IntoIterator<Item = SocketAddr>) -> Option<SocketAddr> {
    let mut first = None;
    for addr in addrs {
        if addr.is_ipv4() {
            return Some(addr);
        }
        first = first.or(Some(addr));
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_refuses_bad_ones() {
        assert_eq!(percent_decode("a%20b%2F").as_deref(), Some("a b/"));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%2"), None);
        assert_eq!(percent_decode("%ff"), None);
    }

    #[test]
    fn ipv4_first() {
        let v6: SocketAddr = "[::1]:1".parse().unwrap();
        let v4: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(pick_resolved([v6, v4]), Some(v4));
        assert_eq!(pick_resolved([v6]), Some(v6));
        assert_eq!(pick_resolved([]), None);
    }
}
