//! Tests of the URL library: the parser against Go's `net/url` documented behaviour and the
//! CEL functions against the examples of Kubernetes' `library/urls.go`.

use serde_json::json;

use super::Program;
use super::evaluate;
use super::url::Url;

fn run(expression: &str) -> Result<serde_json::Value, String> {
    let program = Program::compile(expression, &[]).map_err(|e| e.to_string())?;
    evaluate(&program, &[]).map_err(|e| e.to_string())
}

#[test]
fn the_documented_examples_answer_as_kubernetes_does() {
    let cases = [
        (
            "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
            json!(true),
        ),
        ("isURL('/absolute-path')", json!(true)),
        ("isURL('https://a:b:c/')", json!(false)),
        ("isURL('../relative-path')", json!(false)),
        ("url('/path').getScheme()", json!("")),
        ("url('https://example.com/').getScheme()", json!("https")),
        ("url('HTTPS://example.com/').getScheme()", json!("https")),
        (
            "url('https://example.com:80/').getHost()",
            json!("example.com:80"),
        ),
        (
            "url('https://example.com/').getHost()",
            json!("example.com"),
        ),
        ("url('https://[::1]:80/').getHost()", json!("[::1]:80")),
        ("url('https://[::1]/').getHost()", json!("[::1]")),
        ("url('/path').getHost()", json!("")),
        (
            "url('https://example.com:80/').getHostname()",
            json!("example.com"),
        ),
        (
            "url('https://127.0.0.1:80/').getHostname()",
            json!("127.0.0.1"),
        ),
        ("url('https://[::1]:80/').getHostname()", json!("::1")),
        ("url('/path').getHostname()", json!("")),
        ("url('https://example.com:80/').getPort()", json!("80")),
        ("url('https://example.com/').getPort()", json!("")),
        ("url('/path').getPort()", json!("")),
        (
            "url('https://example.com/path').getEscapedPath()",
            json!("/path"),
        ),
        (
            "url('https://example.com/path with spaces/').getEscapedPath()",
            json!("/path%20with%20spaces/"),
        ),
        ("url('https://example.com').getEscapedPath()", json!("")),
        (
            "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()",
            json!({"k1": ["a"], "k2": ["b", "c"]}),
        ),
        (
            "url('https://example.com/path?key with spaces=value with spaces').getQuery()",
            json!({"key with spaces": ["value with spaces"]}),
        ),
        ("url('https://example.com/path?').getQuery()", json!({})),
        ("url('https://example.com/path').getQuery()", json!({})),
        (
            "url('https://example.com/p?a=1+2&b=%41&c;d=x&e').getQuery()",
            json!({"a": ["1 2"], "b": ["A"], "e": [""]}),
        ),
        (
            "url('https://example.com/a#frag').getEscapedPath()",
            json!("/a"),
        ),
        (
            "url('https://example.com/?q=1#frag').getQuery()",
            json!({"q": ["1"]}),
        ),
        (
            "url('https://example.com/a') == url('https://example.com/a')",
            json!(true),
        ),
        (
            "url('https://example.com/a') == url('https://example.com/b')",
            json!(false),
        ),
    ];
    for (expression, want) in cases {
        assert_eq!(run(expression), Ok(want), "{expression}");
    }
}

/// The error of `expression` as a rule reports it.
fn rule_error(expression: &str) -> Result<(), String> {
    let program = Program::compile(expression, &[]).map_err(|e| e.to_string())?;
    super::evaluate_metered(&program, Vec::new(), 1_000_000)
        .0
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn url_of_an_invalid_string_is_an_error_with_kubernetes_message() {
    assert_eq!(
        rule_error("url('https://a:b:c/')"),
        Err(
            "URL parse error during conversion from string: parse \"https://a:b:c/\": invalid port \":c\" after host"
                .to_owned()
        )
    );
    assert_eq!(
        rule_error("url('../relative-path')"),
        Err(
            "URL parse error during conversion from string: parse \"../relative-path\": invalid URI for request"
                .to_owned()
        )
    );
}

#[test]
fn parse_request_uri_accepts_absolute_uris_and_paths_only() {
    let accepted = [
        "http://example.com",
        "http://example.com/a/b?c=d",
        "mailto:user@example.com",
        "/",
        "*",
        "//not-a-host/path",
        "http://[fe80::1%25en0]:8080/",
        "http://user%20name:p%40ss@host/",
        "http://example.com/%E2%82%AC",
        "http://example.com/a#b",
    ];
    for raw in accepted {
        assert!(Url::parse_request_uri(raw).is_ok(), "{raw} is accepted");
    }
    let rejected = [
        ("", "empty url"),
        ("relative/path", "invalid URI for request"),
        ("not a url", "invalid URI for request"),
        (":foo", "missing protocol scheme"),
        ("http://host:port/", "invalid port \":port\" after host"),
        ("http://[::1/", "missing ']' in host"),
        ("http://[::1]x/", "invalid port \"x\" after host"),
        (
            "http://exa mple.com/",
            "invalid character \" \" in host name",
        ),
        ("http://example.com/%zz", "invalid URL escape \"%zz\""),
        ("http://example.com/%4", "invalid URL escape \"%4\""),
        ("http://%41.com/", "invalid URL escape \"%41\""),
        ("http://a\nb/", "invalid control character in URL"),
        ("http://us{er@host/", "net/url: invalid userinfo"),
    ];
    for (raw, want) in rejected {
        let got = Url::parse_request_uri(raw).map(|_| ());
        assert!(
            got.as_ref().is_err_and(|e| e.contains(want)),
            "{raw:?}: {got:?}, want an error with {want:?}"
        );
    }
}

#[test]
fn parse_splits_off_the_fragment_and_reads_scheme_relative_authorities() {
    let url = Url::parse("//host:8/p?x#f").expect("a reference parses");
    assert_eq!((url.host(), url.port()), ("host:8", "8"));
    assert_eq!(url.escaped_path(), "/p");
    let url = Url::parse("https://[fe80::1%25en0]:80/").expect("a zone parses");
    assert_eq!(url.hostname(), "fe80::1%en0");
    assert!(Url::parse("https://x/?a#%zz").is_err());
}

#[test]
fn escaped_paths_keep_a_valid_original_encoding() {
    let path = |raw: &str| Url::parse(raw).map(|u| u.escaped_path());
    assert_eq!(path("https://x/a%2Fb"), Ok("/a%2Fb".to_owned()));
    assert_eq!(path("https://x/a%20b"), Ok("/a%20b".to_owned()));
    assert_eq!(path("https://x/caf%C3%A9"), Ok("/caf%C3%A9".to_owned()));
    assert_eq!(path("https://x/café"), Ok("/caf%C3%A9".to_owned()));
    assert_eq!(path("https://x/a;b,c=d:e@f"), Ok("/a;b,c=d:e@f".to_owned()));
    assert_eq!(path("*"), Ok("*".to_owned()));
}

#[test]
fn no_input_makes_the_parser_panic() {
    let pieces = [
        "%", "%2", "[", "]", ":", "@", "/", "?", "#", "%25", "é", " ", "a", "//",
    ];
    for a in pieces {
        for b in pieces {
            for c in pieces {
                let raw = format!("{a}{b}{c}");
                let _ = Url::parse_request_uri(&raw);
                let _ = Url::parse(&raw).map(|u| (u.escaped_path(), u.query(), u.port().len()));
                let raw = format!("http:{raw}");
                let _ = Url::parse(&raw).map(|u| (u.escaped_path(), u.hostname().len()));
            }
        }
    }
}

#[test]
fn url_functions_cost_what_kubernetes_charges() {
    // url(): a tenth of the string's length; isURL and the accessors: 1.
    let cost = |expression: &str| {
        let program = Program::compile(expression, &[]).expect("compiles");
        super::evaluate_metered(&program, Vec::new(), 1_000).1
    };
    assert_eq!(cost("url('https://example.com/a')"), 3);
    assert_eq!(cost("isURL('https://example.com/a')"), 1);
    assert_eq!(cost("url('https://example.com/a').getHost()"), 4);
}
