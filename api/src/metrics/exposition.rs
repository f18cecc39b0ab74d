//! The Prometheus text format version 0.0.4, which kube-apiserver serves on `/metrics`, from
//! the OpenMetrics text `prometheus-client` writes: a counter family's `# HELP` and `# TYPE`
//! lines name it with its `_total` suffix, as its samples do, and no `# EOF` line ends it.

/// The content type of the scrape, as kube-apiserver sends it.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `openmetrics` (as `prometheus_client::encoding::text::encode_registry` writes it) in the
/// 0.0.4 text format.
pub(crate) fn text_format(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len());
    let mut help: Option<&str> = None;
    for line in openmetrics.lines() {
        if line == "# EOF" {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            // The family's type follows on the next line; hold the help until then.
            help = Some(rest);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let counter = rest
                .strip_suffix(" counter")
                .filter(|name| !name.ends_with("_total"));
            if let Some(help) = help.take() {
                out.push_str("# HELP ");
                if let Some(name) = counter {
                    out.push_str(name);
                    out.push_str("_total");
                    out.push_str(&help[name.len()..]);
                } else {
                    out.push_str(help);
                }
                out.push('\n');
            }
            match counter {
                Some(name) => {
                    out.push_str("# TYPE ");
                    out.push_str(name);
                    out.push_str("_total counter\n");
                }
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_with_their_suffix_and_eof_goes() {
        let openmetrics = "# HELP requests [STABLE] Requests.\n# TYPE requests counter\n\
                           requests_total{code=\"200\"} 3\n# HELP up [ALPHA] Up.\n# TYPE up gauge\n\
                           up 1\n# EOF\n";
        assert_eq!(
            text_format(openmetrics),
            "# HELP requests_total [STABLE] Requests.\n# TYPE requests_total counter\n\
             requests_total{code=\"200\"} 3\n# HELP up [ALPHA] Up.\n# TYPE up gauge\nup 1\n"
        );
    }
}
