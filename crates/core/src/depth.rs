//! Call-depth (cycle) detection: how many bridge/agent hops led to the current call, taken as the
//! larger of the caller's `_depth` argument and the depth inherited from the parent process, and
//! the refusal once that reaches the limit.
//!
//! Both sources are needed. A model may pass `_depth` through a tool argument, but a loop through
//! programs that know nothing about `_depth` (bridge → Copilot → some MCP server → bridge) is only
//! caught because every process we spawn gets `depth + 1` in its environment ([`CallDepth::child_env`]).
//!
//! Fail-closed choices: the effective depth is a `max`, so no argument can lower the inherited
//! depth; a value in the environment that is not a plain decimal number is an error
//! ([`DepthError::InvalidInherited`]) which callers treat as a refusal; a number too large for
//! `u32` saturates and is then refused by [`CallDepth::check`].

use std::fmt;

use serde_json::Value;

/// Environment variable that carries the call depth to child processes.
///
/// The original design tracked depth only through the `_depth` argument and named no variable;
/// this one is ours.
pub const DEPTH_ENV: &str = "COPILOT_BRIDGE_DEPTH";

/// Default depth limit: bridge → Copilot → memory server is depth 2, so a third hop is a loop.
pub const DEFAULT_MAX_DEPTH: u32 = 3;

/// Name of the tool argument through which callers pass their depth.
pub const DEPTH_ARGUMENT: &str = "_depth";

/// Errors from reading or checking a call depth.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DepthError {
    /// The call is nested too deeply, which almost always means a loop.
    #[error(
        "call depth {depth} reaches the limit of {max}: this call arrived through {depth} nested \
         bridge/agent hops, which usually means a loop (for example Copilot calling a tool that \
         calls Copilot again), so it is refused; raise the maximum depth \
         (COPILOT_BRIDGE_MAX_DEPTH) only if the nesting is intended"
    )]
    TooDeep {
        /// The effective depth of the refused call.
        depth: u32,
        /// The configured limit.
        max: u32,
    },
    /// The inherited depth variable holds something other than a decimal number.
    #[error(
        "{DEPTH_ENV}={value:?} is not a call depth (a non-negative decimal integer); it was not \
         set by a bridge process, so every call is refused: unset {DEPTH_ENV} in the environment \
         that starts this server"
    )]
    InvalidInherited {
        /// The value found in the environment.
        value: String,
    },
    /// The `_depth` tool argument is not a non-negative integer.
    #[error(
        "the `{DEPTH_ARGUMENT}` argument must be a non-negative integer, got {value}; omit it or \
         pass the depth you were called with"
    )]
    InvalidArgument {
        /// The argument as JSON text.
        value: String,
    },
}

/// A call depth: 0 for a call from a user's client, +1 for every bridge/agent hop in between.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CallDepth(u32);

impl CallDepth {
    /// Wraps a depth value.
    pub const fn new(depth: u32) -> Self {
        Self(depth)
    }

    /// The depth as a number.
    pub const fn get(self) -> u32 {
        self.0
    }

    /// Parses the depth inherited from the parent process: the value of [`DEPTH_ENV`], or `None`
    /// when it is unset (depth 0).
    ///
    /// Only ASCII digits are accepted (no sign, no spaces, not empty): anything else was not
    /// written by [`CallDepth::child_env`] and is refused. Numbers beyond `u32` saturate, so a
    /// forged huge depth is refused by [`CallDepth::check`] rather than wrapping to a small one.
    pub fn inherited(env_value: Option<&str>) -> Result<CallDepth, DepthError> {
        let Some(value) = env_value else {
            return Ok(Self(0));
        };
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(DepthError::InvalidInherited {
                value: value.to_owned(),
            });
        }
        // All digits: the only possible parse failure is overflow, which saturates.
        Ok(Self(value.parse::<u32>().unwrap_or(u32::MAX)))
    }

    /// The effective depth of a call: the larger of the `_depth` argument and the inherited
    /// depth, so an argument can raise the depth but never lower it.
    pub fn effective(argument: Option<u64>, inherited: CallDepth) -> CallDepth {
        let argument = argument.map_or(0, |a| u32::try_from(a).unwrap_or(u32::MAX));
        Self(argument.max(inherited.0))
    }

    /// Reads the `_depth` argument from a tool call's JSON value (`None` or `null` when absent).
    ///
    /// Accepts non-negative integers, also written as whole floats (`2.0`); integers beyond
    /// `u64` saturate. Negative numbers, fractions, strings and other types are errors: a caller
    /// that sends them is confused or forging, and the call is refused rather than guessed.
    pub fn argument_from_json(value: Option<&Value>) -> Result<Option<u64>, DepthError> {
        let invalid = |v: &Value| DepthError::InvalidArgument {
            value: v.to_string(),
        };
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(v @ Value::Number(n)) => {
                if let Some(n) = n.as_u64() {
                    Ok(Some(n))
                } else if let Some(f) = n.as_f64()
                    && f >= 0.0
                    && f.fract() == 0.0
                {
                    // A whole, non-negative float; `as` saturates at u64::MAX, as intended.
                    #[expect(
                        clippy::cast_possible_truncation,
                        clippy::cast_sign_loss,
                        reason = "checked non-negative and whole; saturation is the intent"
                    )]
                    Ok(Some(f as u64))
                } else {
                    Err(invalid(v))
                }
            }
            Some(v) => Err(invalid(v)),
        }
    }

    /// Refuses the call when its depth is at or beyond `max`; returns the depth otherwise.
    pub fn check(self, max: u32) -> Result<CallDepth, DepthError> {
        if self.0 >= max {
            Err(DepthError::TooDeep { depth: self.0, max })
        } else {
            Ok(self)
        }
    }

    /// The environment entry for a child process started on behalf of this call: [`DEPTH_ENV`]
    /// set to `depth + 1`.
    pub fn child_env(self) -> (&'static str, String) {
        (DEPTH_ENV, self.0.saturating_add(1).to_string())
    }
}

impl fmt::Display for CallDepth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn unset_environment_means_depth_zero() -> anyhow::Result<()> {
        assert_eq!(CallDepth::inherited(None)?, CallDepth::new(0));
        Ok(())
    }

    #[test]
    fn environment_depth_is_parsed() -> anyhow::Result<()> {
        assert_eq!(CallDepth::inherited(Some("2"))?, CallDepth::new(2));
        assert_eq!(CallDepth::inherited(Some("007"))?, CallDepth::new(7));
        Ok(())
    }

    #[test]
    fn garbage_in_the_environment_is_an_error_naming_the_variable() {
        for garbage in ["", " 1", "1 ", "-1", "+1", "one", "1.5", "0x2", "١"] {
            let err = CallDepth::inherited(Some(garbage)).unwrap_err();
            assert_eq!(
                err,
                DepthError::InvalidInherited {
                    value: garbage.to_owned()
                }
            );
            let message = err.to_string();
            assert!(message.contains("COPILOT_BRIDGE_DEPTH"), "{message}");
            assert!(message.contains("unset"), "{message}");
        }
    }

    #[test]
    fn huge_environment_depth_saturates_and_is_refused() -> anyhow::Result<()> {
        let depth = CallDepth::inherited(Some("99999999999999999999999999"))?;
        assert_eq!(depth, CallDepth::new(u32::MAX));
        assert!(depth.check(DEFAULT_MAX_DEPTH).is_err());
        Ok(())
    }

    #[test]
    fn argument_raises_the_depth() {
        let inherited = CallDepth::new(1);
        assert_eq!(CallDepth::effective(Some(2), inherited), CallDepth::new(2));
    }

    #[test]
    fn environment_raises_the_depth_when_the_argument_is_lower_or_missing() {
        let inherited = CallDepth::new(2);
        assert_eq!(CallDepth::effective(Some(0), inherited), CallDepth::new(2));
        assert_eq!(CallDepth::effective(None, inherited), CallDepth::new(2));
    }

    #[test]
    fn huge_argument_saturates_instead_of_wrapping() {
        let inherited = CallDepth::new(0);
        let huge = u64::from(u32::MAX) + 1;
        assert_eq!(
            CallDepth::effective(Some(huge), inherited),
            CallDepth::new(u32::MAX)
        );
        assert_eq!(
            CallDepth::effective(Some(u64::MAX), inherited),
            CallDepth::new(u32::MAX)
        );
    }

    #[test]
    fn forged_json_arguments_cannot_lower_the_inherited_depth() -> anyhow::Result<()> {
        let inherited = CallDepth::new(2);
        // Whatever a caller sends, the result is either refused or at least the inherited depth.
        for forged in [
            json!(-1),
            json!(-1.0),
            json!(0.5),
            json!("0"),
            json!(true),
            json!([0]),
            json!({"depth": 0}),
        ] {
            let parsed = CallDepth::argument_from_json(Some(&forged));
            assert_eq!(
                parsed,
                Err(DepthError::InvalidArgument {
                    value: forged.to_string()
                }),
                "{forged}"
            );
        }
        for (sent, expected) in [
            (json!(0), 2),
            (json!(1.0), 2),
            (json!(5), 5),
            (json!(1e300), u32::MAX),
        ] {
            let argument = CallDepth::argument_from_json(Some(&sent))?;
            assert_eq!(
                CallDepth::effective(argument, inherited),
                CallDepth::new(expected),
                "{sent}"
            );
        }
        assert_eq!(CallDepth::argument_from_json(None)?, None);
        assert_eq!(CallDepth::argument_from_json(Some(&Value::Null))?, None);
        Ok(())
    }

    #[test]
    fn depth_below_the_limit_passes() -> anyhow::Result<()> {
        assert_eq!(CallDepth::new(2).check(3)?, CallDepth::new(2));
        assert_eq!(CallDepth::new(0).check(1)?, CallDepth::new(0));
        Ok(())
    }

    #[test]
    fn depth_at_the_limit_is_refused_with_a_message_naming_depth_and_limit() {
        let err = CallDepth::new(3).check(3).unwrap_err();
        assert_eq!(err, DepthError::TooDeep { depth: 3, max: 3 });
        assert_eq!(
            err.to_string(),
            "call depth 3 reaches the limit of 3: this call arrived through 3 nested bridge/agent \
             hops, which usually means a loop (for example Copilot calling a tool that calls \
             Copilot again), so it is refused; raise the maximum depth (COPILOT_BRIDGE_MAX_DEPTH) \
             only if the nesting is intended"
        );
        let err = CallDepth::new(7).check(5).unwrap_err();
        assert_eq!(err, DepthError::TooDeep { depth: 7, max: 5 });
    }

    #[test]
    fn depth_taken_from_the_environment_alone_is_refused() -> anyhow::Result<()> {
        let inherited = CallDepth::inherited(Some("3"))?;
        let err = CallDepth::effective(None, inherited)
            .check(DEFAULT_MAX_DEPTH)
            .unwrap_err();
        assert_eq!(err, DepthError::TooDeep { depth: 3, max: 3 });
        Ok(())
    }

    #[test]
    fn child_gets_one_more_than_the_effective_depth() -> anyhow::Result<()> {
        assert_eq!(
            CallDepth::new(1).child_env(),
            ("COPILOT_BRIDGE_DEPTH", "2".to_owned())
        );
        assert_eq!(CallDepth::new(u32::MAX).child_env().1, u32::MAX.to_string());
        // What a child is given reads back as exactly that depth.
        let (_, value) = CallDepth::new(1).child_env();
        assert_eq!(CallDepth::inherited(Some(&value))?, CallDepth::new(2));
        Ok(())
    }
}
