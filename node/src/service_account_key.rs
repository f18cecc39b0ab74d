//! The key that signs service account tokens (`serviceaccounts/<name>/token`): read from
//! `--service-account-signing-key-file` (RSA, PEM), or made once and kept at that path so
//! tokens stay valid across restarts. `apiary dev` makes one for all its replicas, so every
//! replica signs with the same key. Also the keys that verify tokens
//! (`--service-account-key-file`, else the serving key, and always the signing key).

use std::fs;
use std::io;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::path::PathBuf;

use apiary_api::KeyParseError;
use apiary_api::RsaTokenSigner;
use apiary_api::TokenSignError;
use apiary_api::VerifyingKey;
use rsa::RsaPrivateKey;
use rsa::pkcs8::EncodePrivateKey;
use rsa::pkcs8::LineEnding;

/// The size of a generated key, in bits (upstream's generated keys are 2048-bit too).
const KEY_BITS: usize = 2048;

/// The key file name a replica keeps in its data directory when no key file is given.
pub const DEFAULT_KEY_FILE: &str = "service-account.key";

/// Why the signing key is unusable.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The key file could not be read or written.
    #[error("cannot access the service account signing key {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A key could not be generated or encoded.
    #[error("cannot generate a service account signing key: {0}")]
    Generate(String),
    /// The file does not hold an RSA private key.
    #[error("the service account signing key {path} is not an RSA private key")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: TokenSignError,
    },
    /// A `--service-account-key-file` holds no usable key.
    #[error("the service account key file {path} holds no usable key")]
    Verifying {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: KeyParseError,
    },
}

/// The PEM at `path`, made (2048-bit RSA, PKCS#8, owner-only) when the file does not exist.
pub fn load_or_generate(path: &Path) -> Result<Vec<u8>, KeyError> {
    let io_error = |source| KeyError::Io {
        path: path.to_owned(),
        source,
    };
    match fs::read(path) {
        Ok(pem) => return Ok(pem),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_error(e)),
    }
    let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, KEY_BITS)
        .map_err(|e| KeyError::Generate(e.to_string()))?;
    let pem = key
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| KeyError::Generate(e.to_string()))?;
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io_error)?;
    }
    // Written aside and linked into place, so replicas starting together never read half a
    // key: the first link wins, the others read the winner's.
    let aside = path.with_extension(format!("{}.tmp", rand::random::<u64>()));
    let written = write_private(&aside, pem.as_bytes());
    let linked = written.and_then(|()| fs::hard_link(&aside, path));
    // The aside copy is only a means to the link; failing to remove it changes nothing.
    let _ = fs::remove_file(&aside);
    match linked {
        Ok(()) => Ok(pem.as_bytes().to_vec()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => fs::read(path).map_err(io_error),
        Err(e) => Err(io_error(e)),
    }
}

/// Writes `contents` to the new file `path`, readable by its owner only.
fn write_private(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents)
}

/// The signer of the key at `path` (made when absent) for tokens of `issuer`, whose default
/// audiences are `audiences` (`--api-audiences`).
pub fn signer(
    path: &Path,
    issuer: &str,
    audiences: Vec<String>,
) -> Result<RsaTokenSigner, KeyError> {
    let pem = load_or_generate(path)?;
    RsaTokenSigner::from_pem(&pem, issuer, audiences).map_err(|source| KeyError::Invalid {
        path: path.to_owned(),
        source,
    })
}

/// The keys that verify service account tokens: every key of `key_files`, or without any the
/// key of `serving_key` when it is one (upstream's fallback to `--tls-private-key-file`); the
/// signer's own key always, so the tokens this server issues authenticate.
pub fn verifying_keys(
    key_files: &[PathBuf],
    serving_key: &Path,
    signer: &RsaTokenSigner,
) -> Result<Vec<VerifyingKey>, KeyError> {
    let mut keys = vec![signer.verifying_key().clone()];
    let read = |path: &Path| {
        let pem = fs::read(path).map_err(|source| KeyError::Io {
            path: path.to_owned(),
            source,
        })?;
        VerifyingKey::all_from_pem(&pem).map_err(|source| KeyError::Verifying {
            path: path.to_owned(),
            source,
        })
    };
    if key_files.is_empty() {
        match read(serving_key) {
            Ok(found) => keys.extend(found),
            Err(error) => {
                tracing::warn!(%error, "the serving key does not verify service account tokens")
            }
        }
    }
    for path in key_files {
        keys.extend(read(path)?);
    }
    let mut seen = std::collections::BTreeSet::new();
    keys.retain(|key| seen.insert(key.kid().to_owned()));
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_once_and_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sa").join(DEFAULT_KEY_FILE);
        let first = load_or_generate(&path).expect("made");
        assert!(String::from_utf8_lossy(&first).starts_with("-----BEGIN PRIVATE KEY-----"));
        assert_eq!(load_or_generate(&path).expect("read"), first);
        let mode = fs::metadata(&path).expect("meta").permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
        assert!(signer(&path, "https://issuer", vec![]).is_ok());
        let bad = dir.path().join("bad.key");
        fs::write(&bad, "not a key").expect("write");
        assert!(matches!(
            signer(&bad, "https://issuer", vec![]),
            Err(KeyError::Invalid { .. })
        ));
    }
}
