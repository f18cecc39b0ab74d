//! Simulated networking: the real HTTP routers served on turmoil sockets ([`SimListener`]) and
//! deadline-bounded HTTP calls over them ([`post`]), and streamed answers read line by line
//! ([`get_stream`]).

mod dial;
mod http_call;
mod http_stream;
mod listener;
mod transport;

pub use http_call::CallError;
pub use http_call::post;
pub use http_call::send;
pub use http_stream::LineError;
pub use http_stream::LineStream;
pub use http_stream::get_stream;
pub use listener::SimListener;
pub use transport::SimTransport;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::Router;
    use axum::routing::post as route_post;
    use bytes::Bytes;

    use super::*;

    async fn echo_host() -> turmoil::Result {
        let router = Router::new().route("/echo", route_post(|body: Bytes| async { body }));
        axum::serve(SimListener::bind(80).await?, router).await?;
        Ok(())
    }

    // R-HA-013: a call through the simulated network reaches the real axum router and returns
    // its answer; a partition or a stalled link turns the same call into a typed error, never a
    // hang.
    #[test]
    fn post_reaches_router_and_faults_end_in_typed_errors() {
        let mut sim = turmoil::Builder::new().rng_seed(7).build();
        sim.host("server", echo_host);
        sim.client("client", async {
            // Give the server host a tick to bind.
            tokio::time::sleep(Duration::from_millis(10)).await;

            let answer = post(
                "http://server:80",
                "/echo",
                Bytes::from_static(b"ping"),
                Duration::from_secs(1),
            )
            .await?;
            assert_eq!(answer, Bytes::from_static(b"ping"));

            let missing = post("http://server:80", "/nope", Bytes::new(), Duration::from_secs(1)).await;
            assert!(
                matches!(missing, Err(CallError::Status { status, .. }) if status == http::StatusCode::NOT_FOUND)
            );

            // A partition drops the SYN: the connect fails, so the request was never delivered.
            turmoil::partition("client", "server");
            let cut = post(
                "http://server:80",
                "/echo",
                Bytes::from_static(b"ping"),
                Duration::from_millis(500),
            )
            .await;
            assert!(matches!(cut, Err(CallError::Connect { .. })), "{cut:?}");
            turmoil::repair("client", "server");

            // A held link delivers nothing and refuses nothing: only the deadline ends the call.
            turmoil::hold("client", "server");
            let held = post(
                "http://server:80",
                "/echo",
                Bytes::from_static(b"ping"),
                Duration::from_millis(500),
            )
            .await;
            assert!(matches!(held, Err(CallError::DeadlineExceeded { .. })), "{held:?}");
            turmoil::release("client", "server");

            let healed = post(
                "http://server:80",
                "/echo",
                Bytes::from_static(b"pong"),
                Duration::from_secs(1),
            )
            .await?;
            assert_eq!(healed, Bytes::from_static(b"pong"));
            Ok(())
        });
        sim.run().expect("simulation failed");
    }

    // R-RES-232 (plumbing): a streamed answer is cut into lines however its chunks fall — a
    // line across two chunks, two lines in one, a last line without `\n` — and silence ends
    // the wait with a typed error.
    #[test]
    fn streams_are_read_line_by_line() {
        let mut sim = turmoil::Builder::new().rng_seed(5).build();
        sim.host("server", || async {
            let router = Router::new()
                .route(
                    "/stream",
                    axum::routing::get(|| async {
                        let chunks = ["fir", "st\nsecond\nthi", "rd"]
                            .map(|c| Ok::<_, std::io::Error>(Bytes::from_static(c.as_bytes())));
                        axum::body::Body::from_stream(futures::stream::iter(chunks))
                    }),
                )
                .route(
                    "/silent",
                    axum::routing::get(|| async {
                        axum::body::Body::from_stream(futures::stream::pending::<
                            Result<Bytes, std::io::Error>,
                        >())
                    }),
                );
            axum::serve(SimListener::bind(80).await?, router).await?;
            Ok(())
        });
        sim.client("client", async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let idle = Duration::from_secs(1);
            let mut lines = get_stream("http://server:80", "/stream", idle).await?;
            for expected in ["first", "second", "third"] {
                let line = lines.next_line(idle).await?;
                assert_eq!(line.as_deref(), Some(expected.as_bytes()));
            }
            assert_eq!(lines.next_line(idle).await?, None);

            let mut silent = get_stream("http://server:80", "/silent", idle).await?;
            let waited = silent.next_line(idle).await;
            assert!(matches!(waited, Err(LineError::Idle { .. })), "{waited:?}");

            let missing = get_stream("http://server:80", "/nope", idle).await;
            assert!(
                matches!(missing, Err(CallError::Status { status, .. }) if status == http::StatusCode::NOT_FOUND)
            );
            Ok(())
        });
        sim.run().expect("simulation failed");
    }

    #[test]
    fn invalid_url_is_a_typed_error() {
        let mut sim = turmoil::Builder::new().rng_seed(1).build();
        sim.client("client", async {
            for url in ["not a url", "server", "http://server", "https://server:443"] {
                let result = post(url, "/x", Bytes::new(), Duration::from_secs(1)).await;
                assert!(
                    matches!(result, Err(CallError::InvalidUrl { .. })),
                    "{url}: {result:?}"
                );
            }
            Ok(())
        });
        sim.run().expect("simulation failed");
    }
}
