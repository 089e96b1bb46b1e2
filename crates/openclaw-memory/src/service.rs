//! What the tools stand on: the workspace (found on first use, looked for again while it is
//! missing), the local index over it, and the confined store. Nothing here runs before the
//! first tool call, so the server starts in milliseconds.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use bridge_core::config::EnvLayer;
use bridge_core::sync::lock;

use crate::index::rank::RankOptions;
use crate::index::{LocalHit, MemoryIndex};
use crate::paths::MemoryPath;
use crate::store::{MAX_FILE_BYTES, MemoryStore, StoreError};
use crate::watch::ChangeWatch;
use crate::workspace::{Discovery, DiscoveryInput, Workspace, discover};

/// Settings of the memory service.
#[derive(Debug, Clone, Default)]
pub struct ServiceOptions {
    /// `--workspace`: an explicit workspace directory.
    pub workspace_flag: Option<PathBuf>,
    /// How local results are ranked.
    pub ranking: RankOptions,
}

/// The workspace, its index and its store, shared by every tool call.
#[derive(Debug)]
pub struct MemoryService {
    options: ServiceOptions,
    env: EnvLayer,
    /// Found once; kept apart from the index so reads never wait for an index build.
    workspace: Mutex<Option<Workspace>>,
    index: Mutex<Option<(MemoryIndex, ChangeWatch)>>,
}

/// Why a call could not be served from the workspace.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// No workspace exists where OpenClaw would keep one.
    #[error(
        "no OpenClaw memory found. Looked in: {looked_in}. Set OPENCLAW_WORKSPACE_DIR or pass \
         --workspace to point at the folder that holds MEMORY.md and memory/"
    )]
    NoWorkspace {
        /// Where discovery looked.
        looked_in: String,
    },
    /// Reading a file failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl MemoryService {
    /// A service that will look for the workspace with `options` and `env` on first use.
    pub fn new(options: ServiceOptions, env: EnvLayer) -> Arc<Self> {
        Arc::new(Self {
            options,
            env,
            workspace: Mutex::new(None),
            index: Mutex::new(None),
        })
    }

    /// Discovery as it stands now (for "where did you look" answers).
    pub fn discover(&self) -> Discovery {
        discover(DiscoveryInput {
            flag: self.options.workspace_flag.as_deref(),
            env: &self.env,
        })
    }

    /// The workspace, discovering it when not found yet.
    pub fn workspace(&self) -> Result<Workspace, ServiceError> {
        // A panic while holding a lock leaves at worst a half-refreshed index, which the next
        // refresh repairs; keep serving.
        let mut found = lock(&self.workspace);
        if let Some(ws) = found.as_ref() {
            return Ok(ws.clone());
        }
        let discovery = self.discover();
        match discovery.workspace {
            Some(ws) => {
                tracing::info!(root = %ws.root.display(), source = %ws.source, "OpenClaw workspace");
                *found = Some(ws.clone());
                Ok(ws)
            }
            None => Err(ServiceError::NoWorkspace {
                looked_in: discovery.looked_in.join("; "),
            }),
        }
    }

    /// Refreshes the local index and searches it. Blocking: call from a blocking thread.
    pub fn search_local(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<(Workspace, Vec<LocalHit>), ServiceError> {
        let workspace = self.workspace()?;
        let ranking = self.options.ranking;
        let mut index = lock(&self.index);
        let (index, watch) = index.get_or_insert_with(|| {
            (
                MemoryIndex::new(MemoryStore::new(workspace.root.clone()), ranking),
                ChangeWatch::new(),
            )
        });
        if watch.needs_scan() {
            // Watch first, so a change made during the scan triggers the next one.
            watch.watch(&workspace.root);
            let refreshed = index.refresh()?;
            tracing::debug!(?refreshed, "memory index refreshed");
        }
        Ok((workspace, index.search(query, limit, Some(today()))))
    }

    /// Reads one memory file, confined. Blocking: call from a blocking thread.
    pub fn read(&self, path: &MemoryPath) -> Result<(Workspace, String), ServiceError> {
        let workspace = self.workspace()?;
        let text = MemoryStore::new(workspace.root.clone()).read(path, MAX_FILE_BYTES)?;
        Ok((workspace, text))
    }
}

/// Today as days since the Unix epoch (UTC), for recency decay.
fn today() -> i64 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    i64::try_from(secs / 86_400).unwrap_or(0)
}
