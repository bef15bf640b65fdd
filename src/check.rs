//! `gate check`: what a run of a command would do now, and why, without running it. It
//! reports the judgement a run acts on ([`crate::judge`]), and looks at what a run would
//! meet next: who would be asked, and whether the sandbox can be set up here.

use std::ffi::OsString;

use crate::config::Settings;
use crate::explain::{self, Explanation};
use crate::invocation::{Invocation, Target};
use crate::judge::{Decided, Judged, Judgement, Purpose, judge};
use crate::output::print_out as print;
use crate::policy::{Allowed, Asked, CommandText, Decision, Level, Remembered};
use crate::sandbox;
use crate::settings::{load_settings, protected_files, sandbox_settings};

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// What `gate check` found, beyond the decision and its explanation.
struct Verdict<'a> {
    /// allow / ask / deny
    decision: &'a str,
    /// run / ask / refuse / error
    outcome: &'a str,
    outcome_text: String,
    /// Who would be asked now, for a command that needs an approver.
    reach: Option<crate::approval::reach::Reach>,
    /// Settings that are off and would have allowed it.
    alternatives: Vec<explain::Alternative>,
    status: i32,
}

/// `gate check`: what a run of `target` would do now, and why, on stdout. The exit
/// status says what would happen: 0 it runs, 1 it waits for an approver, 2 it does not
/// run.
pub(crate) fn check(inv: &Invocation, target: &Target, json: bool) -> i32 {
    // Not freed: the process ends after the report, and freeing an imported policy's
    // hundreds of rules one by one cost a fifth of what loading them did (issue 25).
    let settings = std::mem::ManuallyDrop::new(match load_settings(inv) {
        Ok(s) => s,
        Err(code) => return code,
    });
    let Decided {
        judged,
        files,
        decision,
        explanation: e,
    } = match judge(inv, target, &settings, Purpose::Check) {
        Judgement::Startup {
            judged,
            explanation,
            ..
        } => {
            let verdict = Verdict {
                decision: "allow",
                outcome: "run",
                outcome_text: "gate would answer it itself and run nothing".to_owned(),
                reach: None,
                alternatives: Vec::new(),
                status: 0,
            };
            return check_report(&settings, &judged, &explanation, &verdict, json);
        }
        Judgement::Decided(decided) => decided,
    };
    // Who would be asked now, looked at the way a run looks (and only when it would).
    let reach = match &decision {
        Decision::Ask(_) => Some(crate::approval::reach::look(
            &crate::approval::Channels::of(&settings, &var),
        )),
        _ => None,
    };
    let (outcome, outcome_text) = match &decision {
        Decision::Allow(Allowed::Sandboxed) => match sandbox_problem(&settings) {
            Err(problem) => ("error", problem),
            Ok(residual) => ("run", sandboxed_run(&settings) + &residual),
        },
        Decision::Allow(_) => ("run", "gate would run it".to_owned()),
        Decision::Ask(_) => {
            let (outcome, text) = ask_outcome(reach.as_ref().expect("looked at for an ask"));
            match settings.policy.level {
                // An unsandboxed rule's question: a yes runs it outside.
                Level::Safe
                    if outcome == "ask"
                        && matches!(decision, Decision::Ask(Asked::Unsandboxed { .. })) =>
                {
                    (outcome, format!("{text}, outside the sandbox if approved"))
                }
                // What is approved at `safe` runs inside the sandbox.
                Level::Safe if outcome == "ask" => match sandbox_problem(&settings) {
                    Err(problem) => ("error", problem),
                    Ok(residual) => (outcome, format!("{text}, inside the sandbox{residual}")),
                },
                _ => (outcome, text),
            }
        }
        Decision::Deny(_) => ("refuse", "gate would refuse it (exit 126)".to_owned()),
    };
    // The status says what would happen now: 0 it runs, 1 it waits for an approver, 2
    // it does not run (refused by policy, nobody to ask, or the sandbox cannot be set up).
    let status = match outcome {
        "run" => 0,
        "ask" => 1,
        _ => 2,
    };
    let verdict = Verdict {
        decision: decision.kind(),
        outcome,
        outcome_text,
        reach,
        alternatives: explain::alternatives(
            &decision,
            &settings.policy,
            &Remembered::new(),
            judged.request(),
            &files,
        ),
        status,
    };
    check_report(&settings, &judged, &e, &verdict, json)
}

/// What a run would do with a command that needs an approver, given who can be asked
/// now: the outcome word and its sentence.
fn ask_outcome(reach: &crate::approval::reach::Reach) -> (&'static str, String) {
    use crate::approval::reach::{SocketState, TTY_OFF, TtyState};
    let if_approved = "and run it only if approved (denied or unanswered: exit 126)";
    match (&reach.socket_state, &reach.tty) {
        (SocketState::Listening, _) => (
            "ask",
            format!(
                "gate would ask the approver on {} {if_approved}",
                reach.socket.display()
            ),
        ),
        (SocketState::Busy, _) => (
            "ask",
            format!(
                "gate would ask the approver on {}, which is slow to take connections, \
                 {if_approved}",
                reach.socket.display()
            ),
        ),
        (SocketState::Untrusted(why), _) => (
            "refuse",
            format!(
                "gate would refuse it now (exit 126): {}",
                crate::approval::reach::untrusted(why)
            ),
        ),
        (SocketState::Absent(_), TtyState::Available) => (
            "ask",
            format!("gate would ask on the terminal {if_approved}"),
        ),
        (SocketState::Absent(why), tty) => {
            // A configured socket is named, as a run names it. The default socket's path
            // differs from machine to machine; the JSON and `gate doctor` show it.
            let socket = if reach.socket_configured {
                why.clone()
            } else {
                "no broker is listening on the default socket".to_owned()
            };
            let terminal = match tty {
                TtyState::Off => TTY_OFF.to_owned(),
                TtyState::Unavailable(why) => format!("the terminal cannot be asked: {why}"),
                TtyState::Available => unreachable!("matched above"),
            };
            (
                "refuse",
                format!(
                    "gate would refuse it now (exit 126): nobody can be asked: {socket}, and \
                     {terminal}"
                ),
            )
        }
    }
}

/// A setting turned on, as its option and its configuration key.
fn setting_names(settings: &[&str]) -> (String, String) {
    let flags: Vec<String> = settings
        .iter()
        .map(|s| format!("--{}", s.replace('_', "-")))
        .collect();
    let keys: Vec<String> = settings.iter().map(|s| format!("{s} = true")).collect();
    (flags.join(" and "), keys.join(", "))
}

/// Print `gate check`'s report; the exit status is the verdict's unless stdout fails.
fn check_report(
    settings: &Settings,
    judged: &Judged,
    e: &Explanation,
    verdict: &Verdict<'_>,
    json: bool,
) -> i32 {
    use crate::approval::reach::SocketState;
    let command = judged.text.as_ref().map(CommandText::as_str).unwrap_or("");
    let locked = settings.locked_by.as_ref().map(|p| p.display().to_string());
    let text = if json {
        let approval = verdict.reach.as_ref().map(|r| {
            let mut facts = r.to_json();
            facts.insert("refusal".into(), serde_json::json!(r.refusal()));
            facts
        });
        let alternatives: Vec<serde_json::Value> = verdict
            .alternatives
            .iter()
            .map(|a| serde_json::json!({"settings": a.settings, "reason": a.reason}))
            .collect();
        let value = serde_json::json!({
            "command": command,
            "kind": judged.kind,
            "exact": judged.text.as_ref().is_none_or(CommandText::is_exact),
            "level": settings.policy.level.as_str(),
            "level_origin": settings.policy.level_origin.to_string(),
            "decision": verdict.decision,
            "decided_by": e.decided_by,
            "rule": e.rule,
            "rule_origin": e.rule_origin,
            "matched": e.matched,
            "reason": e.reason,
            "wrapper": judged.wrapper.as_ref().map(|(_, t)| *t),
            "looks_like_wrapper": judged.looks_like.as_ref().map(|(agent, _)| *agent),
            "outcome": verdict.outcome,
            "approval": approval,
            "would_allow_with": alternatives,
            "config_files": settings.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "locked_by": locked,
            "project": settings.project.as_ref().map(|p| serde_json::json!({
                "file": p.path.display().to_string(),
                "trust": p.trust.key(),
            })),
        });
        format!("{value}\n")
    } else {
        let mut t = String::new();
        t.push_str(&format!("command:  {}\n", explain::display(command)));
        t.push_str(&format!(
            "level:    {} (from {})\n",
            settings.policy.level, settings.policy.level_origin
        ));
        t.push_str(&format!("decision: {}\n", verdict.decision));
        t.push_str(&format!("reason:   {}\n", e.reason));
        t.push_str(&format!("outcome:  {}\n", verdict.outcome_text));
        if let Some(r) = &verdict.reach {
            if r.asks().is_none() && matches!(r.socket_state, SocketState::Absent(_)) {
                t.push_str(&format!(
                    "advice:   {}\n",
                    crate::approval::NO_APPROVER_ADVICE
                ));
            }
        }
        for a in &verdict.alternatives {
            let (flags, keys) = setting_names(&a.settings);
            let lock = match &locked {
                Some(file) => {
                    format!(" ({file} locks the configuration: only it can turn that on)")
                }
                None => String::new(),
            };
            t.push_str(&format!(
                "hint:     with {flags} ({keys}) it would be allowed{lock}: {}\n",
                a.reason
            ));
        }
        if let Some(lock) = &locked {
            t.push_str(&format!("locked:   by {lock}\n"));
        }
        if let Some(p) = &settings.project {
            t.push_str(&format!(
                "project:  {}, {}\n",
                p.path.display(),
                p.trust.describe()
            ));
        }
        t
    };
    match print(&text) {
        0 => verdict.status,
        code => code,
    }
}

/// What `gate check` says of a command it would run in the sandbox, with the network by
/// domain when a domain list is set.
fn sandboxed_run(settings: &Settings) -> String {
    let sandbox = sandbox_settings(settings);
    if sandbox.allow_domains.is_empty() || sandbox.network {
        return "gate would run it inside the sandbox".to_owned();
    }
    format!(
        "gate would run it inside the sandbox, with the network by domain through gate's \
         proxy ({} allowed, {} denied)",
        sandbox.allow_domains.len(),
        sandbox.deny_domains.len()
    )
}

/// For `gate check` (which never enforces the sandbox): why the sandbox could not be
/// set up here, or else what this kernel lacks and gate does instead (empty when it
/// lacks nothing), to follow [`sandboxed_run`]'s sentence.
fn sandbox_problem(settings: &Settings) -> Result<String, String> {
    let Ok(cwd) = std::env::current_dir() else {
        return Ok(String::new());
    };
    if let Err(why) = crate::agents::agent_workspace(&cwd, &var) {
        return Err(format!("gate would not run it (exit 125): {}", why.line()));
    }
    let root = nix::unistd::geteuid().is_root();
    let spec = match sandbox::spec::build(
        &sandbox_settings(settings),
        &cwd,
        &var,
        root,
        &protected_files(settings),
    ) {
        Ok(spec) => spec,
        Err(e) => {
            return Err(format!(
                "gate would not run it (exit 125): {}",
                explain::sandbox_not_run(&e)
            ));
        }
    };
    let grade = match sandbox::grade(&spec, &sandbox::probe()) {
        Ok(grade) => grade,
        Err(e) => {
            return Err(format!(
                "gate would not run it (exit 125): {}",
                explain::sandbox_not_run(&e)
            ));
        }
    };
    // What this kernel lacks and gate makes up for, in the same sentences as `gate
    // doctor` (a run itself prints none of it: see docs/sandbox.md).
    Ok(grade
        .residual_lines(spec.unix_sockets)
        .iter()
        .map(|line| format!("; {line}"))
        .collect())
}
