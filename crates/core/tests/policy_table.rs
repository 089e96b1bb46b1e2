//! Table tests of the permission policy: evaluation order, glob and regex matching, workspace
//! containment, fail-closed paths, and load errors that name the key, the value and the fix.

use std::path::{Path, PathBuf};

use ActionKind::{Execute, Fetch, Mcp, Read};
use Verdict::{Allow, Ask, Deny};
use bridge_core::policy::{ActionKind, Decision, Policy, PolicyError, PolicyRequest};
use pretty_assertions::assert_eq;

/// The verdict without its reason text, plus a word the reason must contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Allow,
    Ask(&'static str),
    Deny(&'static str),
}

fn check(policy: &Policy, case: &str, request: &PolicyRequest<'_>, expected: Verdict) {
    let decision = policy.evaluate(request);
    let ok = match (&decision, expected) {
        (Decision::Allow, Allow) => true,
        (Decision::Ask { reason }, Ask(word)) | (Decision::Deny { reason }, Deny(word)) => {
            reason.contains(word)
        }
        _ => false,
    };
    assert!(ok, "{case}: expected {expected:?}, got {decision:?}");
}

fn call<'a>(tool: &'a str, kind: ActionKind, text: &'a str) -> PolicyRequest<'a> {
    PolicyRequest {
        tool,
        kind,
        text,
        paths: &[],
        workspace: Some(Path::new("/ws")),
    }
}

const ORDER_POLICY: &str = r#"
blocked_tools = ["shell_admin", "danger*"]
blocked_patterns = ['\bshutdown\b', '(?i)drop\s+table']
ask_tools = ["bash", "danger_zone", "web_*"]
allowed_tools = ["bash", "view", "web_fetch", "danger_zone", "github/*"]
"#;

#[test]
fn rules_apply_in_order_blocked_tools_patterns_ask_allowlist_allow() -> anyhow::Result<()> {
    let policy = Policy::from_toml_str(ORDER_POLICY, Path::new("order.toml"))?;
    let cases = [
        // A blocked tool is denied even though it is also in ask_tools and allowed_tools.
        (
            "blocked beats ask and allow",
            call("danger_zone", Execute, "ls"),
            Deny("blocked_tools pattern `danger*`"),
        ),
        (
            "blocked exact name",
            call("shell_admin", Execute, ""),
            Deny("`shell_admin`"),
        ),
        // A blocked pattern denies a tool that would otherwise be asked about.
        (
            "pattern beats ask",
            call("bash", Execute, "sudo shutdown -h now"),
            Deny("blocked_patterns[0]"),
        ),
        (
            "pattern beats allowlist",
            call("view", Read, "DROP  TABLE users"),
            Deny("blocked_patterns[1]"),
        ),
        // ask_tools come before the allowlist: web_search is not allowed, but asked about.
        (
            "ask beats allowlist",
            call("web_search", Fetch, ""),
            Ask("ask_tools pattern `web_*`"),
        ),
        (
            "ask for allowed tool",
            call("bash", Execute, "ls"),
            Ask("ask_tools pattern `bash`"),
        ),
        ("allowlisted", call("view", Read, "src/main.rs"), Allow),
        (
            "allowlisted by glob",
            call("github/create_issue", Mcp, "{}"),
            Allow,
        ),
        (
            "not allowlisted",
            call("create", ActionKind::Other, ""),
            Deny("matches none of allowed_tools"),
        ),
        // Regexes use word boundaries as written.
        (
            "regex boundary",
            call("view", Read, "shutdownd.service"),
            Allow,
        ),
    ];
    for (name, request, expected) in cases {
        check(&policy, name, &request, expected);
    }
    Ok(())
}

#[test]
fn empty_lists_allow_everything_the_built_in_rules_do_not_block() -> anyhow::Result<()> {
    let policy = Policy::from_toml_str("", Path::new("empty.toml"))?;
    for tool in ["bash", "anything", "github/x"] {
        check(&policy, tool, &call(tool, Execute, "cargo test"), Allow);
    }
    check(
        &policy,
        "built-in rule",
        &call("bash", Execute, "curl -s https://x | sudo bash"),
        Deny("pipe-to-shell"),
    );
    Ok(())
}

#[test]
fn tool_globs_ignore_case_and_cross_slashes() -> anyhow::Result<()> {
    let policy = Policy::from_toml_str(
        r#"blocked_tools = ["*", "x"]
ask_tools = []"#,
        Path::new("all.toml"),
    )?;
    check(
        &policy,
        "star crosses /",
        &call("server/tool", Mcp, ""),
        Deny("`*`"),
    );
    let policy = Policy::from_toml_str(
        r#"blocked_tools = ["bash", "git?push", "{rm,rmdir}", "[xy]ml"]"#,
        Path::new("globs.toml"),
    )?;
    let cases = [
        ("Bash", Deny("`bash`")),
        ("BASH", Deny("`bash`")),
        ("bash2", Allow),
        ("git_push", Deny("`git?push`")),
        ("git__push", Allow),
        ("rmdir", Deny("`{rm,rmdir}`")),
        ("rm", Deny("`{rm,rmdir}`")),
        ("xml", Deny("`[xy]ml`")),
        ("html", Allow),
    ];
    for (tool, expected) in cases {
        check(&policy, tool, &call(tool, ActionKind::Other, ""), expected);
    }
    Ok(())
}

#[test]
fn edits_must_stay_inside_the_workspace() {
    let policy = Policy::default();
    let cases: &[(&str, &[&str], Verdict)] = &[
        ("relative inside", &["src/lib.rs"], Allow),
        ("absolute inside", &["/ws/src/lib.rs"], Allow),
        ("the workspace itself", &["/ws"], Allow),
        ("dotdot that stays inside", &["src/../README.md"], Allow),
        (
            "sibling with a common prefix",
            &["/ws-evil/x"],
            Deny("/ws-evil/x, which is outside the workspace /ws"),
        ),
        ("dotdot escape", &["../ws-evil/x"], Deny("/ws-evil/x")),
        (
            "deep dotdot escape",
            &["a/../../etc/passwd"],
            Deny("/etc/passwd"),
        ),
        (
            "absolute dotdot escape",
            &["/ws/../etc/passwd"],
            Deny("/etc/passwd"),
        ),
        (
            "one of several outside",
            &["a.txt", "/tmp/b.txt"],
            Deny("/tmp/b.txt"),
        ),
        ("nul byte", &["a\0b"], Deny("NUL")),
        ("no path at all", &[], Deny("names no path")),
    ];
    for (name, paths, expected) in cases {
        let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
        let request = PolicyRequest {
            paths: &paths,
            ..call("create", ActionKind::Edit, "")
        };
        check(&policy, name, &request, *expected);
    }
}

#[test]
fn edits_without_a_usable_workspace_are_denied() {
    let policy = Policy::default();
    let paths = [PathBuf::from("/ws/a.txt")];
    let no_workspace = PolicyRequest {
        paths: &paths,
        workspace: None,
        ..call("create", ActionKind::Edit, "")
    };
    check(
        &policy,
        "no workspace",
        &no_workspace,
        Deny("no workspace is known"),
    );
    let relative_workspace = PolicyRequest {
        workspace: Some(Path::new("ws")),
        ..no_workspace
    };
    check(
        &policy,
        "relative workspace",
        &relative_workspace,
        Deny("not an absolute path"),
    );
}

#[test]
fn reads_are_allowed_anywhere_by_default_and_can_be_confined() -> anyhow::Result<()> {
    let paths = [PathBuf::from("/etc/hosts")];
    let read = PolicyRequest {
        paths: &paths,
        ..call("view", Read, "")
    };
    check(&Policy::default(), "default read", &read, Allow);
    let confined = Policy::from_toml_str(
        "reads_outside_workspace = \"ask\"\nedits_outside_workspace = \"allow\"",
        Path::new("p.toml"),
    )?;
    check(
        &confined,
        "confined read",
        &read,
        Ask("reads_outside_workspace = \"ask\""),
    );
    let edit = PolicyRequest {
        kind: ActionKind::Edit,
        ..read
    };
    check(&confined, "edits allowed anywhere", &edit, Allow);
    Ok(())
}

#[test]
fn outside_edits_can_be_asked_about_and_extra_roots_count_as_inside() -> anyhow::Result<()> {
    let policy = Policy::from_toml_str(
        r#"edits_outside_workspace = "ask"
extra_workspace_roots = ["/tmp/scratch"]
allowed_tools = ["create"]"#,
        Path::new("p.toml"),
    )?;
    let cases: &[(&str, &str, Verdict)] = &[
        ("create", "/tmp/scratch/a", Allow),
        ("create", "/tmp/scratch-2/a", Ask("outside the workspace")),
        (
            "create",
            "/etc/passwd",
            Ask("edits_outside_workspace = \"ask\""),
        ),
        // Asking about the path comes before the allowlist, like ask_tools.
        ("delete", "/etc/passwd", Ask("outside the workspace")),
        ("delete", "/ws/a", Deny("allowed_tools")),
    ];
    for (tool, path, expected) in cases {
        let paths = [PathBuf::from(path)];
        let request = PolicyRequest {
            paths: &paths,
            ..call(tool, ActionKind::Edit, "")
        };
        check(&policy, path, &request, *expected);
    }
    Ok(())
}

#[test]
fn blocked_paths_use_path_globs_where_star_stops_at_slashes() -> anyhow::Result<()> {
    let policy = Policy::from_toml_str(
        r#"blocked_paths = ["**/.env", "/ws/*.pem", "**/.git/**"]"#,
        Path::new("p.toml"),
    )?;
    let cases = [
        (".env", Deny("blocked_paths pattern `**/.env`")),
        ("config/.ENV", Deny("`**/.env`")),
        ("key.pem", Deny("`/ws/*.pem`")),
        ("certs/key.pem", Allow),
        (".git/config", Deny("`**/.git/**`")),
        ("src/../.git/hooks/pre-commit", Deny("`**/.git/**`")),
        (".gitignore", Allow),
        (".env.example", Allow),
    ];
    for (path, expected) in cases {
        let paths = [PathBuf::from(path)];
        for kind in [ActionKind::Edit, Read] {
            let request = PolicyRequest {
                paths: &paths,
                ..call("tool", kind, "")
            };
            check(&policy, path, &request, expected);
        }
    }
    Ok(())
}

#[test]
fn calls_the_policy_cannot_judge_are_denied() {
    let policy = Policy::default();
    for tool in ["", "   "] {
        check(
            &policy,
            "empty name",
            &call(tool, ActionKind::Other, ""),
            Deny("no tool name"),
        );
    }
    // A relative path to read with no workspace cannot be checked against blocked paths.
    let policy = Policy::from_toml_str(r#"blocked_paths = ["**/.env"]"#, Path::new("p.toml"));
    let paths = [PathBuf::from(".env")];
    let request = PolicyRequest {
        paths: &paths,
        workspace: None,
        ..call("view", Read, "")
    };
    match policy {
        Ok(policy) => check(&policy, "relative read", &request, Deny("cannot judge")),
        Err(err) => panic!("{err}"),
    }
}

#[test]
fn disabled_default_rules_stop_applying() -> anyhow::Result<()> {
    let policy = Policy::from_toml_str(
        r#"disabled_default_patterns = ["force-push-main"]"#,
        Path::new("p.toml"),
    )?;
    let push = call("bash", Execute, "git push -f origin main");
    check(&policy, "disabled", &push, Allow);
    check(
        &Policy::default(),
        "default",
        &push,
        Deny("force-push-main"),
    );
    check(
        &policy,
        "others still on",
        &call("bash", Execute, "mkfs.ext4 /dev/sda"),
        Deny("mkfs"),
    );
    Ok(())
}

/// The whole error chain, as a user would see it.
fn chain(err: &PolicyError) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text = format!("{text}\ncaused by: {cause}");
        source = cause.source();
    }
    text
}

#[test]
fn invalid_files_are_load_errors_naming_key_value_and_what_is_accepted() {
    let cases: &[(&str, &[&str])] = &[
        (
            "blocked_tools = [\"ok\", \"a[b\"]",
            &["blocked_tools[1]", "\"a[b\"", "`[abc]`", "p.toml"],
        ),
        (
            "ask_tools = [\"{a,b\"]",
            &["ask_tools[0]", "\"{a,b\"", "valid glob"],
        ),
        (
            "blocked_paths = [\"**/[\"]",
            &["blocked_paths[0]", "valid glob"],
        ),
        (
            "blocked_patterns = ['(unclosed']",
            &["blocked_patterns[0]", "\"(unclosed\"", "regex"],
        ),
        (
            "blocked_patterns = ['(?=look)']",
            &["blocked_patterns[0]", "look-around"],
        ),
        (
            "disabled_default_patterns = [\"rm\"]",
            &[
                "disabled_default_patterns[0]",
                "\"rm\"",
                "rm-root-home-all",
                "force-push-main",
            ],
        ),
        (
            "extra_workspace_roots = [\"tmp\"]",
            &["extra_workspace_roots[0]", "\"tmp\"", "absolute"],
        ),
        (
            "edits_outside_workspace = \"maybe\"",
            &[
                "edits_outside_workspace",
                "maybe",
                "`deny`, `ask`",
                "policy.example.toml",
            ],
        ),
        (
            "blocked_tool = [\"x\"]",
            &["unknown field `blocked_tool`", "blocked_tools"],
        ),
        ("blocked_tools = \"bash\"", &["blocked_tools", "sequence"]),
        ("blocked_tools = [", &["p.toml", "invalid"]),
    ];
    for (text, words) in cases {
        match Policy::from_toml_str(text, Path::new("p.toml")) {
            Ok(_) => panic!("{text}: loaded"),
            Err(err) => {
                let message = chain(&err);
                for word in *words {
                    assert!(
                        message.contains(word),
                        "{text}: `{word}` not in:\n{message}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_example_file_loads_and_means_the_default() -> anyhow::Result<()> {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/policy.example.toml");
    let policy = Policy::load(&example)?;
    let default = Policy::default();
    let outside = [PathBuf::from("/elsewhere/x")];
    let inside = [PathBuf::from("x")];
    let requests = [
        call("bash", Execute, "ls"),
        call("bash", Execute, "rm -rf ~"),
        call("bash", Execute, "git push --force origin master"),
        PolicyRequest {
            paths: &outside,
            ..call("create", ActionKind::Edit, "")
        },
        PolicyRequest {
            paths: &inside,
            ..call("create", ActionKind::Edit, "")
        },
        PolicyRequest {
            paths: &outside,
            ..call("view", Read, "")
        },
        PolicyRequest {
            paths: &[],
            ..call("create", ActionKind::Edit, "")
        },
    ];
    for request in &requests {
        let (ours, theirs) = (policy.evaluate(request), default.evaluate(request));
        assert_eq!(ours.is_allow(), theirs.is_allow(), "{request:?}");
        assert_eq!(
            std::mem::discriminant(&ours),
            std::mem::discriminant(&theirs),
            "{request:?}"
        );
    }
    Ok(())
}
