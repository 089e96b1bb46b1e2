//! Every example file in `config/` parses and means what it says: users copy these verbatim.

use std::path::{Path, PathBuf};

use bridge_core::config::{Config, EnvLayer, Overrides};

fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}

fn check_env_example(path: &Path) -> anyhow::Result<()> {
    let dotenv = dotenvy::from_path_iter(path)?.collect::<Result<Vec<_>, _>>()?;
    assert!(
        dotenv.iter().any(|(k, _)| k == "COPILOT_GITHUB_TOKEN"),
        "{} documents no variables",
        path.display()
    );
    for name in bridge_core::config::VARIABLES {
        let listed =
            dotenv.iter().any(|(k, _)| k == name) || ["GH_TOKEN", "GITHUB_TOKEN"].contains(name);
        assert!(listed, "{} does not document {name}", path.display());
    }
    let env = EnvLayer::from_maps([("HOME".to_owned(), "/home/u".to_owned())], dotenv);
    Config::resolve(Overrides::default(), env)?;
    Ok(())
}

fn check_mcp_json(path: &Path) -> anyhow::Result<()> {
    let value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let servers = value
        .pointer("/mcp/servers")
        .or_else(|| value.get("mcpServers"))
        .or_else(|| value.get("servers"))
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| anyhow::anyhow!("{}: no server table", path.display()))?;
    for name in ["copilot-bridge", "openclaw-memory"] {
        let command = servers
            .get(name)
            .and_then(|s| s.get("command"))
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| anyhow::anyhow!("{}: {name} has no command", path.display()))?;
        assert!(command.ends_with(name), "{}: {command}", path.display());
    }
    Ok(())
}

#[test]
fn every_example_config_parses() -> anyhow::Result<()> {
    let mut checked = 0;
    for entry in std::fs::read_dir(config_dir())? {
        let path = entry?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.ends_with(".env.example") {
            check_env_example(&path)?;
        } else if name.ends_with(".mcp.json") {
            check_mcp_json(&path)?;
        } else if name.starts_with("policy") && path.extension().is_some_and(|e| e == "toml") {
            bridge_core::policy::Policy::load(&path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        } else if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path)?;
            toml::from_str::<toml::Table>(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        } else {
            panic!(
                "{} is an example of an unknown kind: add a check for it here",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} example files found");
    Ok(())
}
