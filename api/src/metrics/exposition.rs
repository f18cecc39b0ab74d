//! The Prometheus text format version 0.0.4, which kube-apiserver serves on `/metrics`, from
//! the OpenMetrics text `prometheus-client` writes: a counter family's `# HELP` and `# TYPE`
//! lines name it with its `_total` suffix, as its samples do, no `# EOF` line ends it, and a
//! bucket's whole-number bound is written as Go writes it (`le="60"`, not `le="60.0"`).

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
        push_sample(&mut out, line);
        out.push('\n');
    }
    out
}

/// A sample line, a bucket bound `le="<n>.0"` shortened to `le="<n>"`.
fn push_sample(out: &mut String, line: &str) {
    let label = line.find(",le=\"").or_else(|| line.find("{le=\""));
    let Some(start) = label.map(|i| i + 5) else {
        out.push_str(line);
        return;
    };
    let Some(len) = line[start..].find('"') else {
        out.push_str(line);
        return;
    };
    let bound = &line[start..start + len];
    match bound.strip_suffix(".0") {
        Some(whole) => {
            out.push_str(&line[..start]);
            out.push_str(whole);
            out.push_str(&line[start + len..]);
        }
        None => out.push_str(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_bucket_bounds_are_written_as_go_writes_them() {
        let openmetrics = "d_bucket{verb=\"GET\",le=\"60.0\"} 2\nd_bucket{le=\"0.005\"} 1\n\
                           d_bucket{le=\"+Inf\"} 2\nx{role=\"1.0\"} 1\n";
        assert_eq!(
            text_format(openmetrics),
            "d_bucket{verb=\"GET\",le=\"60\"} 2\nd_bucket{le=\"0.005\"} 1\n\
             d_bucket{le=\"+Inf\"} 2\nx{role=\"1.0\"} 1\n"
        );
    }

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
