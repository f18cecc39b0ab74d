//! The peer network: raft RPCs, write forwarding, follower read index, join and member removal, as protobuf
//! over an injectable [`Transport`] (HTTP in production, turmoil in the simulation).
//!
//! Client side: [`PeerNetworkFactory`] / [`PeerConnection`] give openraft its network, and
//! [`PeerClient`] sends the replica-level RPCs; `peer_health` logs when a peer stops and starts
//! answering raft's calls. The server side, [`crate::replica::peer_router`], lives with the
//! replica it serves.

mod connection;
mod connector;
mod factory;
mod http_transport;
mod peer_client;
mod peer_health;
pub mod raft_message;
pub mod replica_message;
pub mod rpc;
mod transport;

use peer_health::PeerHealth;

pub use connection::PeerConnection;
pub use connector::Connector;
pub use connector::MaybeTlsStream;
pub(crate) use factory::PeerHealthMap;
pub use factory::PeerNetworkFactory;
pub use http_transport::HttpTransport;
pub use peer_client::PeerCallError;
pub use peer_client::PeerClient;
pub use transport::Transport;
pub use transport::TransportError;
