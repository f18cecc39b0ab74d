//! Which discovery document an `Accept` header asks for: aggregated discovery when a media
//! range names `application/json;g=apidiscovery.<domain>;v=v2;as=APIGroupDiscoveryList` with
//! the flavor's domain, the legacy document otherwise (clients that asked for aggregated
//! discovery see a plain `application/json` answer and fall back, as Kubernetes intends).

use crate::flavor::Flavor;

/// The document form to answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// The legacy document (`application/json`).
    Legacy,
    /// The aggregated `APIGroupDiscoveryList`.
    Aggregated,
}

/// The `Content-Type` of an aggregated answer in `flavor` (the media type clients ask for).
pub fn aggregated_content_type(flavor: Flavor) -> String {
    format!(
        "application/json;g=apidiscovery.{};v=v2;as=APIGroupDiscoveryList",
        flavor.group_domain()
    )
}

/// One media range of an `Accept` header.
struct MediaRange<'a> {
    media_type: &'a str,
    params: Vec<(&'a str, &'a str)>,
    quality: f32,
}

impl<'a> MediaRange<'a> {
    fn parse(range: &'a str) -> Self {
        let mut parts = range.split(';').map(str::trim);
        let media_type = parts.next().unwrap_or_default();
        let mut params = Vec::new();
        let mut quality = 1.0;
        for (key, value) in parts.filter_map(|p| p.split_once('=')) {
            let (key, value) = (key.trim(), value.trim().trim_matches('"'));
            if key == "q" {
                quality = value.parse().unwrap_or(0.0);
            } else {
                params.push((key, value));
            }
        }
        Self {
            media_type,
            params,
            quality,
        }
    }

    fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| *v)
    }

    fn is_json(&self) -> bool {
        matches!(
            self.media_type,
            "application/json" | "application/*" | "*/*"
        )
    }

    /// The form this range accepts, if the server can answer it.
    fn form(&self, flavor: Flavor) -> Option<Form> {
        if self.quality <= 0.0 || !self.is_json() {
            return None;
        }
        match self.param("as") {
            None => Some(Form::Legacy),
            Some("APIGroupDiscoveryList")
                if self.param("v") == Some("v2")
                    && self.param("g")
                        == Some(format!("apidiscovery.{}", flavor.group_domain()).as_str()) =>
            {
                Some(Form::Aggregated)
            }
            Some(_) => None,
        }
    }
}

/// The form `accept` prefers in `flavor`: the servable range of highest quality, the first
/// of equals; the legacy document when no range can be served (or there is no header).
pub fn negotiate(accept: Option<&str>, flavor: Flavor) -> Form {
    let Some(accept) = accept else {
        return Form::Legacy;
    };
    let mut best: Option<(f32, Form)> = None;
    for range in accept.split(',').map(MediaRange::parse) {
        if let Some(form) = range.form(flavor)
            && best.is_none_or(|(q, _)| range.quality > q)
        {
            best = Some((range.quality, form));
        }
    }
    best.map_or(Form::Legacy, |(_, form)| form)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBECTL: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

    #[test]
    fn aggregated_only_in_the_flavor_domain_and_v2() {
        assert_eq!(
            negotiate(Some(KUBECTL), Flavor::Kubernetes),
            Form::Aggregated
        );
        assert_eq!(negotiate(Some(KUBECTL), Flavor::Platform), Form::Legacy);
        let platform = aggregated_content_type(Flavor::Platform);
        assert_eq!(
            negotiate(Some(&platform), Flavor::Platform),
            Form::Aggregated
        );
        assert_eq!(
            negotiate(
                Some("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"),
                Flavor::Kubernetes
            ),
            Form::Legacy
        );
        assert_eq!(negotiate(None, Flavor::Kubernetes), Form::Legacy);
        assert_eq!(negotiate(Some("*/*"), Flavor::Kubernetes), Form::Legacy);
    }

    #[test]
    fn quality_and_unservable_ranges() {
        let json_first = "application/json;q=1, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.5";
        assert_eq!(
            negotiate(Some(json_first), Flavor::Kubernetes),
            Form::Legacy
        );
        let protobuf_first = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
        assert_eq!(
            negotiate(Some(protobuf_first), Flavor::Kubernetes),
            Form::Aggregated
        );
        let refused = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0, application/json";
        assert_eq!(negotiate(Some(refused), Flavor::Kubernetes), Form::Legacy);
    }
}
