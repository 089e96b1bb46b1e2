//! The ed25519 device identity the gateway knows this server by: created once, kept in the
//! bridge's state directory (`device.json`, mode 0600), and used to sign each `connect`.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signer, SigningKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// File name of the identity inside the state directory.
pub const DEVICE_FILE: &str = "device.json";
/// Version of the signed payload format the gateway expects (protocol 4).
const PAYLOAD_VERSION: &str = "v3";

/// An ed25519 key pair and the id derived from it.
#[derive(Clone)]
pub struct DeviceIdentity {
    key: SigningKey,
    id: String,
}

impl std::fmt::Debug for DeviceIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceIdentity")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// What `device.json` holds.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredIdentity {
    version: u32,
    device_id: String,
    public_key: String,
    private_key: String,
}

/// What goes into one signature: the fields of the `connect` request it vouches for.
#[derive(Debug, Clone, Copy)]
pub struct SignedFields<'a> {
    /// `client.id`.
    pub client_id: &'a str,
    /// `client.mode`.
    pub client_mode: &'a str,
    /// `role`.
    pub role: &'a str,
    /// `scopes`.
    pub scopes: &'a [&'a str],
    /// Signing time, milliseconds since the epoch.
    pub signed_at_ms: u64,
    /// `auth.token`.
    pub token: &'a str,
    /// The challenge nonce.
    pub nonce: &'a str,
    /// `client.platform`.
    pub platform: &'a str,
    /// `client.deviceFamily` (empty when not sent).
    pub device_family: &'a str,
}

impl DeviceIdentity {
    /// A key pair from 32 secret bytes.
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let key = SigningKey::from_bytes(seed);
        let id = hex(&Sha256::digest(key.verifying_key().as_bytes()));
        Self { key, id }
    }

    /// A fresh random key pair.
    pub fn generate() -> Result<Self, DeviceError> {
        let mut seed = [0_u8; 32];
        getrandom::fill(&mut seed).map_err(|e| DeviceError::Random(e.to_string()))?;
        Ok(Self::from_seed(&seed))
    }

    /// Loads the identity from `state_dir/device.json`, creating it (and the directory, 0700)
    /// when missing.
    pub fn load_or_create(state_dir: &Path) -> Result<Self, DeviceError> {
        let path = state_dir.join(DEVICE_FILE);
        match fs::read_to_string(&path) {
            Ok(text) => Self::parse(&text).map_err(|reason| DeviceError::Corrupt {
                path: path.clone(),
                reason,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let identity = Self::generate()?;
                identity.save(state_dir, &path)?;
                Ok(identity)
            }
            Err(source) => Err(DeviceError::Io { path, source }),
        }
    }

    fn parse(text: &str) -> Result<Self, String> {
        let stored: StoredIdentity = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let seed = URL_SAFE_NO_PAD
            .decode(stored.private_key.trim())
            .map_err(|e| format!("privateKey: {e}"))?;
        let seed: [u8; 32] = seed
            .try_into()
            .map_err(|_| "privateKey is not 32 bytes".to_owned())?;
        let identity = Self::from_seed(&seed);
        if identity.id != stored.device_id {
            return Err("deviceId does not match the key".to_owned());
        }
        Ok(identity)
    }

    fn save(&self, state_dir: &Path, path: &Path) -> Result<(), DeviceError> {
        let io = |source| DeviceError::Io {
            path: path.to_path_buf(),
            source,
        };
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(state_dir)
            .map_err(io)?;
        let stored = StoredIdentity {
            version: 1,
            device_id: self.id.clone(),
            public_key: self.public_key(),
            private_key: URL_SAFE_NO_PAD.encode(self.key.to_bytes()),
        };
        let text = serde_json::to_string_pretty(&stored).map_err(|e| DeviceError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e),
        })?;
        // Write a private temp file and rename it, so a crash never leaves half a key and the
        // key is never readable by others, even for a moment.
        let tmp = path.with_extension("json.tmp");
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io)?;
        file.set_permissions(fs::Permissions::from_mode(0o600))
            .map_err(io)?;
        file.write_all(text.as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        fs::rename(&tmp, path).map_err(io)
    }

    /// The device id: hex SHA-256 of the raw public key.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The raw public key, base64url without padding.
    pub fn public_key(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.key.verifying_key().as_bytes())
    }

    /// The text that is signed: `v3|deviceId|clientId|clientMode|role|scopes|signedAtMs|
    /// token|nonce|platform|deviceFamily`, scopes joined with commas.
    pub fn payload(&self, fields: &SignedFields<'_>) -> String {
        [
            PAYLOAD_VERSION,
            &self.id,
            fields.client_id,
            fields.client_mode,
            fields.role,
            &fields.scopes.join(","),
            &fields.signed_at_ms.to_string(),
            fields.token,
            fields.nonce,
            fields.platform,
            fields.device_family,
        ]
        .join("|")
    }

    /// Signs the payload for `fields`, base64url without padding.
    pub fn sign(&self, fields: &SignedFields<'_>) -> String {
        URL_SAFE_NO_PAD.encode(self.key.sign(self.payload(fields).as_bytes()).to_bytes())
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Why the device identity could not be loaded or created.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// No randomness for a new key.
    #[error("cannot generate a device key: {0}")]
    Random(String),
    /// `device.json` exists but is unusable.
    #[error("{path} is not a valid device identity ({reason}); delete it to create a new one")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Reading or writing the file failed.
    #[error("cannot use the device identity at {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use ed25519_dalek::{Signature, Verifier, VerifyingKey};
    use pretty_assertions::assert_eq;
    use tempfile::TempDir;

    use super::*;

    fn fields(nonce: &str, signed_at_ms: u64) -> SignedFields<'_> {
        SignedFields {
            client_id: "cli",
            client_mode: "cli",
            role: "operator",
            scopes: &["operator.read"],
            signed_at_ms,
            token: "test-token-123",
            nonce,
            platform: "linux",
            device_family: "",
        }
    }

    #[test]
    fn payload_matches_the_captured_handshake() -> anyhow::Result<()> {
        // device-cli.jsonl: the real gateway accepted this signature for this public key.
        let public = URL_SAFE_NO_PAD.decode("4pOv7BJrwzXgyESe_-VuN4xp6uflFmAgeP7WviYj7CA")?;
        let key = VerifyingKey::from_bytes(&public.as_slice().try_into()?)?;
        let signature = URL_SAFE_NO_PAD.decode(
            "QWLGDyPVVbNoQp9Yg8SvdXRvBMqBt3dGoYh4mBisOI2XqRE2Y17GOPHuhSXWq7qGw5WunsYKYS1M3MgnEBC9Bg",
        )?;
        let signature = Signature::from_slice(&signature)?;
        // Rebuild the payload with our formatter, standing in the captured device id.
        let mut identity = DeviceIdentity::from_seed(&[7; 32]);
        identity.id = hex(&Sha256::digest(&public));
        assert_eq!(
            identity.id,
            "68ecfa32d720ae187f6b21b76688c46cc6df9781578b3fe6cfabbaf035e16129"
        );
        let payload = identity.payload(&fields(
            "07e80878-875c-472c-97d7-a8d5b4320d3e",
            1_795_331_757_688,
        ));
        key.verify(payload.as_bytes(), &signature)?;
        Ok(())
    }

    #[test]
    fn signatures_verify_with_the_published_key() -> anyhow::Result<()> {
        let identity = DeviceIdentity::generate()?;
        let public = URL_SAFE_NO_PAD.decode(identity.public_key())?;
        let key = VerifyingKey::from_bytes(&public.as_slice().try_into()?)?;
        let f = fields("nonce-1", 42);
        let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(identity.sign(&f))?)?;
        key.verify(identity.payload(&f).as_bytes(), &signature)?;
        Ok(())
    }

    #[test]
    fn identity_is_created_private_and_reloaded_unchanged() -> anyhow::Result<()> {
        let dir = TempDir::new()?;
        let state = dir.path().join("state");
        let first = DeviceIdentity::load_or_create(&state)?;
        let mode = fs::metadata(state.join(DEVICE_FILE))?.permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(fs::metadata(&state)?.permissions().mode() & 0o777, 0o700);
        let second = DeviceIdentity::load_or_create(&state)?;
        assert_eq!(first.id(), second.id());
        assert_eq!(first.public_key(), second.public_key());
        Ok(())
    }

    #[test]
    fn a_corrupt_identity_file_is_reported_not_replaced() -> anyhow::Result<()> {
        let dir = TempDir::new()?;
        fs::write(dir.path().join(DEVICE_FILE), "{}")?;
        let err = DeviceIdentity::load_or_create(dir.path()).unwrap_err();
        assert!(err.to_string().contains("delete it"), "{err}");
        Ok(())
    }
}
