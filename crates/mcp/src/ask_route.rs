//! Where a question for a person goes when the policy says `ask`. The policy's `ask_via`
//! chooses among the calling MCP client (elicitation) and an [`Approver`] outside it (OpenClaw's
//! approval flow); `auto` tries them in that order. When neither can ask, the answer is a
//! refusal that names the fix.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use bridge_core::policy::AskVia;

use crate::confirm::Confirmation;

/// A boxed future, as [`Approver`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One question, in every shape a route shows it. Every text is redacted before it is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// One line: what is wanted.
    pub title: String,
    /// One line: the command, or the paths.
    pub description: String,
    /// Everything a careful reviewer needs: tool, arguments, directory, session, why asked.
    pub detail: String,
    /// The text of a yes/no dialog (MCP elicitation).
    pub message: String,
    /// A command, a delete, or work outside the workspace: worth a careful look.
    pub warning: bool,
    /// The tool that would run.
    pub tool: String,
    /// The tool call it is about.
    pub call_id: String,
}

/// A person reached outside the MCP client.
pub trait Approver: Send + Sync + fmt::Debug {
    /// The route's name in audit records and answers, e.g. `openclaw`.
    fn name(&self) -> &'static str;
    /// Why it cannot ask right now, if it cannot (may wait briefly for a link to come up).
    fn why_not(&self) -> BoxFuture<'_, Option<String>>;
    /// Asks; only an explicit yes allows, and only once. Dropping the future withdraws the
    /// question.
    fn ask(&self, question: Question) -> BoxFuture<'_, Confirmation>;
}

/// The route chosen for one question.
#[derive(Debug)]
pub enum Route<'a> {
    /// Ask the calling client.
    Client,
    /// Ask through this approver.
    Outside(&'a dyn Approver),
    /// Nobody can be asked: deny, with this reason.
    Nobody(String),
}

impl Route<'_> {
    /// The route's name in audit records.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Client => "client",
            Self::Outside(approver) => approver.name(),
            Self::Nobody(_) => "none",
        }
    }
}

/// Chooses the route for a question under `via`: `client` is `Ok` when the calling client can
/// be asked, else why not; `outside` is the configured approver, if any.
pub async fn choose(
    via: AskVia,
    client: Result<(), String>,
    outside: Option<&dyn Approver>,
) -> Route<'_> {
    let try_client = matches!(via, AskVia::Auto | AskVia::Client);
    let try_outside = matches!(via, AskVia::Auto | AskVia::Openclaw);
    if try_client && client.is_ok() {
        return Route::Client;
    }
    let outside_why = match outside {
        Some(approver) if try_outside => match approver.why_not().await {
            None => return Route::Outside(approver),
            Some(why) => why,
        },
        _ => "the OpenClaw gateway is not configured (set OPENCLAW_GATEWAY_TOKEN, and \
              OPENCLAW_HOST/OPENCLAW_PORT if it is not on 127.0.0.1:18789)"
            .to_owned(),
    };
    let client_why = client.err().unwrap_or_default();
    Route::Nobody(match via {
        AskVia::Deny => "the policy sets ask_via = \"deny\", so nobody is asked; move the tool \
                         out of ask_tools to allow it"
            .to_owned(),
        AskVia::Client => format!(
            "nobody could be asked ({client_why}); the policy sets ask_via = \"client\": enable \
             elicitation in the MCP client (an interactive Claude Code, Codex or VS Code \
             session asks; headless runs do not), set ask_via = \"auto\" to use OpenClaw's \
             approvals, or move the tool out of ask_tools"
        ),
        AskVia::Openclaw => format!(
            "nobody could be asked ({outside_why}); the policy sets ask_via = \"openclaw\": \
             connect the bridge to OpenClaw's gateway with a reviewer able to see approvals \
             (the Control UI or `openclaw tui`), or move the tool out of ask_tools"
        ),
        AskVia::Auto => format!(
            "nobody could be asked (client: {client_why}; OpenClaw: {outside_why}); enable \
             elicitation in the MCP client (an interactive Claude Code, Codex or VS Code \
             session asks; headless runs do not), or connect OpenClaw's gateway with a \
             reviewer able to see approvals (the Control UI or `openclaw tui`), or move the \
             tool out of ask_tools in the policy"
        ),
    })
}

/// The audit record's view of a question: its route and the facts the route reported (the
/// approval's id, who decided, how it ended).
pub fn audit_facts(
    route: &str,
    facts: &[(&'static str, String)],
) -> serde_json::Map<String, serde_json::Value> {
    let mut map = serde_json::Map::new();
    map.insert("route".to_owned(), route.into());
    for (key, value) in facts {
        map.insert((*key).to_owned(), value.clone().into());
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Fixed(Option<&'static str>);

    impl Approver for Fixed {
        fn name(&self) -> &'static str {
            "openclaw"
        }
        fn why_not(&self) -> BoxFuture<'_, Option<String>> {
            Box::pin(async move { self.0.map(str::to_owned) })
        }
        fn ask(&self, _question: Question) -> BoxFuture<'_, Confirmation> {
            Box::pin(async { Confirmation::yes("fixed") })
        }
    }

    #[tokio::test]
    async fn auto_prefers_the_client_then_openclaw_then_nobody() {
        let up = Fixed(None);
        let down = Fixed(Some("the gateway link is down"));
        let no_client = || Err("headless".to_owned());
        assert_eq!(
            choose(AskVia::Auto, Ok(()), Some(&up)).await.name(),
            "client"
        );
        assert_eq!(
            choose(AskVia::Auto, no_client(), Some(&up)).await.name(),
            "openclaw"
        );
        let Route::Nobody(why) = choose(AskVia::Auto, no_client(), Some(&down)).await else {
            panic!("a route was chosen")
        };
        assert!(
            why.contains("headless") && why.contains("link is down"),
            "{why}"
        );
        let Route::Nobody(why) = choose(AskVia::Auto, no_client(), None).await else {
            panic!("a route was chosen")
        };
        assert!(why.contains("OPENCLAW_GATEWAY_TOKEN"), "{why}");
    }

    #[tokio::test]
    async fn each_setting_keeps_to_its_route() {
        let up = Fixed(None);
        assert_eq!(
            choose(AskVia::Client, Err("headless".into()), Some(&up))
                .await
                .name(),
            "none"
        );
        assert_eq!(
            choose(AskVia::Openclaw, Ok(()), Some(&up)).await.name(),
            "openclaw"
        );
        assert_eq!(choose(AskVia::Openclaw, Ok(()), None).await.name(), "none");
        assert_eq!(choose(AskVia::Deny, Ok(()), Some(&up)).await.name(), "none");
    }
}
