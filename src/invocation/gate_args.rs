//! gate's own options as given, before the configuration reads them: [`GateArgs`], and
//! where each option's value waits, as the settings table says
//! ([`crate::config::SETTINGS`]).

use std::ffi::OsString;

use super::{UsageError, usage};
use crate::cli::OptionSpec;
use crate::config::Arg;

/// gate's own options as given on the command line, not yet validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateArgs {
    pub level: Option<OsString>,
    pub allow: Vec<OsString>,
    pub deny: Vec<OsString>,
    pub ask: Vec<OsString>,
    pub unsandboxed: Vec<OsString>,
    pub shell: Option<OsString>,
    pub config: Option<OsString>,
    pub no_config: bool,
    /// `gate check`/`gate doctor --system-file FILE`: a candidate system file, loaded
    /// instead of the installed one (never taken by a run).
    pub system_file: Option<OsString>,
    /// `--system-drop-ins DIR`: a candidate drop-in directory, likewise.
    pub system_drop_ins: Option<OsString>,
    pub audit_log: Option<OsString>,
    pub timeout: Option<OsString>,
    pub session: Option<OsString>,
    pub socket: Option<OsString>,
    pub no_tty: bool,
    pub compound: bool,
    pub readonly: bool,
    pub readonly_rules: bool,
    pub write: Vec<OsString>,
    pub deny_read: Vec<OsString>,
    pub net: bool,
    pub net_connect: Vec<OsString>,
    pub net_bind: Vec<OsString>,
    pub allow_domain: Vec<OsString>,
    pub deny_domain: Vec<OsString>,
    pub resolve: Vec<OsString>,
    pub best_effort: bool,
    pub unix_sockets: bool,
    /// `--help` / `--version` in gate's option section.
    pub help: bool,
    pub version: bool,
}

impl GateArgs {
    /// Record one of gate's options: `value` is `None` for a flag. A flag given a
    /// value, an option without one, and a one-value option given twice are errors.
    /// Where each option's value waits is the settings table's to say
    /// ([`crate::config::SETTINGS`]), but for the options that choose the files.
    pub(crate) fn set(
        &mut self,
        spec: &OptionSpec,
        value: Option<OsString>,
    ) -> Result<(), UsageError> {
        let name = spec.name;
        let arg = match crate::config::by_flag(name) {
            Some(setting) => setting.flag.map(|(_, arg)| arg),
            None => Self::file_option(name),
        };
        let Some(arg) = arg else {
            unreachable!("option {name} has no handler")
        };
        let Some(value) = value else {
            let Arg::Flag(_, flag) = arg else {
                let value_name = spec.value.unwrap_or("VALUE");
                return Err(usage(format!("{name} needs a value ({value_name})")));
            };
            *flag(self) = true;
            return Ok(());
        };
        if spec.value.is_none() {
            return Err(usage(format!("{name} takes no value")));
        }
        match arg {
            Arg::One(_, slot) => {
                let slot = slot(self);
                if slot.is_some() {
                    return Err(usage(format!("{name} was given twice")));
                }
                *slot = Some(value);
            }
            Arg::Many(_, list) => list(self).push(value),
            Arg::Flag(..) => unreachable!("{name} takes no value"),
        }
        Ok(())
    }

    /// Where the value of an option that chooses the configuration files waits: these
    /// are not settings.
    fn file_option(name: &str) -> Option<Arg> {
        Some(match name {
            "--config" => Arg::One(|a| &a.config, |a| &mut a.config),
            "--no-config" => Arg::Flag(|a| a.no_config, |a| &mut a.no_config),
            "--system-file" => Arg::One(|a| &a.system_file, |a| &mut a.system_file),
            "--system-drop-ins" => Arg::One(|a| &a.system_drop_ins, |a| &mut a.system_drop_ins),
            _ => return None,
        })
    }
}
