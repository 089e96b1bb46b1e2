//! What the tools stand on: the workspace (found on first use, looked for again while it is
//! missing), the local index over it, and the confined store. Nothing here runs before the
//! first tool call, so the server starts in milliseconds.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bridge_core::config::EnvLayer;
use bridge_core::sync::lock;

use crate::embeddings::ModelSetting;
use crate::index::embedding::WordModel;
use crate::index::rank::RankOptions;
use crate::index::{LocalHit, MemoryIndex, RefreshStats};
use crate::paths::MemoryPath;
use crate::persist::{CacheLock, IndexCache, PersistError, state_dir};
use crate::scan::EarlyScan;
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
    index: Mutex<Option<LiveIndex>>,
    /// The embedding model, loaded at the first search.
    model: OnceLock<Option<Arc<WordModel>>>,
    /// The thread writing a freshly built index after its first search was answered.
    saving: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// The embedding model's loading has been started.
    model_requested: AtomicBool,
}

/// How long a process waits for another that is building the same workspace's index before
/// building its own in memory. Above the cold build of 50,000 notes on a slow machine.
const LOCK_WAIT: Duration = Duration::from_mins(1);
/// Changes seen while serving are saved at the first search at least this long after the last
/// save, so a burst of edits costs one write.
const SAVE_DEBOUNCE: Duration = Duration::from_secs(2);

/// What a process keeps of the index files it maps between searches, with its own code (about
/// 8 MiB): past it, the pages searches read go back to the page cache. The kernel maps a few
/// hundred kilobytes around each page a search reads, so at 50,000 notes one search maps up to
/// 30 MiB and a few searches would come to hold most of the file; giving the pages back costs
/// the next search its page faults (0.2-0.5 ms), which a small index, whose searches stay
/// under the budget, never pays.
const MAPPED_BUDGET: u64 = 24 << 20;

/// The index in use, its change watch, and where it is saved.
#[derive(Debug)]
struct LiveIndex {
    index: MemoryIndex,
    watch: ChangeWatch,
    /// `None`: kept in memory only (no state directory, or the file was refused).
    cache: Option<IndexCache>,
    /// Changed since it was last saved.
    dirty: bool,
    last_save: Instant,
    /// The lock a build holds until its index is written (after the first search is answered).
    pending: Option<CacheLock>,
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
            model: OnceLock::new(),
            saving: Mutex::new(None),
            model_requested: AtomicBool::new(false),
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

    /// Refreshes the local index and searches it. Blocking: call from a blocking thread. A
    /// freshly built index is saved on another thread once this search is answered.
    pub fn search_local(
        self: &Arc<Self>,
        query: &str,
        limit: usize,
    ) -> Result<(Workspace, Vec<LocalHit>), ServiceError> {
        let workspace = self.workspace()?;
        let mut guard = lock(&self.index);
        let live = match guard.take() {
            Some(live) => guard.insert(live),
            None => guard.insert(self.open_index(&workspace)?),
        };
        if live.watch.needs_scan() {
            // Watch first, so a change made during the scan triggers the next one.
            live.watch.watch(&workspace.root);
            let refreshed = live.index.refresh()?;
            tracing::debug!(?refreshed, "memory index refreshed");
            live.dirty |= refreshed.indexed + refreshed.removed > 0;
        }
        let mut hits = live.index.search(query, limit, Some(today()));
        // The embedding model matters only to a guess (no hit, or only weak ones): it is
        // attached, and the vocabulary embedded, at the first search that is one, so a first
        // search the words answer never waits for the model to load.
        if hits.iter().all(|h| h.weak)
            && live.index.word_model().is_none()
            && let Some(model) = self.word_model()
        {
            live.index.use_word_model(Some(model));
            hits = live.index.search(query, limit, Some(today()));
        }
        live.index.release_mapped_pages_over(MAPPED_BUDGET);
        if !self.model_requested.swap(true, Ordering::Relaxed) {
            self.load_model_after_answer();
        }
        if live.pending.is_some() {
            self.save_after_answer(live);
        } else if live.dirty && live.last_save.elapsed() >= SAVE_DEBOUNCE {
            live.save(Duration::ZERO);
        }
        Ok((workspace, hits))
    }

    /// Loads the embedding model on a thread of its own once the first search is answered, so
    /// that it competes with neither that search nor the index load; a guess before it is done
    /// waits for it.
    fn load_model_after_answer(self: &Arc<Self>) {
        let service = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("embedding-model".into())
            .spawn(move || drop(service.word_model()));
        if let Err(err) = spawned {
            tracing::debug!(%err, "loading the embedding model at the next guess instead");
        }
    }

    /// Writes the freshly built index, under the lock its build holds, on a thread of its own:
    /// the first search is answered without waiting for the write (a few hundred milliseconds
    /// at 50,000 notes). The next search waits for it, and [`Self::finish_saving`] at shutdown.
    /// A search that gets the index before that thread does starts no second one: the handle
    /// [`Self::finish_saving`] joins stays the one of the thread that writes. `live` is the
    /// index the caller holds locked, written on the spot when no thread can be started.
    fn save_after_answer(self: &Arc<Self>, live: &mut LiveIndex) {
        let mut saving = lock(&self.saving);
        if saving.as_ref().is_some_and(|handle| !handle.is_finished()) {
            return;
        }
        let service = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("index-save".into())
            .spawn(move || {
                if let Some(live) = lock(&service.index).as_mut() {
                    live.save_pending();
                }
            });
        match spawned {
            Ok(handle) => *saving = Some(handle),
            Err(err) => {
                // The caller holds the index: write it here and now.
                tracing::debug!(%err, "saving the memory index now");
                live.save_pending();
            }
        }
    }

    /// Waits for a save in progress (at shutdown, so a built index is not lost).
    pub fn finish_saving(&self) {
        let handle = lock(&self.saving).take();
        if let Some(handle) = handle
            && handle.join().is_err()
        {
            tracing::warn!("saving the memory index failed");
        }
    }

    /// The embedding model of `OPENCLAW_MEMORY_EMBEDDINGS`, loaded once. One that cannot be
    /// used is logged and the search matches words only (`check` reports it as a failure).
    fn word_model(&self) -> Option<Arc<WordModel>> {
        self.model
            .get_or_init(|| {
                let started = Instant::now();
                match ModelSetting::from_env(&self.env).load() {
                    Ok(Some(model)) => {
                        tracing::info!(source = %model.source().display(), took_ms = started.elapsed().as_millis(), "embedding model loaded");
                        Some(model)
                    }
                    Ok(None) => {
                        tracing::debug!("no embedding model: matching words only");
                        None
                    }
                    Err(err) => {
                        tracing::warn!(%err, "not using the embedding model: matching words only");
                        None
                    }
                }
            })
            .clone()
    }

    /// The index of `workspace` at its first search: the saved one brought up to date when
    /// there is one, else built, and saved for the next process. Only one process builds: the
    /// others wait for its lock, then load what it saved. Logs "memory index loaded" or
    /// "memory index built from scratch" (debug), which the tests count.
    fn open_index(&self, workspace: &Workspace) -> Result<LiveIndex, ServiceError> {
        let store = MemoryStore::new(workspace.root.clone());
        let ranking = self.options.ranking;
        let watch = ChangeWatch::new();
        let cache = state_dir(&self.env).and_then(|dir| IndexCache::new(&dir, &workspace.root));
        let Some(cache) = cache else {
            tracing::debug!("no state directory for the memory index; keeping it in memory");
            let scan = EarlyScan::Idle(watch);
            return build(store, ranking, scan, workspace, None, "no state directory");
        };
        let started = Instant::now();
        let mut watch = EarlyScan::start(watch, &store, cache.path());
        let loaded = match cache.load(store.clone(), ranking) {
            Ok(index) => Ok(index),
            Err(PersistError::NotAFile(path)) => {
                tracing::warn!(path = %path.display(), "memory index file is not a regular file (a symlink?); refusing it and keeping the index in memory");
                return build(store, ranking, watch, workspace, None, "index file refused");
            }
            Err(err) => Err(err),
        };
        let (index, held) = match loaded {
            Ok(index) => (index, None),
            Err(err) => {
                if !matches!(err, PersistError::Missing) {
                    tracing::info!(%err, "not using the saved memory index");
                }
                // Watch before looking for another process's build: if that build is found
                // fresh after this, this process's watch sees every change since, and it
                // need not list the notes again (`CheckMark::covers`).
                let (scan, mark) = watch.watching(&workspace.root, &cache);
                watch = scan;
                // Build only when no other process is at it; otherwise wait for its save
                // and load that (many waiters load at once: nobody holds the lock then).
                let mut held = match cache.lock(Duration::ZERO) {
                    Ok(held) => held,
                    Err(err) => {
                        tracing::info!(%err, "cannot lock the memory index; keeping it in memory");
                        return build(store, ranking, watch, workspace, None, "no lock");
                    }
                };
                if held.is_none() {
                    if !cache.wait_unlocked(LOCK_WAIT) {
                        tracing::info!(
                            "another process is still building the memory index; building it in memory"
                        );
                        return build(store, ranking, watch, workspace, None, "lock wait ran out");
                    }
                    if let Ok(index) = cache.load(store.clone(), ranking) {
                        let covered = mark.covers(cache.fresh_check(index.loaded_checksum()));
                        return Self::loaded(
                            index, watch, workspace, cache, started, None, covered,
                        );
                    }
                    // The other process did not leave a usable index: build it here.
                    held = cache.lock(LOCK_WAIT).ok().flatten();
                }
                let Some(held) = held else {
                    return build(store, ranking, watch, workspace, None, "lock wait ran out");
                };
                // Another process may have saved it just before this one took the lock.
                let Ok(index) = cache.load(store.clone(), ranking) else {
                    let live = build(
                        store,
                        ranking,
                        watch,
                        workspace,
                        Some(cache),
                        "no usable saved index",
                    )?;
                    return Ok(live.saved_under(held));
                };
                (index, Some(held))
            }
        };
        Self::loaded(index, watch, workspace, cache, started, held, false)
    }

    /// A loaded index brought up to date with the notes, saved when that changed anything
    /// (under `held` when the caller holds the lock). `covered`: the index was found fresh
    /// after `scan`'s watch was set up, so it is up to date but for what that watch reports
    /// at the first search, and the notes are not listed again.
    fn loaded(
        mut index: MemoryIndex,
        scan: EarlyScan,
        workspace: &Workspace,
        cache: IndexCache,
        started: Instant,
        held: Option<CacheLock>,
        covered: bool,
    ) -> Result<LiveIndex, ServiceError> {
        let (watch, listing) = scan.finish(&workspace.root);
        let refreshed = match listing {
            _ if covered => RefreshStats {
                unchanged: index.file_count(),
                ..RefreshStats::default()
            },
            Some(listing) => index.refresh_listed(listing)?,
            None => index.refresh()?,
        };
        tracing::debug!(
            ?refreshed,
            files = index.file_count(),
            listed = !covered,
            took_ms = started.elapsed().as_millis(),
            path = %cache.path().display(),
            "memory index loaded"
        );
        let mut live = LiveIndex {
            index,
            watch,
            cache: Some(cache),
            dirty: refreshed.indexed + refreshed.removed > 0,
            last_save: Instant::now(),
            pending: None,
        };
        if live.dirty {
            match held {
                Some(held) => live = live.saved_under(held),
                None => live.save(LOCK_WAIT),
            }
        }
        Ok(live)
    }

    /// Reads one memory file, confined. Blocking: call from a blocking thread.
    pub fn read(&self, path: &MemoryPath) -> Result<(Workspace, String), ServiceError> {
        let workspace = self.workspace()?;
        let text = MemoryStore::new(workspace.root.clone()).read(path, MAX_FILE_BYTES)?;
        Ok((workspace, text))
    }
}

/// Builds the index from the notes, and saves it when there is a `cache` (the caller holds its
/// lock).
fn build(
    store: MemoryStore,
    ranking: RankOptions,
    scan: EarlyScan,
    workspace: &Workspace,
    cache: Option<IndexCache>,
    why: &str,
) -> Result<LiveIndex, ServiceError> {
    let started = Instant::now();
    let mut index = MemoryIndex::new(store, ranking);
    if let Some(cache) = cache.as_ref() {
        index.spill_in(cache.dir());
    }
    let (mut watch, listing) = scan.finish(&workspace.root);
    let mut refreshed = match listing {
        Some(listing) => index.refresh_listed(listing)?,
        None => index.refresh()?,
    };
    // The watch was set up before the listing: with no change since, the index is exact as
    // of this check. Announced first, so that processes watching since before the
    // announcement, waiting for this build, need not list the notes again.
    if let Some(cache) = cache.as_ref()
        && watch.is_live()
    {
        let check = cache.announce_check();
        if watch.needs_scan() {
            watch.watch(&workspace.root);
            let again = index.refresh()?;
            refreshed.indexed += again.indexed;
            refreshed.removed += again.removed;
        } else {
            index.set_fresh_at_check(check);
        }
    }
    tracing::debug!(
        ?refreshed,
        files = index.file_count(),
        took_ms = started.elapsed().as_millis(),
        why,
        persisted = cache.is_some(),
        "memory index built from scratch"
    );
    Ok(LiveIndex {
        index,
        watch,
        dirty: cache.is_some(),
        cache,
        last_save: Instant::now(),
        pending: None,
    })
}

impl LiveIndex {
    /// Keeps the lock the caller holds until [`Self::save_pending`] has written the index.
    fn saved_under(mut self, held: CacheLock) -> Self {
        self.pending = Some(held);
        self
    }

    /// Writes the index under the lock kept by [`Self::saved_under`], then releases it.
    fn save_pending(&mut self) {
        if let Some(held) = self.pending.take() {
            let saved = self.write();
            drop(held);
            if saved {
                self.reload_if_built();
            }
        }
    }

    /// Saves under the lock, waiting at most `wait` for it; a busy lock means another process
    /// is saving, and this one tries again after its next change.
    fn save(&mut self, wait: Duration) {
        let Some(cache) = self.cache.as_ref() else {
            return;
        };
        match cache.lock(wait) {
            Ok(Some(held)) => {
                let saved = self.write();
                drop(held);
                if saved {
                    self.reload_if_built();
                }
            }
            Ok(None) => tracing::debug!("memory index lock busy; saving later"),
            Err(err) => tracing::info!(%err, "cannot lock the memory index to save it"),
        }
    }

    /// Writes the index; whether it was saved.
    fn write(&mut self) -> bool {
        let Some(cache) = self.cache.as_ref() else {
            return false;
        };
        let started = Instant::now();
        let saved = match cache.save(&self.index) {
            Ok(()) => {
                tracing::debug!(
                    took_ms = started.elapsed().as_millis(),
                    path = %cache.path().display(),
                    "memory index saved"
                );
                self.dirty = false;
                true
            }
            Err(PersistError::NotAFile(path)) => {
                tracing::warn!(path = %path.display(), "memory index file is not a regular file; keeping the index in memory");
                self.cache = None;
                self.dirty = false;
                false
            }
            Err(err) => {
                tracing::info!(%err, "could not save the memory index");
                false
            }
        };
        self.last_save = Instant::now();
        saved
    }

    /// Swaps an index built in this process for the one just saved, read in place from its
    /// file: the same index (a loaded index ranks exactly as the one saved), but its postings
    /// and tables leave the heap and its spill file is dropped, so a process that built the
    /// index ends up holding what one that loaded it does. The built one goes first, so that
    /// the two are never held at once; should the file not load back (it was just written), the
    /// index is built again in memory.
    fn reload_if_built(&mut self) {
        let Some(cache) = self.cache.as_ref() else {
            return;
        };
        if self.index.loaded_checksum().is_some() {
            return;
        }
        let started = Instant::now();
        let (store, ranking) = (self.index.store().clone(), self.index.ranking());
        let fresh_at_check = self.index.fresh_at_check();
        let model = self.index.word_model().cloned();
        drop(std::mem::replace(
            &mut self.index,
            MemoryIndex::new(store.clone(), ranking),
        ));
        let mut index = match cache.load(store.clone(), ranking) {
            Ok(mut saved) => {
                saved.set_fresh_at_check(fresh_at_check);
                tracing::debug!(
                    took_ms = started.elapsed().as_millis(),
                    "memory index switched to its saved file"
                );
                saved
            }
            Err(err) => {
                tracing::warn!(%err, "the memory index just saved does not load back; building it again in memory");
                let mut index = MemoryIndex::new(store, ranking);
                index.spill_in(cache.dir());
                if let Err(err) = index.refresh() {
                    tracing::warn!(%err, "rebuilding the memory index failed; the next search tries again");
                    self.watch.rescan();
                }
                index
            }
        };
        if model.is_some() {
            index.use_word_model(model);
        }
        self.index = index;
    }
}

/// Today as days since the Unix epoch (UTC), for recency decay.
fn today() -> i64 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    i64::try_from(secs / 86_400).unwrap_or(0)
}
