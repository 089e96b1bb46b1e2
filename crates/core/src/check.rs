//! A report of setup checks, as `copilot-bridge validate` and `openclaw-memory check` print
//! it: one line per check with ✓ (passed), ✗ (failed, required), ! (failed, optional) or -
//! (skipped), a `fix:` line under each failure, and a closing verdict; or the same as JSON,
//! `{ok, checks: [{name, status, required, detail, fix}]}`, which is also how the bridge reads
//! the memory server's own checks.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It works.
    Pass,
    /// It does not; if the check is required, the bridge cannot work.
    Fail,
    /// Not used, not configured, or could not run because an earlier check failed.
    Skip,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Check {
    /// What was checked.
    pub name: Cow<'static, str>,
    /// The outcome.
    pub status: Status,
    /// Whether the bridge needs it to work.
    pub required: bool,
    /// What was found.
    pub detail: String,
    /// What to do about a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    /// A check that passed.
    pub fn pass(name: &'static str, detail: impl Into<String>) -> Self {
        Self {
            name: Cow::Borrowed(name),
            status: Status::Pass,
            required: true,
            detail: detail.into(),
            fix: None,
        }
    }

    /// A required check that failed, with what to do about it.
    pub fn fail(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name: Cow::Borrowed(name),
            status: Status::Fail,
            required: true,
            detail: one_line(&detail.into()),
            fix: Some(fix.into()),
        }
    }

    /// A check that did not apply or could not run.
    pub fn skip(name: &'static str, detail: impl Into<String>) -> Self {
        Self {
            name: Cow::Borrowed(name),
            status: Status::Skip,
            required: false,
            detail: detail.into(),
            fix: None,
        }
    }

    /// The same check, not needed for the bridge to work.
    #[must_use]
    pub fn optional(mut self) -> Self {
        self.required = false;
        self
    }

    /// Whether this check stops the bridge from working.
    pub fn blocks(&self) -> bool {
        self.required && self.status != Status::Pass
    }
}

/// Multi-line error texts (a TOML parse error) folded onto the check's line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The whole report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// Whether every required check passed.
    pub ok: bool,
    /// The checks, in the order they ran.
    pub checks: Vec<Check>,
}

impl Report {
    /// The report of `checks`.
    pub fn new(checks: Vec<Check>) -> Self {
        Self {
            ok: !checks.iter().any(Check::blocks),
            checks,
        }
    }

    /// The report for a person: aligned lines, fixes, and the verdict.
    pub fn render(&self) -> String {
        render(self)
    }
}

fn render(report: &Report) -> String {
    let width = report
        .checks
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for check in &report.checks {
        let mark = match check.status {
            Status::Pass => "✓",
            Status::Fail if check.required => "✗",
            Status::Fail => "!",
            Status::Skip => "-",
        };
        let _ = writeln!(
            text,
            "{mark} {:width$}  {}",
            check.name,
            check.detail,
            width = width
        );
        if let Some(fix) = check.fix.as_ref().filter(|_| check.status == Status::Fail) {
            let _ = writeln!(text, "  {:width$}  fix: {fix}", "", width = width);
        }
    }
    let failed = report.checks.iter().filter(|c| c.blocks()).count();
    if failed == 0 {
        text.push_str("All required checks passed.\n");
    } else {
        let _ = writeln!(
            text,
            "{failed} required check{} failed.",
            if failed == 1 { "" } else { "s" }
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_required_check_fails_the_report_and_shows_its_fix() {
        let report = Report::new(vec![
            Check::pass("configuration", "valid"),
            Check::fail("Copilot CLI", "copilot not found", "install it"),
            Check::fail("OpenClaw memory", "none found", "set it").optional(),
            Check::skip("OpenClaw gateway", "not configured"),
        ]);
        assert!(!report.ok);
        let text = report.render();
        assert!(text.contains("✓ configuration"), "{text}");
        assert!(text.contains("✗ Copilot CLI"), "{text}");
        assert!(text.contains("fix: install it"), "{text}");
        assert!(text.contains("! OpenClaw memory"), "{text}");
        assert!(text.contains("- OpenClaw gateway"), "{text}");
        assert!(text.ends_with("1 required check failed.\n"), "{text}");
        assert_eq!(report.checks.iter().filter(|c| c.blocks()).count(), 1);
    }

    #[test]
    fn the_json_form_reads_back() -> anyhow::Result<()> {
        let report = Report::new(vec![
            Check::pass("memory index", "3 files"),
            Check::fail("OpenClaw gateway", "refused", "check the token"),
        ]);
        let back: Report = serde_json::from_str(&serde_json::to_string(&report)?)?;
        assert!(!back.ok);
        assert_eq!(back.checks[1].name, "OpenClaw gateway");
        assert_eq!(back.checks[1].fix.as_deref(), Some("check the token"));
        Ok(())
    }
}
