//! A step of a Copilot turn as a question for a person: a one-line title and description, a
//! detail with everything a careful reviewer needs, and the yes/no dialog text. Everything is
//! redacted, so nothing secret reaches the person asked, on any route.

use bridge_core::redact::Redactor;
use bridge_mcp::ask_route::Question;

use crate::acp::PermissionRequest;
use crate::acp::{ToolKind, is_inside};

/// The question for `request`, asked because of `reason`.
pub(crate) fn for_request(request: &PermissionRequest, reason: &str) -> Question {
    let redactor = Redactor::shared();
    let redact = |text: &str| redactor.redact(text).into_owned();
    let paths: Vec<String> = request
        .paths
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let (title, what, description) = match &request.command {
        Some(command) => (
            "Copilot wants to run a shell command".to_owned(),
            format!("run `{command}`"),
            command.clone(),
        ),
        None if !paths.is_empty() => (
            format!("Copilot wants to {} {}", request.kind, files(paths.len())),
            format!("{} {}", request.kind, paths.join(", ")),
            paths.join(", "),
        ),
        None => (
            format!("Copilot wants to use {}", request.tool),
            request.title.clone(),
            request.title.clone(),
        ),
    };
    let arguments = serde_json::to_string(&request.raw_input).unwrap_or_default();
    let mut lines = vec![format!("tool: {}", request.tool)];
    if let Some(command) = &request.command {
        lines.push(format!("command: {command}"));
    }
    if !paths.is_empty() {
        lines.push(format!("paths: {}", paths.join(", ")));
    }
    lines.push(format!("arguments: {arguments}"));
    lines.push(format!("cwd: {}", request.cwd.display()));
    lines.push(format!("session: {}", request.session_id));
    lines.push(format!("asked because: {reason}"));
    let detail = lines.join("\n");
    let message = format!(
        "Copilot wants to {what} (tool {}, in {}).\nAsked because: {reason}.\nAllow this once?",
        request.tool,
        request.cwd.display()
    );
    Question {
        title: redact(&title),
        description: redact(&description),
        detail: redact(&detail),
        message: redact(&message),
        warning: needs_a_careful_look(request),
        tool: request.tool.clone(),
        call_id: request.tool_call_id.clone(),
    }
}

fn files(n: usize) -> String {
    if n == 1 {
        "a file".to_owned()
    } else {
        format!("{n} files")
    }
}

/// Commands, deletes, and anything touching a path outside the session's directory.
fn needs_a_careful_look(request: &PermissionRequest) -> bool {
    matches!(request.kind, ToolKind::Execute | ToolKind::Delete)
        || request.command.is_some()
        || request
            .paths
            .iter()
            .any(|path| !is_inside(&request.cwd, path))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;

    fn request(kind: ToolKind, command: Option<&str>, paths: &[&str]) -> PermissionRequest {
        PermissionRequest {
            session_id: "s-1".to_owned(),
            cwd: PathBuf::from("/work/project"),
            tool_call_id: "call-1".to_owned(),
            title: "Run it".to_owned(),
            tool: "shell".to_owned(),
            kind,
            command: command.map(str::to_owned),
            paths: paths.iter().map(PathBuf::from).collect(),
            raw_input: json!({"command": command}),
        }
    }

    #[test]
    fn a_command_is_a_warning_with_the_command_on_one_line_and_no_secret() {
        let secret = "ghp_Zq8vQ2mN7pL4kR9tXw3yB6cD1fG5hJ0sA2e";
        let q = for_request(
            &request(
                ToolKind::Execute,
                Some(&format!("curl -H 'token {secret}' x")),
                &[],
            ),
            "bash is in ask_tools",
        );
        assert!(q.warning);
        assert_eq!(q.title, "Copilot wants to run a shell command");
        for text in [&q.title, &q.description, &q.detail, &q.message] {
            assert!(!text.contains(secret), "{text}");
        }
        assert!(q.detail.contains("session: s-1") && q.detail.contains("cwd: /work/project"));
        assert_eq!(q.call_id, "call-1");
    }

    #[test]
    fn an_edit_inside_is_info_and_outside_is_a_warning() {
        let inside = for_request(&request(ToolKind::Edit, None, &["/work/project/a.rs"]), "r");
        assert!(!inside.warning);
        assert_eq!(inside.title, "Copilot wants to edit a file");
        assert_eq!(inside.description, "/work/project/a.rs");
        let outside = for_request(&request(ToolKind::Read, None, &["/etc/passwd"]), "r");
        assert!(outside.warning);
        let sibling = for_request(
            &request(ToolKind::Read, None, &["/work/project-other/x"]),
            "r",
        );
        assert!(sibling.warning, "a sibling-prefix directory is outside");
        let escaped = for_request(
            &request(ToolKind::Read, None, &["/work/project/../secrets/x"]),
            "r",
        );
        assert!(escaped.warning, "`..` out of the directory is outside");
    }
}
