//! The permission policy: decides whether a tool call is allowed, needs the user's approval, or
//! is denied, and says which rule decided.
//!
//! Evaluation order (first match wins):
//! 1. `blocked_tools` (tool-name globs) → deny;
//! 2. `blocked_patterns` (regexes over the call's command/argument text) and the built-in
//!    destructive-command rules → deny;
//! 3. `blocked_paths` (path globs), then workspace containment for edits
//!    (`edits_outside_workspace`, default deny) and reads (`reads_outside_workspace`, default
//!    allow) → deny, or ask;
//! 4. `ask_tools` → ask;
//! 5. `allowed_tools`, when non-empty → deny anything not listed;
//! 6. allow.
//!
//! Everything is compiled when the policy is loaded; a call the policy cannot judge (no tool name,
//! a NUL byte in a path, a relative path with no workspace…) is denied with the reason.

mod commands;
mod file;
mod paths;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, OnceLock};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use regex::Regex;

pub use self::file::{AskVia, OutsideWorkspace, PolicyFile};
use self::paths::PathProblem;

/// What a call does, as far as the policy cares: the servers map their own notions (a tool
/// table row, an agent's tool-call kind) onto these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionKind {
    /// Creates, modifies, moves or deletes files.
    Edit,
    /// Runs a shell command.
    Execute,
    /// Reads or searches files.
    Read,
    /// Fetches a URL.
    Fetch,
    /// A tool of an MCP server.
    Mcp,
    /// Anything else.
    Other,
}

impl ActionKind {
    /// Whether the built-in destructive-command rules apply: not to edits and reads, whose text
    /// is file content or a path (a README may well say `curl … | sh`).
    fn may_run_commands(self) -> bool {
        match self {
            Self::Execute | Self::Fetch | Self::Mcp | Self::Other => true,
            Self::Edit | Self::Read => false,
        }
    }
}

/// One tool call to judge.
#[derive(Debug, Clone, Copy)]
pub struct PolicyRequest<'a> {
    /// The tool's name, matched against the tool globs.
    pub tool: &'a str,
    /// What the tool does.
    pub kind: ActionKind,
    /// The command line or argument text the blocked patterns are matched against (for a shell
    /// call pass the command itself, not its JSON encoding).
    pub text: &'a str,
    /// Paths the call touches; relative ones are resolved against `workspace`.
    pub paths: &'a [PathBuf],
    /// The workspace root (absolute), when known.
    pub workspace: Option<&'a Path>,
}

/// The policy's verdict on a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Ask the user first.
    Ask {
        /// Why approval is needed, naming the rule.
        reason: String,
    },
    /// Refuse it.
    Deny {
        /// Why, naming the rule and what to change.
        reason: String,
    },
}

impl Decision {
    /// Whether the call may run without asking.
    pub fn is_allow(&self) -> bool {
        matches!(self, Self::Allow)
    }

    /// The reason, unless the call is allowed.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Self::Allow => None,
            Self::Ask { reason } | Self::Deny { reason } => Some(reason),
        }
    }
}

/// Errors loading or compiling a policy file.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The named policy file does not exist.
    #[error(
        "policy file {} does not exist: create it (copy config/policy.example.toml) or stop \
         naming it (--policy / COPILOT_BRIDGE_POLICY_FILE) to use the built-in default policy",
        path.display()
    )]
    NotFound {
        /// The path that was named.
        path: PathBuf,
    },
    /// The policy file exists but could not be read.
    #[error("cannot read policy file {}: check its permissions", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown keys or wrongly typed values.
    #[error(
        "policy file {} is invalid; every key is documented in config/policy.example.toml",
        origin.display()
    )]
    Parse {
        /// The file.
        origin: PathBuf,
        /// The parser's error, naming the key and line.
        #[source]
        source: toml::de::Error,
    },
    /// A tool or path glob does not compile.
    #[error(
        "{key} = {value:?} in policy file {} is not a valid glob; accepted: a name with `*` \
         (any characters), `?` (one character), `[abc]` (a class) and `{{a,b}}` (alternatives); \
         write `[*]`, `[?]`, `[[]` or `[{{]` for a literal character",
        origin.display()
    )]
    InvalidGlob {
        /// The file.
        origin: PathBuf,
        /// The key and index, e.g. `blocked_tools[2]`.
        key: String,
        /// The offending pattern.
        value: String,
        /// globset's error.
        #[source]
        source: globset::Error,
    },
    /// A blocked pattern is not a valid regex.
    #[error(
        "{key} = {value:?} in policy file {} is not a valid regular expression; accepted: Rust \
         `regex` syntax (no look-around or backreferences), e.g. \"\\\\bshutdown\\\\b\"",
        origin.display()
    )]
    InvalidRegex {
        /// The file.
        origin: PathBuf,
        /// The key and index, e.g. `blocked_patterns[0]`.
        key: String,
        /// The offending pattern.
        value: String,
        /// regex's error.
        #[source]
        source: Box<regex::Error>,
    },
    /// `disabled_default_patterns` names a rule that does not exist.
    #[error(
        "{key} = {value:?} in policy file {} names no built-in rule; accepted: {accepted}",
        origin.display()
    )]
    UnknownDefaultPattern {
        /// The file.
        origin: PathBuf,
        /// The key and index.
        key: String,
        /// The unknown name.
        value: String,
        /// The names that exist.
        accepted: String,
    },
    /// An extra workspace root is not absolute.
    #[error(
        "{key} = {value:?} in policy file {} is not an absolute path; accepted: absolute \
         directories such as \"/tmp\" (`~` is not expanded)",
        origin.display()
    )]
    RelativeRoot {
        /// The file.
        origin: PathBuf,
        /// The key and index.
        key: String,
        /// The offending path.
        value: PathBuf,
    },
}

/// A tool-name or path glob list that remembers its patterns for denial reasons. Each glob is
/// parsed (so checked) when the policy is built; the matcher over all of them is built on first
/// use, like the blocked patterns' regexes, and a failure there denies the call.
#[derive(Debug, Clone)]
struct GlobList {
    key: &'static str,
    globs: Vec<Glob>,
    /// Shared by clones, so a policy cloned from the built-in default builds it once.
    set: Arc<OnceLock<Result<GlobSet, globset::Error>>>,
    patterns: Vec<String>,
}

/// A lookup that should be impossible failed; the call is denied rather than guessed.
#[derive(Debug, thiserror::Error)]
enum Problem {
    #[error("the call has no tool name")]
    NoToolName,
    #[error(transparent)]
    Path(#[from] PathProblem),
    #[error("{0} matched pattern number {1}, which does not exist")]
    LostPattern(&'static str, usize),
    #[error("{0} cannot be compiled: {1}")]
    GlobSet(&'static str, #[source] globset::Error),
    #[error("{rule} cannot be compiled: {source}")]
    Uncompilable {
        rule: String,
        #[source]
        source: regex::Error,
    },
}

impl GlobList {
    /// Compiles `patterns` of `key`. Matching ignores case (a deny list that misses `Bash` for
    /// `bash` would fail open); `*` crosses `/` in tool names but not in paths.
    fn compile(
        key: &'static str,
        patterns: Option<&[String]>,
        path_like: bool,
        origin: &Path,
    ) -> Result<Self, PolicyError> {
        let patterns = patterns.unwrap_or_default().to_vec();
        let mut globs = Vec::with_capacity(patterns.len());
        for (index, pattern) in patterns.iter().enumerate() {
            let glob = GlobBuilder::new(pattern)
                .case_insensitive(true)
                .literal_separator(path_like)
                .backslash_escape(true)
                .build()
                .map_err(|source| PolicyError::InvalidGlob {
                    origin: origin.to_owned(),
                    key: format!("{key}[{index}]"),
                    value: pattern.clone(),
                    source,
                })?;
            globs.push(glob);
        }
        Ok(Self {
            key,
            globs,
            set: Arc::default(),
            patterns,
        })
    }

    fn set(&self) -> Result<&GlobSet, Problem> {
        self.set
            .get_or_init(|| {
                let mut builder = GlobSetBuilder::new();
                for glob in &self.globs {
                    builder.add(glob.clone());
                }
                builder.build()
            })
            .as_ref()
            .map_err(|source| Problem::GlobSet(self.key, source.clone()))
    }

    fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The first pattern (in file order) that matches `candidate`.
    fn first_match(&self, candidate: impl AsRef<Path>) -> Result<Option<&str>, Problem> {
        let Some(index) = self.set()?.matches(candidate).into_iter().min() else {
            return Ok(None);
        };
        self.patterns
            .get(index)
            .map(|p| Some(p.as_str()))
            .ok_or(Problem::LostPattern(self.key, index))
    }
}

/// A regex compiled on its first match, not when the policy is built: the built-in rules take
/// milliseconds to compile, and a server builds its policy before it answers `initialize`.
/// Syntax is checked when the policy is built (see [`check_syntax`]); what only compiling can
/// find (a pattern over the size limit) fails closed at first use, denying the call with the
/// compile error as the reason.
#[derive(Debug, Clone)]
struct LazyRegex {
    source: String,
    /// Shared by clones, so a policy cloned from the built-in default compiles each rule once.
    compiled: Arc<OnceLock<Result<Regex, regex::Error>>>,
}

impl LazyRegex {
    fn new(source: String) -> Self {
        Self {
            source,
            compiled: Arc::default(),
        }
    }

    fn get(&self) -> Result<&Regex, &regex::Error> {
        self.compiled
            .get_or_init(|| Regex::new(&self.source))
            .as_ref()
    }
}

/// Parses `source` as `Regex::new` would, without compiling it: a syntax error is reported
/// with the same text `Regex::new` gives, at a fraction of the cost.
fn check_syntax(source: &str) -> Result<(), regex::Error> {
    regex_syntax::Parser::new()
        .parse(source)
        .map(drop)
        .map_err(|err| regex::Error::Syntax(err.to_string()))
}

/// A blocked-argument regex with the words that explain a match.
#[derive(Debug, Clone)]
struct BlockedPattern {
    regex: LazyRegex,
    /// Applies only to kinds that may run commands (the built-in rules).
    commands_only: bool,
    /// Completes "its arguments match …".
    rule: String,
    /// What to do about it.
    advice: String,
}

/// A compiled permission policy. Build one with [`Policy::load`], [`Policy::from_toml_str`],
/// [`Policy::new`] or [`Policy::default`]; then call [`Policy::evaluate`] for each tool call.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Where the rules came from, for reasons: "policy file /x" or "the built-in default policy".
    origin: String,
    blocked_tools: GlobList,
    blocked_patterns: Vec<BlockedPattern>,
    blocked_paths: GlobList,
    edits_outside: OutsideWorkspace,
    reads_outside: OutsideWorkspace,
    extra_roots: Vec<PathBuf>,
    ask_tools: GlobList,
    allowed_tools: GlobList,
    ask_via: AskVia,
}

/// The default policy, compiled once.
static DEFAULT: LazyLock<Result<Policy, String>> = LazyLock::new(|| {
    Policy::compile(&PolicyFile::default(), Path::new("<built-in>"), None)
        .map_err(|e| e.to_string())
});

impl Default for Policy {
    /// The documented default: no tool lists, the built-in destructive-command rules, edits
    /// outside the workspace denied, reads anywhere allowed.
    fn default() -> Self {
        #[expect(
            clippy::expect_used,
            reason = "the built-in policy has only constant patterns, compiled by the tests"
        )]
        DEFAULT
            .as_ref()
            .expect("the built-in default policy compiles")
            .clone()
    }
}

impl Policy {
    /// Reads and compiles the policy file at `path`. A missing file is [`PolicyError::NotFound`];
    /// callers decide whether that means the default policy.
    pub fn load(path: &Path) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                PolicyError::NotFound {
                    path: path.to_owned(),
                }
            } else {
                PolicyError::Read {
                    path: path.to_owned(),
                    source,
                }
            }
        })?;
        Self::from_toml_str(&text, path)
    }

    /// Parses and compiles a policy file's text; `origin` names it in errors and reasons.
    pub fn from_toml_str(text: &str, origin: &Path) -> Result<Self, PolicyError> {
        let file: PolicyFile = toml::from_str(text).map_err(|source| PolicyError::Parse {
            origin: origin.to_owned(),
            source,
        })?;
        Self::new(&file, origin)
    }

    /// Compiles an already parsed policy file; `origin` names it in errors and reasons.
    pub fn new(file: &PolicyFile, origin: &Path) -> Result<Self, PolicyError> {
        Self::compile(file, origin, Some(origin))
    }

    fn compile(
        file: &PolicyFile,
        origin: &Path,
        origin_file: Option<&Path>,
    ) -> Result<Self, PolicyError> {
        // Destructure so a new key cannot be silently ignored.
        let PolicyFile {
            blocked_tools,
            blocked_patterns,
            disabled_default_patterns,
            blocked_paths,
            edits_outside_workspace,
            reads_outside_workspace,
            extra_workspace_roots,
            ask_tools,
            allowed_tools,
            ask_via,
        } = file;
        let origin_text = match origin_file {
            Some(path) => format!("policy file {}", path.display()),
            None => "the built-in default policy".to_owned(),
        };

        let patterns = compile_patterns(
            blocked_patterns.as_deref().unwrap_or_default(),
            disabled_default_patterns.as_deref().unwrap_or_default(),
            origin,
            &origin_text,
        )?;

        let mut extra_roots = Vec::new();
        for (index, root) in extra_workspace_roots.iter().flatten().enumerate() {
            let normalized =
                paths::normalize_root(root).map_err(|_| PolicyError::RelativeRoot {
                    origin: origin.to_owned(),
                    key: format!("extra_workspace_roots[{index}]"),
                    value: root.clone(),
                })?;
            extra_roots.push(normalized);
        }

        Ok(Self {
            origin: origin_text,
            blocked_tools: GlobList::compile(
                "blocked_tools",
                blocked_tools.as_deref(),
                false,
                origin,
            )?,
            blocked_patterns: patterns,
            blocked_paths: GlobList::compile(
                "blocked_paths",
                blocked_paths.as_deref(),
                true,
                origin,
            )?,
            edits_outside: edits_outside_workspace.unwrap_or(OutsideWorkspace::Deny),
            reads_outside: reads_outside_workspace.unwrap_or(OutsideWorkspace::Allow),
            extra_roots,
            ask_tools: GlobList::compile("ask_tools", ask_tools.as_deref(), false, origin)?,
            allowed_tools: GlobList::compile(
                "allowed_tools",
                allowed_tools.as_deref(),
                false,
                origin,
            )?,
            ask_via: ask_via.unwrap_or_default(),
        })
    }

    /// Who is asked when a rule says `ask`.
    pub fn ask_via(&self) -> AskVia {
        self.ask_via
    }

    /// Builds every matcher now (they are otherwise built on first use), e.g. on a spare thread
    /// once a server has answered its client's first message, so the first call does not pay.
    pub fn prepare(&self) {
        for pattern in &self.blocked_patterns {
            let _ = pattern.regex.get();
        }
        for list in [
            &self.blocked_tools,
            &self.blocked_paths,
            &self.ask_tools,
            &self.allowed_tools,
        ] {
            let _ = list.set();
        }
    }

    /// Where this policy came from, as used in reasons.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Judges one tool call. Never fails: a call the policy cannot judge is denied.
    pub fn evaluate(&self, request: &PolicyRequest<'_>) -> Decision {
        match self.judge(request) {
            Ok(decision) => decision,
            Err(problem) => Decision::Deny {
                reason: format!(
                    "`{}` is denied because the policy cannot judge the call safely: {problem}",
                    request.tool
                ),
            },
        }
    }

    fn judge(&self, request: &PolicyRequest<'_>) -> Result<Decision, Problem> {
        let tool = request.tool;
        if tool.trim().is_empty() {
            return Err(Problem::NoToolName);
        }
        let origin = &self.origin;

        if let Some(pattern) = self.blocked_tools.first_match(tool)? {
            return Ok(Decision::Deny {
                reason: format!(
                    "`{tool}` is blocked: it matches blocked_tools pattern `{pattern}` ({origin})"
                ),
            });
        }

        for pattern in &self.blocked_patterns {
            if pattern.commands_only && !request.kind.may_run_commands() {
                continue;
            }
            let regex = pattern
                .regex
                .get()
                .map_err(|source| Problem::Uncompilable {
                    rule: pattern.rule.clone(),
                    source: source.clone(),
                })?;
            if regex.is_match(request.text) {
                return Ok(Decision::Deny {
                    reason: format!(
                        "`{tool}` is blocked: its arguments match {}; {}",
                        pattern.rule, pattern.advice
                    ),
                });
            }
        }

        let path_decision = self.judge_paths(request)?;
        if let Some(Decision::Deny { reason }) = path_decision {
            return Ok(Decision::Deny { reason });
        }

        if let Some(pattern) = self.ask_tools.first_match(tool)? {
            return Ok(Decision::Ask {
                reason: format!(
                    "`{tool}` needs approval: it matches ask_tools pattern `{pattern}` ({origin})"
                ),
            });
        }
        if let Some(ask @ Decision::Ask { .. }) = path_decision {
            return Ok(ask);
        }

        if !self.allowed_tools.is_empty() && self.allowed_tools.first_match(tool)?.is_none() {
            return Ok(Decision::Deny {
                reason: format!(
                    "`{tool}` is not allowed: it matches none of allowed_tools ({origin}); add \
                     it there to allow it"
                ),
            });
        }
        Ok(Decision::Allow)
    }

    /// Blocked paths and workspace containment; `None` when the paths raise no objection.
    fn judge_paths(&self, request: &PolicyRequest<'_>) -> Result<Option<Decision>, Problem> {
        let (outside, key, verb) = match request.kind {
            ActionKind::Edit => (self.edits_outside, "edits_outside_workspace", "edit"),
            ActionKind::Read => (self.reads_outside, "reads_outside_workspace", "read"),
            ActionKind::Execute | ActionKind::Fetch | ActionKind::Mcp | ActionKind::Other => {
                return Ok(None);
            }
        };
        let tool = request.tool;
        let origin = &self.origin;

        if !self.blocked_paths.is_empty() {
            for path in request.paths {
                let normalized = paths::normalize(path, request.workspace)?;
                if let Some(pattern) = self.blocked_paths.first_match(&normalized)? {
                    return Ok(Some(Decision::Deny {
                        reason: format!(
                            "`{tool}` may not {verb} {}: it matches blocked_paths pattern \
                             `{pattern}` ({origin})",
                            normalized.display()
                        ),
                    }));
                }
            }
        }

        let objection = |why: String| match outside {
            OutsideWorkspace::Deny => Some(Decision::Deny {
                reason: format!("{why}; {key} = \"deny\" ({origin})"),
            }),
            OutsideWorkspace::Ask => Some(Decision::Ask {
                reason: format!("{why}; {key} = \"ask\" ({origin})"),
            }),
            OutsideWorkspace::Allow => None,
        };
        if outside == OutsideWorkspace::Allow {
            return Ok(None);
        }
        let Some(workspace) = request.workspace else {
            return Ok(objection(format!(
                "`{tool}` would {verb} files but no workspace is known, so the policy cannot \
                 tell whether it stays inside one"
            )));
        };
        let workspace = paths::normalize_root(workspace)?;
        if request.paths.is_empty() {
            return Ok(objection(format!(
                "`{tool}` would {verb} files but names no path, so the policy cannot tell \
                 whether it stays inside the workspace {}",
                workspace.display()
            )));
        }
        for path in request.paths {
            let normalized = paths::normalize(path, Some(&workspace))?;
            let inside = paths::is_inside(&normalized, &workspace)
                || self
                    .extra_roots
                    .iter()
                    .any(|root| paths::is_inside(&normalized, root));
            if !inside {
                return Ok(objection(format!(
                    "`{tool}` would {verb} {}, which is outside the workspace {}",
                    normalized.display(),
                    workspace.display()
                )));
            }
        }
        Ok(None)
    }
}

/// Compiles the user's blocked patterns, then the built-in rules not switched off by `disabled`.
fn compile_patterns(
    blocked_patterns: &[String],
    disabled: &[String],
    origin: &Path,
    origin_text: &str,
) -> Result<Vec<BlockedPattern>, PolicyError> {
    let mut patterns = Vec::new();
    for (index, source) in blocked_patterns.iter().enumerate() {
        let key = format!("blocked_patterns[{index}]");
        check_syntax(source).map_err(|e| PolicyError::InvalidRegex {
            origin: origin.to_owned(),
            key: key.clone(),
            value: source.clone(),
            source: Box::new(e),
        })?;
        patterns.push(BlockedPattern {
            regex: LazyRegex::new(source.clone()),
            commands_only: false,
            rule: format!("{key} `{source}` ({origin_text})"),
            advice: format!("remove the pattern from {origin_text} if this call is safe"),
        });
    }

    let rules = commands::default_rules();
    for (index, name) in disabled.iter().enumerate() {
        if !rules.iter().any(|rule| rule.name == name) {
            return Err(PolicyError::UnknownDefaultPattern {
                origin: origin.to_owned(),
                key: format!("disabled_default_patterns[{index}]"),
                value: name.clone(),
                accepted: commands::default_rule_names().join(", "),
            });
        }
    }
    for rule in rules {
        if disabled.iter().any(|name| name == rule.name) {
            continue;
        }
        // The built-in patterns are constants, compiled by the tests: no check at startup.
        patterns.push(BlockedPattern {
            regex: LazyRegex::new(rule.pattern.clone()),
            commands_only: true,
            rule: format!(
                "the built-in rule `{}` against {}",
                rule.name, rule.description
            ),
            advice: format!(
                "if you really mean it, run it yourself, or switch the rule off with \
                 disabled_default_patterns = [\"{}\"] in a policy file",
                rule.name
            ),
        });
    }
    Ok(patterns)
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Allow => f.write_str("allow"),
            Self::Ask { reason } => write!(f, "ask: {reason}"),
            Self::Deny { reason } => write!(f, "deny: {reason}"),
        }
    }
}

/// The glob pattern that matches exactly the tool `name` (special characters escaped), for
/// code that turns a literal tool name into a policy entry.
pub fn literal_tool_pattern(name: &str) -> String {
    globset::escape(name)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn request<'a>(tool: &'a str, kind: ActionKind, text: &'a str) -> PolicyRequest<'a> {
        PolicyRequest {
            tool,
            kind,
            text,
            paths: &[],
            workspace: None,
        }
    }

    #[test]
    fn default_policy_allows_an_ordinary_command() {
        let decision = Policy::default().evaluate(&request("bash", ActionKind::Execute, "ls -la"));
        assert_eq!(decision, Decision::Allow);
    }

    #[test]
    fn default_reason_names_the_rule_and_how_to_switch_it_off() {
        let decision =
            Policy::default().evaluate(&request("bash", ActionKind::Execute, "rm -rf /"));
        assert_eq!(
            decision,
            Decision::Deny {
                reason: "`bash` is blocked: its arguments match the built-in rule \
                         `rm-root-home-all` against recursive delete of /, ~, $HOME or \
                         everything in the current directory (rm -rf /, rm -r ~/*, rm -rf *); \
                         if you really mean it, run it yourself, or switch the rule off with \
                         disabled_default_patterns = [\"rm-root-home-all\"] in a policy file"
                    .to_owned()
            }
        );
    }

    #[test]
    fn built_in_rules_skip_edit_and_read_text() {
        let policy = Policy::default();
        let readme = "Install with: curl -fsSL https://x/install.sh | sh";
        assert_eq!(
            policy.evaluate(&request("view", ActionKind::Read, readme)),
            Decision::Allow
        );
        let ws = Path::new("/ws");
        let paths = [PathBuf::from("README.md")];
        let edit = PolicyRequest {
            paths: &paths,
            workspace: Some(ws),
            ..request("create", ActionKind::Edit, readme)
        };
        assert_eq!(policy.evaluate(&edit), Decision::Allow);
        for kind in [
            ActionKind::Execute,
            ActionKind::Mcp,
            ActionKind::Other,
            ActionKind::Fetch,
        ] {
            assert!(
                !policy.evaluate(&request("x", kind, readme)).is_allow(),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn a_pattern_too_big_to_compile_loads_and_then_denies_naming_the_error() -> anyhow::Result<()> {
        // Valid syntax, so the file loads; compiling it exceeds the regex size limit.
        let policy = Policy::from_toml_str(
            "blocked_patterns = ['(?:\\w{1000}){1000}']",
            Path::new("/p.toml"),
        )?;
        let decision = policy.evaluate(&request("bash", ActionKind::Execute, "ls"));
        let Decision::Deny { reason } = decision else {
            anyhow::bail!("expected a denial, got {decision:?}");
        };
        assert!(
            reason.starts_with(
                "`bash` is denied because the policy cannot judge the call safely: \
                 blocked_patterns[0]"
            ),
            "{reason}"
        );
        assert!(reason.contains("cannot be compiled"), "{reason}");
        Ok(())
    }

    #[test]
    fn literal_tool_pattern_matches_only_that_name() -> anyhow::Result<()> {
        let name = "weird[tool]*{x}";
        let file = PolicyFile {
            blocked_tools: Some(vec![literal_tool_pattern(name)]),
            ..PolicyFile::default()
        };
        let policy = Policy::new(&file, Path::new("p.toml"))?;
        assert!(
            !policy
                .evaluate(&request(name, ActionKind::Other, ""))
                .is_allow()
        );
        for other in ["weirdt*{x}", "weird[tool]-anything{x}", "weirdo"] {
            assert!(
                policy
                    .evaluate(&request(other, ActionKind::Other, ""))
                    .is_allow(),
                "{other}"
            );
        }
        Ok(())
    }

    #[test]
    fn the_example_file_documents_every_built_in_rule() -> anyhow::Result<()> {
        let example =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/policy.example.toml");
        let text = std::fs::read_to_string(example)?;
        for name in commands::default_rule_names() {
            assert!(
                text.contains(&format!("\"{name}\"")),
                "{name} is not documented"
            );
        }
        Ok(())
    }

    #[test]
    fn missing_file_error_names_the_path_and_the_fix() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("nope.toml");
        let err = Policy::load(&path).unwrap_err();
        assert!(matches!(&err, PolicyError::NotFound { path: p } if *p == path));
        let message = err.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("policy.example.toml"), "{message}");
        Ok(())
    }

    #[test]
    fn load_reads_a_file_and_names_it_in_reasons() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("policy.toml");
        std::fs::write(&path, "blocked_tools = [\"web_*\"]\n")?;
        let policy = Policy::load(&path)?;
        assert_eq!(
            policy.evaluate(&request("web_fetch", ActionKind::Fetch, "")),
            Decision::Deny {
                reason: format!(
                    "`web_fetch` is blocked: it matches blocked_tools pattern `web_*` (policy \
                     file {})",
                    path.display()
                )
            }
        );
        Ok(())
    }
}
