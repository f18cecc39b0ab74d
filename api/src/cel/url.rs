//! Kubernetes' URL library for CEL (k8s.io/apiserver `library/urls.go`): `url()`, `isURL()`
//! and the accessors of the `kubernetes.URL` values `url()` returns, over a parser with the
//! semantics of Go's `net/url` as Kubernetes uses it: `isURL` and `url` accept what
//! `ParseRequestURI` accepts (an absolute URI or an absolute path), and `url` then splits the
//! string as `Parse` does (the fragment cut off first). The parser makes one pass per
//! component over its input and never indexes past it.

use std::collections::HashMap;
use std::sync::Arc;

use cel::ExecutionError;
use cel::FunctionContext;
use cel::extractors::This;
use cel::objects::Opaque;

/// The parts of a URL Go's `net/url` keeps (unescaped, except `raw_path` and `raw_query`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Url {
    scheme: String,
    opaque: String,
    userinfo: Option<String>,
    host: String,
    path: String,
    /// The path as written, when escaping `path` does not give it back.
    raw_path: String,
    raw_query: String,
    fragment: String,
}

impl Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

/// Which component a string is escaped or unescaped for (Go's `encoding` modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

impl Url {
    /// Go's `url.ParseRequestURI`: the URL must be an absolute URI or an absolute path; a
    /// `#` is not a fragment delimiter.
    pub(super) fn parse_request_uri(raw: &str) -> Result<Self, String> {
        parse(raw, true).map_err(|e| format!("parse {}: {e}", go_quote(raw)))
    }

    /// Go's `url.Parse`: the fragment is cut off, then the rest parsed as a URL reference.
    pub(super) fn parse(raw: &str) -> Result<Self, String> {
        let (rest, fragment) = raw.split_once('#').unwrap_or((raw, ""));
        let mut url = parse(rest, false).map_err(|e| format!("parse {}: {e}", go_quote(rest)))?;
        if !fragment.is_empty() {
            let fragment = unescape(fragment.as_bytes(), Mode::Fragment)
                .map_err(|e| format!("parse {}: {e}", go_quote(raw)))?;
            url.fragment = String::from_utf8_lossy(&fragment).into_owned();
        }
        Ok(url)
    }

    /// The scheme, lower-cased (empty for a path).
    pub(super) fn scheme(&self) -> &str {
        &self.scheme
    }

    /// The host and port as written (IPv6 addresses in brackets).
    pub(super) fn host(&self) -> &str {
        &self.host
    }

    /// The host without port and brackets.
    pub(super) fn hostname(&self) -> &str {
        split_host_port(&self.host).0
    }

    /// The port (empty if none).
    pub(super) fn port(&self) -> &str {
        split_host_port(&self.host).1
    }

    /// The path, escaped (Go's `EscapedPath`): as written when that is a valid encoding of
    /// it, else escaped anew.
    pub(super) fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded(self.raw_path.as_bytes())
            && unescape(self.raw_path.as_bytes(), Mode::Path)
                .is_ok_and(|p| p == self.path.as_bytes())
        {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".to_owned();
        }
        escape(self.path.as_bytes(), Mode::Path)
    }

    /// The query parameters, each key with its values in order (Go's `Query`: pairs split
    /// on `&`, keys and values unescaped, pairs that do not unescape or hold a `;` skipped).
    pub(super) fn query(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for pair in self.raw_query.split('&') {
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (Ok(key), Ok(value)) = (
                unescape(key.as_bytes(), Mode::QueryComponent),
                unescape(value.as_bytes(), Mode::QueryComponent),
            ) else {
                continue;
            };
            let key = String::from_utf8_lossy(&key).into_owned();
            let value = String::from_utf8_lossy(&value).into_owned();
            match index.get(&key) {
                Some(&i) => {
                    if let Some((_, values)) = out.get_mut(i) {
                        values.push(value);
                    }
                }
                None => {
                    index.insert(key.clone(), out.len());
                    out.push((key, vec![value]));
                }
            }
        }
        out
    }
}

/// Go's `parse`: `via_request` is `ParseRequestURI`'s stricter reading.
fn parse(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".to_owned());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".to_owned());
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = "*".to_owned();
        return Ok(url);
    }
    let (scheme, rest) = split_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let rest = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest.get(..rest.len() - 1).unwrap_or_default()
    } else {
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        url.raw_query = query.to_owned();
        rest
    };
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_owned();
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".to_owned());
        }
        let segment = rest.split('/').next().unwrap_or_default();
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".to_owned());
        }
    }
    let mut path = rest;
    let authority = (!url.scheme.is_empty() || (!via_request && !rest.starts_with("///")))
        && rest.starts_with("//");
    if authority {
        let after = rest.get(2..).unwrap_or_default();
        let (authority, tail) = match after.find('/') {
            Some(i) => after.split_at(i),
            None => (after, ""),
        };
        let (userinfo, host) = parse_authority(authority)?;
        url.userinfo = userinfo;
        url.host = host;
        path = tail;
    }
    let unescaped = unescape(path.as_bytes(), Mode::Path)?;
    url.path = String::from_utf8_lossy(&unescaped).into_owned();
    if escape(&unescaped, Mode::Path) != path {
        url.raw_path = path.to_owned();
    }
    Ok(url)
}

/// Go's `getScheme`: the scheme before the first `:` if all before it is a scheme, and the
/// rest.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".to_owned()),
            b':' => {
                return Ok((
                    raw.get(..i).unwrap_or_default(),
                    raw.get(i + 1..).unwrap_or_default(),
                ));
            }
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseAuthority`: the user information (checked, unescaped) and the host.
fn parse_authority(authority: &str) -> Result<(Option<String>, String), String> {
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return Ok((None, parse_host(authority)?));
    };
    let host = parse_host(host)?;
    if !userinfo.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b':'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'%'
                    | b'@'
            )
    }) {
        return Err("net/url: invalid userinfo".to_owned());
    }
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    unescape(user.as_bytes(), Mode::UserPassword)?;
    unescape(password.as_bytes(), Mode::UserPassword)?;
    Ok((Some(userinfo.to_owned()), host))
}

/// Go's `parseHost`: a bracketed IPv6 literal (with an optional `%25` zone) or a name, each
/// with an optional numeric port; returned unescaped.
fn parse_host(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return Err("missing ']' in host".to_owned());
        };
        let (literal, port) = host.split_at(close + 1);
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", go_quote(port)));
        }
        if let Some(zone) = literal.find("%25") {
            let (address, zone_part) = literal.split_at(zone);
            let (zone_part, bracket) = zone_part.split_at(zone_part.len() - 1);
            let mut out = unescape(address.as_bytes(), Mode::Host)?;
            out.extend(unescape(zone_part.as_bytes(), Mode::Zone)?);
            out.extend(unescape(bracket.as_bytes(), Mode::Host)?);
            out.extend(unescape(port.as_bytes(), Mode::Host)?);
            return Ok(String::from_utf8_lossy(&out).into_owned());
        }
    } else if let Some(colon) = host.rfind(':') {
        let port = host.get(colon..).unwrap_or_default();
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", go_quote(port)));
        }
    }
    let out = unescape(host.as_bytes(), Mode::Host)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Whether `port` is empty or `:` and digits.
fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `splitHostPort`: the host without brackets and the port.
fn split_host_port(host_port: &str) -> (&str, &str) {
    let (mut host, mut port) = (host_port, "");
    if let Some(colon) = host_port.rfind(':') {
        let (h, p) = host_port.split_at(colon);
        if valid_optional_port(p) {
            host = h;
            port = p.get(1..).unwrap_or_default();
        }
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        host = inner;
    }
    (host, port)
}

fn unhex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Go's `unescape`: `%XX` decoded (and `+` as a space in query components), with Go's
/// errors for a malformed escape or a character a host may not hold.
fn unescape(s: &[u8], mode: Mode) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        match c {
            b'%' => {
                let hex = s
                    .get(i + 1)
                    .copied()
                    .and_then(unhex)
                    .zip(s.get(i + 2).copied().and_then(unhex));
                let escape_text = || {
                    String::from_utf8_lossy(s.get(i..(i + 3).min(s.len())).unwrap_or_default())
                        .into_owned()
                };
                let Some((high, low)) = hex else {
                    return Err(format!("invalid URL escape {}", go_quote(&escape_text())));
                };
                let byte = (high << 4) | low;
                let percent25 = s.get(i..i + 3) == Some(b"%25");
                if mode == Mode::Host && high < 8 && !percent25 {
                    return Err(format!("invalid URL escape {}", go_quote(&escape_text())));
                }
                if mode == Mode::Zone
                    && !percent25
                    && byte != b' '
                    && should_escape(byte, Mode::Host)
                {
                    return Err(format!("invalid URL escape {}", go_quote(&escape_text())));
                }
                out.push(byte);
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&char::from(c).to_string())
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// Go's `shouldEscape`: whether `c` must be escaped in `mode`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone)
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => c == b'?',
            Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => true,
            Mode::Fragment => false,
            Mode::Host | Mode::Zone => true,
        },
        b'!' | b'(' | b')' | b'*' if mode == Mode::Fragment => false,
        _ => true,
    }
}

/// Go's `escape` for the modes used here: `%XX` (upper-case) for every byte `mode` escapes.
fn escape(s: &[u8], mode: Mode) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for &c in s {
        if should_escape(c, mode) {
            out.push('%');
            out.push(char::from(HEX[usize::from(c >> 4)]));
            out.push(char::from(HEX[usize::from(c & 15)]));
        } else {
            out.push(char::from(c));
        }
    }
    out
}

/// Go's `validEncoded` for paths: only characters a path may hold unescaped, and escapes.
fn valid_encoded(s: &[u8]) -> bool {
    s.iter().all(|&c| {
        matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(c, Mode::Path)
    })
}

/// `s` quoted as Go's `%q` quotes it.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", u32::from(c)));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The URL a CEL value holds.
fn url_of(value: &cel::Value) -> Result<&Url, ExecutionError> {
    match value {
        cel::Value::Opaque(o) => o
            .downcast_ref::<Url>()
            .ok_or(ExecutionError::NoSuchOverload),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

fn string(s: &str) -> cel::Value {
    cel::Value::String(Arc::new(s.to_owned()))
}

/// `url(string)`.
fn to_url(ftx: &FunctionContext, s: Arc<String>) -> Result<cel::Value, ExecutionError> {
    let url = Url::parse_request_uri(&s)
        .and_then(|_| Url::parse(&s))
        .map_err(|e| {
            ftx.error(format!(
                "URL parse error during conversion from string: {e}"
            ))
        })?;
    Ok(cel::Value::Opaque(Arc::new(url)))
}

/// `isURL(string)`.
fn is_url(s: Arc<String>) -> bool {
    Url::parse_request_uri(&s).is_ok()
}

fn get_scheme(This(this): This<cel::Value>) -> Result<cel::Value, ExecutionError> {
    Ok(string(url_of(&this)?.scheme()))
}

fn get_host(This(this): This<cel::Value>) -> Result<cel::Value, ExecutionError> {
    Ok(string(url_of(&this)?.host()))
}

fn get_hostname(This(this): This<cel::Value>) -> Result<cel::Value, ExecutionError> {
    Ok(string(url_of(&this)?.hostname()))
}

fn get_port(This(this): This<cel::Value>) -> Result<cel::Value, ExecutionError> {
    Ok(string(url_of(&this)?.port()))
}

fn get_escaped_path(This(this): This<cel::Value>) -> Result<cel::Value, ExecutionError> {
    Ok(string(&url_of(&this)?.escaped_path()))
}

fn get_query(This(this): This<cel::Value>) -> Result<cel::Value, ExecutionError> {
    let map: HashMap<String, cel::Value> = url_of(&this)?
        .query()
        .into_iter()
        .map(|(k, values)| {
            let values = values
                .into_iter()
                .map(|v| cel::Value::String(Arc::new(v)))
                .collect();
            (k, cel::Value::List(Arc::new(values)))
        })
        .collect();
    Ok(cel::Value::from(map))
}

/// Registers the library's functions in `context`.
pub(super) fn register(context: &mut cel::Context<'_>) {
    context.add_function("url", to_url);
    context.add_function("isURL", is_url);
    context.add_function("getScheme", get_scheme);
    context.add_function("getHost", get_host);
    context.add_function("getHostname", get_hostname);
    context.add_function("getPort", get_port);
    context.add_function("getEscapedPath", get_escaped_path);
    context.add_function("getQuery", get_query);
}
