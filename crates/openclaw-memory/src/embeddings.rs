//! Which embedding model the search uses, if any: `OPENCLAW_MEMORY_EMBEDDINGS` names a model
//! directory, or `off`; unset, the directory `scripts/fetch-embeddings.sh` installs into is
//! used when it is there. The model is optional: without one the search matches words only.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bridge_core::config::EnvLayer;

use crate::index::embedding::{WordModel, WordModelError};

/// The setting naming the model directory (or `off`).
pub const EMBEDDINGS_ENV: &str = "OPENCLAW_MEMORY_EMBEDDINGS";

/// Where the model comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSetting {
    /// `OPENCLAW_MEMORY_EMBEDDINGS=off`.
    Off,
    /// A directory the user named: it must hold a model.
    Named(PathBuf),
    /// The default directory, used when it holds a model.
    Default(PathBuf),
    /// Nothing set and no home directory to look in.
    Unset,
}

impl ModelSetting {
    /// The setting in `env`. Unset, it looks on disk for which default directory holds a
    /// model (see [`default_dir`]).
    pub fn from_env(env: &EnvLayer) -> Self {
        match env.get(EMBEDDINGS_ENV).map(str::trim) {
            Some(off) if off.eq_ignore_ascii_case("off") => Self::Off,
            Some(dir) if !dir.is_empty() => Self::Named(PathBuf::from(dir)),
            _ => default_dir(env).map_or(Self::Unset, Self::Default),
        }
    }

    /// The earlier release's model, used because it is the only one in the default place: the
    /// check suggests installing the current one.
    pub fn is_earlier_default(&self) -> bool {
        matches!(self, Self::Default(dir) if dir.ends_with(EARLIER_MODEL))
    }

    /// Loads the model: `Ok(None)` when there is none to load (off, or the default directory
    /// is empty), an error when a model was expected and could not be used.
    pub fn load(&self) -> Result<Option<Arc<WordModel>>, WordModelError> {
        match self {
            Self::Off | Self::Unset => Ok(None),
            Self::Default(dir) if !holds_model(dir) => Ok(None),
            Self::Named(dir) | Self::Default(dir) => {
                WordModel::load(dir).map(|m| Some(Arc::new(m)))
            }
        }
    }
}

/// The model `scripts/fetch-embeddings.sh` installs, in the directory it installs into under
/// `${XDG_DATA_HOME:-~/.local/share}/openclaw-memory/embeddings/`.
const DEFAULT_MODEL: &str = "potion-base-8M";
/// What earlier releases installed there: used while it is the only one present, so that an
/// upgrade does not silently turn the model off.
const EARLIER_MODEL: &str = "potion-base-2M";

/// `${XDG_DATA_HOME:-~/.local/share}/openclaw-memory/embeddings/potion-base-8M`, or the
/// earlier `potion-base-2M` beside it when only that one holds a model.
fn default_dir(env: &EnvLayer) -> Option<PathBuf> {
    let data = match env.get("XDG_DATA_HOME").map(Path::new) {
        Some(xdg) if xdg.is_absolute() => xdg.to_path_buf(),
        _ => Path::new(env.get("HOME")?).join(".local/share"),
    };
    let models = data.join("openclaw-memory/embeddings");
    let (current, earlier) = (models.join(DEFAULT_MODEL), models.join(EARLIER_MODEL));
    Some(if !holds_model(&current) && holds_model(&earlier) {
        earlier
    } else {
        current
    })
}

/// Whether `dir` holds a model (or a half-installed one, which loading then reports).
fn holds_model(dir: &Path) -> bool {
    dir.join("tokenizer.json").exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> EnvLayer {
        EnvLayer::from_pairs(pairs)
    }

    #[test]
    fn the_setting_is_off_a_named_directory_or_the_default_one() {
        assert_eq!(
            ModelSetting::from_env(&env(&[(EMBEDDINGS_ENV, "OFF")])),
            ModelSetting::Off
        );
        assert_eq!(
            ModelSetting::from_env(&env(&[(EMBEDDINGS_ENV, "/m"), ("HOME", "/h")])),
            ModelSetting::Named("/m".into())
        );
        assert_eq!(
            ModelSetting::from_env(&env(&[("HOME", "/h")])),
            ModelSetting::Default(
                "/h/.local/share/openclaw-memory/embeddings/potion-base-8M".into()
            )
        );
        assert_eq!(
            ModelSetting::from_env(&env(&[("HOME", "/h"), ("XDG_DATA_HOME", "/x")])),
            ModelSetting::Default("/x/openclaw-memory/embeddings/potion-base-8M".into())
        );
        assert_eq!(ModelSetting::from_env(&env(&[])), ModelSetting::Unset);
    }

    #[test]
    fn an_earlier_install_is_used_only_while_it_is_the_only_one() {
        let data = tempfile::tempdir().unwrap();
        let models = data.path().join("openclaw-memory/embeddings");
        let xdg = data.path().to_str().unwrap();
        let setting = || ModelSetting::from_env(&env(&[("XDG_DATA_HOME", xdg)]));
        assert_eq!(setting(), ModelSetting::Default(models.join(DEFAULT_MODEL)));
        std::fs::create_dir_all(models.join(EARLIER_MODEL)).unwrap();
        std::fs::write(models.join(EARLIER_MODEL).join("tokenizer.json"), "{}").unwrap();
        assert_eq!(setting(), ModelSetting::Default(models.join(EARLIER_MODEL)));
        assert!(setting().is_earlier_default());
        // An empty (or half-installed) directory for the new model is not a model.
        std::fs::create_dir_all(models.join(DEFAULT_MODEL)).unwrap();
        assert_eq!(setting(), ModelSetting::Default(models.join(EARLIER_MODEL)));
        std::fs::write(models.join(DEFAULT_MODEL).join("tokenizer.json"), "{}").unwrap();
        assert_eq!(setting(), ModelSetting::Default(models.join(DEFAULT_MODEL)));
        assert!(!setting().is_earlier_default());
    }

    #[test]
    fn an_empty_default_directory_is_no_model_but_a_named_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            ModelSetting::Default(dir.path().into())
                .load()
                .unwrap()
                .is_none()
        );
        assert!(ModelSetting::Named(dir.path().into()).load().is_err());
        assert!(ModelSetting::Off.load().unwrap().is_none());
    }
}
