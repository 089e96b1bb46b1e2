//! `copilot-bridge redact`: copies stdin to stdout with secrets redacted, line for line.

use std::borrow::Cow;
use std::io::{BufRead, Write};
use std::process::ExitCode;

use anyhow::Context;
use bridge_core::redact::Redactor;

/// Streams stdin to stdout through the redactor. Lines are read as bytes so that invalid UTF-8
/// never stops a log scrub: such bytes become U+FFFD, which is also safer than passing them on.
pub(crate) fn run(json: bool) -> anyhow::Result<ExitCode> {
    let redactor = Redactor::shared();
    // Text mode keeps state across lines so a private-key block is redacted whole.
    let mut lines = redactor.lines();
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if stdin
            .read_until(b'\n', &mut line)
            .context("cannot read stdin")?
            == 0
        {
            break;
        }
        let had_newline = line.last() == Some(&b'\n');
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        let out = if json {
            Cow::Owned(redactor.redact_json_line(text))
        } else {
            lines.redact_line(text)
        };
        stdout
            .write_all(out.as_bytes())
            .context("cannot write stdout")?;
        if had_newline {
            stdout.write_all(b"\n").context("cannot write stdout")?;
        }
    }
    stdout.flush().context("cannot write stdout")?;
    Ok(ExitCode::SUCCESS)
}
